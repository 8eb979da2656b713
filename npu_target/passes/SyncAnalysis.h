#ifndef TESSEL_NPU_TARGET_PASSES_SYNCANALYSIS_H
#define TESSEL_NPU_TARGET_PASSES_SYNCANALYSIS_H

// The cross-pipe dependence analysis shared by insert_sync (which inserts the
// orderings it finds missing) and check_hazards (which replays it over the
// finished IR, taking orderings only from the sync operations present, and
// reports what is still unordered). Internal to npu_target/passes.

#include "npu_target/passes/InsertSync.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tessel::detail {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;


class LoadNames : public IRGraphVisitor {
public:
    std::vector<std::string> names;

private:
    using IRGraphVisitor::visit;
    void visit(const Load *op) override {
        names.push_back(op->name);
        IRGraphVisitor::visit(op);
    }
};

inline std::vector<std::string> loads_in(const Expr &e) {
    LoadNames v;
    if (e.defined()) {
        e.accept(&v);
    }
    return v.names;
}

inline void append(std::vector<std::string> &to, const std::vector<std::string> &from) {
    to.insert(to.end(), from.begin(), from.end());
}

// Unordered accesses of one asynchronous pipe to one buffer.
struct Pending {
    bool read = false, write = false;
    std::set<Pipe> ordered_for; // pipes already ordered after these accesses
    // The latest access: when the analysis met it (a clock over the accesses
    // in visiting order; a loop body's earlier visits are earlier) and its
    // statement (nullptr: not one operation, e.g. a panel's pieces). Where a
    // flag's set can go (early_sets); not part of the state's identity.
    uint64_t stamp = 0;
    const Halide::Internal::IRNode *leaf = nullptr;
    bool operator==(const Pending &o) const {
        return read == o.read && write == o.write && ordered_for == o.ordered_for;
    }
};
using State = std::map<Pipe, std::map<std::string, Pending>>;

inline State merge(const State &a, const State &b) {
    State r = a;
    for (const auto &[pipe, bufs] : b) {
        for (const auto &[buf, p] : bufs) {
            auto it = r[pipe].find(buf);
            if (it == r[pipe].end()) {
                r[pipe][buf] = p;
                continue;
            }
            Pending &q = it->second;
            q.read |= p.read;
            q.write |= p.write;
            if (p.stamp > q.stamp) {
                q.stamp = p.stamp;
                q.leaf = p.leaf;
            }
            std::set<Pipe> both;
            for (Pipe x : q.ordered_for) {
                if (p.ordered_for.count(x)) {
                    both.insert(x);
                }
            }
            q.ordered_for = both;
        }
    }
    return r;
}

class SyncAnalysis : public Halide::Internal::IRMutator {
public:
    explicit SyncAnalysis(const nir::NpuModule &m) : m_(m) {}
    State state;
    bool emit = true;
    // Check mode (check_hazards): nothing is inserted; the sync operations
    // already in the IR update the state, and an access that would still need
    // ordering is a violation.
    bool check = false;
    std::vector<std::string> violations;
    // Emitting: each SET_FLAG of a generic pair whose ordering rests on one
    // operation (the latest conflicting access of the source pipe) -> that
    // operation; early_sets moves the set to right after it.
    std::vector<std::pair<Stmt, Stmt>> anchors;

private:
    const nir::NpuModule &m_;
    using IRMutator::visit;
    uint64_t clock_ = 0;
    const IRNode *leaf_ = nullptr; // the operation being visited
    // Check mode: per early-set flag (src, dst, event), the clock at each set
    // not yet consumed by a wait, in order.
    std::map<std::tuple<Pipe, Pipe, int>, std::vector<uint64_t>> fired_;

