#ifndef TESSEL_NPU_TARGET_LOWER_VECTORSELECTOR_H
#define TESSEL_NPU_TARGET_LOWER_VECTORSELECTOR_H

// The expression half of select_vector_ops: one vectorised value (a tree of
// loads, scalars, arithmetic, casts and transcendental calls) -> vector-unit
// operations into a destination, with scratch buffers for interior nodes.
// The statement half (which stores, lets and reductions become vector
// operations) is SelectVectorOps.cpp, the only includer of this header.

#include "npu_target/common/Error.h"
#include "npu_target/ir/NpuIR.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace tessel::detail {

using namespace Halide;
using namespace Halide::Internal;
using isa::Op;

// A vector operand: a strided run in a buffer, or a scalar to broadcast.
struct Operand {
    bool is_scalar = false;
    Expr scalar;
    nir::BufRef ref;
    int32_t stride = 1;
};

// Whether e loads from buffer `name`.
inline bool reads_buffer(const Expr &e, const std::string &name) {
    struct Reads : public IRVisitor {
        const std::string *name;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Load *l) override {
            found = found || l->name == *name;
            IRVisitor::visit(l);
        }
    } reads;
    reads.name = &name;
    e.accept(&reads);
    return reads.found;
}

// Registers a scratch buffer of `elems` elements in the vector unit's level.
inline void add_scratch(nir::NpuModule &m, const std::string &name, const Type &t, int64_t elems) {
    nir::BufferInfo b;
    b.name = name;
    b.type = t.element_of();
    b.elems = elems;
    b.level = m.arch->vector.level;
    m.buffers[name] = b;
}

class Selector {
public:
    Selector(nir::NpuModule &m, const std::string &func, int lanes) : m_(m), func_(func), lanes_(lanes) {}

    // Emits the ops computing `value` into dst; false (with why) if unsupported.
    bool build(const Expr &value, const nir::BufRef &dst, int32_t dst_stride, std::string &why) {
        ops_.clear();
        temps_.clear();
        if (!supported(value, why)) {
            return false;
        }
        Operand out;
        out.ref = dst;
        out.stride = dst_stride;
        // The destination doubles as the first intermediate's storage (the
        // operations then run in place) unless the expression reads it.
        dst_reusable_ = !reads_buffer(value, dst.buffer) && dst_stride != 0;
        reads_only_dst_ = dst_stride != 0 && reads_only_own_elements(value, out);
        root_ = value;
        emit(value, &out);
        return true;
    }
    Stmt result(const Stmt &) const {
        Stmt s = Block::make(ops_);
        for (auto it = temps_.rbegin(); it != temps_.rend(); ++it) {
            s = Allocate::make(std::get<0>(*it), std::get<1>(*it), MemoryType::Auto, {make_const(Int(32), std::get<2>(*it))},
                               const_true(), s);
        }
        return s;
    }

private:
    nir::NpuModule &m_;
    std::string func_;
    int lanes_;
    std::vector<Stmt> ops_;
    std::vector<std::tuple<std::string, Type, int>> temps_; // name, element type, lanes
    // Vector lets (Halide's common subexpressions inside one expression): each
    // is computed once into a temporary and its uses read that operand.
    std::set<std::string> checked_lets_;
    bool dst_reusable_ = false;
    // The value reads the destination's buffer only at the destination's own
    // elements (an update d = d * a + b * c of a Tuple element in place).
    bool reads_only_dst_ = false;
    Expr root_; // the value being built
    static bool reads_only_own_elements(const Expr &value, const Operand &dst) {
        struct Check : public IRVisitor {
            const Operand *dst;
            bool ok = true;
            using IRVisitor::visit;
            void visit(const Load *l) override {
                if (l->name == dst->ref.buffer) {
                    ok = ok && is_dst_itself(Expr(l), dst);
                }
                IRVisitor::visit(l);
            }
        } c;
        c.dst = &dst;
        value.accept(&c);
        return c.ok;
    }

