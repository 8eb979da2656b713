#include "npu_target/lower/FoldVectorLoops.h"

#include "npu_target/common/Error.h"
#include "npu_target/isa/InstrTable.h"

#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Scratch buffers the vector selector makes: one row of its lane count per use.
bool is_scratch(const std::string &name) {
    return name.find(".vtmp") != std::string::npos || name.find(".vred") != std::string::npos ||
           name.find(".vlet") != std::string::npos;
}

// The selector gives every interior node of an expression its own scratch.
// A temp whose every access comes after the last access of an earlier temp
// of the same type and lanes can take that temp's place: exp(max(a + b, 0) *
// c) then needs two rows of scratch, not three, and a fold within the same
// budget takes more rows per instruction. A temp written from sources that do
// not change with the loop (the fold hoists those) keeps its own. Renames the
// shared temps in `ops` and returns the names no longer used.
std::set<std::string> share_scratch(const std::vector<const Allocate *> &temps, std::vector<nir::VecOp> &ops,
                                    const std::string &loop) {
    std::map<std::string, const Allocate *> by_name;
    for (const Allocate *a : temps) {
        by_name[a->name] = a;
    }
    std::map<std::string, std::pair<size_t, size_t>> span; // first, last access
    std::set<std::string> varying;                          // temps that change with the loop
    std::vector<std::string> order;                         // by first access
    for (size_t k = 0; k < ops.size(); k++) {
        const nir::VecOp &v = ops[k];
        bool varies = false;
        for (const nir::BufRef *r : {&v.a, &v.b}) {
            if (r->buffer.empty()) {
                continue;
            }
            if (by_name.count(r->buffer)) {
                varies = varies || varying.count(r->buffer);
            } else {
                auto c = nir::affine_coefficient(r->index, loop);
                varies = varies || !c || *c != 0;
            }
        }
        if (by_name.count(v.dst.buffer) && varies) {
            varying.insert(v.dst.buffer);
        }
        for (const nir::BufRef *r : {&v.dst, &v.a, &v.b}) {
            if (!by_name.count(r->buffer)) {
                continue;
            }
            auto it = span.find(r->buffer);
            if (it == span.end()) {
                span[r->buffer] = {k, k};
                order.push_back(r->buffer);
            } else {
                it->second.second = k;
            }
        }
    }
    std::map<std::string, std::string> rename;
    std::vector<std::string> slots;
    for (const std::string &t : order) {
        const Allocate *a = by_name.at(t);
        for (const std::string &s : slots) {
            const Allocate *b = by_name.at(s);
            if (varying.count(t) && varying.count(s) && a->type == b->type && can_prove(a->extents[0] == b->extents[0]) &&
                span[s].second < span[t].first) {
                rename[t] = s;
                span[s].second = span[t].second;
                break;
            }
        }
        if (!rename.count(t)) {
            slots.push_back(t);
        }
    }
    std::set<std::string> dropped;
    for (nir::VecOp &v : ops) {
        for (nir::BufRef *r : {&v.dst, &v.a, &v.b}) {
            auto it = rename.find(r->buffer);
            if (it != rename.end()) {
                r->buffer = it->second;
                dropped.insert(it->first);
            }
        }
    }
    return dropped;
}

class Fold : public IRMutator {
public:
    explicit Fold(nir::NpuModule &m) : m_(m) {}

private:
    nir::NpuModule &m_;
    using IRMutator::visit;

    struct Body {
        std::vector<const Allocate *> temps; // outermost first
        std::vector<nir::VecOp> ops;
    };

    // The loop body as scratch buffers and scalar lets around vector
    // operations (in any nesting of blocks), or nullopt. Scalar lets (index
    // arithmetic Halide factored out) are substituted into the operations in
    // their scope, so the loop still folds.
    std::optional<Body> split_body(const Stmt &s) {
        Body b;
        std::vector<std::pair<std::string, Expr>> lets;
        auto inline_lets = [&](Expr e) {
            for (auto it = lets.rbegin(); e.defined() && it != lets.rend(); ++it) {
                e = substitute(it->first, it->second, e);
            }
            return e;
        };
        std::function<bool(const Stmt &)> walk = [&](const Stmt &x) -> bool {
            if (const Block *blk = x.as<Block>()) {
                return walk(blk->first) && walk(blk->rest);
            }
            if (const Allocate *a = x.as<Allocate>()) {
                if (!is_scratch(a->name) || a->extents.size() != 1 || !as_const_int(a->extents[0]) ||
                    !m_.buffers.count(a->name)) {
                    return false;
                }
                b.temps.push_back(a);
                return walk(a->body);
            }
            if (const LetStmt *l = x.as<LetStmt>()) {
                if (!l->value.type().is_scalar()) {
                    return false;
                }
                lets.emplace_back(l->name, l->value);
                bool ok = walk(l->body);
                lets.pop_back();
                return ok;
            }
            auto v = nir::as_vec(x);
            if (!v || v->rows != 1) {
                return false;
            }
            for (nir::BufRef *r : {&v->dst, &v->a, &v->b}) {
                r->index = inline_lets(r->index);
            }
            v->scalar = inline_lets(v->scalar);
            b.ops.push_back(*v);
            return true;
        };
        if (!walk(s) || b.ops.empty()) {
            return std::nullopt;
        }
        return b;
    }

