#include "npu_target/lower/Specialize.h"

#include "Halide.h"

#include <map>

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
    Stmt visit(const AssertStmt *) override { return Evaluate::make(0); }
};

} // namespace

Stmt specialize_for_npu(const Stmt &s, const std::vector<isa::ArgDesc> &args) {
    Stmt r = SubstituteArgumentMetadata(args).mutate(s);
    r = lower_intrinsics(r);
    r = simplify(r);
    return r;
}

nir::NpuModule specialize(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = specialize_for_npu(m.body, m.args);
    return r;
}

} // namespace tessel
