#ifndef TESSEL_NPU_TARGET_LOWER_TENSORIZE_H
#define TESSEL_NPU_TARGET_LOWER_TENSORIZE_H

// tensorize(func, update): inside the producer of `func`, the innermost
// perfect loop nest of the update that computes
//     C[i, j] = C[i, j] + cast(A[i, k]) * cast(B[k, j])
// (three loops: one in C and A only (m), one in C and B only (n), one in A and
// B only (k); every operand a dense row-major tile in the matrix unit's operand
// level) becomes one tessel.mmad of m x k x n. When the pure definition of
// `func` only zeroes the accumulator, that zeroing is dropped and the MMAD of
// the first reduction iteration overwrites instead of accumulating. A request
// that cannot be met is a user error that shows the expected and the found
// pattern, naming the directive.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule tensorize(const nir::NpuModule &m);

} // namespace tessel

#endif