    // Multi-buffered buffers are tracked per copy: "b#0" is the copy the
    // current iteration of its rotation loop uses, "b#1" the one before, ...;
    // the copy `ahead` iterations later (a prefetch) is the one N - ahead before.
    std::string key(const std::string &buffer, int ahead) const {
        auto it = m_.buffers.find(buffer);
        if (it != m_.buffers.end() && it->second.buffers > 1 && !it->second.rotate_loop.empty()) {
            const int n = it->second.buffers;
            return buffer + "#" + std::to_string((n - ahead % n) % n);
        }
        return buffer;
    }
    bool credit_covered(const std::string &key_name, Pipe reader) const {
        std::string buf = key_name.substr(0, key_name.rfind('#'));
        auto it = m_.buffers.find(buf);
        if (it == m_.buffers.end()) {
            return false;
        }
        const auto &cr = it->second.credit_readers;
        return std::find(cr.begin(), cr.end(), reader) != cr.end();
    }
    // A panel loaded in pieces (ring_panels): inside its reload loop, the
    // reads on its reader pipe and the writes on its writer pipe are ordered by
    // the piece flags.
    bool piece_covered(const std::string &key_name, Pipe pipe, bool write) const {
        auto it = m_.buffers.find(key_name.substr(0, key_name.rfind('#')));
        if (it == m_.buffers.end() || it->second.pieces.count < 2) {
            return false;
        }
        return pipe == (write ? it->second.pieces.writer : it->second.pieces.reader);
    }
    // Crossing the back-edge of `loop`: the copies of buffers rotating on it age by one.
    State aged(const State &st, const std::string &loop) const {
        State r;
        for (const auto &[pipe, bufs] : st) {
            for (const auto &[k, p] : bufs) {
                size_t hash = k.rfind('#');
                if (hash == std::string::npos) {
                    r[pipe][k] = p;
                    continue;
                }
                std::string buf = k.substr(0, hash);
                const nir::BufferInfo &b = m_.buffer(buf);
                if (b.rotate_loop != loop) {
                    r[pipe][k] = p;
                    continue;
                }
                int age = (std::stoi(k.substr(hash + 1)) + 1) % b.buffers;
                std::string nk = buf + "#" + std::to_string(age);
                auto it = r[pipe].find(nk);
                if (it == r[pipe].end()) {
                    r[pipe][nk] = p;
                } else {
                    State one, two;
                    one[pipe][nk] = it->second;
                    two[pipe][nk] = p;
                    r[pipe][nk] = merge(one, two)[pipe][nk];
                }
            }
        }
        return r;
    }

    // Two different buffers sharing bytes: allocate_buffers gives a buffer's
    // space to a later one once its scope ends, so an access to the new one
    // must still be ordered after the old one's pending accesses on another pipe.
    bool aliases(const std::string &key_a, const std::string &key_b) const {
        std::string x = key_a.substr(0, key_a.rfind('#')), y = key_b.substr(0, key_b.rfind('#'));
        if (x == y) {
            return false; // the same buffer: its keys (copies) decide
        }
        auto ia = m_.buffers.find(x), ib = m_.buffers.find(y);
        if (ia == m_.buffers.end() || ib == m_.buffers.end()) {
            return false;
        }
        const nir::BufferInfo &p = ia->second, &q = ib->second;
        if (p.is_arg || q.is_arg || p.offset < 0 || q.offset < 0 || p.level != q.level) {
            return false;
        }
        const int64_t p_end = p.offset + p.copy_bytes(*m_.arch) * p.buffers;
        const int64_t q_end = q.offset + q.copy_bytes(*m_.arch) * q.buffers;
        return p.offset < q_end && q.offset < p_end;
    }

    // A pending access of `pipe` to `key` (the operation, if one, for early_sets).
    void record(Pipe pipe, const std::string &key, bool write, const IRNode *leaf) {
        Pending &p = state[pipe][key];
        (write ? p.write : p.read) = true;
        p.ordered_for = {pipe};
        p.stamp = ++clock_;
        p.leaf = leaf;
    }

