// describe_pipeline: the Halide Functions of a generator instance, read into the
// plain data of dsl/PipelineInfo.h.
#include "dsl/PipelineInfo.h"

#include "dsl/HalidePipeline.h"
#include "npu_target/common/Error.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

const FuncInfo *PipelineInfo::find(const std::string &name) const {
    for (const auto &f : funcs) {
        if (f.name == name) {
            return &f;
        }
    }
    return nullptr;
}

std::vector<const DefInfo *> FuncInfo::definitions() const {
    std::vector<const DefInfo *> v{&pure};
    for (const auto &u : updates) {
        v.push_back(&u);
    }
    return v;
}

const TensorInfo *PipelineInfo::find_input(const std::string &name) const {
    for (const auto &t : inputs) {
        if (t.name == name) {
            return &t;
        }
    }
    return nullptr;
}

namespace {

// Halide numbers repeated names per process ("acc$3"); users see the generator's name. A
// multi-dimensional RDom's variables keep their own names ("r$x", "r$y"), as schedules name them.
std::string plain_name(const std::string &n) {
    std::string s = n;
    for (size_t d = s.rfind('$'); d != std::string::npos && d + 1 < s.size(); d = s.rfind('$')) {
        if (s.find_first_not_of("0123456789", d + 1) != std::string::npos) {
            break;
        }
        s.erase(d);
    }
    return s;
}

std::string type_name(const Type &t) {
    std::string base = t.is_float() ? "float" : t.is_uint() ? (t.bits() == 1 ? "bool" : "uint") : "int";
    return t.bits() == 1 ? base : base + std::to_string(t.bits());
}

// One variable plus a constant: (name, offset); otherwise ("", 0).
std::pair<std::string, int64_t> var_plus_const(const Expr &e0) {
    Expr e = simplify(e0);
    if (const auto *v = e.as<Variable>()) {
        return {plain_name(v->name), 0};
    }
    const Expr *a = nullptr, *b = nullptr;
    int sign = 1;
    if (const auto *add = e.as<Add>()) {
        a = &add->a;
        b = &add->b;
    } else if (const auto *sub = e.as<Sub>()) {
        a = &sub->a;
        b = &sub->b;
        sign = -1;
    }
    if (a) {
        const auto *v = a->as<Variable>();
        const auto *c = b->as<IntImm>();
        if (v && c) {
            return {plain_name(v->name), sign * c->value};
        }
    }
    return {"", 0};
}

// The variables of `v1 + v2 + ... (+ c)`, every coefficient 1, sorted; otherwise empty.
std::vector<std::string> unit_sum(const Expr &e0) {
    std::vector<std::string> vars;
    std::function<bool(const Expr &)> walk = [&](const Expr &e) {
        if (const auto *v = e.as<Variable>()) {
            vars.push_back(plain_name(v->name));
            return true;
        }
        if (e.as<IntImm>()) {
            return true;
        }
        if (const auto *add = e.as<Add>()) {
            return walk(add->a) && walk(add->b);
        }
        if (const auto *sub = e.as<Sub>()) {
            return walk(sub->a) && sub->b.as<IntImm>() != nullptr;
        }
        return false;
    };
    if (!walk(simplify(e0))) {
        return {};
    }
    std::sort(vars.begin(), vars.end());
    return vars;
}

// Whether `e` holds a Min or a Max (clamp(), a padded read).
bool has_min_max(const Expr &e) {
    class Find : public IRVisitor {
    public:
        bool found = false;
        using IRVisitor::visit;
        void visit(const Min *op) override { found = true; }
        void visit(const Max *op) override { found = true; }
    } f;
    e.accept(&f);
    return f.found;
}

class Reads : public IRGraphVisitor {
public:
    // callee (Halide name or parameter name) -> merged load; `is_param` when an Image call.
    std::map<std::string, LoadInfo> loads;
    std::map<std::string, bool> is_param;

    using IRGraphVisitor::visit;
    void visit(const Call *c) override {
        IRGraphVisitor::visit(c);
        std::string callee;
        if (c->call_type == Call::Halide && c->func.defined()) {
            callee = c->name;
            is_param[callee] = false;
        } else if (c->call_type == Call::Image && c->param.defined()) {
            callee = c->param.name();
            is_param[callee] = true;
        } else {
            return;
        }
        LoadInfo &l = loads[callee];
        const bool first = l.index_var.empty();
        if (first) {
            l.index_var.resize(c->args.size());
            l.min_offset.assign(c->args.size(), 0);
            l.max_offset.assign(c->args.size(), 0);
            l.index_sum.resize(c->args.size());
            l.index_clamped.assign(c->args.size(), false);
        }
        for (size_t i = 0; i < c->args.size() && i < l.index_var.size(); i++) {
            auto [v, off] = var_plus_const(c->args[i]);
            std::vector<std::string> sum = unit_sum(c->args[i]);
            if (has_min_max(c->args[i])) {
                l.index_clamped[i] = true;
            }
            if (first) {
                l.index_sum[i] = sum;
            } else if (l.index_sum[i] != sum) {
                l.index_sum[i].clear();
            }
            if (first) {
                l.index_var[i] = v;
                l.min_offset[i] = l.max_offset[i] = off;
            } else if (l.index_var[i] != v) {
                l.index_var[i] = "";
            } else {
                l.min_offset[i] = std::min(l.min_offset[i], off);
                l.max_offset[i] = std::max(l.max_offset[i], off);
            }
        }
    }
};

Expr strip_casts(Expr e) {
    while (const auto *c = e.as<Cast>()) {
        e = c->value;
    }
    return e;
}

std::string call_name(const Expr &e) {
    const auto *c = strip_casts(e).as<Call>();
    if (!c) {
        return "";
    }
    if (c->call_type == Call::Halide) {
        return c->name;
    }
    if (c->call_type == Call::Image && c->param.defined()) {
        return c->param.name();
    }
    return "";
}

} // namespace

