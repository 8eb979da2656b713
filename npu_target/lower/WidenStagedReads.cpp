#include "npu_target/lower/WidenStagedReads.h"

#include <algorithm>
#include <map>
#include <set>

namespace tessel::detail {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// ---- widening a staged buffer once ---------------------------------------------
//
// A buffer a DMA fills in the vector level whose every read is the same exact
// widening (depthwise's cast(fp32, in(c, x + r.x, y + r.y)): nine casts of each
// staged element, one per tap) is widened once after its DMA into a companion
// buffer, and the reads load that instead. Also taken as such a read: one
// operand of a narrow product Halide wrote for exactness, cast(int32,
// int16(a) * int16(b)) with a, b int8 (the product fits int16), which is the
// same value as int32(a) * int32(b) and becomes that, so an accumulation
// d + a * b runs as one VMULADD in the wide type. Only when the reads use each
// element at least twice and the wide copy fits the level.

// x = cast(M, y) that is exact, and y itself.
const Expr *exact_widening_of(const Expr &x, const Type &m) {
    const Cast *c = x.as<Cast>();
    return c && c->type == m && m.can_represent(c->value.type()) && c->value.type().is_int_or_uint() == m.is_int_or_uint()
               ? &c->value
               : nullptr;
}

// cast(T, cast(M, a) * cast(M, b)) whose narrow product is exact (integers,
// the operands' bits fit M): sets a and b.
bool exact_narrow_product(const Cast *c, Expr &a, Expr &b) {
    const Mul *mul = c ? c->value.as<Mul>() : nullptr;
    if (!mul || !c->type.is_int_or_uint() || !mul->type.is_int_or_uint() || !c->type.can_represent(mul->type)) {
        return false;
    }
    const Type m = mul->type;
    const Expr *x = exact_widening_of(mul->a, m), *y = exact_widening_of(mul->b, m);
    if (!x || !y || x->type().is_uint() != m.is_uint() || y->type().is_uint() != m.is_uint() ||
        x->type().bits() + y->type().bits() > m.bits()) {
        return false;
    }
    a = *x, b = *y;
    return true;
}

struct WidenCandidate {
    Type wide;           // element type of the widened reads
    int lanes = 0;       // lanes of the reads
    double reads = 0;    // elements read per fill of the buffer
    bool ok = true;
};

class FindWidenable : public IRVisitor {
public:
    FindWidenable(const nir::NpuModule &m) : m_(m) {}
    std::map<std::string, WidenCandidate> found; // DMA-filled vector-level buffers
    std::set<std::string> filled;

private:
    const nir::NpuModule &m_;
    double trips_ = 1;
    using IRVisitor::visit;

    std::map<std::string, double> fills_; // buffer -> iterations of the loops around its allocation

    void visit(const For *op) override {
        const int64_t *e = as_const_int(op->extent);
        const double saved = trips_;
        trips_ *= e ? static_cast<double>(*e) : 1.0;
        IRVisitor::visit(op);
        trips_ = saved;
    }
    void visit(const Allocate *op) override {
        fills_[op->name] = trips_;
        IRVisitor::visit(op);
    }
    void visit(const Evaluate *op) override {
        if (auto d = nir::as_dma(Stmt(op))) {
            auto it = m_.buffers.find(d->dst.buffer);
            if (it != m_.buffers.end() && it->second.level == m_.arch->vector.level) {
                filled.insert(d->dst.buffer);
            }
        }
        IRVisitor::visit(op);
    }
    void use(const Load *l, const Type &wide) {
        WidenCandidate &c = found[l->name];
        if (c.lanes == 0) {
            c.wide = wide.element_of();
            c.lanes = l->type.lanes();
        }
        c.ok = c.ok && c.wide == wide.element_of() && c.lanes == l->type.lanes() && is_const_one(l->predicate) &&
               l->type.is_vector();
        // Elements read per fill: the loops inside the buffer's allocation.
        auto f = fills_.find(l->name);
        c.reads += trips_ / (f == fills_.end() || f->second <= 0 ? 1.0 : f->second) * l->type.lanes();
    }
    void visit(const Load *op) override {
        found[op->name].ok = false; // read as it is
        IRVisitor::visit(op);
    }
    void visit(const VectorReduce *op) override {
        // The maximum of an exact widening is taken in the narrow type (see
        // SelectStores::reduction): a read of the narrow elements.
        const Cast *c = op->value.as<Cast>();
        if (c && c->value.as<Load>() && op->op == VectorReduce::Max) {
            c->value.accept(this);
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const Cast *op) override {
        Expr a, b;
        if (exact_narrow_product(op, a, b)) {
            for (const Expr &x : {a, b}) {
                if (const Load *l = x.as<Load>()) {
                    use(l, op->type);
                    l->index.accept(this);
                } else {
                    x.accept(this);
                }
            }
            return;
        }
        const Load *l = op->value.as<Load>();
        if (l && op->type.can_represent(l->type) && op->type.is_float() == l->type.is_float() &&
            op->type.bits() > l->type.bits()) {
            use(l, op->type);
            l->index.accept(this);
            return;
        }
        IRVisitor::visit(op);
    }
};

class WidenReads : public IRMutator {
public:
    WidenReads(nir::NpuModule &m, const std::map<std::string, WidenCandidate> &chosen) : m_(m), chosen_(chosen) {}

private:
    nir::NpuModule &m_;
    const std::map<std::string, WidenCandidate> &chosen_;
    using IRMutator::visit;

