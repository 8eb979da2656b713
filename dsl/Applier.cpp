#include "dsl/Applier.h"

#include "dsl/Generator.h"
#include "npu_target/common/Error.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace tessel {

using namespace Halide;
using Internal::Function;

namespace {

std::string join(const std::vector<std::string> &v) {
    std::string out;
    for (const auto &s : v) {
        out += (out.empty() ? "" : ", ") + s;
    }
    return out;
}

// Halide's message without its "Error: " prefix and trailing blank lines.
std::string halide_message(const Halide::Error &e) {
    std::string m = e.what();
    if (m.rfind("Error: ", 0) == 0) {
        m = m.substr(7);
    }
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) {
        m.pop_back();
    }
    return m;
}

std::string where(const Directive &d, size_t index) {
    return "directive " + d.id + " (#" + std::to_string(index) + ", " + d.describe() + ")";
}

// The name users write for a loop: "k$x.ko" -> "ko", "k$x" -> "k", "j" -> "j".
std::string display_name(const std::string &dim) {
    std::string s = dim.substr(dim.rfind('.') == std::string::npos ? 0 : dim.rfind('.') + 1);
    return s.substr(0, s.find('$'));
}

// The name a generator gave a Func: Halide's uniquifying suffix dropped ("acc$3" -> "acc").
std::string user_name(const std::string &halide_name) {
    size_t d = halide_name.rfind('$');
    if (d == std::string::npos || d + 1 == halide_name.size()) {
        return halide_name;
    }
    for (size_t i = d + 1; i < halide_name.size(); i++) {
        if (!isdigit(static_cast<unsigned char>(halide_name[i]))) {
            return halide_name;
        }
    }
    return halide_name.substr(0, d);
}

struct Loop {
    std::string full; // Halide's unqualified dim name ("ko", "k$x")
    bool is_rvar = false;
    std::string name; // what users write ("ko")
};

std::vector<Loop> loops_of(const Internal::Definition &def) {
    std::vector<Loop> out;
    for (const auto &d : def.schedule().dims()) {
        if (d.var == Var::outermost().name()) {
            continue;
        }
        bool rvar = d.dim_type == Internal::DimType::PureRVar || d.dim_type == Internal::DimType::ImpureRVar;
        // Halide matches loops by their unqualified name ("k$x.ko" -> "ko").
        std::string unqualified = d.var.substr(d.var.rfind('.') == std::string::npos ? 0 : d.var.rfind('.') + 1);
        out.push_back({unqualified, rvar, display_name(d.var)});
    }
    return out;
}

std::string loop_names(const std::vector<Loop> &loops) {
    std::vector<std::string> n;
    for (const auto &l : loops) {
        n.push_back(l.name);
    }
    return join(n);
}

TailStrategy tail_of(const std::string &t, const std::string &ctx) {
    if (t.empty() || t == "auto") {
        return TailStrategy::Auto;
    }
    if (t == "round_up") {
        return TailStrategy::RoundUp;
    }
    if (t == "guard_with_if") {
        return TailStrategy::GuardWithIf;
    }
    if (t == "shift_inwards") {
        return TailStrategy::ShiftInwards;
    }
    if (t == "predicate") {
        return TailStrategy::Predicate;
    }
    user_error(ctx, ": unknown tail strategy '", t, "'; known: auto, round_up, guard_with_if, shift_inwards, predicate");
}

std::string pretty(const std::string &text) {
    std::string s;
    for (size_t i = 0; i < text.size(); i++) {
        if (text[i] == '$') { // "k$x" -> "k", "acc$3" -> "acc"
            size_t j = i + 1;
            while (j < text.size() && (isdigit(static_cast<unsigned char>(text[j])) || (j == i + 1 && text[j] == 'x'))) {
                j++;
            }
            if (j > i + 1) {
                i = j - 1;
                continue;
            }
        }
        s += text[i];
    }
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s.compare(i, 4, "_im(") == 0) { // an input's Func reads as the input
            out += "(";
            i += 3;
            continue;
        }
        out += s[i];
    }
    return out;
}

