#include "npu_target/passes/BufferCredits.h"

#include "npu_target/common/Error.h"
#include "npu_target/passes/InsertSync.h"

#include <set>
#include <tuple>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;

namespace {

bool reads_on(const nir::NpuModule &m, const Stmt &s, const std::string &buffer, Pipe r) {
    return buffer_users(m, s, buffer).readers.count(r) > 0;
}

struct Plan {
    std::string buffer;
    std::string loop;
    Pipe writer;
    std::vector<std::pair<Pipe, int>> readers; // pipe, event id
    int credits; // initial credits: the copies, less how many iterations ahead the writer writes
};

bool writes_on(const nir::NpuModule &m, const Stmt &s, const std::string &buffer, Pipe w) {
    return buffer_users(m, s, buffer).writers.count(w) > 0;
}

// Inside the allocation of the buffer (directly in the rotation loop's body),
// split into its top-level statements: the wait goes before the first one that
// writes the buffer on the writer pipe, each reader's set after the last one
// that reads it on that pipe. Top-level statements run once per iteration, so
// each iteration takes and returns exactly one credit whatever loops or
// branches the accesses sit in.
class InLoop : public IRMutator {
public:
    InLoop(const nir::NpuModule &m, const Plan &p) : m_(m), p_(p) {}

private:
    const nir::NpuModule &m_;
    const Plan &p_;
    using IRMutator::visit;

    Stmt visit(const Allocate *op) override {
        if (op->name != p_.buffer) {
            return IRMutator::visit(op);
        }
        std::vector<Stmt> parts = nir::flatten(op->body);
        std::vector<Stmt> out;
        bool waited = false;
        for (size_t i = 0; i < parts.size(); i++) {
            if (!waited && writes_on(m_, parts[i], p_.buffer, p_.writer)) {
                waited = true;
                for (const auto &[r, e] : p_.readers) {
                    out.push_back(nir::SyncOp{isa::Op::WAIT_FLAG, r, p_.writer, e}.make());
                }
            }
            out.push_back(parts[i]);
            for (const auto &[r, e] : p_.readers) {
                bool later = false;
                for (size_t j = i + 1; j < parts.size(); j++) {
                    later = later || reads_on(m_, parts[j], p_.buffer, r);
                }
                if (!later && reads_on(m_, parts[i], p_.buffer, r)) {
                    out.push_back(nir::SyncOp{isa::Op::SET_FLAG, r, p_.writer, e}.make());
                }
            }
        }
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, Block::make(out),
                              op->new_expr, op->free_function);
    }
};

// The credits: each copy starts as one credit the readers hand to the writer
// before the buffer's rotation scope (multi_buffer's rotate_scope: the rotation
// loop or an enclosing one the copies keep rotating across); the writer takes
// them all back after it, so nothing after the scope can overwrite the space
// while a reader still uses it.
class Credits : public IRMutator {
public:
    // Events already in the IR (ring_panels takes them from the top id down) stay theirs.
    explicit Credits(nir::NpuModule &m) : m_(m), used_(nir::flags_in(m.body)) {}
    std::map<const Evaluate *, std::string> initial_sets; // each initial credit's set -> its buffer

private:
    nir::NpuModule &m_;
    std::map<std::pair<Pipe, Pipe>, int> next_event_; // (reader, writer) -> next free id (0 is insert_sync's)
    std::set<std::tuple<Pipe, Pipe, int>> used_;     // (src, dst, event) already in the IR
    std::map<std::string, std::vector<Plan>> by_scope_; // rotate_scope loop -> plans to open/close around it
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        std::vector<Plan> plans;
        for (auto &kv : m_.buffers) {
            nir::BufferInfo &b = kv.second;
            if (b.buffers < 2 || b.rotate_loop != op->name) {
                continue;
            }
            BufferUsers u = buffer_users(m_, body, b.name);
            if (u.writers.size() != 1 || u.writers.count(Pipe::S) || u.readers.count(Pipe::S)) {
                continue;
            }
            // Written `ahead` iterations early (advance_head's prefetch): body
            // t writes copy t + ahead, which body t + ahead - N used last, so
            // it takes the credit that body returned: N - ahead initial ones.
            const int ahead = most_ahead(m_, body, b.name, true);
            if (ahead >= b.buffers) {
                continue;
            }
            Plan p{b.name, op->name, *u.writers.begin(), {}, b.buffers - ahead};
            for (Pipe r : u.readers) {
                if (r == p.writer) {
                    continue;
                }
                int &e = next_event_[{r, p.writer}];
                if (e == 0) {
                    e = 1;
                }
                while (used_.count({r, p.writer, e})) {
                    e++;
                }
                if (e >= m_.arch->sync.event_ids_per_pair) {
                    continue; // out of event ids: insert_sync orders this pair generically
                }
                p.readers.emplace_back(r, e++);
            }
            if (p.readers.empty()) {
                continue;
            }
            for (const auto &[r, e] : p.readers) {
                b.credit_readers.push_back(r);
            }
            plans.push_back(p);
        }
        for (const Plan &p : plans) {
            body = InLoop(m_, p).mutate(body);
            const std::string &scope = m_.buffer(p.buffer).rotate_scope;
            by_scope_[scope.empty() ? op->name : scope].push_back(p);
        }
        Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        auto it = by_scope_.find(op->name);
        if (it == by_scope_.end()) {
            return loop;
        }
        std::vector<Stmt> all, after;
        for (const Plan &p : it->second) {
            for (const auto &[r, e] : p.readers) {
                for (int c = 0; c < p.credits; c++) {
                    all.push_back(nir::SyncOp{isa::Op::SET_FLAG, r, p.writer, e}.make());
                    initial_sets[all.back().as<Evaluate>()] = p.buffer;
                    after.push_back(nir::SyncOp{isa::Op::WAIT_FLAG, r, p.writer, e}.make());
                }
            }
        }
        by_scope_.erase(it);
        all.push_back(loop);
        all.insert(all.end(), after.begin(), after.end());
        return Block::make(all);
    }
};

