#include "dsl/GeneratorInfo.h"
#include "dsl/HalidePipeline.h"
#include "npu_target/common/Error.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {
std::string user_error_text(const std::function<void()> &f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}
} // namespace

TEST(Generators, GemmIsRegisteredWithItsParams) {
    GeneratorInfo g = find_generator("gemm");
    std::vector<std::string> names;
    for (const auto &p : g.params) {
        names.push_back(p.name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"M", "N", "K", "dtype"}));
}

TEST(Generators, UnknownGeneratorNamesTheKnownOnes) {
    EXPECT_EQ(user_error_text([] { find_generator("gemmm"); }).find("unknown generator 'gemmm'; known generators: "),
              0u);
}

TEST(Generators, BadParamText) {
    EXPECT_EQ(user_error_text([] { parse_params("M=64,N"); }),
              "bad parameter 'N' in 'M=64,N': expected NAME=VALUE[,NAME=VALUE...]");
    EXPECT_EQ(user_error_text([] { resolve_params(find_generator("gemm"), {{"Q", "1"}}); }),
              "generator 'gemm' has no parameter 'Q'; its parameters are: M, N, K, dtype");
}

TEST(Generators, BadDtypeValueIsAUserError) {
    std::string msg = user_error_text([] {
        build_halide_pipeline("gemm", resolve_params(find_generator("gemm"), {{"dtype", "int7"}}));
    });
    EXPECT_NE(msg.find("parameter dtype=int7 is not an element type"), std::string::npos) << msg;
}

TEST(Generators, DeclaredParamsAreAcceptedByHalide) {
    // Every documented parameter must be a real GeneratorParam of the generator.
    for (const auto &g : list_generators()) {
        ParamMap params = resolve_params(g, {});
        HalidePipeline p = build_halide_pipeline(g.name, params);
        EXPECT_FALSE(p.outputs.empty()) << g.name;
    }
}

TEST(Generators, GemmShapesComeFromEstimates) {
    HalidePipeline p = build_halide_pipeline("gemm", {{"M", "8"}, {"N", "16"}, {"K", "4"}, {"dtype", "int8"}});
    ASSERT_EQ(p.inputs.size(), 2u);
    EXPECT_EQ(p.inputs[0].name, "A");
    EXPECT_EQ(p.inputs[0].shape, (std::vector<int64_t>{4, 8}));
    EXPECT_EQ(p.inputs[1].shape, (std::vector<int64_t>{16, 4}));
    ASSERT_EQ(p.outputs.size(), 1u);
    EXPECT_EQ(p.outputs[0].dtype, DType::Int32);
    EXPECT_EQ(p.outputs[0].shape, (std::vector<int64_t>{16, 8}));
}