class Applier {
public:
    Applier(HalidePipeline &p, const ScheduleSpec &spec, const ArchSpec &arch) : p_(p), spec_(spec), arch_(arch) {
        std::vector<Function> outs;
        for (const auto &o : p.outputs) {
            outs.push_back(o.func.function());
        }
        funcs_ = Internal::build_environment(outs);
        // Halide makes Func names unique per process ("acc", "acc$1", ...): users write the name
        // the generator gave.
        for (const auto &kv : funcs_) {
            users_name_.emplace(user_name(kv.first), kv.first);
        }
        // An input's Func is the one whose definition is a plain read of its Parameter.
        for (const auto &in : p.inputs) {
            for (const auto &kv : funcs_) {
                const Function &f = kv.second;
                if (!f.has_pure_definition() || f.has_update_definition() || f.values().size() != 1) {
                    continue;
                }
                const Internal::Call *c = f.values()[0].as<Internal::Call>();
                if (c && c->call_type == Internal::Call::Image && c->param.defined() && c->param.name() == in.name) {
                    input_funcs_[in.name] = kv.first;
                }
            }
        }
    }

    // The product of one stage's unroll factors is the number of copies of its loop
    // body in the program: bounded, so a schedule cannot ask for a program that takes
    // minutes to lower (unroll 100 inside unroll 100).
    void check_unrolled_copies(const Directive &d) {
        if (d.kind != DirectiveKind::Unroll || d.factors.empty()) {
            return;
        }
        int64_t &copies = unrolled_copies_[{d.func, d.stage}];
        copies = std::max<int64_t>(copies, 1) * d.factors[0];
        if (copies > kMaxUnrolledCopies) {
            user_error(ctx(), ": the unroll directives of ", d.func, d.stage < 0 ? "" : ".update(" + std::to_string(d.stage) + ")",
                       " make ", copies, " copies of its loop body; at most ", kMaxUnrolledCopies,
                       " (unroll less, or unroll only the innermost loop)");
        }
    }

    NpuSchedule run() {
        for (index_ = 0; index_ < spec_.directives.size(); index_++) {
            d_ = &spec_.directives[index_];
            validate_directive_values(*d_, index_);
            check_unrolled_copies(*d_);
            try {
                apply(*d_);
            } catch (const Halide::Error &e) {
                user_error(ctx(), ": ", halide_message(e));
            }
        }
        check_accumulators();
        p_.pipeline.invalidate_cache();
        return npu_;
    }

private:
    std::string ctx() const { return where(*d_, index_); }

    std::string known_funcs() const {
        std::vector<std::string> fs, ins;
        for (const auto &kv : funcs_) {
            bool is_input = false;
            for (const auto &in : input_funcs_) {
                is_input = is_input || in.second == kv.first;
            }
            if (!is_input) {
                fs.push_back(user_name(kv.first));
            }
        }
        for (const auto &in : input_funcs_) {
            ins.push_back(in.first);
        }
        return "Funcs: " + join(fs) + (ins.empty() ? "" : "; inputs: " + join(ins));
    }

    Function func(const std::string &name, bool allow_input = false) const {
        auto in = input_funcs_.find(name);
        if (in != input_funcs_.end()) {
            if (!allow_input) {
                user_error(ctx(), ": '", name, "' is an input of generator '", p_.generator,
                           "'; only stage() takes an input (schedule its staged copy instead)");
            }
            return funcs_.at(in->second);
        }
        auto alias = users_name_.find(name);
        auto it = funcs_.find(alias == users_name_.end() ? name : alias->second);
        if (it == funcs_.end()) {
            // Halide makes Func names unique per process ("C" -> "C$3" when a
            // generator is instantiated again): users write the name they declared.
            const Function *match = nullptr;
            for (const auto &kv : funcs_) {
                if (kv.first.substr(0, kv.first.find('$')) == name) {
                    if (match) {
                        user_error(ctx(), ": Func name '", name, "' is ambiguous; ", known_funcs());
                    }
                    match = &kv.second;
                }
            }
            if (!match) {
                user_error(ctx(), ": unknown Func '", name, "'; ", known_funcs());
            }
            return *match;
        }
        return it->second;
    }

    Stage stage(const Function &f, int s) const {
        if (s < 0) {
            return Stage(f, f.definition(), 0);
        }
        return Stage(f, definition(f, s), static_cast<size_t>(s) + 1);
    }

