// The GEMM sample on the host CPU through Halide's JIT equals a naive C++
// reference on fresh random inputs. Both accumulate in increasing k, so integer
// types and fp16/bf16 (whose products are exact in fp32) match bit-exactly;
// fp32 products round, and Halide may fuse multiply-add (FMA), so fp32 gets a
// tolerance of 1e-5 absolute + 1e-5 relative (|values| < K = 36).
#include "dsl/HalidePipeline.h"
#include "samples/gemm/GemmReference.h"

#include <gtest/gtest.h>

#include <random>

using namespace tessel;

class GemmCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmCpu, MatchesNaiveReference) {
    std::random_device rd;
    uint64_t seed = (static_cast<uint64_t>(rd()) << 32) | rd();
    HalidePipeline p = build_halide_pipeline("gemm", {{"M", "48"}, {"N", "40"}, {"K", "36"}, {"dtype", GetParam()}});
    std::vector<Tensor> inputs = make_random_inputs(p, seed);
    std::vector<Tensor> outs = run_on_cpu(p, inputs);
    ASSERT_EQ(outs.size(), 1u);
    Tensor ref = gemm_reference(inputs[0], inputs[1], outs[0].dtype);
    double tol = GetParam() == "fp32" ? 1e-5 : 0;
    Comparison c = compare(outs[0], ref, tol, tol);
    EXPECT_EQ(c.mismatches, 0) << "seed " << seed << ": " << c.message;
}

INSTANTIATE_TEST_SUITE_P(Types, GemmCpu, ::testing::Values("int8", "uint8", "int16", "fp16", "bf16", "fp32"));
