#include "npu_target/passes/CreditCheck.h"

#include "npu_target/passes/InsertSync.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace tessel::detail {

using namespace Halide;
using namespace Halide::Internal;
using isa::Op;
using isa::Pipe;

namespace {

using FlagKey = std::tuple<Op, Pipe, Pipe, int>; // op, src (reader), dst (writer), event

// Every sync operation with an event >= 1, counted; the allocation of each
// multi-buffered buffer with the loops (nullptr: a branch) around it; the
// statement sequence each loop sits in.
class Survey : public nir::LoopPathVisitor {
public:
    std::map<FlagKey, int> flags;
    struct Site {
        const Allocate *alloc = nullptr;
        std::vector<const For *> path;
    };
    std::map<std::string, Site> allocs;
    std::map<std::string, std::vector<Stmt>> sequence_of_loop; // loop name -> the statements around it (it included)
    // Where each set_flag and each loop is: its place in program order and the loops around it.
    struct Position {
        int order = 0;
        std::vector<const For *> path;
    };
    std::map<FlagKey, std::vector<Position>> sets;
    std::map<std::string, Position> loops;

private:
    using nir::LoopPathVisitor::visit;

    void visit(const Evaluate *op) override {
        if (auto s = nir::as_sync(op)) {
            if (s->event >= 1 && (s->op == Op::SET_FLAG || s->op == Op::WAIT_FLAG)) {
                flags[{s->op, s->src, s->dst, s->event}]++;
            }
            if (s->op == Op::SET_FLAG) {
                sets[{s->op, s->src, s->dst, s->event}].push_back({order_++, path_});
            }
        }
    }
    void visit(const For *op) override {
        if (!sequence_of_loop.count(op->name)) {
            sequence_of_loop[op->name] = {Stmt(op)};
        }
        loops.emplace(op->name, Position{order_++, path_});
        nir::LoopPathVisitor::visit(op);
    }
    int order_ = 0;
    void visit(const Allocate *op) override {
        allocs[op->name] = Site{op, path_};
        IRVisitor::visit(op);
    }
    void visit(const Block *op) override {
        std::vector<Stmt> seq = nir::flatten(op);
        for (const Stmt &s : seq) {
            if (const For *f = s.as<For>()) {
                sequence_of_loop[f->name] = seq;
            }
        }
        for (const Stmt &s : seq) {
            s.accept(this);
        }
    }
};

bool is_flag(const Stmt &s, Op op, Pipe src, Pipe dst, int event) {
    auto so = nir::as_sync(s);
    return so && so->op == op && so->src == src && so->dst == dst && so->event == event;
}

} // namespace

