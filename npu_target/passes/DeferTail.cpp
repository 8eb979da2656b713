#include "npu_target/passes/DeferTail.h"

#include "npu_target/passes/InsertSync.h"
#include "npu_target/passes/LoopBody.h"

#include <algorithm>
#include <map>
#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;

namespace {

// The statement a loop body ends with: through blocks (frees skipped),
// allocations and consume markers.
Stmt tail_of(const Stmt &s) {
    if (s.as<Block>()) {
        std::vector<Stmt> v = nir::flatten(s);
        for (size_t i = v.size(); i-- > 0;) {
            if (!v[i].as<Free>()) {
                return tail_of(v[i]);
            }
        }
        return Stmt();
    }
    if (const Allocate *a = s.as<Allocate>()) {
        return tail_of(a->body);
    }
    if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
        return pc->is_producer ? Stmt() : tail_of(pc->body);
    }
    return s;
}

// Buffer names in the group's operations: the copied buffers are read as
// `<name>.prev`, and the copy of the group after the loop gets its own scratch
// (`<name>.last`: allocate_buffers places a buffer by name, so two allocations
// of one name would share the offset of the last one placed, which in the loop
// may be the bytes of a buffer live there).
class Rename : public IRMutator {
public:
    explicit Rename(const std::map<std::string, std::string> &to) : to_(to) {}

private:
    const std::map<std::string, std::string> &to_;
    using IRMutator::visit;
    void fix(nir::BufRef &r) const {
        auto it = to_.find(r.buffer);
        if (it != to_.end()) {
            r.buffer = it->second;
        }
    }
    Stmt visit(const Evaluate *op) override {
        if (auto v = nir::as_vec(op)) {
            fix(v->dst);
            fix(v->a);
            fix(v->b);
            return v->make();
        }
        if (auto d = nir::as_dma(op)) {
            fix(d->dst);
            fix(d->src);
            return d->make();
        }
        if (auto f = nir::as_fixparam(op)) {
            fix(f->bias);
            fix(f->scale);
            return f->make();
        }
        return op;
    }
    Stmt visit(const Allocate *op) override {
        auto it = to_.find(op->name);
        Stmt body = mutate(op->body);
        return Allocate::make(it == to_.end() ? op->name : it->second, op->type, op->memory_type, op->extents,
                              op->condition, body, op->new_expr, op->free_function);
    }
    Stmt visit(const Free *op) override {
        auto it = to_.find(op->name);
        return it == to_.end() ? Stmt(op) : Free::make(it->second);
    }
};

// VMOV of a whole buffer into its copy, in rows of at most 64 elements.
Stmt copy_whole(const nir::BufferInfo &from, const std::string &to, uint32_t prov) {
    nir::VecOp v;
    v.op = isa::Op::VMOV;
    v.dtype = v.dtype2 = *nir::dtype_of_type(from.type);
    v.dst = {to, make_zero(Int(32))};
    v.a = {from.name, make_zero(Int(32))};
    const int64_t row = std::min<int64_t>(from.elems, 64);
    v.n = row;
    v.rows = static_cast<int>(from.elems / row);
    v.row_stride[0] = v.row_stride[1] = static_cast<int32_t>(row);
    v.prov = prov;
    Stmt s = v.make();
    if (from.elems % row != 0) {
        nir::VecOp rest = v;
        rest.n = from.elems % row;
        rest.rows = 1;
        rest.dst.index = rest.a.index = make_const(Int(32), from.elems - rest.n);
        s = Block::make(s, rest.make());
    }
    return s;
}

