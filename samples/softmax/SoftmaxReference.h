#ifndef TESSEL_SAMPLES_SOFTMAX_REFERENCE_H
#define TESSEL_SAMPLES_SOFTMAX_REFERENCE_H

#include "npu_target/common/Tensor.h"

namespace tessel {

/** Row softmax of in(x, y) over x (the innermost dimension), statistics in
 * fp32 exactly as the sample states them: m = max_x in, e = exp(in - m),
 * s = sum of e in increasing x, out = e / s rounded to the input's type. */
Tensor softmax_reference(const Tensor &in);

} // namespace tessel

#endif