    const Internal::Definition &definition(const Function &f, int s) const {
        if (s >= 0 && static_cast<size_t>(s) >= f.updates().size()) {
            user_error(ctx(), ": ", user_name(f.name()), " has ", f.updates().size(), " update definition",
                       f.updates().size() == 1 ? "" : "s", "; update(", s, ") does not exist");
        }
        return s < 0 ? f.definition() : f.update(s);
    }

    // A loop of the stage being scheduled, by the name users write.
    VarOrRVar loop(const Function &f, int s, const std::string &name) const {
        std::vector<Loop> loops = loops_of(definition(f, s));
        for (const auto &l : loops) {
            if (l.name == name || l.full == name) {
                return VarOrRVar(l.full, l.is_rvar);
            }
        }
        std::string st = d_->stage_name();
        user_error(ctx(), ": unknown loop '", name, "'; loops of ", st, ": ", loop_names(loops));
    }

    // Like `loop` but for a new name: an RVar's split makes RVars.
    VarOrRVar fresh(const std::string &name, const VarOrRVar &like) const { return VarOrRVar(name, like.is_rvar); }

    // The loop level `loop` of any stage of `at` (the last stage that has it).
    LoopLevel at_level(const std::string &at, const std::string &loop_name) const {
        Function f = func(at);
        if (loop_name == "root") { // outside every loop: once per run
            return LoopLevel::root();
        }
        int stages = static_cast<int>(f.updates().size()) + 1;
        std::vector<std::string> all;
        auto has_loop = [&](int s, const std::string &name) {
            for (const auto &l : loops_of(definition(f, s - 1))) {
                if (l.name == name || l.full == name) {
                    return true;
                }
            }
            return false;
        };
        for (int s = stages - 1; s >= 0; s--) {
            for (const auto &l : loops_of(definition(f, s - 1))) {
                if (l.name == loop_name || l.full == loop_name) {
                    // Halide 14 matches a LoopLevel of stage -1 by the loop's
                    // name in any stage, and refuses one with an explicit stage
                    // index ("computed at the following invalid location"): a
                    // loop of an earlier stage is reachable only by a name no
                    // other stage has (conv2d's stride-2 phases: kx0 .. kx3).
                    for (int other = 0; other < s && s != stages - 1; other++) {
                        if (has_loop(other, loop_name)) {
                            user_error(ctx(), ": loop '", loop_name, "' of ", at, " is in update ", s - 1,
                                       " and in ", other == 0 ? std::string("its pure definition")
                                                              : "update " + std::to_string(other - 1),
                                       "; Halide can compute at a loop of an update other than the last only "
                                       "by a name no other stage of ", at, " has");
                        }
                    }
                    return LoopLevel(f, VarOrRVar(l.full, l.is_rvar), -1);
                }
            }
        }
        for (int s = 0; s < stages; s++) {
            for (const auto &l : loops_of(definition(f, s - 1))) {
                if (std::find(all.begin(), all.end(), l.name) == all.end()) {
                    all.push_back(l.name);
                }
            }
        }
        user_error(ctx(), ": unknown loop '", loop_name, "' of ", at, "; loops of ", at, ": ", join(all));
    }

    void provenance(const std::string &func_name, const std::vector<std::string> &loops = {}) {
        npu_.provenance[func_name] = d_->id;
        for (const auto &l : loops) {
            npu_.provenance[func_name + "." + l] = d_->id;
        }
    }

    const MemoryLevel &level(const std::string &name) const {
        const MemoryLevel *l = arch_.find_level(name);
        if (!l) {
            std::vector<std::string> names;
            for (const auto &m : arch_.memories) {
                names.push_back(m.name);
            }
            user_error(ctx(), ": level '", name, "' does not exist in ", arch_.name, "; its levels: ", join(names));
        }
        return *l;
    }

