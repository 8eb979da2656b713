#include "npu_target/lower/PlaceBuffers.h"

#include "npu_target/common/Error.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class CollectAllocations : public IRVisitor {
public:
    explicit CollectAllocations(nir::NpuModule &m) : m_(m), in_(m.schedule) {}

private:
    nir::NpuModule &m_;
    const NpuSchedule &in_;
    using IRVisitor::visit;

    void visit(const Allocate *op) override {
        int64_t elems = 1;
        for (const Expr &e : op->extents) {
            const int64_t *c = as_const_int(e);
            if (!c) {
                std::ostringstream os;
                os << e;
                user_error("buffer ", op->name, " has a size that is not constant (", os.str(),
                           "); the NPU needs constant-size buffers: split or tile its loops by constant factors");
            }
            elems *= *c;
        }
        nir::BufferInfo b;
        b.name = op->name;
        b.type = op->type;
        b.elems = elems;
        b.level = m_.arch->vector.level;
        for (const auto &s : in_.staged) {
            if (s.func == op->name) {
                b.level = s.level;
                b.buffers = std::max(1, s.buffers);
                b.directive = s.directive_id;
            }
        }
        for (const auto &a : in_.accumulate) {
            if (a.func == op->name) {
                b.level = a.level;
                b.buffers = std::max(1, a.buffers);
                b.directive = a.directive_id;
            }
        }
        if (b.directive.empty()) {
            auto it = in_.provenance.find(op->name);
            if (it != in_.provenance.end()) {
                b.directive = it->second;
            }
        }
        const MemoryLevel *L = m_.arch->find_level(b.level);
        if (!L) {
            user_error("buffer ", op->name, " is placed in level ", b.level, ", which ", m_.arch->name, " does not have",
                       b.directive.empty() ? "" : " (directive " + b.directive + ")");
        }
        if (L->off_chip) {
            user_error("buffer ", op->name, " is placed in the off-chip level ", b.level,
                       "; intermediate buffers must live on chip", b.directive.empty() ? "" : " (directive " + b.directive + ")");
        }
        if (m_.buffers.count(op->name)) {
            user_error("buffer ", op->name, " is allocated twice; the NPU backend needs one allocation per Func");
        }
        m_.buffers[op->name] = b;
        IRVisitor::visit(op);
    }
};

} // namespace

nir::NpuModule place_buffers(const nir::NpuModule &in) {
    TESSEL_INTERNAL_ASSERT(in.arch != nullptr);
    nir::NpuModule m = in;
    m.buffers.clear();
    std::string gm;
    for (const auto &L : in.arch->memories) {
        if (L.off_chip) {
            gm = L.name;
            break;
        }
    }
    if (gm.empty()) {
        user_error("arch ", in.arch->name, " has no off-chip level to hold kernel arguments");
    }
    for (size_t i = 0; i < in.args.size(); i++) {
        nir::BufferInfo b;
        b.name = in.args[i].name;
        int64_t n = 1;
        for (int64_t e : in.args[i].shape) {
            n *= e;
        }
        b.elems = n;
        b.level = gm;
        b.is_arg = true;
        b.arg_index = static_cast<int>(i);
        b.offset = 0;
        b.type = nir::halide_type_of(in.args[i].dtype);
        m.buffers[b.name] = b;
    }
    CollectAllocations c(m);
    m.body.accept(&c);
    return m;
}

} // namespace tessel
