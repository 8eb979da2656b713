#include "npu_target/passes/AdvanceHead.h"

#include "npu_target/passes/LoopBody.h"

#include <algorithm>
#include <numeric>

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

// Whether the statement node `leaf` is inside the allocation of every buffer in `names` in `s`.
bool inside_allocations(const Stmt &s, const std::set<std::string> &names, const IRNode *leaf) {
    struct Find : public IRVisitor {
        const std::set<std::string> *names;
        const IRNode *leaf;
        std::set<std::string> holding;
        using IRVisitor::visit;
        void visit(const Allocate *op) override {
            if (names->count(op->name) && occurrences(op->body, leaf) > 0) {
                holding.insert(op->name);
            }
            IRVisitor::visit(op);
        }
    } f;
    f.names = &names;
    f.leaf = leaf;
    s.accept(&f);
    return f.holding.size() == names.size();
}

// Whether one execution of `body` gives some pipe outside `skip` (and the
// scalar unit) as many operations as its queue holds: the scalar unit then
// stalls in the body until that pipe drains, and issues nothing after it.
bool fills_a_queue(const nir::NpuModule &m, const Stmt &body, const std::set<Pipe> &skip) {
    struct Count : public IRVisitor {
        const nir::NpuModule *m;
        std::map<Pipe, int64_t> ops;
        int64_t times = 1;
        using IRVisitor::visit;
        void visit(const For *op) override {
            const int64_t *e = as_const_int(op->extent);
            const int64_t saved = times;
            times *= e ? std::max<int64_t>(*e, 0) : 1 << 20;
            op->body.accept(this);
            times = saved;
        }
        void visit(const Evaluate *op) override {
            const Stmt st(op);
            if (nir::as_dma(st) || nir::as_mmad(st) || nir::as_vec(st) || nir::as_fixparam(st)) {
                // Each operation also takes about one flag's entry (insert_sync
                // runs later: the waits for its operands, the sets returning
                // them; conv2d's stride-2 band: 18 MMADs and 27 flags on M).
                ops[accesses_of(*m, st).pipe] += times * 2;
            }
        }
    } c;
    c.m = &m;
    body.accept(&c);
    for (const auto &[pipe, n] : c.ops) {
        if (pipe == Pipe::S || skip.count(pipe)) {
            continue;
        }
        auto depth = m.arch->pipes.find(isa::pipe_name(pipe));
        if (n >= (depth == m.arch->pipes.end() ? 32 : depth->second)) {
            return true;
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
            if (!r.defined()) {
                r = prefetch(op, body, *extent);
            }
            if (r.defined()) {
                return r;
            }
        }
        return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    }

    // A head of loads into buffers multi-buffered on the loop: each load
    // becomes `if (t == min) load(t)` and `if (t + 1 < end) load(t + 1)` where
    // it was, so the load of the next iteration's copy is issued before this
    // iteration's work instead of after it. The allocation stays in the body
    // (its copies live for the whole rotation scope); the analysis tells the
    // copies apart by their index (copies_ahead) and the writer takes the
    // credit of the body that used copy t + 1 last (N - 1 initial credits).
    // Only when no other operation of the body runs on the head's pipes (the
    // load would queue in front of this iteration's work on its pipe) and the
    // head reads nothing the body writes. Undefined when the loop does not qualify.
    Stmt prefetch(const For *op, const Stmt &body, int64_t extent) {
        Leaves all(m_, nullptr);
        body.accept(&all);
        if (all.has_sync) {
            return Stmt();
        }
        size_t h = 0;
        std::set<std::string> writes;
        std::set<Pipe> pipes;
        for (; h < all.leaves.size(); h++) {
            const Leaf &l = all.leaves[h];
            auto dma = nir::as_dma(l.s);
            if (l.depth > 0 || !l.a.scalar_reads.empty() || !dma || l.a.pipe == Pipe::S || !l.a.ahead.empty()) {
                break;
            }
            auto b = m_.buffers.find(dma->dst.buffer);
            auto alloc = all.allocated.find(dma->dst.buffer);
            // A loop of no more iterations than copies, whose rotation goes on
            // across the enclosing loops, would lose the overlap that rotation
            // gives (the next tile's first load waiting for this tile's last
            // read: auto-int8 GEMM's two k chunks, 92493 -> 104721 cycles).
            if (b == m_.buffers.end() || b->second.buffers < 2 || b->second.rotate_loop != op->name ||
                alloc == all.allocated.end() || alloc->second > 0 ||
                (extent <= b->second.buffers && b->second.rotate_scope != b->second.rotate_loop)) {
                break;
            }
            writes.insert(dma->dst.buffer);
            pipes.insert(l.a.pipe);
        }
        if (h == 0 || h == all.leaves.size() || !fills_a_queue(m_, body, pipes)) {
            return Stmt();
        }
        for (size_t i = 0; i < all.leaves.size(); i++) {
            const Leaf &l = all.leaves[i];
            if (i < h) {
                for (const auto &b : l.a.reads) {
                    if (writes.count(b) || all.loaded.count(b)) {
                        return Stmt();
                    }
                }
                continue;
            }
            const bool writes_head = std::any_of(l.a.writes.begin(), l.a.writes.end(),
                                                 [&](const std::string &b) { return writes.count(b) > 0; });
            if (pipes.count(l.a.pipe) || writes_head) {
                return Stmt();
            }
        }
        // What the head reads must not change in the body (the load of t + 1
        // runs before iteration t's writes).
        for (size_t i = h; i < all.leaves.size(); i++) {
            for (size_t j = 0; j < h; j++) {
                for (const auto &b : all.leaves[j].a.reads) {
                    if (std::count(all.leaves[i].a.writes.begin(), all.leaves[i].a.writes.end(), b)) {
                        return Stmt();
                    }
                }
            }
        }
        std::vector<size_t> head_at(h);
        std::iota(head_at.begin(), head_at.end(), 0);
        if (!movable_head(all, head_at, body, op->name)) {
            return Stmt();
        }
        // The loads of t + 1 go together after the last load of t (inside every
        // head buffer's allocation), so a consumer's flag can be set after
        // all loads of t and before any of t + 1 (early_sets).
        const Stmt &last = all.leaves[h - 1].s;
        if (!inside_allocations(body, writes, last.get())) {
            return Stmt();
        }
        const Expr v = Variable::make(Int(32), op->name);
        const Expr end = op->min + make_const(Int(32), extent);
        std::vector<Stmt> next;
        for (size_t i = 0; i < h; i++) {
            next.push_back(fresh(substitute(op->name, v + 1, all.leaves[i].s)));
        }
        Stmt new_body = body;
        for (size_t i = 0; i < h; i++) {
            const Stmt &s = all.leaves[i].s;
            Stmt now = IfThenElse::make(simplify(v == op->min), s);
            if (i + 1 == h) {
                now = Block::make(now, IfThenElse::make(simplify(v + 1 < end), Block::make(next)));
            }
            new_body = Replace(s.get(), now).mutate(new_body);
        }
        return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, new_body);
    }

    // Whether the head operations `at` of `all` each occur once in `body` and use
    // only the loop's variable and those bound outside the loop (so a copy of
    // them can run an iteration early, or before the loop).
    bool movable_head(const Leaves &all, const std::vector<size_t> &at, const Stmt &body,
                      const std::string &loop) const {
        Leaves vars(m_, nullptr);
        for (size_t i : at) {
            all.leaves[i].s.accept(&vars);
            if (occurrences(body, all.leaves[i].s.get()) != 1) {
                return false;
            }
        }
        return std::none_of(vars.used.begin(), vars.used.end(),
                            [&](const std::string &name) { return name != loop && all.defined.count(name); });
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
        if (!movable_head(all, head_at, body, op->name) || occurrences(body, last->top.get()) != 1) {
            return Stmt();
        }
        std::vector<Stmt> head;
        for (size_t i : head_at) {
            head.push_back(all.leaves[i].s);
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