    void apply(const Directive &d) {
        switch (d.kind) {
        case DirectiveKind::Split: {
            Function f = func(d.func);
            VarOrRVar old = loop(f, d.stage, d.vars[0]);
            stage(f, d.stage).split(old, fresh(d.vars[1], old), fresh(d.vars[2], old),
                                    static_cast<int>(d.factors[0]), tail_of(d.tail, ctx()));
            provenance(f.name(), {d.vars[1], d.vars[2]});
            return;
        }
        case DirectiveKind::Tile: {
            Function f = func(d.func);
            VarOrRVar x = loop(f, d.stage, d.vars[0]), y = loop(f, d.stage, d.vars[1]);
            stage(f, d.stage).tile(x, y, fresh(d.vars[2], x), fresh(d.vars[3], y), fresh(d.vars[4], x),
                                   fresh(d.vars[5], y), static_cast<int>(d.factors[0]), static_cast<int>(d.factors[1]),
                                   tail_of(d.tail, ctx()));
            provenance(f.name(), {d.vars[2], d.vars[3], d.vars[4], d.vars[5]});
            return;
        }
        case DirectiveKind::Reorder: {
            Function f = func(d.func);
            std::vector<VarOrRVar> vs;
            for (const auto &v : d.vars) {
                vs.push_back(loop(f, d.stage, v));
            }
            stage(f, d.stage).reorder(vs);
            provenance(f.name());
            return;
        }
        case DirectiveKind::Fuse: {
            Function f = func(d.func);
            VarOrRVar in = loop(f, d.stage, d.vars[0]), out = loop(f, d.stage, d.vars[1]);
            stage(f, d.stage).fuse(in, out, fresh(d.vars[2], in));
            provenance(f.name(), {d.vars[2]});
            return;
        }
        case DirectiveKind::Vectorize:
        case DirectiveKind::Unroll: {
            Function f = func(d.func);
            VarOrRVar v = loop(f, d.stage, d.vars[0]);
            Stage s = stage(f, d.stage);
            bool vec = d.kind == DirectiveKind::Vectorize;
            if (d.factors.empty()) {
                vec ? s.vectorize(v) : s.unroll(v);
            } else {
                int fct = static_cast<int>(d.factors[0]);
                vec ? s.vectorize(v, fct) : s.unroll(v, fct);
            }
            provenance(f.name(), {d.vars[0]});
            return;
        }
        case DirectiveKind::Parallel: {
            Function f = func(d.func);
            VarOrRVar v = loop(f, d.stage, d.vars[0]);
            if (d.cores > 0) {
                // Across NPU cores: recorded for the backend, not a Halide parallel loop.
                if (d.cores > arch_.chip.cores) {
                    user_error(ctx(), ": ", arch_.name, " has ", arch_.chip.cores, " cores; cores=", d.cores, " asks for more");
                }
                npu_.core_splits.push_back({d.id, f.name(), d.vars[0], d.cores});
            } else {
                stage(f, d.stage).parallel(v);
            }
            provenance(f.name(), {d.vars[0]});
            return;
        }
        case DirectiveKind::ComputeAt:
        case DirectiveKind::StoreAt: {
            Func f(func(d.func));
            LoopLevel l = at_level(d.at_func, d.at_loop);
            d.kind == DirectiveKind::ComputeAt ? f.compute_at(l) : f.store_at(l);
            provenance(f.name());
            return;
        }
        case DirectiveKind::ComputeRoot:
        case DirectiveKind::ComputeInline: {
            Func f(func(d.func));
            d.kind == DirectiveKind::ComputeRoot ? f.compute_root() : f.compute_inline();
            provenance(f.name());
            return;
        }
        case DirectiveKind::Atomic: {
            Function f = func(d.func);
            stage(f, d.stage).atomic();
            provenance(f.name());
            return;
        }
        case DirectiveKind::Stage:
            apply_stage(d);
            return;
        case DirectiveKind::AccumulateIn: {
            Function f = func(d.func);
            level(d.level);
            if (!f.has_update_definition() && d.buffers < 2) {
                user_error(ctx(), ": ", d.func, " has no update definition; accumulate_in keeps a reduction's accumulator "
                           "(or, with buffers >= 2, a pure Func's tile)");
            }
            npu_.accumulate.push_back({d.id, f.name(), d.level, d.buffers});
            provenance(f.name());
            return;
        }
        case DirectiveKind::Tensorize: {
            Function f = func(d.func);
            if (d.unit == "fix") {
                if (f.has_update_definition()) {
                    user_error(ctx(), ": ", user_name(f.name()), " has an update definition; tensorize with unit 'fix' "
                               "maps a pure Func whose value is a requantising epilogue of an accumulator");
                }
                npu_.tensorize.push_back({d.id, f.name(), -1, "fix"});
                provenance(f.name());
                return;
            }
            check_matmul(f, d.stage);
            npu_.tensorize.push_back({d.id, f.name(), d.stage});
            provenance(f.name());
            return;
        }
        case DirectiveKind::Layout: {
            Function f = func(d.func, true);
            static const std::set<std::string> formats = {"ND", "NZ", "ZZ", "ZN"};
            if (!formats.count(d.format)) {
                user_error(ctx(), ": unknown layout '", d.format, "'; known: ND, NZ, ZN, ZZ");
            }
            npu_.layouts.push_back({d.id, f.name(), d.format});
            provenance(f.name());
            return;
        }
        }
    }

