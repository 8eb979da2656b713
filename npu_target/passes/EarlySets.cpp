#include "npu_target/passes/EarlySets.h"

#include "npu_target/passes/InsertSync.h"
#include "npu_target/passes/LoopBody.h"

#include <map>
#include <set>
#include <vector>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;

namespace {

// The statements of one sequence, in order.
void units_of(const Stmt &s, std::vector<Stmt> &out) {
    if (const Block *b = s.as<Block>()) {
        units_of(b->first, out);
        units_of(b->rest, out);
    } else if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
        units_of(pc->body, out);
    } else if (const Allocate *a = s.as<Allocate>()) {
        units_of(a->body, out);
    } else if (const LetStmt *l = s.as<LetStmt>()) {
        units_of(l->body, out);
    } else if (s.defined()) {
        out.push_back(s);
    }
}

// The sequence that holds `target` as one of its statements, and the loop
// whose body it is (nullptr: a branch or the kernel's body).
class FindSequence : public IRVisitor {
public:
    explicit FindSequence(const IRNode *target) : target_(target) {}
    bool found = false;
    const For *loop = nullptr;
    std::vector<Stmt> units;

    void scan(const Stmt &root, const For *in_loop) {
        std::vector<Stmt> u;
        units_of(root, u);
        for (const Stmt &x : u) {
            if (x.get() == target_) {
                found = true;
                loop = in_loop;
                units = u;
                return;
            }
        }
        for (const Stmt &x : u) {
            if (found) {
                return;
            }
            x.accept(this);
        }
    }

private:
    const IRNode *target_;
    using IRVisitor::visit;
    void visit(const For *op) override { scan(op->body, op); }
    void visit(const IfThenElse *op) override {
        scan(op->then_case, nullptr);
        if (op->else_case.defined() && !found) {
            scan(op->else_case, nullptr);
        }
    }
};

// Whether pipe `q` has an operation in `s`.
bool has_op_on(const nir::NpuModule &m, const Stmt &s, Pipe q) {
    struct Find : public IRVisitor {
        const nir::NpuModule *m;
        Pipe q;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Evaluate *op) override {
            const Stmt st(op);
            if (!nir::as_sync(st) && (nir::as_dma(st) || nir::as_mmad(st) || nir::as_vec(st) || nir::as_fixparam(st))) {
                found = found || accesses_of(*m, st).pipe == q;
            }
        }
    } f;
    f.m = &m;
    f.q = q;
    s.accept(&f);
    return f.found;
}

// The statements of the SET_FLAG nodes in `anchors`, in program order.
std::vector<const IRNode *> sets_in_order(const Stmt &s, const std::map<const IRNode *, const IRNode *> &anchors) {
    struct Collect : public IRVisitor {
        const std::map<const IRNode *, const IRNode *> *anchors;
        std::vector<const IRNode *> sets;
        using IRVisitor::visit;
        void visit(const Evaluate *op) override {
            if (anchors->count(op)) {
                sets.push_back(op);
            }
        }
    } c;
    c.anchors = &anchors;
    s.accept(&c);
    return c.sets;
}

// One set moved (see the header); false when it stays.
bool move_set(nir::NpuModule &m, const IRNode *set_node, const IRNode *anchor) {
    FindSequence f(set_node);
    f.scan(m.body, nullptr);
    if (!f.found) {
        return false;
    }
    const std::vector<Stmt> &u = f.units;
    const int n = static_cast<int>(u.size());
    int i = 0;
    while (u[i].get() != set_node) {
        i++;
    }
    auto set = nir::as_sync(u[i]);
    auto wait = i + 1 < n ? nir::as_sync(u[i + 1]) : std::nullopt;
    if (!set || !wait || wait->op != isa::Op::WAIT_FLAG || wait->src != set->src || wait->dst != set->dst ||
        wait->event != set->event) {
        return false;
    }
    const Pipe q = set->src;
    auto holds = [&](int k) { return occurrences(u[k], anchor) > 0; };
    int at = -1; // the set goes after u[at]; -1: at the start of the sequence
    bool carried = false;
    for (int k = i - 1; k >= 0 && at < 0; k--) {
        if (holds(k)) {
            at = k;
        }
    }
    if (at < 0 && f.loop) {
        for (int k = n - 1; k > i + 1 && at < 0; k--) {
            if (holds(k)) {
                at = k;
                carried = true;
            }
        }
    }
    // Only worth an event id when q has work between the new place and the old.
    bool between = false;
    auto scan_q = [&](int from, int to) {
        for (int k = from; k < to && !between; k++) {
            between = has_op_on(m, u[k], q);
        }
    };
    if (carried) {
        scan_q(at + 1, n);
        scan_q(0, i);
    } else {
        scan_q(at + 1, i);
    }
    if (!between) {
        return false;
    }
    const Stmt where = at >= 0 ? u[at] : u[0];
    if (occurrences(m.body, where.get()) != 1 || occurrences(m.body, u[i + 1].get()) != 1 ||
        (carried && occurrences(m.body, f.loop) != 1)) {
        return false;
    }
    const auto used = nir::flags_in(m.body);
    int event = 1;
    while (event < m.arch->sync.event_ids_per_pair && used.count({q, set->dst, event})) {
        event++;
    }
    if (event >= m.arch->sync.event_ids_per_pair) {
        return false;
    }
    auto flag = [&](isa::Op op) { return nir::SyncOp{op, q, set->dst, event}.make(); };
    const Stmt nothing = Evaluate::make(make_zero(Int(32)));
    auto rewrite = [&](Stmt s) {
        s = Replace(set_node, nothing).mutate(s);
        s = Replace(u[i + 1].get(), flag(isa::Op::WAIT_FLAG)).mutate(s);
        Stmt placed = at >= 0 ? Block::make(where, flag(isa::Op::SET_FLAG)) : Block::make(flag(isa::Op::SET_FLAG), where);
        return Replace(where.get(), placed).mutate(s);
    };
    if (carried) {
        const For *loop = f.loop;
        Stmt body = rewrite(loop->body);
        Stmt new_loop = For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->device_api, body);
        m.body = Replace(loop, Block::make({flag(isa::Op::SET_FLAG), new_loop, flag(isa::Op::WAIT_FLAG)})).mutate(m.body);
    } else {
        m.body = rewrite(m.body);
    }
    m.early_flags.insert({q, set->dst, event});
    return true;
}

} // namespace

nir::NpuModule early_sets(const nir::NpuModule &in) {
    nir::NpuModule m = in;
    m.set_anchors.clear();
    std::map<const IRNode *, const IRNode *> anchors;
    for (const auto &[set, leaf] : in.set_anchors) {
        anchors[set.get()] = leaf.get();
    }
    for (const IRNode *set : sets_in_order(m.body, anchors)) {
        move_set(m, set, anchors.at(set));
    }
    return m;
}

} // namespace tessel