std::vector<std::string> credit_protocol_violations(const nir::NpuModule &m) {
    Survey sv;
    m.body.accept(&sv);
    std::vector<std::string> out;
    for (const auto &[name, b] : m.buffers) {
        if (b.credit_readers.empty()) {
            continue;
        }
        auto bad = [&, name = name](const std::string &why) { out.push_back("credits of " + name + ": " + why); };
        auto site = sv.allocs.find(name);
        if (site == sv.allocs.end()) {
            bad("its allocation is not in the kernel");
            continue;
        }
        const auto &path = site->second.path;
        if (path.empty() || path.back() == nullptr || path.back()->name != b.rotate_loop) {
            bad("the allocation is not directly in its rotation loop " + b.rotate_loop +
                " (a branch or another loop in between lets the loop body run it a varying number of times)");
            continue;
        }
        const std::vector<Stmt> parts = nir::flatten(site->second.alloc->body);
        std::vector<BufferUsers> part_users; // once per part, for every reader below
        BufferUsers all;
        for (const Stmt &p : parts) {
            part_users.push_back(buffer_users(m, p, name));
            all.writers.insert(part_users.back().writers.begin(), part_users.back().writers.end());
        }
        all.writers.erase(Pipe::S);
        if (all.writers.size() != 1) {
            bad("it needs exactly one writer pipe, found " + std::to_string(all.writers.size()));
            continue;
        }
        const Pipe W = *all.writers.begin();
        // A writer that writes the copy of a later iteration (advance_head's
        // prefetch) takes, in body t, the credit of the body that used copy
        // t + ahead last: N - ahead initial credits. Every read is of the
        // current iteration's copy, which the body's return hands back.
        const int ahead = most_ahead(m, site->second.alloc->body, name, true);
        const int credits = b.buffers - ahead;
        if (most_ahead(m, site->second.alloc->body, name, false) != 0) {
            bad("a read reaches the copy of a later iteration; the credit returned at the end of a body frees only "
                "its own copy");
            continue;
        }
        if (credits < 1) {
            bad("it is written " + std::to_string(ahead) + " iterations ahead with " + std::to_string(b.buffers) +
                " copies");
            continue;
        }
        const std::string scope = b.rotate_scope.empty() ? b.rotate_loop : b.rotate_scope;
        auto seq_it = sv.sequence_of_loop.find(scope);
        for (Pipe R : b.credit_readers) {
            const std::string pair = std::string(isa::pipe_name(R)) + " -> " + isa::pipe_name(W);
            // The event: the top-level wait before the first write.
            int first_write = -1, last_read = -1, wait_at = -1, set_at = -1, event = -1, waits = 0, sets = 0;
            for (size_t i = 0; i < parts.size(); i++) {
                auto so = nir::as_sync(parts[i]);
                if (so && m.early_flags.count({so->src, so->dst, so->event})) {
                    so.reset(); // an ordering early_sets moved, not a credit
                }
                if (so && so->src == R && so->dst == W && so->event >= 1) {
                    if (so->op == Op::WAIT_FLAG) {
                        waits++;
                        wait_at = static_cast<int>(i);
                        event = so->event;
                    } else if (so->op == Op::SET_FLAG) {
                        sets++;
                        set_at = static_cast<int>(i);
                    }
                    continue;
                }
                const BufferUsers &u = part_users[i];
                if (u.writers.count(W) && first_write < 0) {
                    first_write = static_cast<int>(i);
                }
                if (u.readers.count(R)) {
                    last_read = static_cast<int>(i);
                }
            }
            if (waits != 1 || sets != 1) {
                bad("the body of " + b.rotate_loop + " must take one credit (" + pair + ") and return one; it has " +
                    std::to_string(waits) + " wait_flag(s) and " + std::to_string(sets) + " set_flag(s)");
                continue;
            }
            if (first_write >= 0 && wait_at > first_write) {
                bad("the writer " + std::string(isa::pipe_name(W)) + " writes it before taking the credit (" + pair + ")");
            }
            if (last_read >= 0 && set_at < last_read) {
                bad("the reader " + std::string(isa::pipe_name(R)) + " returns the credit (" + pair +
                    ") before its last read of the copy");
            }
            const FlagKey set_key{Op::SET_FLAG, R, W, event}, wait_key{Op::WAIT_FLAG, R, W, event};
            // The initial sets: before the scope loop, inside the same loops and branches
            // (insert_buffer_credits moves them up from the loop's own statement sequence).
            int before = 0, after = 0;
            auto loop_it = sv.loops.find(scope);
            if (loop_it != sv.loops.end()) {
                for (const auto &site : sv.sets[set_key]) {
                    before += site.order < loop_it->second.order && site.path == loop_it->second.path;
                }
            }
            if (seq_it != sv.sequence_of_loop.end()) {
                bool seen = false;
                for (const Stmt &s : seq_it->second) {
                    const For *f = s.as<For>();
                    if (f && f->name == scope) {
                        seen = true;
                        continue;
                    }
                    after += seen && is_flag(s, Op::WAIT_FLAG, R, W, event);
                }
            }
            if (before != credits || after != credits) {
                bad("around its rotation scope " + scope + " there must be " + std::to_string(credits) +
                    " initial set_flag(s) and " + std::to_string(credits) + " final wait_flag(s) (" + pair +
                    ", event " + std::to_string(event) + "); found " + std::to_string(before) + " and " +
                    std::to_string(after));
            }
            const int sets_total = sv.flags[set_key], waits_total = sv.flags[wait_key];
            if (sets_total != credits + 1 || waits_total != credits + 1) {
                bad("the flag " + pair + " event " + std::to_string(event) + " is used elsewhere too (" +
                    std::to_string(sets_total) + " set_flags and " + std::to_string(waits_total) +
                    " wait_flags in the kernel, expected " + std::to_string(credits + 1) + " each)");
            }
        }
    }
    return out;
}

} // namespace tessel::detail
