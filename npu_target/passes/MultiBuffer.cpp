#include "npu_target/passes/MultiBuffer.h"

#include "npu_target/common/Error.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Adds `offset` to every index into `buffer`.
class OffsetAccesses : public IRMutator {
public:
    OffsetAccesses(std::string buffer, Expr offset) : buffer_(std::move(buffer)), offset_(std::move(offset)) {}

private:
    std::string buffer_;
    Expr offset_;
    using IRMutator::visit;

    Expr shifted(const Expr &index) const {
        if (index.type().is_vector()) {
            return index + Broadcast::make(offset_, index.type().lanes());
        }
        return index + offset_;
    }
    // A buffer reference: its index may itself load from the buffer (scalar
    // operands are read by the scalar unit), then the reference is shifted.
    nir::BufRef fix(const nir::BufRef &r) {
        Expr index = r.index.defined() ? mutate(r.index) : r.index;
        return r.buffer == buffer_ ? nir::BufRef{r.buffer, simplify(index + offset_)} : nir::BufRef{r.buffer, index};
    }
    Expr visit(const Load *op) override {
        Expr idx = mutate(op->index);
        if (op->name == buffer_) {
            idx = shifted(idx);
        }
        return Load::make(op->type, op->name, idx, op->image, op->param, mutate(op->predicate), op->alignment);
    }
    Stmt visit(const Store *op) override {
        Expr idx = mutate(op->index);
        if (op->name == buffer_) {
            idx = shifted(idx);
        }
        return Store::make(op->name, mutate(op->value), idx, op->param, mutate(op->predicate), op->alignment);
    }
    Stmt visit(const Evaluate *op) override {
        Stmt s(op);
        if (auto d = nir::as_dma(s)) {
            d->dst = fix(d->dst);
            d->src = fix(d->src);
            return d->make();
        }
        if (auto v = nir::as_vec(s)) {
            v->dst = fix(v->dst);
            if (!v->a.buffer.empty()) {
                v->a = fix(v->a);
            }
            if (!v->b.buffer.empty()) {
                v->b = fix(v->b);
            }
            if (v->scalar.defined()) {
                v->scalar = mutate(v->scalar); // e.g. a broadcast element loaded from the rotating buffer
            }
            return v->make();
        }
        if (auto mm = nir::as_mmad(s)) {
            mm->c = fix(mm->c);
            mm->a = fix(mm->a);
            mm->b = fix(mm->b);
            return mm->make();
        }
        return IRMutator::visit(op);
    }
};

class Rotate : public IRMutator {
public:
    explicit Rotate(nir::NpuModule &m) : m_(m) {}

private:
    nir::NpuModule &m_;
    std::vector<const For *> loops_;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        loops_.push_back(op);
        Stmt s = IRMutator::visit(op);
        loops_.pop_back();
        return s;
    }
    Stmt visit(const Allocate *op) override {
        Stmt body = mutate(op->body);
        nir::BufferInfo &b = m_.buffers.at(op->name);
        if (b.buffers > 1) {
            if (loops_.empty()) {
                m_.diagnostics.push_back({BackendDiagnostic::Severity::Warning,
                                          "buffer " + op->name + " asks for buffers=" + std::to_string(b.buffers) +
                                              " but is not allocated inside a loop; it gets one copy",
                                          b.directive, op->name});
                b.buffers = 1;
            } else {
                const For *L = loops_.back();
                const int64_t copy_elems = b.copy_bytes(*m_.arch) / b.type.bytes();
                Expr t = Variable::make(Int(32), L->name) - L->min;
                Expr offset = (t % make_const(Int(32), b.buffers)) * make_const(Int(32), copy_elems);
                body = OffsetAccesses(op->name, offset).mutate(body);
                b.rotate_loop = L->name;
            }
        }
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body, op->new_expr,
                              op->free_function);
    }
};

} // namespace

nir::NpuModule multi_buffer(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = Rotate(r).mutate(m.body);
    return r;
}

} // namespace tessel