    // Folding runs each operation over all rows before the next operation
    // instead of all operations row by row. That is the same result when no
    // operation reads or writes, in another row, what another operation writes:
    // every buffer written in the body is either touched by one operation only
    // (its rows then run in the original order), or touched by every
    // operation at the same place per row, with rows that do not overlap. A
    // scalar operand (evaluated once at issue) must not read a buffer the body
    // writes.
    struct Ref {
        size_t op;
        Expr index; // at the first row
        int64_t row_stride, lo, hi; // element span of one row relative to index
    };
    static bool reorder_is_safe(const std::vector<nir::VecOp> &ops) {
        std::map<std::string, std::vector<Ref>> refs;
        std::set<std::string> written;
        for (size_t k = 0; k < ops.size(); k++) {
            const nir::VecOp &v = ops[k];
            const bool reduce = v.op == isa::Op::VREDSUM || v.op == isa::Op::VREDMAX;
            const nir::BufRef *r3[3] = {&v.dst, &v.a, &v.b};
            for (int i = 0; i < 3; i++) {
                if (r3[i]->buffer.empty()) {
                    continue;
                }
                int64_t count = (i == 0 && reduce) ? 1 : v.n;
                int64_t s = v.stride[i];
                int64_t lo = std::min<int64_t>(0, (count - 1) * s), hi = std::max<int64_t>(0, (count - 1) * s);
                refs[r3[i]->buffer].push_back({k, r3[i]->index, v.row_stride[i], lo, hi});
                if (i == 0) {
                    written.insert(r3[i]->buffer);
                }
            }
        }
        for (const nir::VecOp &v : ops) {
            if (!v.scalar.defined()) {
                continue;
            }
            struct Loads : public IRVisitor {
                std::set<std::string> names;
                using IRVisitor::visit;
                void visit(const Load *l) override {
                    names.insert(l->name);
                    IRVisitor::visit(l);
                }
            } loads;
            v.scalar.accept(&loads);
            bool reads_written = false;
            for (const auto &n : loads.names) {
                reads_written = reads_written || written.count(n) > 0;
            }
            if (reads_written) {
                return false;
            }
        }
        for (const std::string &buf : written) {
            const std::vector<Ref> &rs = refs[buf];
            bool one_op = true;
            for (const Ref &r : rs) {
                one_op = one_op && r.op == rs[0].op;
            }
            if (one_op) {
                continue;
            }
            int64_t span = 0;
            for (const Ref &r : rs) {
                if (r.row_stride != rs[0].row_stride || (!equal(r.index, rs[0].index) && !can_prove(r.index == rs[0].index))) {
                    return false;
                }
                span = std::max(span, r.hi - r.lo + 1);
            }
            if (rs[0].row_stride == 0 || std::abs(rs[0].row_stride) < span) {
                return false;
            }
        }
        return true;
    }

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const int64_t *ext = as_const_int(op->extent);
        auto parts = split_body(body);
        auto keep = [&]() { return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body); };
        if (!ext || *ext < 2 || !parts || op->for_type != ForType::Serial) {
            return keep();
        }
        const int64_t max_rep = std::max(1, m_.arch->vector.max_repeat);
        // Scratch grows by a row per folded iteration: fold at most as many
        // rows as keep it within half of what the kernel's own buffers leave
        // free in the vector level (all of them counted as if live at once),
        // and at least an eighth of the level. A body whose operations are
        // long rows already gains little from folding more of them.
        int64_t budget = INT64_MAX;
        for (const auto &L : m_.arch->memories) {
            if (L.name == m_.arch->vector.level && L.size_bytes > 0) {
                int64_t own = 0;
                for (const auto &[name, b] : m_.buffers) {
                    if (b.level == L.name && !is_scratch(name)) {
                        own += b.elems * b.type.bytes() * std::max(1, b.buffers);
                    }
                }
                const int64_t size = static_cast<int64_t>(L.size_bytes);
                budget = std::max(size / 8, (size - own) / 2);
            }
        }
        auto rows_for = [&](const std::vector<const Allocate *> &temps) {
            int64_t scratch_row_bytes = 0;
            for (const Allocate *a : temps) {
                scratch_row_bytes += *as_const_int(a->extents[0]) * a->type.bytes();
            }
            int64_t rows = *ext;
            while (rows > max_rep || *ext % rows != 0 || (rows > 1 && rows * scratch_row_bytes > budget)) {
                rows--;
            }
            return rows;
        };
        int64_t rows = rows_for(parts->temps);
        // Shared scratch only where it lets more rows fold.
        std::vector<nir::VecOp> shared_ops = parts->ops;
        std::set<std::string> shared = share_scratch(parts->temps, shared_ops, op->name);
        std::vector<const Allocate *> shared_temps;
        for (const Allocate *a : parts->temps) {
            if (!shared.count(a->name)) {
                shared_temps.push_back(a);
            }
        }
        if (!shared.empty() && rows_for(shared_temps) > rows) {
            rows = rows_for(shared_temps);
            parts->ops = shared_ops;
            parts->temps = shared_temps;
        } else {
            shared.clear();
        }
        // Scratch rows: each temp gets `extent` rows of its lane count.
        std::map<std::string, int64_t> temp_lanes;
        for (const Allocate *a : parts->temps) {
            temp_lanes[a->name] = *as_const_int(a->extents[0]);
        }
        if (rows < 2) {
            return keep();
        }
        // Every operand affine in the loop variable; scalars must not use it.
        std::vector<nir::VecOp> folded;
        std::string outer = op->name + ".rows";
        Expr row0 = *ext == rows ? op->min : op->min + Variable::make(Int(32), outer) * make_const(Int(32), rows);
        for (nir::VecOp v : parts->ops) {
            if (v.scalar.defined() && expr_uses_var(v.scalar, op->name)) {
                return keep();
            }
            nir::BufRef *refs[3] = {&v.dst, &v.a, &v.b};
            for (int i = 0; i < 3; i++) {
                nir::BufRef &r = *refs[i];
                if (r.buffer.empty()) {
                    continue;
                }
                auto tl = temp_lanes.find(r.buffer);
                int64_t c;
                if (tl != temp_lanes.end()) {
                    // One row of the (now taller) scratch per folded
                    // iteration, counted from the chunk's first row.
                    c = tl->second;
                    v.row_stride[i] = static_cast<int32_t>(c);
                    continue;
                } else {
                    auto k = nir::affine_coefficient(r.index, op->name);
                    if (!k || *k > INT32_MAX || *k < INT32_MIN) {
                        return keep();
                    }
                    c = *k;
                }
                v.row_stride[i] = static_cast<int32_t>(c);
                r.index = simplify(substitute(op->name, row0, r.index));
            }
            v.rows = static_cast<int>(rows);
            folded.push_back(v);
        }
        if (!reorder_is_safe(folded)) {
            return keep();
        }
        // Loop-invariant operations (a broadcast constant, the cast of a
        // per-channel scale): an operation whose sources are the same for
        // every row (row stride 0, not written in the body except by other
        // such operations) into scratch only it writes computes the same row
        // in every iteration, so it runs once and its readers read that row.
        std::map<std::string, int> writers;
        for (const auto &v : folded) {
            writers[v.dst.buffer]++;
        }
        std::set<std::string> hoisted;
        for (auto &v : folded) {
            const bool reduce = v.op == isa::Op::VREDSUM || v.op == isa::Op::VREDMAX;
            if (!temp_lanes.count(v.dst.buffer) || writers[v.dst.buffer] != 1 || reduce || isa::reads_destination(v.op)) {
                continue;
            }
            bool invariant = true;
            const nir::BufRef *srcs[2] = {&v.a, &v.b};
            for (int i = 0; i < 2; i++) {
                if (srcs[i]->buffer.empty()) {
                    continue;
                }
                const bool src_invariant = hoisted.count(srcs[i]->buffer) ||
                                           (v.row_stride[i + 1] == 0 && !writers.count(srcs[i]->buffer));
                invariant = invariant && src_invariant;
            }
            if (invariant) {
                hoisted.insert(v.dst.buffer);
                v.rows = 1;
            }
        }
        for (auto &v : folded) {
            nir::BufRef *refs[3] = {&v.dst, &v.a, &v.b};
            for (int i = 0; i < 3; i++) {
                if (hoisted.count(refs[i]->buffer)) {
                    v.row_stride[i] = 0;
                }
            }
        }
        std::vector<Stmt> stmts;
        for (auto &v : folded) {
            rows_as_elements(v);
            stmts.push_back(v.make());
        }
        Stmt s = Block::make(stmts);
        for (auto it = parts->temps.rbegin(); it != parts->temps.rend(); ++it) {
            const Allocate *a = *it;
            nir::BufferInfo &b = m_.buffers.at(a->name);
            b.elems = temp_lanes[a->name] * (hoisted.count(a->name) ? 1 : rows);
            s = Allocate::make(a->name, a->type, a->memory_type, {make_const(Int(32), b.elems)}, a->condition, s);
        }
        for (const std::string &name : shared) {
            m_.buffers.erase(name);
        }
        if (rows != *ext) {
            s = For::make(outer, 0, make_const(Int(32), *ext / rows), op->for_type, op->device_api, s);
        }
        return s;
    }
};

} // namespace