// The initial credits say that no copy is in use yet, which holds from the
// kernel's start unless an earlier statement uses the buffer's bytes (another
// buffer allocate_buffers gave them to) or its flag. Each initial set moves up,
// from before its rotation scope to the start of the statement sequence and on
// through the allocations, lets and producer/consumer marks around it (not out
// of a loop or a branch), past every statement that touches neither, and then
// down again to the first of those statements that has work on the set's pipe:
// the reader pipe's queue gives the credit before the work it was queued behind
// (LayerNorm: the vector unit widening gamma and beta, which waits for their
// loads, held back the first input band's load by ~500 cycles), and a set whose
// pipe has no such work stays where it was (moved in front of other pipes' work
// it would only delay that work's issue by a cycle).
class HoistInitialCredits {
public:
    HoistInitialCredits(const nir::NpuModule &m, const std::map<const Evaluate *, std::string> &sets)
        : m_(m), sets_(sets) {}

    Stmt run(const Stmt &s) {
        std::vector<Stmt> top;
        Stmt body = hoist(s, &top);
        top.push_back(body);
        std::vector<Stmt> carry;
        body = sink(top.size() == 1 ? body : Block::make(top), carry);
        TESSEL_INTERNAL_ASSERT(carry.empty(), "an initial credit moved past its rotation scope");
        return body;
    }

private:
    const nir::NpuModule &m_;
    const std::map<const Evaluate *, std::string> &sets_;