    static std::string wide_name(const std::string &b) { return b + ".wide"; }
    Expr wide_load(const Load *l) const {
        const WidenCandidate &c = chosen_.at(l->name);
        return Load::make(c.wide.with_lanes(l->type.lanes()), wide_name(l->name), l->index, Buffer<>(), Parameter(),
                          l->predicate, ModulusRemainder());
    }
    // The read of a chosen buffer in the wide type, or cast(wide, x).
    Expr widened(const Expr &x, const Type &wide) {
        const Load *l = x.as<Load>();
        if (l && chosen_.count(l->name) && chosen_.at(l->name).wide == wide.element_of()) {
            return wide_load(l);
        }
        return Cast::make(wide, mutate(x));
    }
    Expr visit(const Cast *op) override {
        Expr a, b;
        if (exact_narrow_product(op, a, b)) {
            const Load *la = a.as<Load>(), *lb = b.as<Load>();
            if ((la && chosen_.count(la->name)) || (lb && chosen_.count(lb->name))) {
                return Mul::make(widened(a, op->type), widened(b, op->type));
            }
        }
        const Load *l = op->value.as<Load>();
        if (l && chosen_.count(l->name) && chosen_.at(l->name).wide == op->type.element_of()) {
            return wide_load(l);
        }
        return IRMutator::visit(op);
    }
    Stmt visit(const ProducerConsumer *op) override {
        auto it = chosen_.find(op->name);
        if (!op->is_producer || it == chosen_.end()) {
            return IRMutator::visit(op);
        }
        // After the DMA: wide[i] = cast(wide, narrow[i]), a row of the reads'
        // lanes per iteration (fold_vector_loops makes the loop repeats), and
        // the elements after the last whole row (a blur's input band of W + 2
        // columns, read 1024 lanes at a time) by one more cast of their own.
        const WidenCandidate &c = it->second;
        const nir::BufferInfo &b = m_.buffers.at(op->name);
        auto widen_run = [&](const Expr &base, int lanes) {
            Expr index = lanes > 1 ? Ramp::make(base, make_one(Int(32)), lanes) : base;
            Expr narrow = Load::make(b.type.with_lanes(lanes), op->name, index, Buffer<>(), Parameter(),
                                     const_true(lanes), ModulusRemainder());
            return Store::make(wide_name(op->name), Cast::make(c.wide.with_lanes(lanes), narrow), index, Parameter(),
                               const_true(lanes), ModulusRemainder());
        };
        const std::string var = wide_name(op->name) + ".row";
        const int rows = static_cast<int>(b.elems / c.lanes), tail = static_cast<int>(b.elems % c.lanes);
        Stmt widen = For::make(var, 0, rows, ForType::Serial, DeviceAPI::None,
                               widen_run(Variable::make(Int(32), var) * c.lanes, c.lanes));
        if (tail > 0) {
            widen = Block::make(widen, widen_run(make_const(Int(32), rows * c.lanes), tail));
        }
        return ProducerConsumer::make(op->name, true, Block::make(mutate(op->body), widen));
    }
    Stmt visit(const Allocate *op) override {
        Stmt s = IRMutator::visit(op);
        auto it = chosen_.find(op->name);
        if (it == chosen_.end()) {
            return s;
        }
        const Allocate *a = s.as<Allocate>();
        const int64_t elems = m_.buffers.at(op->name).elems;
        Stmt body = Allocate::make(wide_name(op->name), it->second.wide, MemoryType::Auto,
                                   {make_const(Int(32), static_cast<int>(elems))}, const_true(), a->body);
        return Allocate::make(a->name, a->type, a->memory_type, a->extents, a->condition, body, a->new_expr,
                              a->free_function);
    }
};

} // namespace

Stmt widen_staged_reads(nir::NpuModule &m, const Stmt &body) {
    FindWidenable find(m);
    body.accept(&find);
    int64_t level_size = 0, own = 0;
    for (const auto &L : m.arch->memories) {
        if (L.name == m.arch->vector.level) {
            level_size = static_cast<int64_t>(L.size_bytes);
        }
    }
    for (const auto &[name, b] : m.buffers) {
        if (b.level == m.arch->vector.level) {
            own += b.elems * b.type.bytes() * std::max(1, b.buffers);
        }
    }
    // Largest first: a small buffer read in every iteration (a filter) is
    // usually loop-invariant where it is read, its casts hoisted already.
    std::vector<std::pair<std::string, WidenCandidate>> order(find.found.begin(), find.found.end());
    auto elems_of = [&](const std::string &n) { return m.buffers.count(n) ? m.buffers.at(n).elems : 0; };
    std::stable_sort(order.begin(), order.end(),
                     [&](const auto &x, const auto &y) { return elems_of(x.first) > elems_of(y.first); });
    std::map<std::string, WidenCandidate> chosen;
    for (const auto &[name, c] : order) {
        auto it = m.buffers.find(name);
        if (!c.ok || c.lanes == 0 || !find.filled.count(name) || it == m.buffers.end() || it->second.is_arg ||
            it->second.elems < c.lanes || c.reads < 2.0 * static_cast<double>(it->second.elems) ||
            !nir::dtype_of_type(c.wide)) {
            continue;
        }
        // The wide copy and a sixteenth of the level for scratch must fit (the
        // casts it replaces took scratch of their own).
        const int64_t bytes = it->second.elems * c.wide.bytes();
        if (level_size <= 0 || own + bytes > level_size - level_size / 16) {
            continue;
        }
        own += bytes;
        chosen[name] = c;
        nir::BufferInfo w;
        w.name = name + ".wide";
        w.type = c.wide;
        w.elems = it->second.elems;
        w.level = m.arch->vector.level;
        w.directive = it->second.directive;
        m.buffers[w.name] = w;
    }
    return chosen.empty() ? body : WidenReads(m, chosen).mutate(body);
}

} // namespace tessel::detail
