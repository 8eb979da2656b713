#include "npu_target/passes/MultiBuffer.h"

#include "npu_target/common/Error.h"

#include <algorithm>
#include <map>
#include <set>

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
        if (auto f = nir::as_fixparam(s)) {
            f->bias = fix(f->bias);
            f->scale = fix(f->scale);
            return f->make();
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

// The multi-buffered allocations inside each loop (and inside each
// allocation), by name.
class MultiBufferedInside : public IRVisitor {
public:
    explicit MultiBufferedInside(const nir::NpuModule &m) : m_(m) {}
    std::map<const void *, std::set<std::string>> inside;

private:
    const nir::NpuModule &m_;
    std::vector<const void *> open_;
    using IRVisitor::visit;
    void visit(const For *op) override {
        open_.push_back(op);
        IRVisitor::visit(op);
        open_.pop_back();
    }
    void visit(const Allocate *op) override {
        auto b = m_.buffers.find(op->name);
        if (b != m_.buffers.end() && b->second.buffers > 1) {
            for (const void *o : open_) {
                inside[o].insert(op->name);
            }
        }
        open_.push_back(op);
        IRVisitor::visit(op);
        open_.pop_back();
    }
};

// The copy a multi-buffered buffer uses is the number of times the body of its
// rotation loop (the innermost loop around the allocation) has run, modulo the
// copies. The count continues across the enclosing loops as far out as every
// loop runs its inner one a fixed number of times: serial loops with constant
// extents and no branch in between. Then copy k+N is copy k for every k, the
// property the credit protocol needs, and the pipeline does not drain at the
// end of each inner loop (the next tile's first transfer can go while the last
// tile computes). It stops below a loop that also holds a multi-buffered
// buffer of the same level in a separate part of its body (conv2d's stride-2
// phases: one update each, in turn): rotating across that loop would hold both
// buffers' copies for the whole loop, where each needs them only in its part.
class Rotate : public IRMutator {
public:
    explicit Rotate(nir::NpuModule &m) : m_(m) {
        MultiBufferedInside f(m);
        m.body.accept(&f);
        inside_ = std::move(f.inside);
    }

private:
    nir::NpuModule &m_;
    std::vector<const For *> path_; // enclosing loops, outermost first; nullptr = a branch
    std::vector<std::string> allocations_; // enclosing allocations
    std::map<const void *, std::set<std::string>> inside_;
    using IRMutator::visit;

    // Whether `loop` holds a multi-buffered buffer of `level` that neither
    // encloses nor is inside allocation `a`.
    bool separate_rotation(const For *loop, const Allocate *a, const std::string &level) const {
        auto in_loop = inside_.find(loop);
        if (in_loop == inside_.end()) {
            return false;
        }
        auto in_a = inside_.find(a);
        for (const std::string &other : in_loop->second) {
            const bool related = other == a->name ||
                                 std::find(allocations_.begin(), allocations_.end(), other) != allocations_.end() ||
                                 (in_a != inside_.end() && in_a->second.count(other));
            if (!related && m_.buffers.at(other).level == level) {
                return true;
            }
        }
        return false;
    }

    Stmt visit(const For *op) override {
        path_.push_back(op);
        Stmt s = IRMutator::visit(op);
        path_.pop_back();
        return s;
    }
    Stmt visit(const IfThenElse *op) override {
        path_.push_back(nullptr);
        Stmt s = IRMutator::visit(op);
        path_.pop_back();
        return s;
    }
    Stmt visit(const Allocate *op) override {
        allocations_.push_back(op->name);
        Stmt body = mutate(op->body);
        allocations_.pop_back();
        nir::BufferInfo &b = m_.buffers.at(op->name);
        if (b.buffers > 1) {
            // The innermost loop around the allocation; with a branch in
            // between, the rotation stays on that loop (as before this count
            // existed): the branch may skip iterations.
            size_t li = path_.size();
            bool branch = false;
            while (li > 0 && path_[li - 1] == nullptr) {
                li--;
                branch = true;
            }
            if (li == 0) {
                m_.diagnostics.push_back({BackendDiagnostic::Severity::Warning,
                                          "buffer " + op->name + " asks for buffers=" + std::to_string(b.buffers) +
                                              " but is not allocated inside a loop; it gets one copy",
                                          b.directive, op->name});
                b.buffers = 1;
            } else {
                const For *L = path_[li - 1];
                Expr count = Variable::make(Int(32), L->name) - L->min;
                const For *scope = L;
                const int64_t *inner_extent = as_const_int(L->extent);
                int64_t stride = inner_extent && !branch ? *inner_extent : 0;
                for (size_t i = li - 1; i-- > 0 && stride > 0;) {
                    const For *outer = path_[i];
                    if (outer == nullptr || outer->for_type != ForType::Serial ||
                        separate_rotation(outer, op, b.level)) {
                        break;
                    }
                    count = count + (Variable::make(Int(32), outer->name) - outer->min) * make_const(Int(32), stride);
                    scope = outer;
                    const int64_t *e = as_const_int(outer->extent);
                    stride = e ? stride * *e : 0;
                }
                const int64_t copy_elems = b.copy_bytes(*m_.arch) / b.type.bytes();
                Expr offset = (count % make_const(Int(32), b.buffers)) * make_const(Int(32), copy_elems);
                body = OffsetAccesses(op->name, offset).mutate(body);
                b.rotate_count = simplify(count);
                b.rotate_loop = L->name;
                b.rotate_scope = scope->name;
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
