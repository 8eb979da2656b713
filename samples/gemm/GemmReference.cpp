#include "samples/gemm/GemmReference.h"

#include "npu_target/common/Error.h"

namespace tessel {

Tensor gemm_reference(const Tensor &A, const Tensor &B, DType acc) {
    TESSEL_INTERNAL_ASSERT(A.shape.size() == 2 && B.shape.size() == 2 && A.shape[0] == B.shape[1]);
    const int64_t K = A.shape[0], M = A.shape[1], N = B.shape[0];
    Tensor C("C", acc, {N, M});
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            if (dtype_is_float(acc)) {
                float s = 0;
                for (int64_t k = 0; k < K; k++) {
                    s += static_cast<float>(A.get(i * K + k)) * static_cast<float>(B.get(k * N + j));
                }
                C.set(i * N + j, s);
            } else {
                // Integer accumulators wrap, as Halide's int32 does on the CPU and the
                // NPU's accumulator does: sum in uint32_t (defined to wrap), then
                // reinterpret. An int32_t sum would be undefined behaviour on overflow.
                uint32_t s = 0;
                for (int64_t k = 0; k < K; k++) {
                    const int64_t p = static_cast<int64_t>(A.get(i * K + k)) * static_cast<int64_t>(B.get(k * N + j));
                    s += static_cast<uint32_t>(p);
                }
                C.set(i * N + j, static_cast<int32_t>(s));
            }
        }
    }
    return C;
}

} // namespace tessel
