// --schedule auto (scheduler/AutoSchedule): for sample generators it has never
// seen a schedule of, on each preset, the schedule it derives compiles,
// verifies against Halide's CPU result, and beats the scalar default; what it
// cannot map is a warning naming the Func and the reason, never a crash.
#include "scheduler/AutoSchedule.h"

#include "dsl/Compile.h"
#include "dsl/PipelineInfo.h"
#include "npu_target/arch/ArchSpec.h"
#include "tests/dsl/DslTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tessel {
namespace {

struct AutoRun {
    AutoSchedule as;
    RunReport rep;
};

AutoRun run_auto(const std::string &gen, const ParamMap &params, const std::string &arch) {
    AutoRun r;
    r.as = auto_schedule_for(gen, params, arch);
    CompileRequest req;
    req.generator = gen;
    req.params = params;
    req.arch = arch;
    req.schedule = r.as.spec;
    req.check_cpu_schedule = false;
    r.rep = run(req, 7);
    return r;
}

std::string all(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v) {
        s += x + "\n";
    }
    return s;
}

std::string errors(const RunReport &r) {
    std::string s;
    for (const auto &d : r.diagnostics) {
        s += d.message + "\n";
    }
    return s;
}

TEST(PipelineInfo, DescribesFuncsReadsAndTheMatrixPattern) {
    PipelineInfo p = describe_pipeline("gemm", {{"M", "64"}, {"N", "64"}, {"K", "64"}});
    ASSERT_EQ(p.inputs.size(), 2u);
    const FuncInfo *acc = p.find("acc");
    ASSERT_NE(acc, nullptr);
    ASSERT_EQ(acc->updates.size(), 1u);
    EXPECT_TRUE(acc->updates[0].sum_of_products);
    EXPECT_EQ(acc->updates[0].rvar_extents, std::vector<int64_t>{64});
    const FuncInfo *c = p.find("C");
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(c->is_output);
    EXPECT_EQ(p.funcs.back().name, "C"); // producers first
    EXPECT_EQ(acc->consumers, std::vector<std::string>{"C"});

    PipelineInfo b = describe_pipeline("blur", {{"W", "64"}, {"H", "32"}});
    const FuncInfo *bx = b.find("blur_x");
    ASSERT_NE(bx, nullptr);
    ASSERT_EQ(bx->pure.loads.size(), 1u);
    const LoadInfo &l = bx->pure.loads[0];
    EXPECT_TRUE(l.callee_is_input);
    EXPECT_EQ(l.callee, "in");
    EXPECT_EQ(l.index_var, (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(l.min_offset, (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(l.max_offset, (std::vector<int64_t>{2, 0}));
}

TEST(AutoSchedule, GemmTakesTheMatrixFormOnEveryPreset) {
    for (const auto &[arch, dtype] : std::vector<std::pair<std::string, std::string>>{
             {"ascend-like", "fp16"}, {"ascend-like", "int8"}, {"gemmini-like", "int8"}, {"auto-int8", "int8"},
             {"auto-int8", "fp16"}}) {
        SCOPED_TRACE(arch + " " + dtype);
        AutoRun r = run_auto("gemm", {{"M", "128"}, {"N", "128"}, {"K", "128"}, {"dtype", dtype}}, arch);
        EXPECT_EQ(r.as.form, "matrix") << all(r.as.warnings);
        EXPECT_TRUE(r.as.warnings.empty()) << all(r.as.warnings);
        ASSERT_TRUE(r.rep.verified) << errors(r.rep) << r.rep.comparison;
        ASSERT_TRUE(r.rep.efficiency.has_value());
        EXPECT_GT(*r.rep.efficiency, 0.2) << all(r.as.notes);
    }
}

TEST(AutoSchedule, StencilsAndElementwiseTakeTheVectorForm) {
    // gemmini-like's vector unit (the accumulator read path) computes int8/int32/fp32.
    for (const auto &[arch, dtype] : std::vector<std::pair<std::string, std::string>>{{"ascend-like", "fp16"},
                                                                                     {"gemmini-like", "fp32"}}) {
        SCOPED_TRACE(arch);
        AutoRun blur = run_auto("blur", {{"W", "128"}, {"H", "32"}, {"dtype", dtype}}, arch);
        EXPECT_EQ(blur.as.form, "vector") << all(blur.as.warnings);
        ASSERT_TRUE(blur.rep.verified) << errors(blur.rep) << blur.rep.comparison;
        AutoRun ew = run_auto("elementwise", {{"dtype", dtype}}, arch);
        EXPECT_EQ(ew.as.form, "vector") << all(ew.as.warnings);
        ASSERT_TRUE(ew.rep.verified) << errors(ew.rep) << ew.rep.comparison;
        // Against the scalar default, which runs the same pipeline on the scalar unit.
        CompileRequest req;
        req.generator = "blur";
        req.params = {{"W", "128"}, {"H", "32"}, {"dtype", dtype}};
        req.arch = arch;
        req.check_cpu_schedule = false;
        RunReport scalar = run(req, 7);
        ASSERT_TRUE(scalar.cycles && blur.rep.cycles) << errors(scalar);
        EXPECT_LT(*blur.rep.cycles * 4, *scalar.cycles);
    }
}

TEST(AutoSchedule, WhatItCannotMapIsAWarningNamingTheFunc) {
    // gemmini-like's matrix unit takes int8 only: fp16 GEMM falls back, saying why.
    AutoSchedule g = auto_schedule(describe_pipeline("gemm", {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "fp16"}}),
                                   load_arch("gemmini-like"));
    const std::string w = all(g.warnings);
    EXPECT_NE(w.find("Func acc: the matrix unit of gemmini-like does not take fp16 operands; trying the vector form"),
              std::string::npos)
        << w;
    EXPECT_EQ(g.form, "vector") << w;
    // auto-int8's vector unit (NVDLA's SDP) reads only the accumulators: no path from GM.
    AutoSchedule e = auto_schedule(describe_pipeline("elementwise", {}), load_arch("auto-int8"));
    EXPECT_EQ(e.form, "none");
    EXPECT_TRUE(e.spec.directives.empty());
    EXPECT_NE(all(e.warnings).find("Func out: no DMA path from GM to the vector unit's level 'ACC'"), std::string::npos)
        << all(e.warnings);
}

TEST(PipelineInfo, NamesEachReductionVariableAndTheWindowSums) {
    // ONNX's NCHW Conv: acc(s0, s1, m, n) += X(s0 + r$x, s1 + r$y, r$z, n) * W(r$x, r$y, r$z, m).
    PipelineInfo p = describe_pipeline("onnx_conv", {{"x", "1x8x6x6"}, {"w", "4x8x3x3"}, {"pads", "0;0;0;0"}});
    const FuncInfo *acc = p.find("acc");
    ASSERT_NE(acc, nullptr);
    ASSERT_EQ(acc->updates.size(), 1u);
    EXPECT_EQ(acc->updates[0].rvars, (std::vector<std::string>{"r$x", "r$y", "r$z"}));
    bool saw_x = false;
    for (const auto &l : acc->updates[0].loads) {
        if (l.callee == "X") {
            saw_x = true;
            using V = std::vector<std::string>;
            EXPECT_EQ(l.index_sum, (std::vector<V>{V{"r$x", "s0"}, V{"r$y", "s1"}, V{"r$z"}, V{"n"}}));
            EXPECT_EQ(l.index_var[2], "r$z");
            EXPECT_EQ(l.index_var[0], ""); // two variables: not one plus a constant
        }
    }
    EXPECT_TRUE(saw_x);
}

// A stride-1 convolution (ONNX's NCHW, OIHW weights) goes to the matrix unit one tap at a
// time, its bias as an epilogue on the vector unit; verified against Halide's CPU result and
// far faster than the vector form it took before (the same pipeline, vector form forced by a
// padded input the convolution form does not stage).
TEST(AutoSchedule, StrideOneConvolutionsTakeTheMatrixUnitPerTap) {
    struct Case {
        ParamMap params;
        double min_efficiency;
    };
    for (const Case &c : std::vector<Case>{
             {{{"x", "1x64x18x18"}, {"w", "64x64x3x3"}, {"pads", "0;0;0;0"}, {"bias", "true"}}, 0.1},
             {{{"x", "1x32x16x16"}, {"w", "64x32x1x1"}, {"pads", "0;0;0;0"}}, 0.1},
             {{{"x", "2x16x40"}, {"w", "32x16x5"}, {"strides", "1"}, {"dilations", "1"}, {"pads", "0;0"}, {"bias", "true"}},
              0.02}}) {
        SCOPED_TRACE(c.params.at("x") + " * " + c.params.at("w"));
        AutoRun r = run_auto("onnx_conv", c.params, "ascend-like");
        EXPECT_EQ(r.as.form, "matrix") << all(r.as.warnings);
        EXPECT_NE(all(r.as.notes).find("convolution form: acc = W x X window (fp32;"), std::string::npos)
            << all(r.as.notes);
        if (c.params.count("bias")) {
            EXPECT_NE(all(r.as.notes).find("epilogue: epi per tile of Y on the vector unit"), std::string::npos)
                << all(r.as.notes);
        }
        EXPECT_TRUE(r.as.warnings.empty()) << all(r.as.warnings);
        ASSERT_TRUE(r.rep.verified) << errors(r.rep) << r.rep.comparison;
        ASSERT_TRUE(r.rep.efficiency.has_value());
        EXPECT_GT(*r.rep.efficiency, c.min_efficiency) << all(r.as.notes);
    }
}

// Gemm's alpha * A B + beta * C is an epilogue of the accumulator: per tile on the vector
// unit, the tile copied L0C -> UB (it was the default placement: scalar code).
TEST(AutoSchedule, GemmWithABiasKeepsTheMatrixFormAndRunsTheBiasPerTile) {
    AutoRun r = run_auto("onnx_gemm", {{"M", "64"}, {"N", "256"}, {"K", "256"}, {"c", "1x256"}, {"beta", "0.5"}},
                         "ascend-like");
    EXPECT_EQ(r.as.form, "matrix") << all(r.as.warnings);
    EXPECT_NE(all(r.as.notes).find("epilogue: epi per tile of Y on the vector unit (128 lanes), the accumulator "
                                   "tile copied L0C -> UB (2 buffers), its other inputs staged once"),
              std::string::npos)
        << all(r.as.notes);
    EXPECT_TRUE(r.as.warnings.empty()) << all(r.as.warnings);
    ASSERT_TRUE(r.rep.verified) << errors(r.rep) << r.rep.comparison;
    ASSERT_TRUE(r.rep.efficiency.has_value());
    EXPECT_GT(*r.rep.efficiency, 0.4);
    // gemmini-like's matrix unit takes int8 only: fp32 Gemm is not in the matrix form there, and
    // the warning says why.
    AutoSchedule g = auto_schedule(
        describe_pipeline("onnx_gemm", {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"c", "1x64"}}), load_arch("gemmini-like"));
    EXPECT_NE(all(g.warnings).find("does not take fp32 operands"), std::string::npos) << all(g.warnings);
}

// A constant Pad is a fill and a copy into the interior (ops/OnnxPad.cpp): the fill one
// vector operation per row whatever its length, the copy vectorised along its reduction
// variable (each step writes its own element: not a reduction). It was 1,007,929 cycles
// (0.027) with clamped reads and 1-D masks.
TEST(AutoSchedule, AConstantPadIsAVectorFillAndAVectorCopy) {
    AutoRun r = run_auto("onnx_pad", {{"shape", "64x56x56"}, {"pads", "0;1;1;0;1;1"}}, "ascend-like");
    EXPECT_EQ(r.as.form, "vector") << all(r.as.warnings);
    EXPECT_NE(all(r.as.notes).find("vectorised: op by 58, op.update(0) (a copy) along p$x by 8"), std::string::npos)
        << all(r.as.notes);
    ASSERT_TRUE(r.rep.verified) << errors(r.rep) << r.rep.comparison;
    ASSERT_TRUE(r.rep.efficiency.has_value());
    EXPECT_GT(*r.rep.efficiency, 0.2);
}

TEST(AutoSchedule, ConvolutionsTheMatrixFormCannotTakeSayWhy) {
    struct Case {
        ParamMap params;
        std::string arch, why;
    };
    for (const Case &c : std::vector<Case>{
             {{{"x", "1x16x10x10"}, {"w", "16x16x3x3"}, {"pads", "1;1;1;1"}},
              "ascend-like",
              "Func acc: its product reads xp and W; the convolution form stages two inputs (a computed operand, "
              "such as a padded input, is not mapped yet)"},
             {{{"x", "1x16x11x11"}, {"w", "16x16x3x3"}, {"pads", "0;0;0;0"}, {"strides", "2;2"}},
              "ascend-like",
              "Func acc: no operand reads s0 along its innermost dimension with stride 1"},
             {{{"x", "1x16x10x10"}, {"w", "16x16x3x3"}, {"pads", "0;0;0;0"}},
              "gemmini-like",
              "Func acc: the matrix unit of gemmini-like does not take fp32 operands"}}) {
        SCOPED_TRACE(c.arch + " " + c.params.at("pads"));
        AutoSchedule a = auto_schedule(describe_pipeline("onnx_conv", c.params), load_arch(c.arch));
        EXPECT_NE(all(a.warnings).find(c.why), std::string::npos) << all(a.warnings);
        EXPECT_NE(a.form, "matrix");
    }
}

// The reductions of softmax, LayerNorm and a GEMM the matrix unit cannot take run on
// the vector unit: across the reduction (a vector reduction over each dense row) when
// the reduction walks the innermost dimension, else across rows (lanes = rows). Each
// verifies and is far faster than the scalar default.
TEST(AutoSchedule, ReductionsRunOnTheVectorUnit) {
    struct Case {
        std::string gen;
        ParamMap params;
        std::string arch, expect;
        std::string hand; // samples/<gen>/schedules/<hand>, "" = against the scalar default
        double at_least;  // auto cycles x at_least <= the other's cycles
    };
    const std::vector<Case> cases = {
        {"softmax", {{"ROWS", "64"}, {"COLS", "1024"}}, "ascend-like", "rowsum.update(0) across r$x by 1024",
         "ascend_reduce.json", 0.9},
        {"layernorm", {{"ROWS", "64"}, {"COLS", "1024"}}, "ascend-like", "var.update(0) across r$x by 1024",
         "ascend_reduce.json", 0.5},
        {"softmax", {{"ROWS", "16"}, {"COLS", "64"}, {"dtype", "fp32"}}, "gemmini-like", "rowmax.update(0) across r$x",
         "gemmini_fp32.json", 0.9},
        {"gemm", {{"M", "32"}, {"N", "32"}, {"K", "32"}, {"dtype", "fp16"}}, "gemmini-like", "acc.update(0) across", "",
         10},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.gen + " on " + c.arch);
        AutoRun a = run_auto(c.gen, c.params, c.arch);
        EXPECT_EQ(a.as.form, "vector") << all(a.as.warnings);
        EXPECT_NE(all(a.as.notes).find(c.expect), std::string::npos) << all(a.as.notes);
        EXPECT_EQ(all(a.as.warnings).find("runs as scalar code"), std::string::npos) << all(a.as.warnings);
        ASSERT_TRUE(a.rep.verified) << errors(a.rep) << a.rep.comparison;
        CompileRequest req;
        req.generator = c.gen;
        req.params = c.params;
        req.arch = c.arch;
        req.check_cpu_schedule = false;
        if (!c.hand.empty()) {
            req.schedule = load_schedule(test::source_path("samples/" + c.gen + "/schedules/" + c.hand));
        }
        RunReport other = run(req, 7);
        ASSERT_TRUE(other.cycles && a.rep.cycles) << errors(other);
        std::printf("[ auto     ] %s on %s: auto %lld cycles, %s %lld\n", c.gen.c_str(), c.arch.c_str(),
                    static_cast<long long>(*a.rep.cycles), c.hand.empty() ? "scalar" : c.hand.c_str(),
                    static_cast<long long>(*other.cycles));
        EXPECT_LE(double(*a.rep.cycles) * c.at_least, double(*other.cycles));
    }
}

} // namespace
} // namespace tessel
