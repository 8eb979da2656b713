#include "npu_target/lower/SelectVectorOps.h"

#include "npu_target/common/Error.h"
#include "npu_target/lower/VectorSelector.h"
#include "npu_target/lower/WidenStagedReads.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Op;

namespace {

using detail::add_scratch;
using detail::Selector;

class SelectStores : public IRMutator {
public:
    explicit SelectStores(nir::NpuModule &m) : m_(m) {}

private:
    nir::NpuModule &m_;
    std::vector<std::string> funcs_;
    using IRMutator::visit;

    // Vector-typed lets (Halide's common subexpressions, e.g. (x - mean) in
    // (x - mean)^2) are substituted into the stores that use them, so the
    // selector sees whole expressions; a let no store needs any more goes.
    std::map<std::string, Expr> vector_lets_; // Halide's let names are unique
    // Each entry already has the lets around it substituted (see visit(LetStmt)),
    // so one pass resolves nested lets.
    Expr with_lets(const Expr &e) const {
        return vector_lets_.empty() || !e.defined() ? e : substitute(vector_lets_, e);
    }
    // Common subexpressions across a chain of vector lets (a Tuple update's
    // values: Halide eliminates them within each value, not between them, so
    // the new maximum and the rescale factors are otherwise computed once per
    // Tuple element). Each expression that occurs twice or more becomes a let
    // of its own before the chain (largest first); the lets then take the
    // usual path (scratch when used twice or clobbered).
    std::set<std::string> cse_done_;
    static int node_count(const Expr &e) {
        struct Count : public IRMutator { // every node of the tree (IRVisitor has no per-Expr hook)
            int n = 0;
            using IRMutator::visit;
            Expr mutate(const Expr &x) override {
                n++;
                return IRMutator::mutate(x);
            }
        } c;
        c.mutate(e);
        return c.n;
    }
    static bool cse_candidate(const Expr &e) {
        return e.type().is_vector() && !e.as<Load>() && !e.as<Broadcast>() && !e.as<Variable>() && !e.as<Ramp>();
    }
    Stmt share_common_subexpressions(const LetStmt *op) {
        std::vector<std::pair<std::string, Expr>> chain;
        Stmt s(op);
        while (const LetStmt *l = s.as<LetStmt>()) {
            if (!l->value.type().is_vector()) {
                break;
            }
            chain.emplace_back(l->name, substitute_in_all_lets(with_lets(l->value)));
            cse_done_.insert(l->name);
            s = l->body;
        }
        const Stmt inner = s;
        std::vector<std::pair<std::string, Expr>> commons;
        for (int round = 0; chain.size() >= 2 && round < 32; round++) {
            std::map<Expr, int, IRDeepCompare> seen;
            struct Collect : public IRMutator {
                std::map<Expr, int, IRDeepCompare> *seen;
                using IRMutator::visit;
                Expr mutate(const Expr &x) override {
                    if (cse_candidate(x)) {
                        (*seen)[x]++;
                    }
                    return IRMutator::mutate(x);
                }
            } collect;
            collect.seen = &seen;
            for (const auto &v : chain) {
                collect.mutate(v.second);
            }
            for (const auto &v : commons) {
                collect.mutate(v.second);
            }
            Expr best;
            int best_size = 0;
            for (const auto &[e, n] : seen) {
                int size = n >= 2 ? node_count(e) : 0;
                if (size > best_size) {
                    best = e, best_size = size;
                }
            }
            if (!best.defined()) {
                break;
            }
            const std::string name = op->name + ".cse" + std::to_string(commons.size());
            const Expr var = Variable::make(best.type(), name);
            struct Replace : public IRMutator {
                Expr from, to;
                using IRMutator::visit;
                Expr mutate(const Expr &x) override { return equal(x, from) ? to : IRMutator::mutate(x); }
            } replace;
            replace.from = best;
            replace.to = var;
            for (auto &v : chain) {
                v.second = replace.mutate(v.second);
            }
            for (auto &v : commons) {
                v.second = replace.mutate(v.second);
            }
            commons.emplace_back(name, best);
            cse_done_.insert(name);
        }
        if (commons.empty()) {
            return Stmt();
        }
        Stmt body = inner;
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            body = LetStmt::make(it->first, it->second, body);
        }
        // Each common let before the ones that use it.
        std::vector<std::pair<std::string, Expr>> ordered;
        std::set<std::string> placed;
        while (ordered.size() < commons.size()) {
            for (const auto &c : commons) {
                bool ready = !placed.count(c.first);
                for (const auto &d : commons) {
                    ready = ready && (placed.count(d.first) || d.first == c.first || !expr_uses_var(c.second, d.first));
                }
                if (ready) {
                    ordered.push_back(c);
                    placed.insert(c.first);
                }
            }
        }
        for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
            body = LetStmt::make(it->first, it->second, body);
        }
        return body;
    }

    Stmt visit(const LetStmt *op) override {
        if (op->value.type().is_scalar()) {
            return IRMutator::visit(op);
        }
        if (!cse_done_.count(op->name)) {
            Stmt shared = share_common_subexpressions(op);
            if (shared.defined()) {
                return mutate(shared);
            }
        }
        // Substituting moves the let's loads to each use: wrong when the body
        // stores to a buffer the value loads (a Tuple update reading the old
        // state.0 after storing the new one). Such a let is computed once into
        // a scratch buffer in the vector level where it stood.
        std::set<std::string> stored, loaded;
        struct Names : public IRVisitor {
            std::set<std::string> *stores, *loads;
            using IRVisitor::visit;
            void visit(const Store *s) override {
                stores->insert(s->name);
                IRVisitor::visit(s);
            }
            void visit(const Load *l) override {
                loads->insert(l->name);
                IRVisitor::visit(l);
            }
            void visit(const Evaluate *e) override {
                Stmt st(e);
                if (auto d = nir::as_dma(st)) {
                    stores->insert(d->dst.buffer);
                } else if (auto mm = nir::as_mmad(st)) {
                    stores->insert(mm->c.buffer);
                } else if (auto v = nir::as_vec(st)) {
                    stores->insert(v->dst.buffer);
                }
                IRVisitor::visit(e);
            }
        };
        std::set<std::string> ignored;
        Names in_body, in_value;
        in_body.stores = &stored;
        in_body.loads = &ignored;
        op->body.accept(&in_body);
        in_value.stores = &ignored;
        in_value.loads = &loaded;
        op->value.accept(&in_value);
        bool clobbered = false;
        for (const auto &l : loaded) {
            clobbered = clobbered || stored.count(l) > 0;
        }
        // A let used once, by a store of the body's own statement sequence
        // (no loop or branch in between), reads what it loads only there: a
        // store after that one cannot clobber it (a Tuple update's last
        // element, stored after the others: d = d * a + b * c).
        if (clobbered) {
            std::set<std::string> before;
            bool found = false;
            // The sequence, looking through the lets after this one.
            std::vector<Stmt> seq;
            std::function<void(const Stmt &)> expand = [&](const Stmt &x) {
                for (const Stmt &st : nir::flatten(x)) {
                    const LetStmt *l = st.as<LetStmt>();
                    if (l && !expr_uses_var(l->value, op->name)) {
                        expand(l->body);
                    } else {
                        seq.push_back(st);
                    }
                }
            };
            expand(op->body);
            Names stores_before;
            stores_before.stores = &before;
            stores_before.loads = &ignored;
            for (const Stmt &st : seq) {
                if (stmt_uses_var(st, op->name)) {
                    found = st.as<Store>() != nullptr; // else used first in a loop, a branch or another let
                    break;
                }
                st.accept(&stores_before);
            }
            bool clean = found;
            for (const auto &l : loaded) {
                clean = clean && !before.count(l);
            }
            clobbered = !clean;
        }
        // A let used more than once (a common subexpression such as d in d * d)
        // is also computed once into scratch, unless it is only a load or a
        // broadcast, which the operations read in place anyway.
        struct Uses : public IRVisitor {
            std::string name;
            int n = 0;
            using IRVisitor::visit;
            void visit(const Variable *v) override { n += v->name == name; }
        } uses;
        uses.name = op->name;
        op->body.accept(&uses);
        const Broadcast *bc = op->value.as<Broadcast>();
        const bool trivial = op->value.as<Load>() || op->value.as<Ramp>() || op->value.as<Variable>() ||
                             (bc && bc->value.type().is_scalar());
        if (!clobbered && (uses.n < 2 || trivial)) {
            vector_lets_[op->name] = with_lets(op->value);
            Stmt body = mutate(op->body);
            vector_lets_.erase(op->name);
            return stmt_uses_var(body, op->name) ? LetStmt::make(op->name, op->value, body) : body;
        }
        const Type t = op->value.type();
        const int lanes = t.lanes();
        const std::string tmp = op->name + ".vlet";
        add_scratch(m_, tmp, t, lanes);
        Expr index = Ramp::make(make_zero(Int(32)), make_one(Int(32)), lanes);
        vector_lets_[op->name] = Load::make(t, tmp, index, Buffer<>(), Parameter(), const_true(lanes), ModulusRemainder());
        Stmt body = mutate(op->body);
        vector_lets_.erase(op->name);
        Stmt fill = mutate(Store::make(tmp, op->value, index, Parameter(), const_true(lanes), ModulusRemainder()));
        return Allocate::make(tmp, t.element_of(), MemoryType::Auto, {make_const(Int(32), lanes)}, const_true(),
                              Block::make(fill, body));
    }

    Stmt visit(const ProducerConsumer *op) override {
        if (op->is_producer) {
            funcs_.push_back(op->name);
        }
        Stmt s = IRMutator::visit(op);
        if (op->is_producer) {
            funcs_.pop_back();
        }
        return s;
    }
    // How many chunks a sum of p * q over n lanes accumulates in (see
    // reduction()), or nothing when it is not a product of two strided runs in
    // the vector level, or too short to gain: each chunk is a whole number of
    // repeats, at most kMaxChunks of them (each an instruction of its own).
    std::optional<int64_t> product_chunks(const Expr &v) const {
        constexpr int64_t kMaxChunks = 8;
        const Mul *prod = v.as<Mul>();
        auto dt = nir::dtype_of_type(v.type());
        if (!prod || !dt) {
            return std::nullopt;
        }
        for (const Expr &x : {prod->a, prod->b}) {
            const Load *l = x.as<Load>();
            const Ramp *r = l ? l->index.as<Ramp>() : nullptr;
            auto b = l ? m_.buffers.find(l->name) : m_.buffers.end();
            if (!r || !as_const_int(r->stride) || !is_const_one(l->predicate) || b == m_.buffers.end() ||
                b->second.level != m_.arch->vector.level || l->type != v.type()) {
                return std::nullopt;
            }
        }
        const int64_t n = v.type().lanes();
        const int64_t lanes = std::max<int64_t>(1, m_.arch->vector.bytes_per_repeat / dtype_bytes(*dt));
        for (int64_t width = lanes; width < n; width += lanes) {
            if (n % width == 0 && n / width <= kMaxChunks) {
                return n / width;
            }
        }
        return std::nullopt;
    }

    // f[i] = f[i] (+|max) vector_reduce(Add|Max, v), from atomic() + vectorize of
    // the reduction variable: v into a temporary (or read in place when it is a
    // dense run in the vector level), VREDSUM/VREDMAX to one element, and the
    // combine as a one-element vector op, all on the vector unit.
    Stmt reduction(const Store *op, const std::string &func) {
        Expr a, b;
        Op combine = Op::NOP, reduce = Op::NOP;
        VectorReduce::Operator want = VectorReduce::Add;
        if (const Add *x = op->value.as<Add>()) {
            a = x->a, b = x->b, combine = Op::VADD, reduce = Op::VREDSUM, want = VectorReduce::Add;
        } else if (const Max *x = op->value.as<Max>()) {
            a = x->a, b = x->b, combine = Op::VMAX, reduce = Op::VREDMAX, want = VectorReduce::Max;
        }
        if (combine == Op::NOP) {
            return Stmt();
        }
        if (b.as<Load>()) {
            std::swap(a, b);
        }
        const Load *self = a.as<Load>();
        const VectorReduce *red = b.as<VectorReduce>();
        if (!self || !red || red->op != want || self->name != op->name || !equal(self->index, op->index) ||
            !is_const_one(op->predicate)) {
            return Stmt();
        }
        Expr v = red->value;
        const int n = v.type().lanes();
        // max/min of a widening conversion that is exact (fp16 -> fp32, int8 ->
        // int32, ...) is the conversion of the max/min in the narrow type: the
        // reduction reads half (or a quarter) of the bytes and the conversion
        // is of one element. (Not for sums: the narrow sum rounds differently.)
        Type narrow = v.type();
        if (const Cast *cv = v.as<Cast>(); cv && reduce == Op::VREDMAX && v.type().can_represent(cv->value.type()) &&
                                            nir::dtype_of_type(cv->value.type())) {
            std::string unused;
            auto dt_narrow = nir::dtype_of_type(cv->value.type());
            const auto &dts = m_.arch->vector.dtypes;
            if (dts.empty() || std::find(dts.begin(), dts.end(), *dt_narrow) != dts.end()) {
                v = cv->value;
                narrow = v.type();
            }
        }
        std::string why;
        auto dst = m_.buffers.find(op->name);
        if (dst == m_.buffers.end() || dst->second.level != m_.arch->vector.level) {
            why = "the reduction's result " + op->name + " is not in the vector unit's level " + m_.arch->vector.level;
        } else if (!nir::dtype_of_type(op->value.type())) {
            std::ostringstream os;
            os << "no vector type for " << op->value.type();
            why = os.str();
        }
        Selector sel(m_, func, n);
        std::vector<Stmt> ops;
        std::vector<std::string> temps;
        auto temp = [&](int64_t elems, Type t) {
            std::string name = func + ".vred" + std::to_string(m_.buffers.size());
            add_scratch(m_, name, t, elems);
            temps.push_back(name);
            return name;
        };
        nir::BufRef src;
        const Load *direct = v.as<Load>();
        const Ramp *ramp = direct ? direct->index.as<Ramp>() : nullptr;
        int64_t reduced = n; // elements the VREDSUM / VREDMAX reads per row
        if (why.empty() && reduce == Op::VREDSUM) {
            if (auto chunks = product_chunks(v)) {
                // sum(p * q) of two runs in the vector level (LayerNorm's sum
                // of squares): the products accumulate elementwise into
                // `width` partial sums, a VMUL of the first chunk and a
                // VMULADD of each further one, and only the partial sums are
                // reduced: n / L + width / L repeats (L lanes per repeat)
                // instead of 2 n / L. The sum's order changes (partial sums,
                // then their sum), as with any vectorised reduction.
                const Mul *prod = v.as<Mul>();
                const int64_t width = n / *chunks;
                src = {temp(width, narrow), make_zero(Int(32))};
                for (int64_t k = 0; k < *chunks; k++) {
                    nir::VecOp m;
                    m.op = k ? Op::VMULADD : Op::VMUL;
                    m.dtype = m.dtype2 = *nir::dtype_of_type(narrow);
                    m.dst = src;
                    // Operand i of the product, advanced to chunk k.
                    auto at_chunk = [&](const Expr &x, int32_t &stride) {
                        const Load *l = x.as<Load>();
                        const Ramp *lr = l->index.as<Ramp>();
                        stride = static_cast<int32_t>(*as_const_int(lr->stride));
                        return nir::BufRef{l->name, simplify(lr->base + static_cast<int>(k * width * stride))};
                    };
                    m.a = at_chunk(prod->a, m.stride[1]);
                    m.b = at_chunk(prod->b, m.stride[2]);
                    m.n = width;
                    m.prov = m_.provenance_id(func, "");
                    ops.push_back(m.make());
                }
                reduced = width;
            }
        }
        if (why.empty() && reduced == n) {
            if (direct && ramp && is_const_one(ramp->stride) && is_const_one(direct->predicate) &&
                m_.buffers.count(direct->name) && m_.buffers.at(direct->name).level == m_.arch->vector.level) {
                src = {direct->name, ramp->base};
            } else {
                src = {temp(n, narrow), make_zero(Int(32))};
                if (sel.build(v, src, 1, why)) {
                    ops.push_back(sel.result(Stmt()));
                }
            }
        }
        if (!why.empty()) {
            user_error("Func ", func.substr(0, func.find('$')), ": its vectorized reduction (atomic + vectorize of the reduction variable) cannot run ",
                       "on the vector unit of ", m_.arch->name, ": ", why,
                       "; vectorize a pure variable instead or drop the atomic directive",
                       m_.schedule.provenance.count(func) ? " [directive " + m_.schedule.provenance.at(func) + "]" : "");
        }
        const DType dt = *nir::dtype_of_type(op->value.type());
        const uint32_t prov = m_.provenance_id(func, "");
        nir::VecOp r;
        r.op = reduce;
        const DType dt_red = *nir::dtype_of_type(narrow);
        r.dtype = r.dtype2 = dt_red;
        r.dst = {temp(1, narrow), make_zero(Int(32))};
        r.a = src;
        r.n = reduced;
        r.prov = prov;
        ops.push_back(r.make());
        if (dt_red != dt) { // the one reduced element to the accumulator's type
            nir::VecOp cv;
            cv.op = Op::VCAST;
            cv.dtype = dt_red;
            cv.dtype2 = dt;
            cv.dst = {temp(1, op->value.type()), make_zero(Int(32))};
            cv.a = r.dst;
            cv.n = 1;
            cv.prov = prov;
            ops.push_back(cv.make());
            r.dst = cv.dst;
        }
        nir::VecOp c;
        c.op = combine;
        c.dtype = c.dtype2 = dt;
        c.dst = {op->name, op->index};
        c.a = {op->name, op->index};
        c.b = r.dst;
        c.n = 1;
        c.prov = prov;
        ops.push_back(c.make());
        Stmt out = Block::make(ops);
        for (auto it = temps.rbegin(); it != temps.rend(); ++it) {
            out = Allocate::make(*it, m_.buffers.at(*it).type, MemoryType::Auto,
                                 {make_const(Int(32), static_cast<int>(m_.buffers.at(*it).elems))}, const_true(), out);
        }
        return out;
    }

    Stmt visit(const Store *store) override {
        // Let expressions inside one expression are always safe to inline.
        const Expr value = with_lets(store->value); // keeps Halide's lets inside the expression (the selector's CSE)
        Stmt substituted =
            Store::make(store->name, substitute_in_all_lets(value), with_lets(store->index),
                        store->param, with_lets(store->predicate), store->alignment);
        const Store *op = substituted.as<Store>();
        const int lanes = op->value.type().lanes();
        if (lanes == 1) {
            std::string func = funcs_.empty() ? op->name : funcs_.back();
            Stmt red = reduction(op, func);
            return red.defined() ? red : substituted; // lets inlined: the scalar fallback cannot take vector lets
        }
        std::string func = funcs_.empty() ? op->name : funcs_.back();
        std::string why;
        auto dst = m_.buffers.find(op->name);
        const Ramp *r = op->index.as<Ramp>();
        if (dst == m_.buffers.end() || dst->second.level != m_.arch->vector.level) {
            why = "it stores to " + op->name + ", which is not in the vector unit's level " + m_.arch->vector.level;
        } else if (!is_const_one(op->predicate)) {
            why = "the store is predicated";
        } else if (!r || !as_const_int(r->stride)) {
            why = "the store is a scatter";
        } else {
            Selector sel(m_, func, lanes);
            if (sel.build(value, {op->name, r->base}, static_cast<int32_t>(*as_const_int(r->stride)), why)) {
                return sel.result(op);
            }
        }
        m_.diagnostics.push_back({BackendDiagnostic::Severity::Note,
                                  "a vector store in Func " + func + " stays scalar code: " + why,
                                  m_.schedule.provenance.count(func) ? m_.schedule.provenance.at(func) : "", func});
        return substituted; // lets inlined: the scalar fallback takes no vector lets
    }
};



