// The consumer of an exported kernel library: calls the NPU and the host CPU
// entry points of GEMM (int8 64^3 and 32^3, two libraries) and softmax (fp32
// 16x128) on random inputs
// and checks both against plain C++ references. Exit 0 when everything
// matches, 1 otherwise (each failure printed).

#include "consumer_gemm32.h"
#include "consumer_kernels.h"

#include "HalideBuffer.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using Halide::Runtime::Buffer;

int failures = 0;

void check(bool ok, const char *what) {
    std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += ok ? 0 : 1;
}

// C[i][j] = sum_k A[i][k] * B[k][j] in int32; Halide indexes A(k, i), B(j, k), C(j, i).
bool gemm_matches(const Buffer<int8_t> &a, const Buffer<int8_t> &b, const Buffer<int32_t> &c) {
    const int m = c.dim(1).extent(), n = c.dim(0).extent(), kk = a.dim(0).extent();
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            int32_t s = 0;
            for (int k = 0; k < kk; k++) {
                s += int32_t(a(k, i)) * int32_t(b(j, k));
            }
            if (c(j, i) != s) {
                std::printf("  C(%d, %d) = %d, want %d\n", j, i, c(j, i), s);
                return false;
            }
        }
    }
    return true;
}

// out(x, y) = exp(in(x, y) - max_x in(., y)) / sum_x exp(...), computed in double.
bool softmax_matches(const Buffer<float> &in, const Buffer<float> &out) {
    const int cols = in.dim(0).extent(), rows = in.dim(1).extent();
    for (int y = 0; y < rows; y++) {
        double mx = in(0, y), sum = 0;
        for (int x = 0; x < cols; x++) {
            mx = std::max(mx, double(in(x, y)));
        }
        for (int x = 0; x < cols; x++) {
            sum += std::exp(double(in(x, y)) - mx);
        }
        for (int x = 0; x < cols; x++) {
            double want = std::exp(double(in(x, y)) - mx) / sum;
            if (std::fabs(out(x, y) - want) > 1e-5 + 1e-4 * std::fabs(want)) {
                std::printf("  out(%d, %d) = %.9g, want %.9g\n", x, y, double(out(x, y)), want);
                return false;
            }
        }
    }
    return true;
}

} // namespace

int main() {
    check(consumer_kernels_abi_version() == CONSUMER_KERNELS_ABI_VERSION, "library ABI version matches the header");
    std::mt19937 rng(20261129);
    tessel_device *dev = nullptr;
    if (tessel_device_open(gemm64_arch(), &dev) != TESSEL_OK) {
        std::printf("FAIL: tessel_device_open(%s): %s\n", gemm64_arch(), tessel_last_error());
        return 1;
    }

    Buffer<int8_t> a(64, 64), b(64, 64);
    std::uniform_int_distribution<int> i8(-128, 127);
    a.for_each_value([&](int8_t &v) { v = int8_t(i8(rng)); });
    b.for_each_value([&](int8_t &v) { v = int8_t(i8(rng)); });
    Buffer<int32_t> c_npu(64, 64), c_cpu(64, 64);
    c_npu.fill(-1);
    c_cpu.fill(-1);
    uint64_t cycles = 0;
    int s = gemm64_profiled(dev, a.raw_buffer(), b.raw_buffer(), c_npu.raw_buffer(), &cycles);
    if (s != TESSEL_OK) {
        std::printf("  gemm64: %s\n", consumer_kernels_last_error());
    }
    check(s == TESSEL_OK && gemm_matches(a, b, c_npu), "gemm64 on the NPU equals the reference");
    check(cycles > 0, "gemm64 reports its simulated cycles");
    std::printf("  gemm64: %llu cycles (schedule %s)\n", (unsigned long long)cycles, GEMM64_SCHEDULE_HASH);
    check(gemm64_cpu(a.raw_buffer(), b.raw_buffer(), c_cpu.raw_buffer()) == 0 && gemm_matches(a, b, c_cpu),
          "gemm64_cpu equals the reference");

    // A transposed view of the output (non-unit innermost stride) is written correctly.
    Buffer<int32_t> c_t(64, 64);
    c_t.fill(-1);
    Buffer<int32_t> c_view = c_t.transposed(0, 1);
    check(gemm64(dev, a.raw_buffer(), b.raw_buffer(), c_view.raw_buffer()) == TESSEL_OK && gemm_matches(a, b, c_view),
          "gemm64 writes a strided (transposed) output buffer");

    // A wrong shape is refused with a message naming the kernel and the argument.
    Buffer<int8_t> small(32, 64);
    s = gemm64(dev, small.raw_buffer(), b.raw_buffer(), c_npu.raw_buffer());
    std::string msg = consumer_kernels_last_error();
    check(s == TESSEL_ERROR_INVALID_ARGUMENT && msg.find("gemm64: argument A") != std::string::npos &&
              msg.find("[64 x 64]") != std::string::npos,
          "gemm64 refuses an input of the wrong shape, naming it");

    Buffer<int8_t> a32(32, 32), b32(32, 32);
    a32.for_each_value([&](int8_t &v) { v = int8_t(i8(rng)); });
    b32.for_each_value([&](int8_t &v) { v = int8_t(i8(rng)); });
    Buffer<int32_t> c32_npu(32, 32), c32_cpu(32, 32);
    c32_npu.fill(-1);
    c32_cpu.fill(-1);
    check(gemm32(dev, a32.raw_buffer(), b32.raw_buffer(), c32_npu.raw_buffer()) == TESSEL_OK &&
              gemm_matches(a32, b32, c32_npu),
          "gemm32 (second library, inline arguments) on the NPU equals the reference");
    check(gemm32_cpu(a32.raw_buffer(), b32.raw_buffer(), c32_cpu.raw_buffer()) == 0 && gemm_matches(a32, b32, c32_cpu),
          "gemm32_cpu equals the reference");

    Buffer<float> in(128, 16), out_npu(128, 16), out_cpu(128, 16);
    std::uniform_real_distribution<float> f(-4.0f, 4.0f);
    in.for_each_value([&](float &v) { v = f(rng); });
    out_npu.fill(-1.0f);
    out_cpu.fill(-1.0f);
    s = softmax16(dev, in.raw_buffer(), out_npu.raw_buffer());
    if (s != TESSEL_OK) {
        std::printf("  softmax16: %s\n", consumer_kernels_last_error());
    }
    check(s == TESSEL_OK && softmax_matches(in, out_npu), "softmax16 on the NPU equals the reference");
    check(softmax16_cpu(in.raw_buffer(), out_cpu.raw_buffer()) == 0 && softmax_matches(in, out_cpu),
          "softmax16_cpu equals the reference");

    tessel_device_close(dev);
    std::printf("%s\n", failures ? "consumer: FAILED" : "consumer: all checks passed");
    return failures ? 1 : 0;
}
