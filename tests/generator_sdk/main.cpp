// Calls the unsharp kernel exported from the user's own generator library, on
// the NPU (simulated) and on the host CPU, with random inputs, and checks both
// against a plain C++ unsharp mask. Exit 0 when everything matches.

#include "my_kernels.h"

#include "HalideBuffer.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

namespace {

using Halide::Runtime::Buffer;

int failures = 0;

void check(bool ok, const char *what) {
    std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += ok ? 0 : 1;
}

bool unsharp_matches(const Buffer<float> &in, const Buffer<float> &out, float amount) {
    for (int y = 0; y < out.dim(1).extent(); y++) {
        for (int x = 0; x < out.dim(0).extent(); x++) {
            double blur = 0;
            const double w[3] = {1, 2, 1};
            for (int dy = 0; dy < 3; dy++) {
                for (int dx = 0; dx < 3; dx++) {
                    blur += w[dy] * w[dx] * in(x + dx, y + dy);
                }
            }
            blur /= 16;
            double c = in(x + 1, y + 1), want = c + amount * (c - blur);
            if (std::fabs(out(x, y) - want) > 1e-4 + 1e-4 * std::fabs(want)) {
                std::printf("  out(%d, %d) = %.9g, want %.9g\n", x, y, double(out(x, y)), want);
                return false;
            }
        }
    }
    return true;
}

} // namespace

int main() {
    const std::string arch = unsharp64_arch();
    // Exported for an arch *file*: the library carries the arch itself, not the file's path.
    check(!arch.empty() && arch[0] == '{' && arch.find("\"my-npu\"") != std::string::npos,
          "unsharp64_arch() is the embedded arch JSON (my-npu), not a path");
    tessel_device *dev = nullptr;
    if (tessel_device_open(arch.c_str(), &dev) != TESSEL_OK) {
        std::printf("FAIL: tessel_device_open: %s\n", tessel_last_error());
        return 1;
    }
    std::mt19937 rng(20261202);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    Buffer<float> in(66, 18), out_npu(64, 16), out_cpu(64, 16);
    in.for_each_value([&](float &v) { v = u(rng); });
    out_npu.fill(-1.0f);
    out_cpu.fill(-1.0f);
    uint64_t cycles = 0;
    int s = unsharp64_profiled(dev, in.raw_buffer(), out_npu.raw_buffer(), &cycles);
    if (s != TESSEL_OK) {
        std::printf("  unsharp64: %s\n", my_kernels_last_error());
    }
    check(s == TESSEL_OK && unsharp_matches(in, out_npu, 1.5f), "unsharp64 on the NPU equals the reference");
    check(cycles > 0, "unsharp64 reports its simulated cycles");
    std::printf("  unsharp64: %llu cycles (schedule %s)\n", (unsigned long long)cycles, UNSHARP64_SCHEDULE_HASH);
    check(unsharp64_cpu(in.raw_buffer(), out_cpu.raw_buffer()) == 0 && unsharp_matches(in, out_cpu, 1.5f),
          "unsharp64_cpu equals the reference");
    tessel_device_close(dev);
    std::printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
