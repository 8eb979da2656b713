#ifndef TESSEL_NPU_TARGET_LOWER_FOLDVECTORLOOPS_H
#define TESSEL_NPU_TARGET_LOWER_FOLDVECTORLOOPS_H

// Folds a loop around vector operations into the operations' repeat count: the
// vector unit repeats an instruction over `rows` rows with a row stride per
// operand, so
//     for r in [0, R): vadd d[r*s0 + ..], a[r*s1 + ..], b[r*s2 + ..]   (n elements)
// becomes one vadd of R rows with row strides (s0, s1, s2). A loop whose body is
// several vector operations (with their scratch buffers) folds when every
// operand is affine in the loop variable and each scratch buffer gets one row
// per iteration; the unit then runs each operation over all rows before the
// next one, which is the same result because the rows are independent
// (elementwise code: every row writes its own destination row). Loops longer
// than the unit's max_repeat are split. This removes the scalar unit's issue
// and address work per row, which otherwise dominates small vector operations.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule fold_vector_loops(const nir::NpuModule &m);

/** A one-element operation over rows whose destination moves by one element
 * per row and whose sources by one element or none becomes one operation over
 * `rows` elements (one repeat instead of one per row); others are unchanged. */
void rows_as_elements(nir::VecOp &v);

/** row_scalar_forms: a VADD/VSUB/VMUL/VDIV/VMAX/VMIN whose b is read at element
 * stride 0 (one value per row: a row's mean, maximum, 1/std) and whose a is a
 * full operand becomes the row-scalar form (VADDRS ...; a commutative op with
 * the per-row value in a swaps a and b first), which fetches b once per row
 * instead of in every repeat of the row (docs/isa.md). Same results; on a
 * banked level the per-row value's block no longer meets the full operands'
 * blocks in every other repeat of a row longer than one repeat. */
nir::NpuModule row_scalar_forms(const nir::NpuModule &m);
/** The rewrite of one operation; false (unchanged) when it does not apply. */
bool use_row_scalar_form(nir::VecOp &v);

} // namespace tessel

#endif
