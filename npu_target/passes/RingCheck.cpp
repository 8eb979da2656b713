#include "npu_target/passes/RingCheck.h"

#include "npu_target/lower/SplitCores.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tessel::detail {

using namespace Halide;
using namespace Halide::Internal;
using isa::Op;
using isa::Pipe;

namespace {

using Env = std::map<std::string, int64_t>;

std::optional<int64_t> eval(const Expr &e, const Env &env) { return nir::eval_int(e, env); }

// The statement sequence (a flattened Block) that holds the reload loop `loop`;
// for a panel loaded once (no reload loop), its allocation.
class FindSequence : public IRVisitor {
public:
    FindSequence(const std::string &loop, const std::string &buffer) : loop_(loop), buffer_(buffer) {}
    std::vector<Stmt> sequence;

private:
    const std::string &loop_, &buffer_;
    using IRVisitor::visit;
    void visit(const Allocate *op) override {
        if (loop_.empty() && op->name == buffer_ && sequence.empty()) {
            sequence = {Stmt(op)};
        }
        op->body.accept(this);
    }
    void visit(const Block *op) override {
        std::vector<Stmt> seq = nir::flatten(op);
        for (const Stmt &s : seq) {
            const For *f = s.as<For>();
            if (f && f->name == loop_ && sequence.empty()) {
                sequence = seq;
            }
        }
        for (const Stmt &s : seq) {
            s.accept(this);
        }
    }
    void visit(const For *op) override {
        if (op->name == loop_ && sequence.empty()) {
            sequence = {Stmt(op)};
        }
        op->body.accept(this);
    }
};

class Replay {
public:
    Replay(const nir::NpuModule &m, const nir::BufferInfo &b, int core) : m_(m), b_(b), p_(b.pieces) {
        slot_elems_ = b.elems / std::max(1, p_.slots);
        env_[kCoreIdVar] = core;
    }
    std::vector<std::string> violations;

    void run(const std::vector<Stmt> &seq) {
        for (const Stmt &s : seq) {
            step(s);
            if (violations.size() > 4) {
                return;
            }
        }
        finish();
    }

private:
    const nir::NpuModule &m_;
    const nir::BufferInfo &b_;
    const nir::BufferInfo::Pieces &p_;
    int64_t slot_elems_ = 1;
    Env env_;
    std::map<const IRNode *, bool> relevant_;
    // Program-order sequence numbers of loads (writer) and reads (reader).
    int64_t loads_ = 0, reads_ = 0;
    std::map<int64_t, int64_t> last_load_, last_read_; // slot -> sequence number (1-based) of the last one
    std::vector<int64_t> raw_set_loads_;               // per raw set: loads issued before it
    std::vector<int64_t> war_set_reads_;               // per war set: reads issued before it
    int64_t raw_waits_ = 0, war_waits_ = 0;
    struct Need {
        int64_t slot, seq, waits; // the last access of the slot that must be ordered, the waits taken so far
        std::string what;
    };
    std::vector<Need> raw_needs_, war_needs_;

    void bad(const std::string &why) { violations.push_back("ring panel " + b_.name + ": " + why); }

    bool is_flag(const nir::SyncOp &s, Pipe src, Pipe dst, int e) const {
        return s.src == src && s.dst == dst && s.event == e && (s.op == Op::SET_FLAG || s.op == Op::WAIT_FLAG);
    }
    bool touches(const Stmt &s) const {
        if (auto so = nir::as_sync(s)) {
            return is_flag(*so, p_.writer, p_.reader, p_.raw_event) || is_flag(*so, p_.reader, p_.writer, p_.war_event);
        }
        if (auto d = nir::as_dma(s)) {
            return d->src.buffer == b_.name || d->dst.buffer == b_.name;
        }
        return false;
    }
    bool relevant(const Stmt &s) {
        auto it = relevant_.find(s.get());
        if (it != relevant_.end()) {
            return it->second;
        }
        struct Any : public IRVisitor {
            const Replay *self;
            bool found = false;
            using IRVisitor::visit;
            void visit(const Evaluate *op) override { found = found || self->touches(Stmt(op)); }
        } a;
        a.self = this;
        s.accept(&a);
        relevant_[s.get()] = a.found;
        return a.found;
    }
    std::optional<int64_t> value(const Expr &e, const std::string &what) {
        auto v = eval(e, env_);
        if (!v) {
            bad("cannot evaluate " + what + " for the loop values here");
        }
        return v;
    }