    // s rebuilt around f(its body) when it is an allocation, a producer/consumer
    // mark or a let (what a set moves through); undefined otherwise.
    template <typename F>
    static Stmt through(const Stmt &s, F f) {
        if (const Allocate *op = s.as<Allocate>()) {
            return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, f(op->body),
                                  op->new_expr, op->free_function);
        }
        if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
            return ProducerConsumer::make(op->name, op->is_producer, f(op->body));
        }
        if (const LetStmt *op = s.as<LetStmt>()) {
            return LetStmt::make(op->name, op->value, f(op->body));
        }
        return Stmt();
    }

    // Hoists within s; sets that reach its start go to `up` (nullptr: they stay at its start).
    Stmt hoist(const Stmt &s, std::vector<Stmt> *up) {
        if (s.as<Block>()) {
            std::vector<Stmt> out;
            for (const Stmt &e : nir::flatten(s)) {
                if (sets_.count(e.as<Evaluate>())) {
                    place(e, out, out.size(), up);
                    continue;
                }
                std::vector<Stmt> from_e;
                out.push_back(hoist(e, &from_e));
                for (const Stmt &set : from_e) {
                    place(set, out, out.size() - 1, up);
                }
            }
            return Block::make(out);
        }
        if (Stmt t = through(s, [&](const Stmt &body) { return hoist(body, up); }); t.defined()) {
            return t;
        }
        if (const For *op = s.as<For>()) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, hoist(op->body, nullptr));
        }
        if (const IfThenElse *op = s.as<IfThenElse>()) {
            return IfThenElse::make(op->condition, hoist(op->then_case, nullptr),
                                    op->else_case.defined() ? hoist(op->else_case, nullptr) : op->else_case);
        }
        return s;
    }

    // Moves the sets in `carry` (and the initial sets met in s) down to the first
    // statement with work on their pipe; those s has none for stay in `carry`.
    Stmt sink(const Stmt &s, std::vector<Stmt> &carry) {
        if (s.as<Block>()) {
            std::vector<Stmt> out;
            for (const Stmt &e : nir::flatten(s)) {
                if (sets_.count(e.as<Evaluate>())) {
                    carry.push_back(e);
                } else {
                    out.push_back(sink(e, carry));
                }
            }
            TESSEL_INTERNAL_ASSERT(!out.empty(), "a statement sequence of initial credits only");
            return Block::make(out);
        }
        if (Stmt t = through(s, [&](const Stmt &body) { return sink(body, carry); }); t.defined()) {
            return t;
        }
        std::vector<Stmt> here;
        for (auto it = carry.begin(); it != carry.end();) {
            if (works_on(s, nir::as_sync(*it)->src)) {
                here.push_back(*it);
                it = carry.erase(it);
            } else {
                ++it;
            }
        }
        here.push_back(s);
        return here.size() == 1 ? s : Block::make(here);
    }

    // Whether s has an operation (or a flag) on pipe p.
    bool works_on(const Stmt &s, Pipe p) const {
        struct Pipes : public IRVisitor {
            const nir::NpuModule &m;
            std::set<Pipe> pipes;
            explicit Pipes(const nir::NpuModule &m) : m(m) {}
            using IRVisitor::visit;
            void visit(const Evaluate *op) override {
                if (auto so = nir::as_sync(op)) {
                    pipes.insert(so->op == isa::Op::SET_FLAG ? so->src : so->op == isa::Op::WAIT_FLAG ? so->dst : Pipe::S);
                } else {
                    pipes.insert(accesses_of(m, op).pipe);
                }
            }
        } v(m_);
        s.accept(&v);
        return v.pipes.count(p) > 0;
    }

    // Puts `set` into `out` at position `at` or earlier, before the statements it may pass.
    void place(const Stmt &set, std::vector<Stmt> &out, size_t at, std::vector<Stmt> *up) {
        while (at > 0 && !blocks(out[at - 1], set)) {
            at--;
        }
        if (at == 0 && up) {
            up->push_back(set);
        } else {
            out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), set);
        }
    }

    // Whether s uses the set's flag or any byte of its buffer's copies.
    bool blocks(const Stmt &s, const Stmt &set) const {
        const auto so = nir::as_sync(set);
        if (nir::flags_in(s).count({so->src, so->dst, so->event})) {
            return true;
        }
        struct Names : public IRVisitor {
            const nir::NpuModule &m;
            std::set<std::string> names;
            explicit Names(const nir::NpuModule &m) : m(m) {}
            using IRVisitor::visit;
            void note(const Accesses &a) {
                for (const auto *v : {&a.reads, &a.writes, &a.scalar_reads}) {
                    names.insert(v->begin(), v->end());
                }
            }
            void visit(const Evaluate *op) override { note(accesses_of(m, op)); }
            void visit(const Store *op) override {
                note(accesses_of(m, op));
                IRVisitor::visit(op);
            }
            void visit(const Load *op) override {
                names.insert(op->name);
                IRVisitor::visit(op);
            }
        } v(m_);
        s.accept(&v);
        const nir::BufferInfo &b = m_.buffer(sets_.at(set.as<Evaluate>()));
        for (const std::string &n : v.names) {
            auto it = m_.buffers.find(n);
            if (it == m_.buffers.end()) {
                return true; // unknown: assume it may share the bytes
            }
            const nir::BufferInfo &q = it->second;
            if (q.is_arg || q.level != b.level) {
                continue;
            }
            if (q.offset < 0 || b.offset < 0 || &q == &b) {
                return true;
            }
            const int64_t b_end = b.offset + b.copy_bytes(*m_.arch) * b.buffers;
            const int64_t q_end = q.offset + q.copy_bytes(*m_.arch) * q.buffers;
            if (b.offset < q_end && q.offset < b_end) {
                return true;
            }
        }
        return false;
    }
};

} // namespace

nir::NpuModule insert_buffer_credits(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    Credits c(r);
    r.body = c.mutate(m.body);
    r.body = HoistInitialCredits(r, c.initial_sets).run(r.body);
    return r;
}

} // namespace tessel