    void apply_stage(const Directive &d) {
        const MemoryLevel &lv = level(d.level);
        if (lv.off_chip) {
            user_error(ctx(), ": level ", d.level, " is off-chip; stage copies into an on-chip level");
        }
        Function src = func(d.func, true);
        // A second stage of the same source wraps the previous copy (GM -> L1 -> L0A).
        auto prev = staged_.find(d.func);
        Func from = prev == staged_.end() ? Func(src) : Func(funcs_.at(prev->second));
        Func w = from.in();
        w.compute_at(at_level(d.at_func, d.at_loop));
        funcs_[w.name()] = w.function();
        staged_[d.func] = w.name();
        npu_.staged.push_back({d.id, d.func, w.name(), d.level, d.buffers, func(d.at_func).name(), d.at_loop});
        provenance(w.name());
    }

    // f(args) = f(args) + cast(a(.., r, ..)) * cast(b(.., r, ..)), one RVar r shared by a and b.
    void check_matmul(const Function &f, int update) {
        if (update < 0 || static_cast<size_t>(update) >= f.updates().size()) {
            user_error(ctx(), ": ", user_name(f.name()), " has ", f.updates().size(), " update definition",
                       f.updates().size() == 1 ? "" : "s", "; tensorize needs update ", update);
        }
        const Internal::Definition &def = f.update(update);
        std::vector<std::string> lhs;
        for (const auto &a : def.args()) {
            std::ostringstream os;
            os << a;
            lhs.push_back(os.str());
        }
        std::string self = user_name(f.name()) + "(" + join(lhs) + ")";
        std::ostringstream found;
        found << self << " = " << (def.values().size() == 1 ? def.values()[0] : Expr(std::string("<tuple>")));
        auto fail = [&](const std::string &why) {
            user_error(ctx(), ": ", user_name(f.name()), ".update(", update, ") is not matmul-shaped: ", why, "\n  expected: ", self,
                       " = ", self, " + cast(a(.., r, ..)) * cast(b(.., r, ..)) with a reduction variable r in both a and b",
                       "\n  found:    ", pretty(found.str()));
        };
        if (def.values().size() != 1) {
            fail("it defines a tuple");
        }
        const Internal::Add *add = def.values()[0].as<Internal::Add>();
        if (!add) {
            fail("it is not an accumulation f(..) = f(..) + ...");
        }
        auto is_self = [&](const Expr &e) {
            const Internal::Call *c = e.as<Internal::Call>();
            if (!c || c->name != f.name() || c->args.size() != def.args().size()) {
                return false;
            }
            for (size_t i = 0; i < c->args.size(); i++) {
                if (!Internal::equal(c->args[i], def.args()[i])) {
                    return false;
                }
            }
            return true;
        };
        Expr other = is_self(add->a) ? add->b : is_self(add->b) ? add->a : Expr();
        if (!other.defined()) {
            fail("neither operand of + reads " + self);
        }
        const Internal::Mul *mul = other.as<Internal::Mul>();
        if (!mul) {
            fail("what is added is not a product a * b");
        }
        auto operand = [&](const Expr &e) -> const Internal::Call * {
            Expr x = e;
            if (const Internal::Cast *c = x.as<Internal::Cast>()) {
                x = c->value;
            }
            const Internal::Call *call = x.as<Internal::Call>();
            if (!call || (call->call_type != Internal::Call::Halide && call->call_type != Internal::Call::Image)) {
                return nullptr;
            }
            return call;
        };
        const Internal::Call *a = operand(mul->a), *b = operand(mul->b);
        if (!a || !b) {
            fail("an operand of * is not a (cast of a) Func or input");
        }
        int shared = 0;
        std::vector<std::string> rvars;
        for (const auto &rv : def.schedule().rvars()) {
            rvars.push_back(display_name(rv.var));
            bool in_a = false, in_b = false;
            for (const auto &e : a->args) {
                in_a = in_a || Internal::expr_uses_var(e, rv.var);
            }
            for (const auto &e : b->args) {
                in_b = in_b || Internal::expr_uses_var(e, rv.var);
            }
            shared += in_a && in_b;
        }
        // One shared reduction variable is the matrix product's k; more (a
        // convolution's kx, ky) become reduction loops around the product,
        // which the backend matches as the innermost m, n, k nest.
        if (shared == 0) {
            fail("no reduction variable (of " + (rvars.empty() ? std::string("none") : join(rvars)) +
                 ") indexes both a and b");
        }
        if (a->type != b->type) {
            std::ostringstream os;
            os << "a is " << a->type << " and b is " << b->type;
            fail(os.str());
        }
        DType t = dtype_of(a->type, "operand " + a->name);
        if (!arch_.matrix.shapes.count(t)) {
            std::vector<std::string> ok;
            for (const auto &kv : arch_.matrix.shapes) {
                ok.push_back(dtype_name(kv.first));
            }
            user_error(ctx(), ": the matrix unit of ", arch_.name, " does not take ", dtype_name(t),
                       " operands; it takes ", join(ok));
        }
        auto acc = arch_.matrix.accumulators.find(t);
        DType have = dtype_of(f.output_types()[0], f.name());
        if (acc != arch_.matrix.accumulators.end() && acc->second != have) {
            user_error(ctx(), ": the matrix unit of ", arch_.name, " accumulates ", dtype_name(t), " products in ",
                       dtype_name(acc->second), "; ", user_name(f.name()), " is ", dtype_name(have));
        }
    }

