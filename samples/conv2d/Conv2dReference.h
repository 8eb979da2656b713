#ifndef TESSEL_SAMPLES_CONV2D_REFERENCE_H
#define TESSEL_SAMPLES_CONV2D_REFERENCE_H

#include "npu_target/common/Tensor.h"

namespace tessel {

/** Naive NHWC convolution on host tensors in Halide order: input(ci, x_in, y_in, n),
 * weights(co, ci, kx, ky), result(co, x, y, n) with the "valid" output size
 * x = (x_in - K) / stride + 1 (K from the weights). Accumulates in `acc`
 * (FP32 or Int32) in the order the algorithm states: ky outermost, then kx,
 * then ci innermost. */
Tensor conv2d_reference(const Tensor &input, const Tensor &weights, int stride, DType acc);

} // namespace tessel

#endif