    // Whether operand expression x of the operation computing e into dst is
    // computed into dst itself (no scratch), the operation then running in place.
    bool into_dst(const Expr &x, const Expr &e, const Operand *dst) const {
        return dst_reusable_ && !dst->is_scalar && x.type() == e.type() && x.type().is_vector() && !trivial(x) &&
               !(x.as<Broadcast>());
    }
    std::map<std::string, Operand> bound_;

    // Whether x reads exactly the destination's elements (the accumulator of
    // an update d = d + y * z): same buffer, same first element, same stride.
    static bool is_dst_itself(const Expr &x, const Operand *dst) {
        const Load *l = x.as<Load>();
        const Ramp *r = l ? l->index.as<Ramp>() : nullptr;
        const int64_t *s = r ? as_const_int(r->stride) : nullptr;
        return s && !dst->is_scalar && l->name == dst->ref.buffer && is_const_one(l->predicate) &&
               *s == dst->stride && dst->stride != 0 && dst->ref.index.defined() &&
               (equal(r->base, dst->ref.index) || can_prove(r->base == dst->ref.index));
    }

    template <typename F>
    void with_binding(const std::string &name, const Operand &value, F body) {
        auto saved = bound_.find(name);
        std::optional<Operand> outer;
        if (saved != bound_.end()) {
            outer = saved->second;
        }
        bound_[name] = value;
        body();
        if (outer) {
            bound_[name] = *outer;
        } else {
            bound_.erase(name);
        }
    }
    // A scalar expression of loads from the vector level and constants that
    // the vector unit computes (see operand()).
    bool scalar_on_vector(const Expr &e) const {
        if (!e.type().is_scalar() || !nir::dtype_of_type(e.type())) {
            return false;
        }
        std::string unused;
        bool loads = false, ok = true;
        std::function<void(const Expr &)> check = [&](const Expr &x) {
            if (!ok) {
                return;
            }
            if (!x.type().is_scalar() || !dtype_ok(x.type(), unused)) {
                ok = false;
            } else if (vector_level_scalar_load(x)) {
                loads = true;
            } else if (is_const(x)) {
            } else if (const Cast *c = x.as<Cast>()) {
                check(c->value);
            } else if (const Call *c = x.as<Call>()) {
                ok = (c->name == "exp_f32" || c->name == "log_f32" || c->name == "sqrt_f32") && c->args.size() == 1;
                if (ok) {
                    check(c->args[0]);
                }
            } else if (const Add *o = x.as<Add>()) {
                check(o->a), check(o->b);
            } else if (const Sub *o = x.as<Sub>()) {
                check(o->a), check(o->b);
            } else if (const Mul *o = x.as<Mul>()) {
                check(o->a), check(o->b);
            } else if (const Div *o = x.as<Div>()) {
                ok = x.type().is_float() || positive_constant(o->b);
                check(o->a), check(o->b);
            } else if (const Min *o = x.as<Min>()) {
                check(o->a), check(o->b);
            } else if (const Max *o = x.as<Max>()) {
                check(o->a), check(o->b);
            } else {
                ok = false;
            }
        };
        check(e);
        return ok && loads;
    }
    // A let value that costs nothing to repeat: a load, a broadcast scalar.
    static bool trivial(const Expr &e) {
        if (const Broadcast *b = e.as<Broadcast>()) {
            return b->value.type().is_scalar();
        }
        return e.as<Load>() != nullptr || e.as<Variable>() != nullptr || e.as<Ramp>() != nullptr;
    }
    // A scalar load from the vector unit's level: read in place with element
    // stride 0 (a per-row value such as a row's maximum then folds with the
    // row loop, and the scalar unit neither loads it nor waits for the vector
    // unit to have written it).
    const Load *vector_level_scalar_load(const Expr &e) const {
        const Load *l = e.as<Load>();
        if (l && l->type.is_scalar() && is_const_one(l->predicate) && in_vector_level(l->name) &&
            nir::dtype_of_type(l->type)) {
            return l;
        }
        return nullptr;
    }