    void check_accumulators() {
        for (const auto &acc : npu_.accumulate) {
            bool computed_at = false;
            size_t index = 0;
            for (size_t i = 0; i < spec_.directives.size(); i++) {
                const Directive &d = spec_.directives[i];
                computed_at = computed_at || (d.kind == DirectiveKind::ComputeAt && d.func == user_name(acc.func));
                if (d.id == acc.directive_id) {
                    index = i;
                }
            }
            if (!computed_at) {
                const Directive &d = spec_.directives[index];
                user_error(where(d, index), ": ", d.func, " is not computed inside a loop; add compute_at(", d.func,
                           ", <loop>) so that its accumulator is a tile that fits ", acc.level);
            }
        }
    }

    HalidePipeline &p_;
    const ScheduleSpec &spec_;
    const ArchSpec &arch_;
    std::map<std::string, Function> funcs_;
    std::map<std::string, std::string> input_funcs_; // input name -> its Func ("A" -> "A_im")
    std::map<std::string, std::string> users_name_;  // "acc" -> "acc$3"
    std::map<std::string, std::string> staged_;      // source -> its innermost staged copy
    NpuSchedule npu_;
    size_t index_ = 0;
    std::map<std::pair<std::string, int>, int64_t> unrolled_copies_; // (func, stage) -> product of unroll factors
    const Directive *d_ = nullptr;
};

class AllocationSizes : public Internal::IRGraphVisitor {
public:
    std::map<std::string, int64_t> bytes;

protected:
    using IRGraphVisitor::visit;
    void visit(const Internal::Allocate *op) override {
        int64_t n = op->type.bytes();
        bool constant = true;
        for (const auto &e : op->extents) {
            const int64_t *c = Internal::as_const_int(e);
            constant = constant && c;
            n *= c ? *c : 0;
        }
        if (constant) {
            bytes[op->name] = std::max(bytes[op->name], n);
        }
        IRGraphVisitor::visit(op);
    }
};

size_t index_of(const ScheduleSpec &spec, const std::string &id) {
    for (size_t i = 0; i < spec.directives.size(); i++) {
        if (spec.directives[i].id == id) {
            return i;
        }
    }
    internal_error("no directive with id ", id);
}

} // namespace

std::string format_bytes(int64_t bytes) {
    char buf[64];
    if (bytes < 1024) {
        std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
    } else if (bytes % 1024 == 0) {
        std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(bytes / 1024));
    } else {
        std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
    }
    return buf;
}

NpuSchedule apply_schedule(HalidePipeline &p, const ScheduleSpec &spec, const ArchSpec &arch) {
    return Applier(p, spec, arch).run();
}

