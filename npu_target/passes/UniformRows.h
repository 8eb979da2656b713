#ifndef TESSEL_NPU_TARGET_PASSES_UNIFORMROWS_H
#define TESSEL_NPU_TARGET_PASSES_UNIFORMROWS_H

// uniform_rows (optional): a vector-level buffer whose rows of G elements
// always hold G equal values is kept as one element per row, and the
// operations that write it compute one element per row.
//
// Halide's Tuple shares one domain among its values, so attention's state
// (running maximum, running sum, output: a Tuple per (d, i)) repeats the
// per-row maximum and sum along d, and the update computes the maximum, the
// two rescale factors and the sum D times per row. The values are the same
// along d by induction: the initial value does not depend on d, and each
// update computes them from per-row values (read in place, stride 0) and from
// the same buffers at the same group. This pass proves that over the vector
// operations (a fixed point: a buffer stays uniform while every operation
// writing it writes whole aligned groups from stride-0 operands, scalars and
// whole aligned groups of uniform buffers), then
//   - stores a uniform buffer as one element per group (index / G),
//   - reads it with stride 0 (every element of a group is the same),
//   - narrows an operation writing it to one element per row, and one
//     operation over the rows when they are now contiguous (the per-row
//     statistics of 64 query rows in one repeat instead of 64).
// A buffer any other operation touches (DMA, matrix unit, scalar code), a
// multi-buffered one, an argument, or one written by a reduction is left alone.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule uniform_rows(const nir::NpuModule &m);

} // namespace tessel

#endif
