#include "npu_target/passes/InsertSync.h"

#include "npu_target/common/Error.h"

#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;

namespace {

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

std::vector<std::string> loads_in(const Expr &e) {
    LoadNames v;
    if (e.defined()) {
        e.accept(&v);
    }
    return v.names;
}

void append(std::vector<std::string> &to, const std::vector<std::string> &from) {
    to.insert(to.end(), from.begin(), from.end());
}

// Unordered accesses of one asynchronous pipe to one buffer.
struct Pending {
    bool read = false, write = false;
    std::set<Pipe> ordered_for; // pipes already ordered after these accesses
    bool operator==(const Pending &o) const {
        return read == o.read && write == o.write && ordered_for == o.ordered_for;
    }
};
using State = std::map<Pipe, std::map<std::string, Pending>>;

State merge(const State &a, const State &b) {
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

class Sync : public IRMutator {
public:
    explicit Sync(const nir::NpuModule &m) : m_(m) {}
    State state;
    bool emit = true;

private:
    const nir::NpuModule &m_;
    using IRMutator::visit;

    // The syncs needed before an access set; updates the state.
    std::vector<Stmt> order(const Accesses &a) {
        std::set<Pipe> need;
        for (const auto &[q, bufs] : state) {
            if (q == a.pipe) {
                continue;
            }
            for (const auto &[buf, p] : bufs) {
                if (p.ordered_for.count(a.pipe)) {
                    continue;
                }
                bool r = std::find(a.reads.begin(), a.reads.end(), buf) != a.reads.end();
                bool w = std::find(a.writes.begin(), a.writes.end(), buf) != a.writes.end();
                if ((r && p.write) || (w && (p.read || p.write))) {
                    need.insert(q);
                }
            }
        }
        std::vector<Stmt> syncs;
        for (Pipe q : need) {
            if (a.pipe == Pipe::S) {
                syncs.push_back(nir::SyncOp{isa::Op::BARRIER, q, Pipe::S, 0}.make());
                state.erase(q);
            } else {
                syncs.push_back(nir::SyncOp{isa::Op::SET_FLAG, q, a.pipe, 0}.make());
                syncs.push_back(nir::SyncOp{isa::Op::WAIT_FLAG, q, a.pipe, 0}.make());
                for (auto &[buf, p] : state[q]) {
                    p.ordered_for.insert(a.pipe);
                }
            }
        }
        if (a.pipe != Pipe::S) {
            for (const auto &b : a.reads) {
                Pending &p = state[a.pipe][b];
                p.read = true;
                p.ordered_for = {a.pipe};
            }
            for (const auto &b : a.writes) {
                Pending &p = state[a.pipe][b];
                p.write = true;
                p.ordered_for = {a.pipe};
            }
        }
        return syncs;
    }
    Stmt with_syncs(const std::vector<Stmt> &syncs, Stmt s) {
        if (!emit || syncs.empty()) {
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

    Stmt visit(const Evaluate *op) override {
        Accesses a = accesses_of(m_, op);
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
    Stmt visit(const Store *op) override { return with_syncs(order(accesses_of(m_, op)), op); }
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
    Stmt visit(const For *op) override {
        Accesses a;
        a.reads = loads_in(op->min);
        append(a.reads, loads_in(op->extent));
        std::vector<Stmt> syncs = order(a);
        // Fixed point over the loop-carried state (the body may run again, or not at all).
        State entry = state;
        const bool saved_emit = emit;
        emit = false;
        for (int iter = 0; iter < 8; iter++) {
            state = entry;
            mutate(op->body);
            State next = merge(entry, state);
            if (next == entry) {
                break;
            }
            entry = next;
        }
        emit = saved_emit;
        state = entry;
        Stmt body = mutate(op->body);
        state = merge(entry, state);
        return with_syncs(syncs, For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body));
    }
};

} // namespace

Accesses accesses_of(const nir::NpuModule &m, const Stmt &leaf) {
    Accesses a;
    if (auto d = nir::as_dma(leaf)) {
        a.pipe = nir::pipe_of_engine(*m.arch, d->engine);
        a.scalar_reads = loads_in(d->dst.index);
        append(a.scalar_reads, loads_in(d->src.index));
        a.reads = {d->src.buffer};
        a.writes = {d->dst.buffer};
        return a;
    }
    if (auto v = nir::as_vec(leaf)) {
        a.pipe = Pipe::V;
        a.scalar_reads = loads_in(v->dst.index);
        append(a.scalar_reads, loads_in(v->a.index));
        append(a.scalar_reads, loads_in(v->b.index));
        append(a.scalar_reads, loads_in(v->scalar));
        if (!v->a.buffer.empty()) {
            a.reads.push_back(v->a.buffer);
        }
        if (!v->b.buffer.empty()) {
            a.reads.push_back(v->b.buffer);
        }
        if (v->op == isa::Op::VMULADD) {
            a.reads.push_back(v->dst.buffer);
        }
        a.writes = {v->dst.buffer};
        return a;
    }
    if (auto mm = nir::as_mmad(leaf)) {
        a.pipe = Pipe::M;
        a.scalar_reads = loads_in(mm->c.index);
        append(a.scalar_reads, loads_in(mm->a.index));
        append(a.scalar_reads, loads_in(mm->b.index));
        a.reads = {mm->a.buffer, mm->b.buffer};
        if (!mm->init) {
            a.reads.push_back(mm->c.buffer);
        }
        a.writes = {mm->c.buffer};
        return a;
    }
    if (nir::as_sync(leaf)) {
        return a;
    }
    if (const Store *st = leaf.as<Store>()) {
        a.reads = loads_in(st->value);
        append(a.reads, loads_in(st->index));
        append(a.reads, loads_in(st->predicate));
        a.writes = {st->name};
        return a;
    }
    if (const Evaluate *e = leaf.as<Evaluate>()) {
        a.reads = loads_in(e->value);
    }
    return a;
}

nir::NpuModule insert_sync(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    Sync s(r);
    r.body = s.mutate(m.body);
    return r;
}

} // namespace tessel
