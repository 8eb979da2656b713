#ifndef TESSEL_NPU_TARGET_LOWER_SELECTVECTOROPS_H
#define TESSEL_NPU_TARGET_LOWER_SELECTVECTOROPS_H

// Maps vectorised stores onto the vector unit. A store of an L-lane vector into
// a buffer in the vector unit's level, whose value is built from loads of such
// buffers (dense or strided ramps, or one broadcast element), scalars,
// + - * / min max, casts and exp/log/sqrt, becomes a short sequence of
// tessel.vec operations over L elements: each interior node writes a scratch
// buffer in the vector level, the root writes the destination. Operations with
// a scalar operand use the unit's scalar forms (VADDS, VMULS, VMAXS, VMINS) or
// a VDUP. Anything else (compares, selects, gathers, buffers outside the vector
// level, types the unit lacks) stays scalar code and is reported.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule select_vector_ops(const nir::NpuModule &m);

} // namespace tessel

#endif