template <typename T>
bool contains(const std::vector<T> &v, const T &x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

class Defer : public IRMutator {
public:
    explicit Defer(nir::NpuModule &m) : m_(m) {}
    std::vector<std::string> deferred; // loop names

private:
    nir::NpuModule &m_;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        const int64_t *extent = as_const_int(op->extent);
        if (op->for_type != ForType::Serial || !extent || *extent < 1) {
            return loop;
        }
        Stmt r = defer(op->name, op->min, *extent, op->device_api, body, true);
        if (!r.defined()) {
            r = defer(op->name, op->min, *extent, op->device_api, body, false);
        }
        return r.defined() ? r : loop;
    }

    // Where the previous iteration's producers (copies and products of other
    // pipes) may go ahead of its tail: after the last vector operation before
    // the insertion point that waits for one of their pipes (it reads what such
    // a pipe writes in the body: the block's scores, copied by FIX), at the
    // next top-level statement, when nothing from there to the insertion point
    // writes what they read. The scalar unit then issues them before the rest
    // of this iteration's vector work, so a flag they need from the vector
    // unit (the copy of the block's output into UB waits until the previous
    // update has read it) sits in the vector unit's queue ahead of that work
    // instead of behind it, and the vector operations that wait for their
    // pipes are queued before them. Undefined when not possible (they stay
    // with the tail).
    static Stmt producers_point(const Leaves &rest, const std::vector<size_t> &producers, size_t at) {
        if (producers.empty()) {
            return Stmt();
        }
        auto in_group = [&](size_t i) { return contains(producers, i); };
        std::set<Pipe> pipes;
        std::set<std::string> reads;
        for (size_t i : producers) {
            if (i < at) {
                return Stmt(); // a producer ahead of the insertion point: keep the order as it is
            }
            pipes.insert(rest.leaves[i].a.pipe);
            reads.insert(rest.leaves[i].a.reads.begin(), rest.leaves[i].a.reads.end());
            reads.insert(rest.leaves[i].a.scalar_reads.begin(), rest.leaves[i].a.scalar_reads.end());
        }
        std::set<std::string> by_their_pipes; // written in the body by the producers' pipes
        for (size_t k = 0; k < rest.leaves.size(); k++) {
            if (!in_group(k) && pipes.count(rest.leaves[k].a.pipe)) {
                by_their_pipes.insert(rest.leaves[k].a.writes.begin(), rest.leaves[k].a.writes.end());
            }
        }
        size_t first = 0; // the first leaf of the statement the producers go before
        for (size_t k = 0; k < at; k++) {
            const Leaf &l = rest.leaves[k];
            if (l.a.pipe == Pipe::V && std::any_of(l.a.reads.begin(), l.a.reads.end(), [&](const std::string &b) {
                    return by_their_pipes.count(b) > 0;
                })) {
                first = k + 1;
                while (first < at && rest.leaves[first].top.same_as(l.top)) {
                    first++;
                }
                break;
            }
        }
        while (first < at && rest.leaves[first].a.pipe != Pipe::V) {
            first++; // what other pipes do before the vector work stays ahead of the producers
        }
        if (first >= at || in_group(first)) {
            return Stmt();
        }
        const Stmt top = rest.leaves[first].top;
        while (first > 0 && rest.leaves[first - 1].top.same_as(top)) {
            first--;
        }
        for (size_t k = first; k < at; k++) {
            for (const auto &b : rest.leaves[k].a.writes) {
                if (reads.count(b)) {
                    return Stmt();
                }
            }
        }
        return top;
    }

    static bool written_anywhere(const Leaves &rest, const std::string &b) {
        return std::any_of(rest.leaves.begin(), rest.leaves.end(), [&](const Leaf &l) {
            return contains(l.a.writes, b);
        });
    }

    // The loop transformed, or undefined when it does not qualify.
    Stmt defer(const std::string &var, const Expr &min, int64_t extent, DeviceAPI api, const Stmt &body, bool chain) {
        const Stmt tail = tail_of(body);
        if (!tail.defined() || !(tail.as<For>() || tail.as<Evaluate>())) {
            return Stmt();
        }
        // The tail: vector operations only, no scalar operands.
        Leaves in_tail(m_, nullptr);
        tail.accept(&in_tail);
        if (in_tail.leaves.empty() || in_tail.has_sync) {
            return Stmt();
        }
        std::set<std::string> tail_reads;
        std::set<std::string> reads, writes; // of the deferred group (tail and its producers)
        for (const Leaf &l : in_tail.leaves) {
            if (!nir::as_vec(l.s) || l.a.pipe != Pipe::V || !l.a.scalar_reads.empty()) {
                return Stmt();
            }
            reads.insert(l.a.reads.begin(), l.a.reads.end());
            writes.insert(l.a.writes.begin(), l.a.writes.end());
        }
        for (const auto &[name, depth] : in_tail.allocated) {
            reads.erase(name);
            writes.erase(name);
        }
        tail_reads = reads;
        // The rest of the body.
        Leaves rest(m_, tail.get());
        body.accept(&rest);
        if (rest.has_sync) {
            return Stmt();
        }
        // Producers joining the group: single operations of another pipe (not
        // in an inner loop) writing only buffers that nothing but the group
        // reads and nothing else writes (the copy of the block's output into
        // UB). With `chain`, also the operations feeding those, transitively
        // (the output product and its operand copies), as long as what they
        // read is not written by the vector unit in the body: in the in-order
        // queues of the matrix unit and MTE1 the block's output product then
        // follows the next block's score product instead of holding it up.
        std::vector<size_t> producers;
        std::set<std::string> group_reads = tail_reads;
        auto in_group = [&](size_t i) { return contains(producers, i); };
        for (bool grew = true; grew;) {
            grew = false;
            for (size_t i = rest.leaves.size(); i-- > 0;) {
                const Leaf &l = rest.leaves[i];
                if (in_group(i) || l.depth > 0 || l.a.pipe == Pipe::V || l.a.pipe == Pipe::S || l.a.writes.empty() ||
                    !l.a.scalar_reads.empty() || !(nir::as_dma(l.s) || (chain && nir::as_mmad(l.s)))) {
                    continue;
                }
                bool only_group = true;
                for (const auto &b : l.a.writes) {
                    only_group &= group_reads.count(b) > 0 && single_copy_scratch(m_, b) && !rest.loaded.count(b);
                    for (size_t k = 0; k < rest.leaves.size() && only_group; k++) {
                        const Leaf &o = rest.leaves[k];
                        only_group &= k == i || in_group(k) ||
                                      (!contains(o.a.reads, b) && !contains(o.a.writes, b) && !contains(o.a.scalar_reads, b));
                    }
                }
                for (size_t k = 0; k < rest.leaves.size() && only_group && chain; k++) {
                    const Leaf &o = rest.leaves[k];
                    for (const auto &b : l.a.reads) {
                        only_group &= o.a.pipe != Pipe::V || !contains(o.a.writes, b);
                    }
                }
                if (only_group) {
                    producers.push_back(i);
                    group_reads.insert(l.a.reads.begin(), l.a.reads.end());
                    reads.insert(l.a.reads.begin(), l.a.reads.end());
                    writes.insert(l.a.writes.begin(), l.a.writes.end());
                    grew = chain;
                }
            }
        }
        std::sort(producers.begin(), producers.end());
        for (const auto &w : writes) {
            reads.erase(w); // updated or produced inside the group: only the group touches it, checked below
        }
        std::set<std::string> keep; // allocations that move out of the loop
        for (const auto &b : writes) {
            if (!single_copy_scratch(m_, b) || rest.loaded.count(b)) {
                return Stmt();
            }
            auto alloc = rest.allocated.find(b);
            if (alloc != rest.allocated.end()) {
                if (alloc->second > 0) {
                    return Stmt();
                }
                keep.insert(b);
            }
        }
        for (size_t i = 0; i < rest.leaves.size(); i++) {
            if (in_group(i)) {
                continue;
            }
            const Leaf &l = rest.leaves[i];
            for (const auto *names : {&l.a.reads, &l.a.writes, &l.a.scalar_reads}) {
                for (const auto &b : *names) {
                    if (writes.count(b)) {
                        return Stmt();
                    }
                }
            }
        }
        // The insertion point: the first write, by another pipe, of a buffer the group reads.
        size_t at = rest.leaves.size();
        for (size_t i = 0; i < rest.leaves.size() && at == rest.leaves.size(); i++) {
            const Leaf &l = rest.leaves[i];
            bool hits = std::any_of(l.a.writes.begin(), l.a.writes.end(), [&](const std::string &b) { return reads.count(b) > 0; });
            if (hits && l.a.pipe != Pipe::V && !in_group(i)) {
                if (l.depth > 0) {
                    return Stmt();
                }
                at = i;
            }
        }
        if (at == rest.leaves.size()) {
            return Stmt(); // the tail waits for nothing another pipe produces in the body
        }
        std::set<std::string> copy;
        for (const auto &b : reads) {
            bool before = false, after = false, other_before = false;
            for (size_t i = 0; i < rest.leaves.size(); i++) {
                const Leaf &l = rest.leaves[i];
                if (!in_group(i) && contains(l.a.writes, b)) {
                    (i < at ? before : after) = true;
                    other_before |= i < at && l.a.pipe != Pipe::V;
                }
            }
            auto alloc = rest.allocated.find(b);
            if (!before && !after && alloc == rest.allocated.end() && !written_anywhere(rest, b)) {
                continue; // the same contents in every iteration (an input)
            }
            if (!single_copy_scratch(m_, b) || (before && after) || other_before) {
                return Stmt();
            }
            if (before) {
                copy.insert(b);
            } else if (alloc != rest.allocated.end()) {
                if (!after || alloc->second > 0) {
                    return Stmt(); // read before anything writes it, or allocated per inner iteration
                }
                keep.insert(b);
            }
        }
        // The group may use only its own variables, the loop's and those bound outside the loop.
        Leaves group_vars(m_, nullptr);
        for (size_t i : producers) {
            rest.leaves[i].s.accept(&group_vars);
        }
        tail.accept(&group_vars);
        for (const auto &name : group_vars.used) {
            if (name != var && rest.defined.count(name) && !group_vars.defined.count(name)) {
                return Stmt();
            }
        }
        // Rewrite: the group of the previous iteration before the insertion
        // point, the copies where the tail was, the last group after the loop.
        std::map<std::string, std::string> renamed;
        for (const auto &b : copy) {
            renamed[b] = b + ".prev";
        }
        Rename rename(renamed);
        std::map<std::string, std::string> last_names = renamed;
        for (const auto &[name, depth] : in_tail.allocated) {
            if (!m_.buffers.count(name) || m_.buffers.count(name + ".last")) {
                return Stmt();
            }
            last_names[name] = name + ".last";
        }
        Rename rename_last(last_names);
        std::vector<Stmt> group;
        for (size_t i : producers) {
            group.push_back(rest.leaves[i].s);
        }
        group.push_back(tail);
        const Stmt group_stmt = Block::make(group);
        const Expr v = Variable::make(Int(32), var);
        const uint32_t prov = nir::as_vec(in_tail.leaves.front().s)->prov;
        Stmt prev_group = rename.mutate(substitute(var, v - 1, group_stmt));
        Stmt last_group = rename_last.mutate(substitute(var, min + make_const(Int(32), extent - 1), group_stmt));
        std::vector<Stmt> copies;
        for (const auto &b : copy) {
            copies.push_back(copy_whole(m_.buffer(b), renamed[b], prov));
        }
        const Stmt nothing = Evaluate::make(make_zero(Int(32)));
        Stmt new_body = Replace(tail.get(), copies.empty() ? nothing : Block::make(copies)).mutate(body);
        for (size_t i : producers) {
            new_body = Replace(rest.leaves[i].s.get(), nothing).mutate(new_body);
        }
        const Stmt point = rest.leaves[at].s;
        if (const Stmt early = producers_point(rest, producers, at); early.defined()) {
            // The previous iteration's producers before the body's first vector
            // work, its tail at the insertion point.
            std::vector<Stmt> prods;
            for (size_t i : producers) {
                prods.push_back(rest.leaves[i].s);
            }
            const Stmt prev_producers = rename.mutate(substitute(var, v - 1, Block::make(prods)));
            const Stmt prev_tail = rename.mutate(substitute(var, v - 1, tail));
            new_body = Replace(early.get(), Block::make(IfThenElse::make(v > min, prev_producers), early)).mutate(new_body);
            new_body = Replace(point.get(), Block::make(IfThenElse::make(v > min, prev_tail), point)).mutate(new_body);
        } else {
            new_body = Replace(point.get(), Block::make(IfThenElse::make(v > min, prev_group), point)).mutate(new_body);
        }
        DropAllocations drop(keep);
        new_body = drop.mutate(new_body);
        if (drop.dropped.size() != keep.size()) {
            return Stmt();
        }
        Stmt s = Block::make(For::make(var, min, make_const(Int(32), extent), ForType::Serial, api, new_body),
                             last_group);
        s = wrap_allocations(drop, s);
        if (!s.defined()) {
            return Stmt();
        }
        for (const auto &[from, to] : renamed) {
            nir::BufferInfo info = m_.buffer(from);
            info.name = to;
            info.offset = -1;
            m_.buffers[to] = info;
            s = Allocate::make(to, info.type, MemoryType::Auto, {make_const(Int(32), info.elems)}, const_true(),
                               Block::make(s, Free::make(to)));
        }
        for (const auto &[name, depth] : in_tail.allocated) {
            nir::BufferInfo info = m_.buffer(name);
            info.name = name + ".last";
            info.offset = -1;
            m_.buffers[info.name] = info;
        }
        deferred.push_back(var);
        return s;
    }
};

} // namespace

nir::NpuModule defer_tail(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    Defer d(r);
    r.body = d.mutate(m.body);
    return r;
}

} // namespace tessel
