#include "npu_target/lower/DmaInference.h"

#include "npu_target/ir/NpuIR.h"

#include <algorithm>
#include <sstream>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

LoopNest walk_loop_nest(const Stmt &body) {
    LoopNest n;
    Stmt s = body;
    while (true) {
        if (const For *f = s.as<For>()) {
            const int64_t *ext = as_const_int(f->extent);
            if (!ext) {
                n.non_constant = f->name;
                break;
            }
            n.loops.push_back({f->name, f->min, *ext});
            s = f->body;
        } else if (const LetStmt *l = s.as<LetStmt>()) {
            n.lets.emplace_back(l->name, l->value);
            s = l->body;
        } else {
            break;
        }
    }
    n.inner = s;
    return n;
}

void linear_terms(const Expr &e, int64_t scale, std::vector<LinearTerm> &out) {
    if (const Add *a = e.as<Add>()) {
        linear_terms(a->a, scale, out);
        linear_terms(a->b, scale, out);
    } else if (const Sub *s = e.as<Sub>()) {
        linear_terms(s->a, scale, out);
        linear_terms(s->b, -scale, out);
    } else if (const Mul *m = e.as<Mul>(); m && (as_const_int(m->a) || as_const_int(m->b))) {
        const bool a_const = as_const_int(m->a) != nullptr;
        linear_terms(a_const ? m->b : m->a, scale * *as_const_int(a_const ? m->a : m->b), out);
    } else if (const int64_t *c = as_const_int(e)) {
        out.push_back({Expr(), scale * *c});
    } else {
        out.push_back({e, scale});
    }
}

Expr sum_of_terms(const std::vector<LinearTerm> &terms, const Type &t) {
    Expr sum;
    for (const LinearTerm &term : terms) {
        Expr c = make_const(t, term.coef);
        Expr x = !term.atom.defined() ? c : term.coef == 1 ? term.atom : term.atom * c;
        sum = sum.defined() ? sum + x : x;
    }
    return sum.defined() ? sum : make_zero(t);
}

Expr join_div_mod(const Expr &index) {
    std::vector<LinearTerm> terms;
    linear_terms(index, 1, terms);
    bool joined = false;
    for (size_t i = 0; i < terms.size(); i++) {
        const Mod *mod = terms[i].atom.defined() ? terms[i].atom.as<Mod>() : nullptr;
        const int64_t *c = mod ? as_const_int(mod->b) : nullptr;
        if (!c || *c <= 0) {
            continue;
        }
        for (size_t j = 0; j < terms.size(); j++) {
            const Div *div = terms[j].atom.defined() ? terms[j].atom.as<Div>() : nullptr;
            const int64_t *d = div ? as_const_int(div->b) : nullptr;
            if (!d || *d != *c || terms[j].coef != terms[i].coef * *c ||
                !can_prove(simplify((mod->a - div->a) % mod->b) == 0)) {
                continue;
            }
            terms[i].atom = div->a;
            terms.erase(terms.begin() + j);
            joined = true;
            break;
        }
    }
    if (!joined) {
        return index;
    }
    return simplify(sum_of_terms(terms, index.type()));
}

std::optional<CopyPattern> match_copy(const Stmt &body, std::string *reason) {
    auto fail = [&](const std::string &why) -> std::optional<CopyPattern> {
        if (reason) {
            *reason = why;
        }
        return std::nullopt;
    };
    LoopNest nest = walk_loop_nest(body);
    if (!nest.non_constant.empty()) {
        return fail("loop " + nest.non_constant + " has a non-constant extent");
    }
    const std::vector<NestLoop> &loops = nest.loops;
    const auto &lets = nest.lets;
    const Store *st = nest.inner.as<Store>();
    if (!st) {
        return fail("the producer is not a single store in a loop nest");
    }
    if (!is_const_one(st->predicate)) {
        return fail("the store is predicated");
    }
    Expr value = st->value, sidx = st->index;
    const Load *ld = value.as<Load>();
    if (!ld || ld->type != st->value.type() || !is_const_one(ld->predicate)) {
        return fail("the stored value is not a plain load of the same type");
    }
    Expr lidx = ld->index;
    // Inline the lets (innermost first) so indices depend only on loop variables
    // and on names bound outside the nest.
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        sidx = substitute(it->first, it->second, sidx);
        lidx = substitute(it->first, it->second, lidx);
    }
    sidx = join_div_mod(sidx);
    lidx = join_div_mod(lidx);
    CopyPattern p;
    p.dst = st->name;
    p.src = ld->name;
    p.type = ld->type.element_of();
    std::vector<CopyDim> dims; // innermost first
    // A vectorised innermost dimension: ramps of equal lanes on both sides.
    const int lanes = value.type().lanes();
    if (lanes > 1) {
        const Ramp *rs = sidx.as<Ramp>();
        const Ramp *rl = lidx.as<Ramp>();
        if (!rs || !rl) {
            return fail("the vector store or load is not a ramp");
        }
        const int64_t *ss = as_const_int(rs->stride);
        const int64_t *ls = as_const_int(rl->stride);
        if (!ss || !ls) {
            return fail("vector stride is not constant");
        }
        dims.push_back({lanes, *ss, *ls});
        sidx = rs->base;
        lidx = rl->base;
    }
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        auto cs = nir::affine_coefficient(sidx, it->name);
        auto cl = nir::affine_coefficient(lidx, it->name);
        if (!cs || !cl) {
            return fail("index is not affine in loop " + it->name);
        }
        dims.push_back({it->extent, *cs, *cl});
    }
    // Base: every loop variable at its minimum (the minimums may use outer loops).
    Expr sb = sidx, lb = lidx;
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        sb = substitute(it->name, it->min, sb);
        lb = substitute(it->name, it->min, lb);
    }
    for (const auto &l : loops) {
        // A loop minimum that uses another loop of the nest is not a rectangular copy.
        if (expr_uses_var(sb, l.name) || expr_uses_var(lb, l.name)) {
            return fail("loop bounds depend on loop " + l.name);
        }
    }
    p.dst_base = simplify(sb);
    p.src_base = simplify(lb);
    // Drop unit dimensions, then merge a dimension into the one inside it when
    // it continues it contiguously on both sides.
    std::vector<CopyDim> merged;
    for (const CopyDim &d : dims) {
        if (d.count == 1) {
            continue;
        }
        if (!merged.empty()) {
            CopyDim &in = merged.back();
            if (d.dst_stride == in.dst_stride * in.count && d.src_stride == in.src_stride * in.count) {
                in.count *= d.count;
                continue;
            }
        }
        merged.push_back(d);
    }
    if (merged.empty()) {
        merged.push_back({1, 1, 1});
    }
    p.dims = merged;
    return p;
}

} // namespace tessel
