#ifndef TESSEL_SAMPLES_GEMM_REFERENCE_H
#define TESSEL_SAMPLES_GEMM_REFERENCE_H

#include "npu_target/common/Tensor.h"

namespace tessel {

/** Naive C = A * B on host tensors in Halide order (A(k,i), B(j,k), C(j,i)),
 * accumulating in the type of C in increasing k, exactly as the algorithm says. */
Tensor gemm_reference(const Tensor &A, const Tensor &B, DType acc);

} // namespace tessel

#endif
