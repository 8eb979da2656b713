#include "samples/softmax/SoftmaxReference.h"

#include "npu_target/common/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tessel {

Tensor softmax_reference(const Tensor &in) {
    TESSEL_INTERNAL_ASSERT(in.shape.size() == 2, "softmax_reference: a 2-D tensor");
    const int64_t C = in.shape[0], R = in.shape[1];
    Tensor out("out", in.dtype, in.shape);
    std::vector<float> e(static_cast<size_t>(C));
    for (int64_t y = 0; y < R; y++) {
        float m = std::numeric_limits<float>::lowest();
        for (int64_t x = 0; x < C; x++) {
            m = std::max(m, static_cast<float>(in.get(y * C + x)));
        }
        float s = 0;
        for (int64_t x = 0; x < C; x++) {
            e[x] = std::exp(static_cast<float>(in.get(y * C + x)) - m);
            s += e[x];
        }
        for (int64_t x = 0; x < C; x++) {
            out.set(y * C + x, e[x] / s);
        }
    }
    return out;
}

} // namespace tessel
