#include "npu_target/passes/UniformRows.h"

#include "npu_target/lower/FoldVectorLoops.h"

#include <map>
#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

bool is_reduction(isa::Op op) { return op == isa::Op::VREDSUM || op == isa::Op::VREDMAX; }

// The vector operations in program order, and the buffers anything else touches.
class Survey : public IRVisitor {
public:
    std::vector<nir::VecOp> ops;
    std::set<std::string> other;

private:
    using IRVisitor::visit;
    void visit(const Evaluate *op) override {
        if (auto v = nir::as_vec(op)) {
            ops.push_back(*v);
            if (v->scalar.defined()) {
                v->scalar.accept(this);
            }
            return;
        }
        if (auto d = nir::as_dma(op)) {
            other.insert(d->dst.buffer);
            other.insert(d->src.buffer);
            return;
        }
        if (auto mm = nir::as_mmad(op)) {
            other.insert({mm->c.buffer, mm->a.buffer, mm->b.buffer});
            return;
        }
        if (auto f = nir::as_fixparam(op)) {
            other.insert({f->bias.buffer, f->scale.buffer});
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        other.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        other.insert(op->name);
        IRVisitor::visit(op);
    }
};

bool multiple_of(const Expr &index, int64_t g) { return can_prove(simplify(index % make_const(index.type(), g) == 0)); }

// Every row of the access starts a group of g (row stride a multiple of g).
bool rows_aligned(const nir::VecOp &v, int i, const Expr &index, int64_t g) {
    return multiple_of(index, g) && (v.rows == 1 || v.row_stride[i] % g == 0);
}

// The group size of each buffer that only vector operations touch in whole
// aligned groups (writes) or within one group or at one element per row
// (reads); nothing for the others.
std::map<std::string, int64_t> candidates(const nir::NpuModule &m, const Survey &s) {
    std::map<std::string, int64_t> group;
    std::set<std::string> bad = s.other;
    for (const auto &v : s.ops) {
        if (v.dst.buffer.empty() || is_reduction(v.op) || v.stride[0] != 1 || v.n < 2) {
            bad.insert(v.dst.buffer);
            continue;
        }
        auto [it, fresh] = group.emplace(v.dst.buffer, v.n);
        if (!fresh && it->second != v.n) {
            bad.insert(v.dst.buffer);
        }
    }
    for (const auto &v : s.ops) {
        const nir::BufRef *refs[3] = {&v.dst, &v.a, &v.b};
        for (int i = 0; i < 3; i++) {
            auto g = group.find(refs[i]->buffer);
            if (g == group.end()) {
                continue;
            }
            const bool ok = v.stride[i] == 0 ? (v.rows == 1 || v.row_stride[i] % g->second == 0)
                                             : v.stride[i] == 1 && v.n <= g->second && (i > 0 || v.n == g->second) &&
                                                   rows_aligned(v, i, refs[i]->index, g->second);
            if (!ok) {
                bad.insert(refs[i]->buffer);
            }
        }
    }
    for (auto it = group.begin(); it != group.end();) {
        auto b = m.buffers.find(it->first);
        const bool keep = !bad.count(it->first) && b != m.buffers.end() && !b->second.is_arg &&
                          b->second.buffers == 1 && b->second.level == m.arch->vector.level &&
                          b->second.elems % it->second == 0;
        it = keep ? std::next(it) : group.erase(it);
    }
    return group;
}

// The fixed point: a candidate stays uniform while every operation writing it
// reads only stride-0 operands and uniform buffers.
void keep_uniform(std::map<std::string, int64_t> &u, const std::vector<nir::VecOp> &ops) {
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto &v : ops) {
            if (!u.count(v.dst.buffer)) {
                continue;
            }
            const nir::BufRef *srcs[2] = {&v.a, &v.b};
            bool uniform = true;
            for (int i = 0; i < 2; i++) {
                uniform = uniform && (srcs[i]->buffer.empty() || v.stride[i + 1] == 0 || u.count(srcs[i]->buffer));
            }
            if (!uniform) {
                u.erase(v.dst.buffer);
                changed = true;
            }
        }
    }
}

class Compact : public IRMutator {
public:
    explicit Compact(const std::map<std::string, int64_t> &u) : u_(u) {}

private:
    const std::map<std::string, int64_t> &u_;
    using IRMutator::visit;

    Stmt visit(const Evaluate *op) override {
        auto v = nir::as_vec(op);
        if (!v) {
            return op;
        }
        nir::BufRef *refs[3] = {&v->dst, &v->a, &v->b};
        const bool narrow = u_.count(v->dst.buffer) > 0;
        bool touched = false;
        for (int i = 0; i < 3; i++) {
            auto g = u_.find(refs[i]->buffer);
            if (g == u_.end()) {
                continue;
            }
            touched = true;
            const Expr gx = make_const(refs[i]->index.type(), g->second);
            refs[i]->index = simplify(refs[i]->index / gx);
            v->row_stride[i] = v->rows == 1 ? 0 : static_cast<int32_t>(v->row_stride[i] / g->second);
            if (i > 0) {
                v->stride[i] = 0;
            }
        }
        if (!touched) {
            return op;
        }
        if (narrow) {
            v->n = 1;
            rows_as_elements(*v);
        }
        return v->make();
    }
    Stmt visit(const Allocate *op) override {
        auto g = u_.find(op->name);
        Stmt body = mutate(op->body);
        if (g == u_.end()) {
            return body.same_as(op->body) ? Stmt(op) : Allocate::make(op->name, op->type, op->memory_type, op->extents,
                                                                       op->condition, body);
        }
        Expr n = make_const(Int(32), 1);
        for (const Expr &e : op->extents) {
            n = n * e;
        }
        return Allocate::make(op->name, op->type, op->memory_type, {simplify(n / make_const(Int(32), g->second))},
                              op->condition, body);
    }
};

} // namespace

nir::NpuModule uniform_rows(const nir::NpuModule &m) {
    Survey s;
    m.body.accept(&s);
    std::map<std::string, int64_t> u = candidates(m, s);
    keep_uniform(u, s.ops);
    if (u.empty()) {
        return m;
    }
    nir::NpuModule r = m;
    r.body = Compact(u).mutate(m.body);
    for (const auto &[name, g] : u) {
        r.buffers.at(name).elems /= g;
    }
    return r;
}

} // namespace tessel