std::map<std::string, int64_t> constant_allocation_bytes(const Internal::Stmt &s) {
    AllocationSizes v;
    s.accept(&v);
    return v.bytes;
}

std::vector<std::string> check_footprints(const Internal::Stmt &s, const NpuSchedule &npu, const ScheduleSpec &spec,
                                          const ArchSpec &arch) {
    std::vector<std::string> warnings;
    std::map<std::string, int64_t> sizes = constant_allocation_bytes(s);
    std::map<std::string, std::vector<std::pair<std::string, int64_t>>> per_level;
    for (const auto &sb : npu.staged) {
        size_t i = index_of(spec, sb.directive_id);
        const Directive &d = spec.directives[i];
        const MemoryLevel *lv = arch.find_level(sb.level);
        TESSEL_INTERNAL_ASSERT(lv, "level ", sb.level, " vanished after apply_schedule");
        std::string what = "stage(" + sb.source + ", " + sb.level + ") at " + user_name(sb.at_func) + "." + sb.at_loop;
        auto it = sizes.find(sb.func);
        if (it == sizes.end()) {
            warnings.push_back(where(d, i) + ": " + what + ": the size of " + sb.func +
                               " is not a constant, so its footprint is not checked");
            continue;
        }
        int64_t need = it->second * sb.buffers;
        if (static_cast<uint64_t>(need) > lv->size_bytes) {
            user_error(where(d, i), ": ", what, " needs ", format_bytes(need), " with buffers=", sb.buffers, "; ",
                       sb.level, " has ", format_bytes(static_cast<int64_t>(lv->size_bytes)));
        }
        per_level[sb.level].emplace_back(sb.source, need);
    }
    for (const auto &acc : npu.accumulate) {
        size_t i = index_of(spec, acc.directive_id);
        const Directive &d = spec.directives[i];
        const MemoryLevel *lv = arch.find_level(acc.level);
        TESSEL_INTERNAL_ASSERT(lv, "level ", acc.level, " vanished after apply_schedule");
        auto it = sizes.find(acc.func);
        if (it == sizes.end()) {
            warnings.push_back(where(d, i) + ": the size of " + d.func + " is not a constant, so its footprint is not checked");
            continue;
        }
        const int64_t need = it->second * std::max(1, acc.buffers);
        if (static_cast<uint64_t>(need) > lv->size_bytes) {
            user_error(where(d, i), ": accumulate_in(", d.func, ", ", acc.level, ") needs ", format_bytes(need),
                       " for the ", d.func, " tile", acc.buffers > 1 ? " with buffers=" + std::to_string(acc.buffers) : "",
                       "; ", acc.level, " has ", format_bytes(static_cast<int64_t>(lv->size_bytes)));
        }
        per_level[acc.level].emplace_back(d.func, need);
    }
    for (const auto &kv : per_level) {
        int64_t total = 0;
        std::string parts;
        for (const auto &b : kv.second) {
            total += b.second;
            parts += (parts.empty() ? "" : ", ") + b.first + " " + format_bytes(b.second);
        }
        const MemoryLevel *lv = arch.find_level(kv.first);
        if (static_cast<uint64_t>(total) > lv->size_bytes) {
            warnings.push_back(kv.first + " holds " + format_bytes(total) + " (" + parts + ") if these buffers are live together; " +
                               kv.first + " has " + format_bytes(static_cast<int64_t>(lv->size_bytes)));
        }
    }
    return warnings;
}

void rethrow_lowering_error(const Halide::Error &e, const ScheduleSpec &spec, const NpuSchedule &npu) {
    std::string msg = halide_message(e);
    // The directive that last touched a Func the message names is the likely culprit.
    for (size_t n = spec.directives.size(); n-- > 0;) {
        const Directive &d = spec.directives[n];
        std::vector<std::string> names = {d.func};
        for (const auto &sb : npu.staged) {
            if (sb.directive_id == d.id) {
                names.push_back(sb.func);
            }
        }
        for (const auto &name : names) {
            if (msg.find("\"" + name + "\"") != std::string::npos || msg.find(" " + name + ".") != std::string::npos) {
                user_error(where(d, n), ": lowering the scheduled pipeline failed: ", msg);
            }
        }
    }
    user_error("lowering the scheduled pipeline failed: ", msg);
}

} // namespace tessel