PipelineInfo describe_pipeline(const std::string &generator, const ParamMap &given) {
    PipelineInfo info;
    info.generator = generator;
    info.params = resolve_params(find_generator(generator), given);
    HalidePipeline p = build_halide_pipeline(generator, info.params);
    for (const auto &in : p.inputs) {
        info.inputs.push_back({in.name, in.dtype, in.shape});
    }
    std::vector<Function> outs;
    std::set<std::string> out_names;
    for (const auto &o : p.outputs) {
        info.outputs.push_back({plain_name(o.func.name()), o.dtype, o.shape});
        outs.push_back(o.func.function());
        out_names.insert(o.func.name());
    }
    std::map<std::string, Function> env = build_environment(outs);
    std::set<std::string> input_names;
    for (const auto &in : p.inputs) {
        input_names.insert(in.name);
    }
    // An input's own Func (Input<Buffer<>> wraps its parameter in one): a plain read of it.
    std::map<std::string, std::string> input_of; // Halide Func name -> input name
    for (const auto &[name, f] : env) {
        if (f.has_pure_definition() && !f.has_update_definition() && f.values().size() == 1) {
            const auto *c = f.values()[0].as<Call>();
            if (c && c->call_type == Call::Image && c->param.defined() && input_names.count(c->param.name())) {
                input_of[name] = c->param.name();
            }
        }
    }
    auto describe_def = [&](const Definition &d, const std::vector<std::string> &rvars,
                            const std::vector<int64_t> &extents) {
        DefInfo di;
        di.rvars = rvars;
        di.rvar_extents = extents;
        Reads r;
        for (const auto &v : d.values()) {
            v.accept(&r);
        }
        for (const auto &a : d.args()) {
            a.accept(&r);
            di.lhs_var.push_back(var_plus_const(a).first);
        }
        for (auto &[callee, l] : r.loads) {
            if (r.is_param[callee]) {
                l.callee = callee;
                l.callee_is_input = true;
            } else if (input_of.count(callee)) {
                l.callee = input_of.at(callee);
                l.callee_is_input = true;
            } else {
                l.callee = plain_name(callee);
            }
            di.loads.push_back(l);
        }
        return di;
    };
    std::map<std::string, FuncInfo> by_name;
    for (const auto &[name, f] : env) {
        if (input_of.count(name)) {
            continue;
        }
        FuncInfo fi;
        fi.name = plain_name(name);
        if (!f.output_types().empty()) {
            fi.type = type_name(f.output_types()[0]);
            fi.bytes = (f.output_types()[0].bits() + 7) / 8;
        }
        fi.vars.reserve(f.args().size());
        for (const auto &a : f.args()) {
            fi.vars.push_back(plain_name(a));
        }
        fi.is_output = out_names.count(name) > 0;
        if (f.has_pure_definition()) {
            fi.pure = describe_def(f.definition(), {}, {});
        }
        for (const auto &u : f.updates()) {
            std::vector<std::string> rvars;
            std::vector<int64_t> extents;
            for (const auto &rv : u.schedule().rvars()) {
                rvars.push_back(plain_name(rv.var));
                const auto *c = simplify(rv.extent).as<IntImm>();
                extents.push_back(c ? c->value : -1);
            }
            DefInfo di = describe_def(u, rvars, extents);
            if (u.values().size() == 1) {
                Expr v = u.values()[0];
                const auto *add = v.as<Add>();
                if (add) {
                    Expr other;
                    if (call_name(add->a) == name) {
                        other = add->b;
                    } else if (call_name(add->b) == name) {
                        other = add->a;
                    }
                    if (other.defined()) {
                        if (const auto *mul = strip_casts(other).as<Mul>()) {
                            std::string a = call_name(mul->a), b = call_name(mul->b);
                            if (!a.empty() && !b.empty()) {
                                auto user = [&](const std::string &n) {
                                    return input_of.count(n) ? input_of.at(n) : plain_name(n);
                                };
                                di.sum_of_products = true;
                                di.mul_a = user(a);
                                di.mul_b = user(b);
                            }
                        }
                    }
                }
            }
            fi.updates.push_back(di);
        }
        by_name[name] = fi;
    }
    // Producers before consumers: a depth-first post-order from the outputs.
    std::set<std::string> done;
    std::function<void(const std::string &)> visit = [&](const std::string &name) {
        if (done.count(name) || !by_name.count(name)) {
            return;
        }
        done.insert(name);
        for (const auto &[callee, f] : find_direct_calls(env.at(name))) {
            visit(callee);
        }
        info.funcs.push_back(by_name.at(name));
    };
    for (const auto &o : p.outputs) {
        visit(o.func.name());
    }
    for (auto &f : info.funcs) {
        std::set<std::string> readers;
        for (const auto &g : info.funcs) {
            for (const DefInfo *d : g.definitions()) {
                for (const auto &l : d->loads) {
                    if (!l.callee_is_input && l.callee == f.name && g.name != f.name) {
                        readers.insert(g.name);
                    }
                }
            }
        }
        f.consumers.assign(readers.begin(), readers.end());
    }
    return info;
}

} // namespace tessel