    // The syncs needed before an access set; updates the state.
    std::vector<Stmt> order(const Accesses &raw) {
        Accesses a = raw;
        for (auto *names : {&a.reads, &a.writes}) {
            for (auto &b : *names) {
                b = key(b, raw.ahead_of(b));
            }
        }
        std::set<Pipe> need;
        struct Anchor {
            uint64_t stamp = 0;
            const IRNode *leaf = nullptr;
            bool known = true;
        };
        std::map<Pipe, Anchor> anchor; // per source pipe: its latest conflicting access
        for (const auto &[q, bufs] : state) {
            if (q == a.pipe) {
                continue;
            }
            for (const auto &[buf, p] : bufs) {
                if (p.ordered_for.count(a.pipe)) {
                    continue;
                }
                auto touches = [&](const std::vector<std::string> &names) {
                    return std::any_of(names.begin(), names.end(),
                                       [&](const std::string &x) { return x == buf || aliases(x, buf); });
                };
                bool r = touches(a.reads);
                bool w = touches(a.writes);
                if ((r && p.write) || (w && (p.read || p.write))) {
                    need.insert(q);
                    Anchor &an = anchor[q];
                    an.known = an.known && p.leaf;
                    if (p.stamp >= an.stamp) {
                        an.stamp = p.stamp;
                        an.leaf = p.leaf;
                    }
                    if (check && emit) {
                        violations.push_back(std::string(isa::pipe_name(a.pipe)) + (w ? " writes " : " reads ") + buf +
                                             " while an earlier " + (p.write ? "write" : "read") + " of it on " +
                                             isa::pipe_name(q) + " is not ordered before it");
                    }
                }
            }
        }
        std::vector<Stmt> syncs;
        for (Pipe q : need) {
            if (a.pipe == Pipe::S) {
                syncs.push_back(nir::SyncOp{isa::Op::BARRIER, q, Pipe::S, 0}.make());
                state.erase(q);
            } else {
                Stmt set = nir::SyncOp{isa::Op::SET_FLAG, q, a.pipe, 0}.make();
                syncs.push_back(set);
                syncs.push_back(nir::SyncOp{isa::Op::WAIT_FLAG, q, a.pipe, 0}.make());
                // Ordered: the accesses up to the latest conflicting one, where
                // early_sets may put the set; later ones of q stay pending.
                const Anchor &an = anchor[q];
                for (auto &[buf, p] : state[q]) {
                    if (!an.known || p.stamp <= an.stamp) {
                        p.ordered_for.insert(a.pipe);
                    }
                }
                if (an.known && emit && !check) {
                    anchors.emplace_back(set, Stmt(static_cast<const BaseStmtNode *>(an.leaf)));
                }
            }
        }
        if (a.pipe != Pipe::S) {
            for (const auto &b : a.reads) {
                if (credit_covered(b, a.pipe) || piece_covered(b, a.pipe, false)) {
                    continue; // ordered against later writes by the credit protocol or the piece flags
                }
                record(a.pipe, b, false, leaf_);
            }
            for (const auto &b : a.writes) {
                if (piece_covered(b, a.pipe, true)) {
                    continue; // the piece flags order it against the reads
                }
                record(a.pipe, b, true, leaf_);
            }
        }
        return syncs;
    }
    Stmt with_syncs(const std::vector<Stmt> &syncs, Stmt s) {
        if (!emit || check || syncs.empty()) {
            return s;
        }
        std::vector<Stmt> all = syncs;
        all.push_back(s);
        return Block::make(all);
    }
    Stmt scalar_reads(const std::vector<std::string> &reads, Stmt s) {
        Accesses a;
        a.reads = reads;
        return with_syncs(order(a), s);
    }

