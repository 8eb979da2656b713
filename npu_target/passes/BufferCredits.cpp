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
    int copies;
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
            Plan p{b.name, op->name, *u.writers.begin(), {}, b.buffers};
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
                for (int c = 0; c < p.copies; c++) {
                    all.push_back(nir::SyncOp{isa::Op::SET_FLAG, r, p.writer, e}.make());
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

} // namespace

nir::NpuModule insert_buffer_credits(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = Credits(r).mutate(m.body);
    return r;
}

} // namespace tessel
