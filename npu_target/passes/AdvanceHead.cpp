#include "npu_target/passes/AdvanceHead.h"

#include "npu_target/passes/LoopBody.h"

#include <algorithm>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;

namespace {

// How often a statement node occurs in `s` (Halide shares equal subtrees: a
// statement copied into two places without change is one node, and replacing
// it by identity would change both).
int occurrences(const Stmt &s, const IRNode *node) {
    struct Count : public IRVisitor {
        const IRNode *node;
        int n = 0;
        using IRVisitor::visit;
        void visit(const Evaluate *op) override { n += op == node; }
        void visit(const For *op) override {
            n += op == node;
            IRVisitor::visit(op);
        }
        void visit(const IfThenElse *op) override {
            n += op == node;
            IRVisitor::visit(op);
        }
        void visit(const Store *op) override { n += op == node; }
    } c;
    c.node = node;
    s.accept(&c);
    return c.n;
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
        size_t h = 0;
        for (; h < all.leaves.size(); h++) {
            const Leaf &l = all.leaves[h];
            if (l.depth > 0 || l.a.pipe == Pipe::V || l.a.pipe == Pipe::S || !l.a.scalar_reads.empty() ||
                !(nir::as_dma(l.s) || nir::as_mmad(l.s))) {
                break;
            }
        }
        // Only a body with vector work: the waits this removes are other
        // pipes waiting for what the vector unit queued before them.
        const bool vector = std::any_of(all.leaves.begin(), all.leaves.end(), [](const Leaf &l) { return l.a.pipe == Pipe::V; });
        if (h == 0 || h == all.leaves.size() || !vector) {
            return Stmt();
        }
        std::set<std::string> writes, reads;
        for (size_t i = 0; i < h; i++) {
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
        std::set<Pipe> pipes;
        for (size_t i = 0; i < h; i++) {
            pipes.insert(all.leaves[i].a.pipe);
        }
        const Leaf *last = nullptr;
        bool touched = false;
        std::set<std::string> pipe_outputs;
        for (size_t i = h; i < all.leaves.size(); i++) {
            const Leaf &l = all.leaves[i];
            for (const auto &b : l.a.writes) {
                if (writes.count(b) || reads.count(b)) {
                    return Stmt();
                }
            }
            if (pipes.count(l.a.pipe)) {
                pipe_outputs.insert(l.a.writes.begin(), l.a.writes.end());
            }
            if (touches(l.a, writes) || pipes.count(l.a.pipe) || touches(l.a, pipe_outputs)) {
                last = &l;
                touched = touched || touches(l.a, writes);
            }
        }
        if (!touched) {
            return Stmt();
        }
        // The head may use only the loop's variable and those bound outside the loop.
        Leaves head_vars(m_, nullptr);
        std::vector<Stmt> head;
        for (size_t i = 0; i < h; i++) {
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
        for (size_t i = 0; i < h; i++) {
            if (occurrences(body, all.leaves[i].s.get()) != 1) {
                return Stmt();
            }
        }
        const Stmt head_stmt = Block::make(head);
        const Expr v = Variable::make(Int(32), op->name);
        const Expr end = op->min + make_const(Int(32), extent);
        const Stmt nothing = Evaluate::make(make_zero(Int(32)));
        Stmt new_body = body;
        for (size_t i = 0; i < h; i++) {
            new_body = Replace(all.leaves[i].s.get(), nothing).mutate(new_body);
        }
        Stmt next = IfThenElse::make(v + 1 < end, substitute(op->name, v + 1, head_stmt));
        new_body = Replace(last->top.get(), Block::make(last->top, next)).mutate(new_body);
        DropAllocations drop(keep);
        new_body = drop.mutate(new_body);
        if (drop.dropped.size() != keep.size()) {
            return Stmt();
        }
        Stmt s = Block::make(substitute(op->name, op->min, head_stmt),
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
