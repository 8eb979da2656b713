#include "npu_target/passes/AdvanceHead.h"

#include "npu_target/passes/LoopBody.h"

#include <algorithm>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;

namespace {

// `s` with new statement nodes for its operations, so the copy of the head
// before the loop and the one in the body stay distinct nodes (an operation
// that does not use the loop's variable would otherwise be shared, and a
// later rewrite of the enclosing loop could not move one without the other).
Stmt fresh(const Stmt &s) {
    struct Copy : public IRMutator {
        using IRMutator::visit;
        Stmt visit(const Evaluate *op) override { return Evaluate::make(op->value); }
    } c;
    return c.mutate(s);
}

bool touches(const Accesses &a, const std::set<std::string> &bufs) {
    for (const auto *names : {&a.reads, &a.writes, &a.scalar_reads}) {
        for (const auto &b : *names) {
            if (bufs.count(b)) {
                return true;
            }
        }
    }
    return false;
}

class Advance : public IRMutator {
public:
    explicit Advance(const nir::NpuModule &m) : m_(m) {}

private:
    const nir::NpuModule &m_;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const int64_t *extent = as_const_int(op->extent);
        if (op->for_type == ForType::Serial && extent && *extent > 1) {
            Stmt r = advance(op, body, *extent);
            if (r.defined()) {
                return r;
            }
        }
        return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    }

    // The loop rewritten, or undefined when it does not qualify.
    Stmt advance(const For *op, const Stmt &body, int64_t extent) {
        Leaves all(m_, nullptr);
        body.accept(&all);
        if (all.has_sync) {
            return Stmt();
        }
        // The head: the body's leading DMAs and MMADs. Vector operations among
        // them that touch nothing the head reads or writes (the outer loop's
        // initialisation of its accumulators) stay where they are.
        std::vector<size_t> head_at, stay;
        size_t h = 0; // the first operation after the head
        for (size_t i = 0; i < all.leaves.size(); i++) {
            const Leaf &l = all.leaves[i];
            if (l.depth > 0 || !l.a.scalar_reads.empty()) {
                break;
            }
            if (l.a.pipe != Pipe::V && l.a.pipe != Pipe::S && (nir::as_dma(l.s) || nir::as_mmad(l.s))) {
                head_at.push_back(i);
                h = i + 1;
            } else if (l.a.pipe == Pipe::V && nir::as_vec(l.s)) {
                stay.push_back(i);
            } else {
                break;
            }
        }
        while (!stay.empty() && stay.back() >= h) {
            stay.pop_back();
        }
        // Only a body with vector work: the waits this removes are other
        // pipes waiting for what the vector unit queued before them.
        const bool vector = std::any_of(all.leaves.begin(), all.leaves.end(), [](const Leaf &l) { return l.a.pipe == Pipe::V; });
        if (head_at.empty() || h == all.leaves.size() || !vector) {
            return Stmt();
        }
        std::set<std::string> writes, reads;
        for (size_t i : head_at) {
            writes.insert(all.leaves[i].a.writes.begin(), all.leaves[i].a.writes.end());
            reads.insert(all.leaves[i].a.reads.begin(), all.leaves[i].a.reads.end());
        }
        std::set<std::string> keep; // allocations that move out of the loop
        for (const auto &b : writes) {
            auto alloc = all.allocated.find(b);
            if (!single_copy_scratch(m_, b) || all.loaded.count(b) || alloc == all.allocated.end() || alloc->second > 0) {
                return Stmt();
            }
            keep.insert(b);
        }
        // The insertion point: after the last operation that touches what the
        // head writes, the last one on a pipe the head uses and the last one
        // reading what such an operation writes (the head of t + 1 queues
        // behind iteration t's work on its pipes, and a later operation that
        // waits for that work does not wait for the head too). Nothing after
        // the head may write what it reads or writes.
        for (size_t i : stay) {
            if (touches(all.leaves[i].a, writes) || touches(all.leaves[i].a, reads)) {
                return Stmt();
            }
        }
        std::set<Pipe> pipes;
        for (size_t i : head_at) {
            pipes.insert(all.leaves[i].a.pipe);
        }
        const Leaf *last = nullptr;
        bool touched = false;
        std::set<std::string> pipe_outputs;
        size_t last_i = h;
        for (size_t i = h; i < all.leaves.size(); i++) {
            const Leaf &l = all.leaves[i];
            if (pipes.count(l.a.pipe)) {
                pipe_outputs.insert(l.a.writes.begin(), l.a.writes.end());
            }
            if (touches(l.a, writes) || pipes.count(l.a.pipe) || touches(l.a, pipe_outputs)) {
                last = &l;
                last_i = i;
                touched = touched || touches(l.a, writes);
            }
        }
        if (!touched) {
            return Stmt();
        }
        // What the rest of iteration t writes before the insertion point, the
        // head of t + 1 sees there as it did at the top of t + 1; nothing after
        // it may write what the head reads or writes.
        for (size_t i = last_i + 1; i < all.leaves.size(); i++) {
            if (all.leaves[i].top.same_as(last->top)) {
                continue;
            }
            for (const auto &b : all.leaves[i].a.writes) {
                if (writes.count(b) || reads.count(b)) {
                    return Stmt();
                }
            }
        }
        // The head may use only the loop's variable and those bound outside the loop.
        Leaves head_vars(m_, nullptr);
        std::vector<Stmt> head;
        for (size_t i : head_at) {
            head.push_back(all.leaves[i].s);
            all.leaves[i].s.accept(&head_vars);
        }
        for (const auto &name : head_vars.used) {
            if (name != op->name && all.defined.count(name)) {
                return Stmt();
            }
        }
        if (occurrences(body, last->top.get()) != 1) {
            return Stmt();
        }
        for (size_t i : head_at) {
            if (occurrences(body, all.leaves[i].s.get()) != 1) {
                return Stmt();
            }
        }
        const Stmt head_stmt = Block::make(head);
        const Expr v = Variable::make(Int(32), op->name);
        const Expr end = op->min + make_const(Int(32), extent);
        const Stmt nothing = Evaluate::make(make_zero(Int(32)));
        Stmt new_body = body;
        for (size_t i : head_at) {
            new_body = Replace(all.leaves[i].s.get(), nothing).mutate(new_body);
        }
        Stmt next = IfThenElse::make(v + 1 < end, substitute(op->name, v + 1, head_stmt));
        new_body = Replace(last->top.get(), Block::make(last->top, next)).mutate(new_body);
        DropAllocations drop(keep);
        new_body = drop.mutate(new_body);
        if (drop.dropped.size() != keep.size()) {
            return Stmt();
        }
        Stmt s = Block::make(fresh(substitute(op->name, op->min, head_stmt)),
                             For::make(op->name, op->min, op->extent, op->for_type, op->device_api, new_body));
        return wrap_allocations(drop, s);
    }
};

} // namespace

nir::NpuModule advance_head(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = Advance(r).mutate(m.body);
    return r;
}

} // namespace tessel
