// The conv2d and softmax samples on the host CPU through Halide's JIT equal
// their plain C++ references on fresh random inputs (the seed is printed on
// failure).
//
// conv2d: the reference accumulates in the algorithm's order (ky, kx, ci with
// ci innermost). int8 -> int32 is exact. fp16 products are exact in fp32, but
// Halide compiles without strict_float and LLVM may reassociate the unrolled
// fp32 sums (seen: 1-ulp differences for a 3x3 stride-2 case), so fp16 -> fp32
// gets 1e-4 absolute + 1e-5 relative: |sum| <= CI*K*K and at most CI*K*K = 72
// additions of terms below 1, each off by at most half an fp32 ulp.
//
// softmax: Halide's exp and the C library's expf may differ in the last bits,
// which reach the output through the sum and the division: fp32 outputs (in
// (0, 1]) get 1e-6 absolute + 1e-5 relative; fp16 outputs get one fp16 unit in
// the last place at 1.0 (2^-10 ~ 9.8e-4), rounded up to 1e-3 absolute.
#include "dsl/HalidePipeline.h"
#include "samples/conv2d/Conv2dReference.h"
#include "samples/softmax/SoftmaxReference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tessel;

namespace {

uint64_t fresh_seed() {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) | rd();
}

const Tensor &find(const std::vector<Tensor> &ts, const std::string &name) {
    for (const auto &t : ts) {
        if (t.name == name) {
            return t;
        }
    }
    ADD_FAILURE() << "no tensor " << name;
    return ts.front();
}

struct ConvCase {
    std::string dtype;
    int n, h, w, ci, co, k, stride;
};

void PrintTo(const ConvCase &c, std::ostream *os) {
    *os << c.dtype << " N=" << c.n << " H=" << c.h << " W=" << c.w << " CI=" << c.ci << " CO=" << c.co << " K=" << c.k
        << " stride=" << c.stride;
}

std::string conv_name(const ::testing::TestParamInfo<ConvCase> &info) {
    const ConvCase &c = info.param;
    return c.dtype + "_N" + std::to_string(c.n) + "_H" + std::to_string(c.h) + "_W" + std::to_string(c.w) + "_CI" +
           std::to_string(c.ci) + "_CO" + std::to_string(c.co) + "_K" + std::to_string(c.k) + "_S" + std::to_string(c.stride);
}

} // namespace

class Conv2dCpu : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dCpu, MatchesNaiveReference) {
    const ConvCase &c = GetParam();
    uint64_t seed = fresh_seed();
    HalidePipeline p = build_halide_pipeline(
        "conv2d", {{"N", std::to_string(c.n)}, {"H", std::to_string(c.h)}, {"W", std::to_string(c.w)},
                   {"CI", std::to_string(c.ci)}, {"CO", std::to_string(c.co)}, {"K", std::to_string(c.k)},
                   {"stride", std::to_string(c.stride)}, {"dtype", c.dtype}});
    ASSERT_EQ(p.inputs.size(), 2u);
    const std::vector<int64_t> in_shape = {c.ci, (c.w - 1) * c.stride + c.k, (c.h - 1) * c.stride + c.k, c.n};
    std::vector<Tensor> inputs = make_random_inputs(p, seed);
    EXPECT_EQ(find(inputs, "input").shape, in_shape);
    const std::vector<int64_t> w_shape = {c.co, c.ci, c.k, c.k};
    EXPECT_EQ(find(inputs, "weights").shape, w_shape);
    std::vector<Tensor> outs = run_on_cpu(p, inputs);
    ASSERT_EQ(outs.size(), 1u);
    const std::vector<int64_t> out_shape = {c.co, c.w, c.h, c.n};
    EXPECT_EQ(outs[0].shape, out_shape);
    EXPECT_EQ(outs[0].dtype, c.dtype == "int8" ? DType::Int32 : DType::FP32);
    Tensor ref = conv2d_reference(find(inputs, "input"), find(inputs, "weights"), c.stride, outs[0].dtype);
    bool half = c.dtype == "fp16";
    Comparison cmp = compare(outs[0], ref, half ? 1e-4 : 0, half ? 1e-5 : 0);
    EXPECT_EQ(cmp.mismatches, 0) << "seed " << seed << ": " << cmp.message;
    // The result is not trivially zero (random inputs of both signs).
    double energy = 0;
    for (int64_t i = 0; i < ref.elements(); i++) {
        energy += std::abs(ref.get(i));
    }
    EXPECT_GT(energy, 0) << "seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dCpu,
                         ::testing::Values(ConvCase{"int8", 1, 6, 5, 8, 16, 3, 1}, ConvCase{"fp16", 1, 6, 5, 8, 16, 3, 1},
                                           ConvCase{"int8", 2, 4, 3, 5, 7, 3, 2}, ConvCase{"fp16", 2, 4, 3, 5, 7, 3, 2},
                                           ConvCase{"int8", 1, 7, 6, 16, 8, 1, 1}, ConvCase{"fp16", 1, 7, 6, 16, 8, 1, 1},
                                           ConvCase{"int8", 2, 3, 5, 4, 9, 1, 2}, ConvCase{"fp16", 1, 3, 5, 4, 9, 1, 2}),
                         conv_name);

