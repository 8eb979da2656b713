#include "npu_target/lower/Specialize.h"

#include "Halide.h"

#include <map>
#include <sstream>

#include "npu_target/common/Error.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Buffer metadata of the dense arguments: "A.min.0" -> 0, "A.extent.1" -> M, "A.stride.1" -> K.
std::map<std::string, int64_t> argument_constants(const std::vector<isa::ArgDesc> &args) {
    std::map<std::string, int64_t> c;
    for (const auto &a : args) {
        int64_t stride = 1;
        for (size_t d = 0; d < a.shape.size(); d++) {
            std::string p = a.name + ".";
            std::string ds = std::to_string(d);
            c[p + "min." + ds] = 0;
            c[p + "extent." + ds] = a.shape[d];
            c[p + "stride." + ds] = stride;
            stride *= a.shape[d];
        }
    }
    return c;
}

class SubstituteArgumentMetadata : public IRMutator {
public:
    explicit SubstituteArgumentMetadata(const std::vector<isa::ArgDesc> &args) : consts(argument_constants(args)) {
        for (const auto &a : args) {
            names.insert(a.name);
            names.insert(a.name + ".buffer");
        }
    }

private:
    std::map<std::string, int64_t> consts;
    std::set<std::string> names;
    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        auto it = consts.find(op->name);
        if (it != consts.end()) {
            Stmt body = mutate(op->body);
            return substitute(op->name, make_const(op->value.type(), it->second), body);
        }
        if (names.count(op->name)) { // the host pointer: Loads/Stores name the buffer directly
            return mutate(op->body);
        }
        return IRMutator::visit(op);
    }
    Expr visit(const Variable *op) override {
        auto it = consts.find(op->name);
        if (it != consts.end()) {
            return make_const(op->type, it->second);
        }
        return op;
    }
    // Halide's bounds checks: with the argument shapes constant, a check that
    // simplifies to false is a schedule that reads or writes outside an
    // argument (e.g. a vector or tile wider than the data with no tail
    // handling): a user error with Halide's own explanation. Checks that hold,
    // or that cannot be decided, go (the NPU has no assertion mechanism).
    Stmt visit(const AssertStmt *op) override {
        Expr cond = simplify(mutate(op->condition));
        if (is_const_zero(cond)) {
            user_error("the schedule accesses outside an argument buffer: ", describe_failure(mutate(op->message)));
        }
        return Evaluate::make(0);
    }
    static std::string describe_failure(const Expr &message) {
        const Call *c = message.as<Call>();
        if (!c) {
            std::ostringstream os;
            os << message;
            return os.str();
        }
        std::ostringstream os;
        os << c->name << "(";
        for (size_t i = 0; i < c->args.size(); i++) {
            Expr a = simplify(c->args[i]);
            if (const StringImm *s = a.as<StringImm>()) {
                os << (i ? ", " : "") << s->value;
            } else {
                os << (i ? ", " : "") << a;
            }
        }
        os << ")";
        std::string text = os.str();
        // halide_error_access_out_of_bounds(func, dim, min_touched, max_touched, min_valid, max_valid)
        if (c->name == "halide_error_access_out_of_bounds" && c->args.size() == 6) {
            auto v = [&](int i) {
                std::ostringstream o;
                o << simplify(c->args[i]);
                return o.str();
            };
            const StringImm *f = c->args[0].as<StringImm>();
            return std::string(f ? f->value : "?") + " is accessed at [" + v(2) + ", " + v(3) + "] in dimension " +
                   v(1) + ", outside its valid range [" + v(4) + ", " + v(5) + "]";
        }
        return text;
    }
};

// Halide may allocate one Func more than once (e.g. computed at each of two
// uses): each allocation after the first gets its own name ("f.2", ...), used
// by the loads, stores and produce/consume nodes inside its scope, so that
// every buffer of the NPU module is one allocation.
class UniquifyAllocations : public IRMutator {
    std::map<std::string, int> seen_;
    std::map<std::string, std::string> rename_; // active in the current scope
    using IRMutator::visit;

    std::string name(const std::string &n) const {
        auto it = rename_.find(n);
        return it == rename_.end() ? n : it->second;
    }
    Stmt visit(const Allocate *op) override {
        int &count = seen_[op->name];
        count++;
        if (count == 1) {
            return IRMutator::visit(op);
        }
        std::string fresh = op->name + "." + std::to_string(count);
        auto saved = rename_;
        rename_[op->name] = fresh;
        Stmt body = mutate(op->body);
        rename_ = saved;
        return Allocate::make(fresh, op->type, op->memory_type, op->extents, op->condition, body, op->new_expr,
                              op->free_function);
    }
    Expr visit(const Load *op) override {
        return Load::make(op->type, name(op->name), mutate(op->index), op->image, op->param, mutate(op->predicate),
                          op->alignment);
    }
    Stmt visit(const Store *op) override {
        return Store::make(name(op->name), mutate(op->value), mutate(op->index), op->param, mutate(op->predicate),
                           op->alignment);
    }
    Stmt visit(const ProducerConsumer *op) override {
        return ProducerConsumer::make(name(op->name), op->is_producer, mutate(op->body));
    }
    Stmt visit(const Free *op) override { return Free::make(name(op->name)); }
};

} // namespace

Stmt specialize_for_npu(const Stmt &s, const std::vector<isa::ArgDesc> &args) {
    Stmt r = SubstituteArgumentMetadata(args).mutate(s);
    r = lower_intrinsics(r);
    r = simplify(r);
    r = UniquifyAllocations().mutate(r);
    return r;
}

nir::NpuModule specialize(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = specialize_for_npu(m.body, m.args);
    return r;
}

} // namespace tessel