// ---- a constant initial value folded into the reduction's first iteration ------
//
// f[i] = c for every i, then f[i] = f[i] op v(r) for r over the reduction
// (depthwise's acc = 0 then acc += in * w over the taps; pooling's pool = 0 or
// the type's lowest value, then pool += / max= the window): the first
// iteration of the reduction loops writes f[i] = c op v(r_min) itself, and
// the initialising loop nest goes. The vector unit then neither fills f with
// c nor reads it back in the first iteration (depthwise: VMUL instead of VDUP +
// VMULADD; pooling: VCAST / VMOV instead of VDUP + VADD / VMAX). The other
// iterations run under a guard r != r_min. Taken when the initialising nest
// writes exactly the points one iteration of the reduction writes (same loops
// outside and inside the reduction loops, same index) and the update reads f
// only at the point it writes.

struct LoopNest {
    std::vector<const For *> loops; // outermost first
    Stmt body;                      // what the innermost loop runs
};

LoopNest loop_nest(const Stmt &s) {
    LoopNest n;
    n.body = s;
    while (const For *f = n.body.as<For>()) {
        n.loops.push_back(f);
        n.body = f->body;
    }
    return n;
}

// The store at the end of a run of lets (the update's innermost body).
const Store *store_after_lets(const Stmt &s) {
    Stmt b = s;
    while (const LetStmt *l = b.as<LetStmt>()) {
        b = l->body;
    }
    return b.as<Store>();
}