// A one-element operation folded over rows whose destination moves by one
// element per row and whose sources by one element or none (a per-row
// statistic: a row reduction's result into the running value) is the same
// operation over `rows` elements of one row: one repeat instead of one per
// row. A source in the destination's buffer must be the destination itself
// (a row would otherwise read what an earlier row wrote).
void rows_as_elements(nir::VecOp &v) {
    const bool reduce = v.op == isa::Op::VREDSUM || v.op == isa::Op::VREDMAX;
    if (reduce || v.n != 1 || v.rows < 2 || v.row_stride[0] != 1) {
        return;
    }
    const nir::BufRef *srcs[2] = {&v.a, &v.b};
    for (int i = 0; i < 2; i++) {
        const int32_t rs = v.row_stride[i + 1];
        if (srcs[i]->buffer.empty()) {
            continue;
        }
        if ((rs != 0 && rs != 1) ||
            (srcs[i]->buffer == v.dst.buffer && (rs != 1 || !can_prove(srcs[i]->index == v.dst.index)))) {
            return;
        }
    }
    v.n = v.rows;
    v.rows = 1;
    for (int i = 0; i < 3; i++) {
        v.stride[i] = v.row_stride[i];
        v.row_stride[i] = 0;
    }
    if (isa::row_scalar_base(v.op) != isa::Op::NUM_OPS && v.stride[2] != 0) {
        v.op = isa::row_scalar_base(v.op); // b now moves with the elements: the element-wise form
    }
}