    bool in_vector_level(const std::string &buf) const {
        auto it = m_.buffers.find(buf);
        return it != m_.buffers.end() && it->second.level == m_.arch->vector.level;
    }
    bool dtype_ok(const Type &t, std::string &why) const {
        auto d = nir::dtype_of_type(t);
        const auto &dts = m_.arch->vector.dtypes;
        if (!d || (!dts.empty() && std::find(dts.begin(), dts.end(), *d) == dts.end())) {
            std::ostringstream os;
            os << "the vector unit of " << m_.arch->name << " does not compute on " << t.element_of();
            why = os.str();
            return false;
        }
        return true;
    }
    static bool positive_constant(const Expr &e) {
        Expr v = e;
        if (const Broadcast *b = e.as<Broadcast>()) {
            v = b->value;
        }
        const int64_t *c = as_const_int(v);
        const uint64_t *u = as_const_uint(v);
        return (c && *c > 0) || (u && *u > 0);
    }
    bool supported(const Expr &e, std::string &why) {
        if (e.type().is_scalar()) {
            return true; // evaluated on the scalar unit and broadcast
        }
        if (!dtype_ok(e.type(), why)) {
            return false;
        }
        if (const Let *l = e.as<Let>()) {
            if (!l->value.type().is_vector() || trivial(l->value)) {
                return supported(substitute(l->name, l->value, l->body), why);
            }
            if (!supported(l->value, why)) {
                return false;
            }
            checked_lets_.insert(l->name);
            bool ok = supported(l->body, why);
            checked_lets_.erase(l->name);
            return ok;
        }
        if (const Variable *v = e.as<Variable>()) {
            if (checked_lets_.count(v->name)) {
                return true;
            }
            why = "vector variable " + v->name + " outside its let";
            return false;
        }
        if (const Broadcast *b = e.as<Broadcast>()) {
            return supported(b->value, why);
        }
        if (const Load *l = e.as<Load>()) {
            if (!is_const_one(l->predicate)) {
                why = "predicated load from " + l->name;
                return false;
            }
            if (!in_vector_level(l->name)) {
                why = "load from " + l->name + ", which is not in the vector unit's level " + m_.arch->vector.level;
                return false;
            }
            const Ramp *r = l->index.as<Ramp>();
            const Broadcast *b = l->index.as<Broadcast>();
            if (r && as_const_int(r->stride)) {
                return true;
            }
            if (b && b->value.type().is_scalar()) {
                return true;
            }
            why = "gather load from " + l->name;
            return false;
        }
        if (const Cast *c = e.as<Cast>()) {
            return dtype_ok(c->value.type(), why) && supported(c->value, why);
        }
        if (const Call *c = e.as<Call>()) {
            if ((c->name == "exp_f32" || c->name == "log_f32" || c->name == "sqrt_f32") && c->args.size() == 1) {
                return supported(c->args[0], why);
            }
            why = "call to " + c->name;
            return false;
        }
        const Add *add = e.as<Add>();
        const Sub *sub = e.as<Sub>();
        const Mul *mul = e.as<Mul>();
        const Div *div = e.as<Div>();
        const Min *mn = e.as<Min>();
        const Max *mx = e.as<Max>();
        if (div && !e.type().is_float() && !positive_constant(div->b)) {
            // Halide's integer division is Euclidean, VDIV floors: the same for
            // a positive divisor (e.g. a right shift by a constant, which Halide
            // writes as a division by 2^k), not for a negative one.
            why = "integer vector division by something other than a positive constant";
            return false;
        }
        Expr a, b;
        if (add) a = add->a, b = add->b;
        else if (sub) a = sub->a, b = sub->b;
        else if (mul) a = mul->a, b = mul->b;
        else if (div) a = div->a, b = div->b;
        else if (mn) a = mn->a, b = mn->b;
        else if (mx) a = mx->a, b = mx->b;
        else {
            std::ostringstream os;
            os << "vector expression " << e << " has no vector instruction";
            why = os.str();
            return false;
        }
        return supported(a, why) && supported(b, why);
    }

