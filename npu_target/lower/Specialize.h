#ifndef TESSEL_NPU_TARGET_LOWER_SPECIALIZE_H
#define TESSEL_NPU_TARGET_LOWER_SPECIALIZE_H

// First backend pass over Halide's lowered Stmt: make it concrete for one
// problem instance. Buffer metadata lets (A.min.0, A.extent.1, A.stride.1, the
// host pointer) become the constants of the dense argument shapes, asserts and
// bounds-query scaffolding go, Halide's arithmetic intrinsics (widening_mul,
// rounding shifts, ...) are lowered to plain IR, the result is simplified, and
// a Func Halide allocates more than once gets one name per allocation.
// Afterwards every loop over a constant-size problem has constant bounds.

#include "npu_target/ir/NpuIR.h"

#include <vector>


namespace tessel {

Halide::Internal::Stmt specialize_for_npu(const Halide::Internal::Stmt &s, const std::vector<isa::ArgDesc> &args);
/** The pass form: specialises m.body for m.args. */
nir::NpuModule specialize(const nir::NpuModule &m);

} // namespace tessel

#endif