bool use_row_scalar_form(nir::VecOp &v) {
    auto rop_of = [](isa::Op op) {
        for (isa::Op r : {isa::Op::VADDRS, isa::Op::VSUBRS, isa::Op::VMULRS, isa::Op::VDIVRS, isa::Op::VMAXRS,
                          isa::Op::VMINRS}) {
            if (isa::row_scalar_base(r) == op) {
                return r;
            }
        }
        return isa::Op::NUM_OPS;
    };
    const isa::Op rop = rop_of(v.op);
    // (A destination in b's buffer is left alone: b read once per row would
    // not see a write of the row to its element, which the element-wise form
    // reads back.)
    if (rop == isa::Op::NUM_OPS || v.a.buffer.empty() || v.b.buffer.empty() || v.stride[0] == 0 ||
        v.dst.buffer == v.b.buffer) {
        return false;
    }
    const bool commutes = v.op == isa::Op::VADD || v.op == isa::Op::VMUL || v.op == isa::Op::VMAX ||
                          v.op == isa::Op::VMIN;
    if (commutes && v.stride[1] == 0 && v.stride[2] != 0) {
        std::swap(v.a, v.b);
        std::swap(v.stride[1], v.stride[2]);
        std::swap(v.row_stride[1], v.row_stride[2]);
    }
    if (v.stride[2] != 0 || v.stride[1] == 0) {
        return false;
    }
    v.op = rop;
    return true;
}

namespace {
class RowScalarForms : public IRMutator {
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        auto v = nir::as_vec(Stmt(op));
        if (v && use_row_scalar_form(*v)) {
            return v->make();
        }
        return op;
    }
};
} // namespace

nir::NpuModule row_scalar_forms(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = RowScalarForms().mutate(m.body);
    return r;
}

nir::NpuModule fold_vector_loops(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = Fold(r).mutate(m.body);
    return r;
}

} // namespace tessel
