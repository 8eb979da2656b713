#include "npu_target/lower/InferDma.h"

#include "npu_target/common/Error.h"
#include "npu_target/lower/DmaInference.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class ReplaceCopies : public IRMutator {
public:
    explicit ReplaceCopies(nir::NpuModule &m) : m_(m) {}

private:
    nir::NpuModule &m_;
    using IRMutator::visit;

    std::vector<std::string> funcs_;

    Stmt visit(const ProducerConsumer *op) override {
        if (!op->is_producer) {
            return IRMutator::visit(op);
        }
        funcs_.push_back(op->name);
        std::string why;
        Stmt body;
        if (auto copy = match_copy(op->body, &why)) {
            body = make_dma(*copy, op->name, why);
        }
        if (!body.defined()) {
            body = mutate(op->body);
        }
        funcs_.pop_back();
        return ProducerConsumer::make(op->name, true, body);
    }

    // A loop nest anywhere (e.g. the copy of an on-chip tile into the output
    // inside the tile loop) that is a pure copy.
    Stmt visit(const For *op) override {
        std::string why;
        if (auto copy = match_copy(op, &why)) {
            Stmt dma = make_dma(*copy, funcs_.empty() ? copy->dst : funcs_.back(), why);
            if (dma.defined()) {
                return dma;
            }
        }
        return IRMutator::visit(op);
    }

    Stmt make_dma(const CopyPattern &c, const std::string &func, std::string &why) {
        auto d = m_.buffers.find(c.dst), s = m_.buffers.find(c.src);
        if (d == m_.buffers.end() || s == m_.buffers.end()) {
            why = "a buffer of the copy is not placed";
            return Stmt();
        }
        const ArchSpec &arch = *m_.arch;
        const DmaEngine *eng = arch.engine_for(s->second.level, d->second.level);
        if (!eng) {
            why = "no transfer engine of " + arch.name + " moves data from " + s->second.level + " to " + d->second.level;
            return Stmt();
        }
        // A dimension longer than the engine's count limit (a contiguous
        // innermost run counts in bursts: DmaEngine::count_limit) is split into
        // an inner run of the largest divisor within the limit and an outer count.
        CopyPattern split = c;
        split.dims.clear();
        for (const CopyDim &dim : c.dims) {
            const bool run = split.dims.empty() && dim.dst_stride == 1 && dim.src_stride == 1;
            const int64_t limit = eng->count_limit(static_cast<int>(split.dims.size()), c.type.bytes(), run);
            if (dim.count <= limit) {
                split.dims.push_back(dim);
                continue;
            }
            int64_t f = limit;
            while (f > 1 && dim.count % f != 0) {
                f--;
            }
            if (f <= 1) {
                why = "a copy dimension of " + std::to_string(dim.count) + " elements exceeds " + eng->name +
                      "'s limit of " + std::to_string(limit) + " (max_count " + std::to_string(eng->max_count) +
                      ") and has no divisor within it";
                return Stmt();
            }
            split.dims.push_back({f, dim.dst_stride, dim.src_stride});
            split.dims.push_back({dim.count / f, dim.dst_stride * f, dim.src_stride * f});
        }
        return make_dma_dims(split, func, eng);
    }

    Stmt make_dma_dims(const CopyPattern &c, const std::string &func, const DmaEngine *eng) {
        const ArchSpec &arch = *m_.arch;
        nir::DmaOp op;
        op.engine = static_cast<int>(eng - arch.engines.data());
        op.elem_bytes = c.type.bytes();
        op.prov = m_.provenance_id(func, "");
        const size_t hw = std::min<size_t>(c.dims.size(), std::max(1, std::min(eng->max_dims, 4)));
        for (size_t i = 0; i < hw; i++) {
            op.dims.push_back({c.dims[i].count, c.dims[i].dst_stride, c.dims[i].src_stride});
        }
        // Dimensions beyond the descriptor become loops around it.
        std::vector<std::string> vars;
        Expr db = c.dst_base, sb = c.src_base;
        for (size_t i = hw; i < c.dims.size(); i++) {
            std::string v = func + ".$dma" + std::to_string(i);
            Expr var = Variable::make(Int(32), v);
            db = db + var * make_const(Int(32), c.dims[i].dst_stride);
            sb = sb + var * make_const(Int(32), c.dims[i].src_stride);
            vars.push_back(v);
        }
        op.dst = {c.dst, simplify(db)};
        op.src = {c.src, simplify(sb)};
        Stmt body = op.make();
        for (size_t i = hw; i < c.dims.size(); i++) {
            body = For::make(vars[i - hw], 0, make_const(Int(32), c.dims[i].count), ForType::Serial, DeviceAPI::None, body);
        }
        return body;
    }
};

} // namespace

nir::NpuModule infer_dma(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = ReplaceCopies(r).mutate(m.body);
    return r;
}

} // namespace tessel