    // Check mode: what a sync operation in the IR establishes. Generic syncs
    // (event 0) are a set immediately followed by its wait, so the wait orders
    // the destination pipe after everything the source pipe had issued. A flag
    // early_sets moved (NpuModule::early_flags) orders what its source pipe
    // had issued at the set: the wait takes the sets in order, each with the
    // clock it was met at. Credit flags (other events >= 1) order the
    // multi-buffered reads the state does not track (insert_buffer_credits).
    void apply(const nir::SyncOp &s) {
        const auto key = std::make_tuple(s.src, s.dst, s.event);
        if (s.event >= 1 && m_.early_flags.count(key)) {
            std::vector<uint64_t> &fired = fired_[key];
            if (s.op == isa::Op::SET_FLAG) {
                fired.push_back(clock_);
            } else if (s.op == isa::Op::WAIT_FLAG && !fired.empty()) {
                const uint64_t at = fired.front();
                fired.erase(fired.begin());
                for (auto &[buf, p] : state[s.src]) {
                    if (p.stamp <= at) {
                        p.ordered_for.insert(s.dst);
                    }
                }
            }
            return;
        }
        if (s.op == isa::Op::BARRIER) {
            if (s.src == Pipe::ALL) {
                state.clear();
            } else {
                state.erase(s.src);
            }
        } else if (s.op == isa::Op::WAIT_FLAG && s.event == 0) {
            for (auto &[buf, p] : state[s.src]) {
                p.ordered_for.insert(s.dst);
            }
        }
    }

    Stmt visit(const Evaluate *op) override {
        if (check) {
            if (auto so = nir::as_sync(op)) {
                apply(*so);
                return op;
            }
        }
        Accesses a = accesses_of(m_, op);
        leaf_ = op;
        std::vector<Stmt> syncs;
        if (!a.scalar_reads.empty()) {
            Accesses s;
            s.reads = a.scalar_reads;
            syncs = order(s);
        }
        std::vector<Stmt> more = order(a);
        syncs.insert(syncs.end(), more.begin(), more.end());
        return with_syncs(syncs, op);
    }
    Stmt visit(const Store *op) override {
        leaf_ = op;
        return with_syncs(order(accesses_of(m_, op)), op);
    }
    Stmt visit(const LetStmt *op) override {
        std::vector<Stmt> syncs;
        Accesses a;
        a.reads = loads_in(op->value);
        syncs = order(a);
        Stmt body = mutate(op->body);
        return with_syncs(syncs, LetStmt::make(op->name, op->value, body));
    }
    Stmt visit(const IfThenElse *op) override {
        Accesses a;
        a.reads = loads_in(op->condition);
        std::vector<Stmt> syncs = order(a);
        State before = state;
        Stmt then_case = mutate(op->then_case);
        State after_then = state;
        state = before;
        Stmt else_case = op->else_case.defined() ? mutate(op->else_case) : Stmt();
        state = merge(after_then, state);
        return with_syncs(syncs, IfThenElse::make(op->condition, then_case, else_case));
    }
    // Orders, before a loop, everything its body will do against the accesses
    // pending before the loop, so the body does not re-synchronise on them in
    // every iteration. Only syncs are emitted; nothing is recorded as pending.
    std::vector<Stmt> hoist(const Stmt &body) {
        std::vector<Stmt> syncs;
        for (const Accesses &acc : summarise(body)) {
            State saved = state;
            std::vector<Stmt> s = order(acc);
            // Keep the ordering the syncs established, drop the accesses order() recorded.
            State after = state;
            state = saved;
            for (auto &[pipe, bufs] : state) {
                auto ait = after.find(pipe);
                if (ait == after.end()) {
                    bufs.clear();
                    continue;
                }
                for (auto &[buf, p] : bufs) {
                    auto bit = ait->second.find(buf);
                    if (bit != ait->second.end() && !(acc.pipe == pipe)) {
                        p.ordered_for.insert(bit->second.ordered_for.begin(), bit->second.ordered_for.end());
                    }
                }
            }
            for (auto it = state.begin(); it != state.end();) {
                it = after.count(it->first) ? std::next(it) : state.erase(it);
            }
            syncs.insert(syncs.end(), s.begin(), s.end());
        }
        return syncs;
    }
    // Per pipe, the union of the buffers a statement reads and writes.
    std::vector<Accesses> summarise(const Stmt &body) {
        std::map<Pipe, Accesses> per;
        struct Walk : public IRVisitor {
            SyncAnalysis *self;
            std::map<Pipe, Accesses> *per;
            using IRVisitor::visit;
            void add(const Accesses &a) {
                Accesses &d = (*per)[a.pipe];
                d.pipe = a.pipe;
                // One copy per buffer in the summary: a buffer reached in two
                // copies counts as the current one (the body's own analysis
                // orders each access exactly; this only hoists syncs).
                for (const auto *names : {&a.reads, &a.writes}) {
                    for (const auto &b : *names) {
                        const int ahead = a.ahead_of(b);
                        const bool seen = std::count(d.reads.begin(), d.reads.end(), b) ||
                                          std::count(d.writes.begin(), d.writes.end(), b);
                        if (!seen && ahead) {
                            d.ahead[b] = ahead;
                        } else if (seen && ahead != d.ahead_of(b)) {
                            d.ahead.erase(b);
                        }
                    }
                }
                append(d.reads, a.reads);
                append(d.writes, a.writes);
                if (!a.scalar_reads.empty()) {
                    Accesses &s = (*per)[Pipe::S];
                    s.pipe = Pipe::S;
                    append(s.reads, a.scalar_reads);
                }
            }
            void visit(const Evaluate *op) override { add(accesses_of(self->m_, op)); }
            void visit(const Store *op) override { add(accesses_of(self->m_, op)); }
            void visit(const LetStmt *op) override {
                Accesses a;
                a.reads = loads_in(op->value);
                add(a);
                op->body.accept(this);
            }
            void visit(const IfThenElse *op) override {
                Accesses a;
                a.reads = loads_in(op->condition);
                add(a);
                op->then_case.accept(this);
                if (op->else_case.defined()) {
                    op->else_case.accept(this);
                }
            }
        } w;
        w.self = this;
        w.per = &per;
        body.accept(&w);
        std::vector<Accesses> out;
        for (auto &kv : per) {
            out.push_back(kv.second);
        }
        return out;
    }

