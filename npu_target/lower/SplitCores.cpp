#include "npu_target/lower/SplitCores.h"

#include "npu_target/common/Error.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Split : public IRMutator {
public:
    Split(const CoreSplit &cs) : cs_(cs) {}
    bool done = false;

private:
    const CoreSplit &cs_;
    using IRMutator::visit;

    bool matches(const std::string &name) const {
        const std::string prefix = cs_.func + ".s0.";
        const std::string suffix = "." + cs_.loop;
        return name.rfind(prefix, 0) == 0 && name.size() >= suffix.size() &&
               name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    }
    Stmt visit(const For *op) override {
        if (done || !matches(op->name)) {
            return IRMutator::visit(op);
        }
        done = true;
        Expr core = Variable::make(Int(32), kCoreIdVar);
        Expr n = make_const(Int(32), cs_.cores);
        Expr chunk = (op->extent + n - 1) / n;
        Expr begin = min(core * chunk, op->extent);
        Expr end = min(begin + chunk, op->extent);
        Stmt body = mutate(op->body);
        return For::make(op->name, simplify(op->min + begin), simplify(end - begin), ForType::Serial, op->device_api,
                         body);
    }
};

} // namespace

nir::NpuModule split_cores(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    for (const CoreSplit &cs : m.schedule.core_splits) {
        Split s(cs);
        r.body = s.mutate(r.body);
        if (!s.done) {
            user_error("directive ", cs.directive_id, " (parallel ", cs.func.substr(0, cs.func.find('$')), ".", cs.loop,
                       " over ", cs.cores, " cores): no loop ", cs.loop, " in the pure stage of ",
                       cs.func.substr(0, cs.func.find('$')), " (split across cores works on the Func's own loops)");
        }
        r.cores = std::max(r.cores, cs.cores);
    }
    return r;
}

} // namespace tessel