    void step(const Stmt &s) {
        if (!s.defined() || violations.size() > 4 || !relevant(s)) {
            return;
        }
        if (const Block *b = s.as<Block>()) {
            step(b->first);
            step(b->rest);
        } else if (const For *f = s.as<For>()) {
            auto lo = value(f->min, "the start of loop " + f->name);
            auto n = value(f->extent, "the extent of loop " + f->name);
            if (!lo || !n) {
                return;
            }
            for (int64_t i = *lo; i < *lo + *n && violations.size() <= 4; i++) {
                env_[f->name] = i;
                step(f->body);
            }
            env_.erase(f->name);
        } else if (const IfThenElse *c = s.as<IfThenElse>()) {
            auto v = value(c->condition, "a condition");
            if (v) {
                step(*v ? c->then_case : c->else_case);
            }
        } else if (const LetStmt *l = s.as<LetStmt>()) {
            auto v = eval(l->value, env_);
            if (v) {
                env_[l->name] = *v;
            }
            step(l->body);
            env_.erase(l->name);
        } else if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
            step(pc->body);
        } else if (const Allocate *a = s.as<Allocate>()) {
            step(a->body);
        } else if (auto so = nir::as_sync(s)) {
            sync(*so);
        } else if (auto d = nir::as_dma(s)) {
            dma(*d);
        }
    }
    void sync(const nir::SyncOp &s) {
        const bool raw = is_flag(s, p_.writer, p_.reader, p_.raw_event);
        if (raw && s.op == Op::SET_FLAG) {
            raw_set_loads_.push_back(loads_);
        } else if (raw) {
            raw_waits_++;
        } else if (s.op == Op::SET_FLAG) {
            war_set_reads_.push_back(reads_);
        } else {
            war_waits_++;
        }
    }
    void dma(const nir::DmaOp &d) {
        const Pipe pipe = nir::pipe_of_engine(*m_.arch, d.engine);
        if (d.dst.buffer == b_.name) {
            auto i = value(d.dst.index, "a load's slot");
            if (!i) {
                return;
            }
            if (pipe != p_.writer) {
                bad("written on " + std::string(isa::pipe_name(pipe)) + ", not only by its writer pipe");
                return;
            }
            // A load fills every slot its bytes reach (a panel loaded once
            // may load several of its units in one piece).
            int64_t extent = 1;
            for (const auto &dim : d.dims) {
                extent += (dim.count - 1) * dim.dst_stride;
            }
            loads_++;
            for (int64_t slot = *i / slot_elems_; slot <= (*i + extent - 1) / slot_elems_; slot++) {
                war_needs_.push_back({slot, last_read_[slot], war_waits_, "load " + std::to_string(loads_)});
                last_load_[slot] = loads_;
            }
        }
        if (d.src.buffer == b_.name) {
            auto i = value(d.src.index, "a read's slot");
            if (!i) {
                return;
            }
            if (pipe != p_.reader) {
                bad("read on " + std::string(isa::pipe_name(pipe)) + ", not only by its reader pipe");
                return;
            }
            const int64_t slot = *i / slot_elems_;
            reads_++;
            if (!last_load_.count(slot)) {
                bad("read " + std::to_string(reads_) + " reads slot " + std::to_string(slot) + " before any load into it");
                return;
            }
            raw_needs_.push_back({slot, last_load_[slot], raw_waits_, "read " + std::to_string(reads_)});
            last_read_[slot] = reads_;
        }
    }
    // The accesses ordered by the first `waits` waits of a flag: everything
    // issued before the latest of their sets.
    static int64_t ordered(const std::vector<int64_t> &before_set, int64_t waits) {
        int64_t m = 0;
        for (int64_t k = 0; k < waits && k < static_cast<int64_t>(before_set.size()); k++) {
            m = std::max(m, before_set[static_cast<size_t>(k)]);
        }
        return m;
    }
    void finish() {
        if (static_cast<int64_t>(raw_set_loads_.size()) != raw_waits_) {
            bad("the raw flag is set " + std::to_string(raw_set_loads_.size()) + " times and waited " +
                std::to_string(raw_waits_) + " times");
        }
        if (static_cast<int64_t>(war_set_reads_.size()) != war_waits_) {
            bad("the war flag is set " + std::to_string(war_set_reads_.size()) + " times and waited " +
                std::to_string(war_waits_) + " times");
        }
        for (const Need &n : raw_needs_) {
            if (ordered(raw_set_loads_, n.waits) < n.seq) {
                bad(n.what + " of slot " + std::to_string(n.slot) + " is not ordered after load " +
                    std::to_string(n.seq) + " into it (RAW)");
                break;
            }
        }
        for (const Need &n : war_needs_) {
            if (n.seq > 0 && ordered(war_set_reads_, n.waits) < n.seq) {
                bad(n.what + " into slot " + std::to_string(n.slot) + " is not ordered after read " +
                    std::to_string(n.seq) + " of it (WAR)");
                break;
            }
        }
    }
};

} // namespace

std::vector<std::string> ring_protocol_violations(const nir::NpuModule &m) {
    std::vector<std::string> out;
    for (const auto &[name, b] : m.buffers) {
        if (b.pieces.count < 2) {
            continue;
        }
        FindSequence f(b.pieces.loop, name);
        m.body.accept(&f);
        if (f.sequence.empty() && b.pieces.loop.empty()) {
            out.push_back("panel " + name + " loaded once in pieces: its allocation is not in the kernel");
            continue;
        }
        if (f.sequence.empty()) {
            out.push_back("ring panel " + name + ": its reload loop " + b.pieces.loop + " is not in the kernel");
            continue;
        }
        // Each core runs the same code on its own on-chip memories and flags,
        // with its own range of the split loop.
        for (int core = 0; core < std::max(1, m.cores) && out.empty(); core++) {
            Replay r(m, b, core);
            r.run(f.sequence);
            for (const auto &v : r.violations) {
                out.push_back(m.cores > 1 ? "core " + std::to_string(core) + ": " + v : v);
            }
        }
    }
    return out;
}

} // namespace tessel::detail
