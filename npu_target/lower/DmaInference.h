#ifndef TESSEL_NPU_TARGET_LOWER_DMAINFERENCE_H
#define TESSEL_NPU_TARGET_LOWER_DMAINFERENCE_H

// Recognises a staging copy in Halide's lowered IR: a loop nest (constant
// extents, possibly vectorised) whose only statement stores into one buffer a
// plain load from another, both indexed affinely in the loop variables. That
// is exactly what a DMA descriptor does, so the codegen replaces the nest by
// one DMA: the loops become descriptor dimensions (innermost first, merged
// when contiguous on both sides) and the start indices become the base
// addresses, evaluated at run time from the enclosing loops.

#include "Halide.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel {

struct CopyDim {
    int64_t count = 1;
    int64_t dst_stride = 0; // in elements
    int64_t src_stride = 0;
};

struct CopyPattern {
    std::string dst, src;              // buffer names
    Halide::Type type;                 // element type (both sides)
    std::vector<CopyDim> dims;         // innermost first, merged
    Halide::Expr dst_base, src_base;   // element index of the first element (enclosing loops free)
    std::string why_not;               // when no pattern: the reason (for diagnostics)
};

/** A loop of a nest with a constant extent. */
struct NestLoop {
    std::string name;
    Halide::Expr min;
    int64_t extent = 0;
};

/** The loops and lets directly nested from `s` down to the first other statement: what a
 * DMA, an MMAD or a FIX copy can replace. `non_constant` names the first loop whose extent
 * is not a constant (the walk stops there, `inner` is that loop). */
struct LoopNest {
    std::vector<NestLoop> loops; // outermost first
    std::vector<std::pair<std::string, Halide::Expr>> lets; // outermost first
    Halide::Internal::Stmt inner;
    std::string non_constant;
};
LoopNest walk_loop_nest(const Halide::Internal::Stmt &s);

/** A term of a linear combination: `coef * atom` (atom undefined: the constant `coef`). */
struct LinearTerm {
    Halide::Expr atom;
    int64_t coef = 0;
};
/** `e * scale` as a sum of terms: sums, differences and products by constants are
 * expanded; anything else (a variable, a division, a modulo, ...) is an atom. */
void linear_terms(const Halide::Expr &e, int64_t scale, std::vector<LinearTerm> &out);
/** The sum of `terms` in their order (left-nested), of type `t`; 0 when empty. */
Halide::Expr sum_of_terms(const std::vector<LinearTerm> &terms, const Halide::Type &t);

/** `index` with every pair of terms `s * (e1 % c) + (s * c) * (e2 / c)` (c a positive
 * constant, e1 - e2 a multiple of c) replaced by `s * e2`, which it equals (Halide's
 * division and modulo are Euclidean): an index into a buffer read through a
 * flattened coordinate (`in(q % W, q / W)`) becomes affine in q again. Returns
 * `index` itself when there is no such pair. */
Halide::Expr join_div_mod(const Halide::Expr &index);

/** Returns the copy when `body` (the body of a producer) is one; otherwise
 * nullopt with no side effects. `reason` receives why it is not a copy. */
std::optional<CopyPattern> match_copy(const Halide::Internal::Stmt &body, std::string *reason);

} // namespace tessel

#endif
