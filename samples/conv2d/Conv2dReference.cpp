#include "samples/conv2d/Conv2dReference.h"

#include "npu_target/common/Error.h"

namespace tessel {

namespace {

template <typename Acc>
void convolve(const Tensor &in, const Tensor &w, int s, Tensor &out) {
    const int64_t CI = in.shape[0], WI = in.shape[1], HI = in.shape[2];
    const int64_t CO = w.shape[0], KW = w.shape[2], KH = w.shape[3];
    const int64_t W = out.shape[1], H = out.shape[2], N = out.shape[3];
    for (int64_t n = 0; n < N; n++) {
        for (int64_t y = 0; y < H; y++) {
            for (int64_t x = 0; x < W; x++) {
                for (int64_t co = 0; co < CO; co++) {
                    Acc sum = 0;
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            for (int64_t ci = 0; ci < CI; ci++) {
                                int64_t xi = x * s + kx, yi = y * s + ky;
                                Acc a = static_cast<Acc>(in.get(((n * HI + yi) * WI + xi) * CI + ci));
                                Acc b = static_cast<Acc>(w.get(((ky * KW + kx) * CI + ci) * CO + co));
                                sum += a * b;
                            }
                        }
                    }
                    out.set(((n * H + y) * W + x) * CO + co, static_cast<double>(sum));
                }
            }
        }
    }
}

} // namespace

Tensor conv2d_reference(const Tensor &input, const Tensor &weights, int stride, DType acc) {
    TESSEL_INTERNAL_ASSERT(input.shape.size() == 4 && weights.shape.size() == 4, "conv2d_reference: 4-D tensors");
    TESSEL_INTERNAL_ASSERT(input.shape[0] == weights.shape[1], "conv2d_reference: CI of input and weights differ");
    TESSEL_INTERNAL_ASSERT(stride >= 1, "conv2d_reference: stride must be positive");
    const int64_t KW = weights.shape[2], KH = weights.shape[3];
    TESSEL_INTERNAL_ASSERT(input.shape[1] >= KW && input.shape[2] >= KH, "conv2d_reference: input smaller than the kernel");
    const int64_t W = (input.shape[1] - KW) / stride + 1, H = (input.shape[2] - KH) / stride + 1;
    Tensor out("output", acc, {weights.shape[0], W, H, input.shape[3]});
    if (dtype_is_float(acc)) {
        convolve<float>(input, weights, stride, out);
    } else {
        convolve<int32_t>(input, weights, stride, out);
    }
    return out;
}

} // namespace tessel