TEST(Conv2dCpu, RejectsUnsupportedParameters) {
    EXPECT_ANY_THROW(build_halide_pipeline("conv2d", {{"N", "1"}, {"H", "4"}, {"W", "4"}, {"CI", "4"}, {"CO", "4"},
                                                      {"K", "5"}, {"stride", "1"}, {"dtype", "fp16"}}));
    EXPECT_ANY_THROW(build_halide_pipeline("conv2d", {{"N", "1"}, {"H", "4"}, {"W", "4"}, {"CI", "4"}, {"CO", "4"},
                                                      {"K", "3"}, {"stride", "3"}, {"dtype", "fp16"}}));
    EXPECT_ANY_THROW(build_halide_pipeline("conv2d", {{"N", "1"}, {"H", "4"}, {"W", "4"}, {"CI", "4"}, {"CO", "4"},
                                                      {"K", "3"}, {"stride", "1"}, {"dtype", "fp32"}}));
}

struct SoftmaxCase {
    std::string dtype;
    int rows, cols;
};

void PrintTo(const SoftmaxCase &c, std::ostream *os) { *os << c.dtype << " " << c.rows << "x" << c.cols; }

class SoftmaxCpu : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxCpu, MatchesNaiveReference) {
    const SoftmaxCase &c = GetParam();
    uint64_t seed = fresh_seed();
    HalidePipeline p = build_halide_pipeline(
        "softmax", {{"ROWS", std::to_string(c.rows)}, {"COLS", std::to_string(c.cols)}, {"dtype", c.dtype}});
    std::vector<Tensor> inputs = make_random_inputs(p, seed);
    ASSERT_EQ(inputs.size(), 1u);
    // Spread the inputs over [-8, 8) so that exp(x - max) spans several decades.
    for (int64_t i = 0; i < inputs[0].elements(); i++) {
        inputs[0].set(i, inputs[0].get(i) * 8);
    }
    std::vector<Tensor> outs = run_on_cpu(p, inputs);
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_EQ(outs[0].dtype, inputs[0].dtype);
    EXPECT_EQ(outs[0].shape, inputs[0].shape);
    Tensor ref = softmax_reference(inputs[0]);
    bool half = c.dtype == "fp16";
    Comparison cmp = compare(outs[0], ref, half ? 1e-3 : 1e-6, half ? 0 : 1e-5);
    EXPECT_EQ(cmp.mismatches, 0) << "seed " << seed << ": " << cmp.message;
    // Each row of the result sums to 1 (within the output type's rounding).
    for (int y = 0; y < c.rows; y++) {
        double s = 0;
        for (int x = 0; x < c.cols; x++) {
            s += outs[0].get(static_cast<int64_t>(y) * c.cols + x);
        }
        EXPECT_NEAR(s, 1.0, half ? 1e-3 * c.cols : 1e-5) << "row " << y << ", seed " << seed;
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SoftmaxCpu,
                         ::testing::Values(SoftmaxCase{"fp32", 4, 64}, SoftmaxCase{"fp16", 4, 64},
                                           SoftmaxCase{"fp32", 7, 33}, SoftmaxCase{"fp16", 3, 129},
                                           SoftmaxCase{"fp32", 1, 1}),
                         [](const ::testing::TestParamInfo<SoftmaxCase> &info) {
                             return info.param.dtype + "_" + std::to_string(info.param.rows) + "x" +
                                    std::to_string(info.param.cols);
                         });