bool is_reduction_loop(const std::string &name) { return name.find(".r$") != std::string::npos; }

class FuseConstantInit : public IRMutator {
    using IRMutator::visit;

    Stmt visit(const ProducerConsumer *op) override {
        Stmt body = mutate(op->body);
        const Block *b = op->is_producer ? body.as<Block>() : nullptr;
        if (b) {
            Stmt fused = fuse(op->name, b->first, b->rest);
            if (fused.defined()) {
                body = fused;
            }
        }
        return body.same_as(op->body) ? Stmt(op) : ProducerConsumer::make(op->name, op->is_producer, body);
    }

    // init; [consume wrappers] update  ->  [consume wrappers] update with the
    // first iteration peeled, or undefined if the shapes do not match.
    Stmt fuse(const std::string &f, const Stmt &init_stmt, const Stmt &rest) {
        const LoopNest init = loop_nest(init_stmt);
        const Store *is = init.body.as<Store>();
        const Broadcast *c = is ? is->value.as<Broadcast>() : nullptr;
        if (!is || is->name != f || !c || !is_const(c->value) || !is_const_one(is->predicate) || init.loops.empty()) {
            return Stmt();
        }
        // Through the consume wrappers to the update's loop nest (frees after it kept).
        std::vector<Stmt> frees;
        Stmt u = rest;
        while (const Block *b = u.as<Block>()) {
            if (!b->rest.as<Free>()) {
                return Stmt();
            }
            frees.insert(frees.begin(), b->rest);
            u = b->first;
        }
        std::vector<const ProducerConsumer *> wrappers;
        while (const ProducerConsumer *pc = u.as<ProducerConsumer>()) {
            if (pc->is_producer) {
                return Stmt();
            }
            wrappers.push_back(pc);
            u = pc->body;
        }
        const LoopNest upd = loop_nest(u);
        const Store *us = store_after_lets(upd.body);
        if (!us || us->name != f || us->value.type() != is->value.type() || !is_const_one(us->predicate)) {
            return Stmt();
        }
        // Pure loops, a consecutive run of reduction loops, pure loops.
        size_t r0 = 0;
        while (r0 < upd.loops.size() && !is_reduction_loop(upd.loops[r0]->name)) {
            r0++;
        }
        size_t r1 = r0;
        while (r1 < upd.loops.size() && is_reduction_loop(upd.loops[r1]->name)) {
            r1++;
        }
        if (r0 == r1) {
            return Stmt();
        }
        std::vector<const For *> pure;
        for (size_t k = 0; k < upd.loops.size(); k++) {
            if (k >= r0 && k < r1) {
                continue;
            }
            if (is_reduction_loop(upd.loops[k]->name)) {
                return Stmt();
            }
            pure.push_back(upd.loops[k]);
        }
        if (pure.size() != init.loops.size()) {
            return Stmt();
        }
        std::map<std::string, Expr> rename;
        for (size_t k = 0; k < pure.size(); k++) {
            const For *a = init.loops[k], *b = pure[k];
            if (!is_const(a->min) || !is_const(a->extent) || !equal(a->min, b->min) || !equal(a->extent, b->extent)) {
                return Stmt();
            }
            rename[a->name] = Variable::make(Int(32), b->name);
        }
        if (!can_prove(substitute(rename, is->index) == us->index)) {
            return Stmt();
        }
        // The update: f[i] + v or max/min(f[i], v), v not reading f.
        Expr self, v;
        auto split = [&](const Expr &a, const Expr &b) {
            const Load *la = a.as<Load>(), *lb = b.as<Load>();
            if (la && la->name == f && equal(la->index, us->index)) {
                self = a, v = b;
            } else if (lb && lb->name == f && equal(lb->index, us->index)) {
                self = b, v = a;
            }
        };
        const Add *add = us->value.as<Add>();
        const Max *mx = us->value.as<Max>();
        const Min *mn = us->value.as<Min>();
        if (add) split(add->a, add->b);
        else if (mx) split(mx->a, mx->b);
        else if (mn) split(mn->a, mn->b);
        if (!self.defined() || detail::reads_buffer(v, f)) {
            return Stmt();
        }
        const Type t = us->value.type();
        Expr first;
        if (add) {
            first = is_const_zero(c->value) ? v : Add::make(is->value, v);
        } else if (mx) {
            first = can_prove(c->value == t.element_of().min()) ? v : Max::make(is->value, v);
        } else {
            first = can_prove(c->value == t.element_of().max()) ? v : Min::make(is->value, v);
        }
        // The innermost reduction loop's body, peeled at the minima and guarded.
        const For *inner_r = upd.loops[r1 - 1];
        Stmt body = inner_r->body;
        Expr not_first = const_false();
        std::map<std::string, Expr> at_min;
        for (size_t k = r0; k < r1; k++) {
            not_first = not_first || (Variable::make(Int(32), upd.loops[k]->name) != upd.loops[k]->min);
            at_min[upd.loops[k]->name] = upd.loops[k]->min;
        }
        struct FirstValue : public IRMutator {
            const Store *target;
            Expr value;
            using IRMutator::visit;
            Stmt visit(const Store *op) override {
                return op == target ? Store::make(op->name, value, op->index, op->param, op->predicate, op->alignment)
                                    : IRMutator::visit(op);
            }
        } first_value;
        first_value.target = us;
        first_value.value = first;
        Stmt peeled = substitute(at_min, first_value.mutate(body));
        Stmt loops = IfThenElse::make(simplify(not_first), body);
        for (size_t k = r1; k-- > r0;) {
            const For *l = upd.loops[k];
            loops = For::make(l->name, l->min, l->extent, l->for_type, l->device_api, loops);
        }
        Stmt s = Block::make(peeled, loops);
        for (size_t k = r0; k-- > 0;) {
            const For *l = upd.loops[k];
            s = For::make(l->name, l->min, l->extent, l->for_type, l->device_api, s);
        }
        for (auto it = wrappers.rbegin(); it != wrappers.rend(); ++it) {
            s = ProducerConsumer::make((*it)->name, false, s);
        }
        for (const Stmt &fr : frees) {
            s = Block::make(s, fr);
        }
        return s;
    }
};

} // namespace

nir::NpuModule select_vector_ops(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = SelectStores(r).mutate(detail::widen_staged_reads(r, FuseConstantInit().mutate(m.body)));
    return r;
}

} // namespace tessel