    Stmt visit(const For *op) override {
        Accesses a;
        a.reads = loads_in(op->min);
        append(a.reads, loads_in(op->extent));
        std::vector<Stmt> syncs = order(a);
        if (!check) { // in check mode the hoisted syncs are in the IR before the loop
            std::vector<Stmt> hoisted = hoist(op->body);
            syncs.insert(syncs.end(), hoisted.begin(), hoisted.end());
        }
        // Fixed point over the loop-carried state (the body may run again, or not at all).
        State entry = state;
        const bool saved_emit = emit;
        emit = false;
        for (int iter = 0; iter < 16; iter++) {
            state = entry;
            mutate(op->body);
            State next = merge(entry, aged(state, op->name));
            if (next == entry) {
                break;
            }
            entry = next;
        }
        emit = saved_emit;
        state = entry;
        Stmt body = mutate(op->body);
        state = merge(entry, aged(state, op->name));
        // After the reload loop of a panel loaded in pieces, later users of its
        // bytes are ordered after both of its pipes.
        for (const auto &[name, b] : m_.buffers) {
            if (b.pieces.count > 1 && b.pieces.loop == op->name) {
                pieces_done(name, b);
            }
        }
        return with_syncs(syncs, For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body));
    }
    // A panel loaded once in pieces (no reload loop): the same after its allocation ends.
    Stmt visit(const Allocate *op) override {
        Stmt s = IRMutator::visit(op);
        auto it = m_.buffers.find(op->name);
        if (it != m_.buffers.end() && it->second.pieces.count > 1 && it->second.pieces.loop.empty()) {
            pieces_done(op->name, it->second);
        }
        return s;
    }
    void pieces_done(const std::string &name, const nir::BufferInfo &b) {
        record(b.pieces.reader, name, false, nullptr);
        record(b.pieces.writer, name, true, nullptr);
    }
};


} // namespace tessel::detail

#endif