    Operand temp(const Type &t) {
        std::string name = func_ + ".vtmp" + std::to_string(m_.buffers.size());
        add_scratch(m_, name, t, lanes_);
        temps_.emplace_back(name, t.element_of(), lanes_);
        Operand o;
        o.ref = {name, make_zero(Int(32))};
        o.stride = 1;
        return o;
    }
    void push(const nir::VecOp &v) { ops_.push_back(v.make()); }
    // An operation d = f(a, b) (or of d too: VMULADD, VMADD) of two operands in buffers.
    void push_binary(Op op, const Type &t, const Operand &dst, const Operand &a, const Operand &b) {
        nir::VecOp v = base(op, t, dst);
        v.a = a.ref;
        v.stride[1] = a.stride;
        v.b = b.ref;
        v.stride[2] = b.stride;
        push(v);
    }
    nir::VecOp base(Op op, const Type &t, const Operand &dst) {
        nir::VecOp v;
        v.op = op;
        v.dtype = *nir::dtype_of_type(t);
        v.dtype2 = v.dtype;
        v.dst = dst.ref;
        v.stride[0] = dst.stride;
        v.n = lanes_;
        v.prov = m_.provenance_id(func_, "");
        return v;
    }
    // An operation of one vector source x for e, x computed into the
    // destination first when it can be (the operation then runs in place).
    nir::VecOp one_source(Op op, const Expr &x, const Expr &e, const Operand *dst, const Type &t) {
        Operand a;
        if (into_dst(x, e, dst)) {
            emit(x, dst);
            a = *dst;
        } else {
            a = vector_operand(x);
        }
        nir::VecOp v = base(op, t, *dst);
        v.a = a.ref;
        v.stride[1] = a.stride;
        return v;
    }
    // A vector operand (in a buffer) for e; scalars are broadcast with VDUP.
    Operand vector_operand(const Expr &e) {
        Operand o = operand(e);
        if (!o.is_scalar) {
            return o;
        }
        Operand t = temp(e.type().with_lanes(lanes_));
        nir::VecOp v = base(Op::VDUP, e.type(), t);
        v.scalar = o.scalar;
        push(v);
        return t;
    }
    Operand operand(const Expr &e) {
        if (e.type().is_scalar()) {
            Operand o;
            if (const Load *l = vector_level_scalar_load(e)) {
                o.ref = {l->name, l->index};
                o.stride = 0;
                return o;
            }
            if (scalar_on_vector(e)) {
                // A per-row scalar computed from values in the vector level
                // (LayerNorm's mean / n, 1 / sqrt(var / n + eps)): one-element
                // vector operations into scratch, read with element stride 0.
                // The scalar unit then neither waits for the vector unit nor
                // computes it per row, and the row loop folds.
                const int saved = lanes_;
                lanes_ = 1;
                Operand t = temp(e.type());
                emit(e, &t);
                lanes_ = saved;
                t.stride = 0;
                return t;
            }
            o.is_scalar = true;
            o.scalar = e;
            return o;
        }
        if (const Broadcast *b = e.as<Broadcast>()) {
            if (b->value.type().is_scalar()) {
                return operand(b->value);
            }
        }
        if (const Variable *v = e.as<Variable>()) {
            auto it = bound_.find(v->name);
            TESSEL_INTERNAL_ASSERT(it != bound_.end(), "unbound vector variable ", v->name);
            return it->second;
        }
        if (const Let *l = e.as<Let>()) {
            if (!l->value.type().is_vector() || trivial(l->value)) {
                return operand(substitute(l->name, l->value, l->body));
            }
            Operand value = operand(l->value);
            Operand o;
            with_binding(l->name, value, [&]() { o = operand(l->body); });
            return o;
        }
        if (const Load *l = e.as<Load>()) {
            Operand o;
            if (const Ramp *r = l->index.as<Ramp>()) {
                o.ref = {l->name, r->base};
                o.stride = static_cast<int32_t>(*as_const_int(r->stride));
            } else {
                o.ref = {l->name, l->index.as<Broadcast>()->value};
                o.stride = 0;
            }
            return o;
        }
        Operand t = temp(e.type());
        emit(e, &t);
        return t;
    }
    void emit(const Expr &e, const Operand *dst) {
        const Type &t = e.type();
        if (const Let *l = e.as<Let>()) {
            if (!l->value.type().is_vector() || trivial(l->value)) {
                emit(substitute(l->name, l->value, l->body), dst);
                return;
            }
            Operand value = operand(l->value);
            with_binding(l->name, value, [&]() { emit(l->body, dst); });
            return;
        }
        if (e.as<Load>() || e.as<Broadcast>() || e.as<Variable>()) {
            Operand a = operand(e);
            nir::VecOp v = base(a.is_scalar ? Op::VDUP : Op::VMOV, t, *dst);
            if (a.is_scalar) {
                v.scalar = a.scalar;
            } else {
                v.a = a.ref;
                v.stride[1] = a.stride;
            }
            push(v);
            return;
        }
        if (const Cast *c = e.as<Cast>()) {
            Operand a = vector_operand(c->value);
            nir::VecOp v = base(Op::VCAST, c->value.type(), *dst);
            v.dtype2 = *nir::dtype_of_type(t);
            v.a = a.ref;
            v.stride[1] = a.stride;
            push(v);
            return;
        }
        if (const Call *c = e.as<Call>()) {
            Op op = c->name == "exp_f32" ? Op::VEXP : c->name == "log_f32" ? Op::VLOG : Op::VSQRT;
            push(one_source(op, c->args[0], e, dst, t));
            return;
        }
        // 1 / sqrt(x) in fp32 (LayerNorm's 1 / std): one VRSQRT, which is
        // 1.0f / sqrtf(x) with the same two roundings (docs/isa-semantics.md),
        // not a VSQRT, a VDUP of 1 and a VDIV.
        if (const Div *x = e.as<Div>(); x && t.element_of() == Float(32) && is_const_one(x->a)) {
            const Call *c = x->b.as<Call>();
            if (c && c->name == "sqrt_f32" && c->args.size() == 1) {
                push(one_source(Op::VRSQRT, c->args[0], e, dst, t));
                return;
            }
        }
        // An integer division by 2^k (Halide's floor division; a shift by a
        // constant is simplified into one) is one shift by k, not a VDIV.
        if (const Div *x = e.as<Div>(); x && t.is_int_or_uint()) {
            if (auto k = nir::power_of_two_exponent(x->b)) {
                nir::VecOp v = one_source(Op::VSHRS, x->a, e, dst, t);
                v.scalar = make_const(t.element_of(), *k);
                push(v);
                return;
            }
        }
        Op vop = Op::VADD, sop = Op::NOP;
        Expr a, b;
        bool commutes = true;
        if (const Add *x = e.as<Add>()) vop = Op::VADD, sop = Op::VADDS, a = x->a, b = x->b;
        else if (const Sub *x = e.as<Sub>()) vop = Op::VSUB, a = x->a, b = x->b, commutes = false;
        else if (const Mul *x = e.as<Mul>()) vop = Op::VMUL, sop = Op::VMULS, a = x->a, b = x->b;
        else if (const Div *x = e.as<Div>()) vop = Op::VDIV, a = x->a, b = x->b, commutes = false;
        else if (const Min *x = e.as<Min>()) vop = Op::VMIN, sop = Op::VMINS, a = x->a, b = x->b;
        else if (const Max *x = e.as<Max>()) vop = Op::VMAX, sop = Op::VMAXS, a = x->a, b = x->b;
        // x + y * z with x computed into the destination: one VMULADD
        // (d = d + a * b, rounded as the separate multiply and add) instead
        // of a multiply into scratch and an add.
        if (e.as<Add>()) {
            for (int side = 0; side < 2; side++) {
                const Expr &x = side ? b : a;
                const Mul *yz = (side ? a : b).as<Mul>();
                // A broadcast scalar would cost a VDUP: no gain over VMULS + VADD.
                auto broadcast_scalar = [&](const Expr &o) {
                    const Broadcast *bc = o.as<Broadcast>();
                    const Expr sc = bc ? bc->value : o;
                    return sc.type().is_scalar() && !vector_level_scalar_load(sc);
                };
                // x is either computed into the destination first, or is the
                // destination itself (an accumulation d = d + y * z, whose
                // multiplication must then not read d).
                const bool accumulate = yz && is_dst_itself(x, dst) && !reads_buffer(yz->a, dst->ref.buffer) &&
                                        !reads_buffer(yz->b, dst->ref.buffer);
                // Or x reads the destination's own elements and y * z does not
                // read it: x computed in place (d = d * a), then the VMULADD.
                const bool in_place = yz && !accumulate && !dst_reusable_ && reads_only_dst_ && e.same_as(root_) &&
                                      x.type() == e.type() && x.type().is_vector() && !trivial(x) &&
                                      !reads_buffer(yz->a, dst->ref.buffer) && !reads_buffer(yz->b, dst->ref.buffer);
                if (!yz || !(accumulate || in_place || into_dst(x, e, dst)) || yz->type != e.type() ||
                    broadcast_scalar(yz->a) || broadcast_scalar(yz->b)) {
                    continue;
                }
                if (!accumulate) {
                    emit(x, dst);
                }
                Operand oy = operand(yz->a), oz = operand(yz->b);
                push_binary(Op::VMULADD, t, *dst, oy, oz);
                return;
            }
            // p * q + x with p computed into the destination: one VMADD
            // (d = d * a + b, rounded as the separate multiply and add) after
            // p, instead of a multiply and an add (LayerNorm's
            // (x - mean) * inv * gamma + beta: VMULRS, then VMADD with gamma
            // and beta). Only when p is work of its own (a load would cost a
            // VMOV), and neither x nor q is a scalar (a VDUP each).
            for (int side = 0; side < 2; side++) {
                const Expr &x = side ? b : a;
                const Mul *pq = (side ? a : b).as<Mul>();
                if (!pq || pq->type != e.type() || x.type() != e.type() || x.as<Broadcast>() ||
                    x.type().is_scalar()) {
                    continue;
                }
                const bool p_is_a = into_dst(pq->a, e, dst);
                const Expr &p = p_is_a ? pq->a : pq->b, &q = p_is_a ? pq->b : pq->a;
                auto scalar_factor = [](const Expr &o) {
                    const Broadcast *bc = o.as<Broadcast>();
                    return o.type().is_scalar() || (bc && bc->value.type().is_scalar());
                };
                if (!into_dst(p, e, dst) || scalar_factor(q)) {
                    continue;
                }
                emit(p, dst);
                Operand oq = operand(q), ox = operand(x);
                push_binary(Op::VMADD, t, *dst, oq, ox);
                return;
            }
        }
        // A conversion of a load combined with a plain load (depthwise's first
        // tap, in * cast(w)): the conversion into scratch of its own, which
        // fold_vector_loops runs once when its load is the same for every row,
        // rather than into the destination, where it runs on every row.
        auto cast_of_load = [](const Expr &x) {
            const Cast *c = x.as<Cast>();
            return c && c->value.as<Load>();
        };
        const bool keep_cast = (cast_of_load(a) && b.as<Load>()) || (cast_of_load(b) && a.as<Load>());
        Operand oa, ob;
        if (keep_cast) {
            oa = operand(a);
            ob = operand(b);
        } else if (into_dst(a, e, dst)) {
            emit(a, dst);
            oa = *dst;
            ob = operand(b);
        } else if (into_dst(b, e, dst)) {
            oa = operand(a);
            emit(b, dst);
            ob = *dst;
        } else {
            oa = operand(a);
            ob = operand(b);
        }
        if (commutes && oa.is_scalar && !ob.is_scalar) {
            std::swap(oa, ob);
        }
        if (sop != Op::NOP && ob.is_scalar && !oa.is_scalar) {
            nir::VecOp v = base(sop, t, *dst);
            v.a = oa.ref;
            v.stride[1] = oa.stride;
            v.scalar = ob.scalar;
            push(v);
            return;
        }
        if (oa.is_scalar) {
            oa = vector_operand(oa.scalar);
        }
        if (ob.is_scalar) {
            ob = vector_operand(ob.scalar);
        }
        push_binary(vop, t, *dst, oa, ob);
    }
};

} // namespace tessel::detail

#endif
