// The ONNX operators (ops/, docs/onnx.md): every generator, scheduled by
// --schedule auto at a realistic size, runs on the NPU simulator and matches
// Halide's CPU result on fresh random inputs (the facade poisons the outputs
// first); the auto schedule is the vector form, not the scalar fallback. And
// the node -> generator mapping (graph/OnnxOps.h): attributes, parameter
// inputs, broadcasting views and the views' shape functions.
#include "dsl/Compile.h"
#include "graph/OnnxOps.h"
#include "scheduler/AutoSchedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::graph;

namespace {

// ---- NPU against Halide's CPU result ----

struct Case {
    std::string generator;
    ParamMap params;
};

void expect_npu_matches_cpu(const Case &c, const std::string &arch, const std::string &form = "vector") {
    SCOPED_TRACE(c.generator + " (" + format_params(c.params) + ") on " + arch);
    AutoSchedule as = auto_schedule_for(c.generator, c.params, arch);
    EXPECT_EQ(as.form, form);
    EXPECT_TRUE(as.warnings.empty()) << (as.warnings.empty() ? "" : as.warnings[0]);
    CompileRequest req;
    req.generator = c.generator;
    req.params = c.params;
    req.arch = arch;
    req.schedule = as.spec;
    req.check_cpu_schedule = false;
    RunReport rep = run(req, 7);
    for (const auto &d : rep.diagnostics) {
        EXPECT_NE(d.severity, Diagnostic::Error) << d.message;
    }
    EXPECT_TRUE(rep.verified) << rep.comparison;
    ASSERT_TRUE(rep.cycles.has_value());
    ASSERT_TRUE(rep.efficiency.has_value());
    // The scalar fallback is hundreds of times slower than the physical limit; a vector
    // schedule of these bandwidth- or vector-bound kernels is within a few times of it.
    EXPECT_GT(*rep.efficiency, 0.2) << *rep.cycles << " cycles";
}

const std::vector<std::string> kUnary = {
    "onnx_relu", "onnx_leakyrelu", "onnx_clip", "onnx_sigmoid", "onnx_hardsigmoid", "onnx_hardswish",
    "onnx_tanh", "onnx_erf",       "onnx_exp",  "onnx_log",     "onnx_sqrt",        "onnx_reciprocal",
    "onnx_neg",  "onnx_abs",       "onnx_elu",  "onnx_selu",    "onnx_softplus",    "onnx_softsign",
    "onnx_identity"};

TEST(OnnxOps, UnaryOnTheNpuMatchHalidesCpuResult) {
    for (const std::string &g : kUnary) {
        ParamMap p = {{"N", "16384"}, {"dtype", "fp32"}};
        if (g == "onnx_clip") {
            p["min"] = "-0.5";
            p["max"] = "0.25";
        }
        expect_npu_matches_cpu({g, p}, "ascend-like");
    }
}

TEST(OnnxOps, UnaryInOtherTypes) {
    expect_npu_matches_cpu({"onnx_relu", {{"N", "65536"}, {"dtype", "int8"}}}, "ascend-like");
    expect_npu_matches_cpu({"onnx_clip", {{"N", "16384"}, {"dtype", "int16"}, {"max", "100"}}}, "ascend-like");
    expect_npu_matches_cpu({"onnx_sigmoid", {{"N", "16384"}, {"dtype", "fp16"}}}, "ascend-like");
    expect_npu_matches_cpu({"onnx_tanh", {{"N", "16384"}, {"dtype", "fp32"}}}, "gemmini-like");
}

TEST(OnnxOps, BroadcastingOnTheNpuMatchHalidesCpuResult) {
    // A 64x56x56 activation with a per-channel operand (64x1x1), as the runner merges it.
    const std::string chan = "64x3136;64x1";
    for (const char *g : {"onnx_add", "onnx_sub", "onnx_mul", "onnx_div", "onnx_prelu", "onnx_max", "onnx_min"}) {
        expect_npu_matches_cpu({g, {{"shapes", chan}, {"dtype", "fp32"}}}, "ascend-like");
    }
    expect_npu_matches_cpu({"onnx_pow", {{"shapes", "16384;16384"}, {"dtype", "fp32"}}}, "ascend-like");
    expect_npu_matches_cpu({"onnx_max", {{"shapes", "16384;16384;16384"}, {"dtype", "fp32"}}}, "ascend-like");
    expect_npu_matches_cpu({"onnx_add", {{"shapes", "256x256;256"}, {"dtype", "uint8"}}}, "ascend-like");
    expect_npu_matches_cpu({"onnx_div", {{"shapes", "65536;65536"}, {"dtype", "uint8"}}}, "ascend-like");
}

TEST(OnnxOps, TransposeOnTheNpuMatchesHalidesCpuResult) {
    expect_npu_matches_cpu({"onnx_transpose", {{"shape", "256x256"}, {"perm", "1;0"}, {"dtype", "fp32"}}}, "ascend-like");
    expect_npu_matches_cpu({"onnx_transpose", {{"shape", "32x64x64"}, {"perm", "2;0;1"}, {"dtype", "fp16"}}}, "ascend-like");
}

TEST(OnnxOps, SliceOnTheNpuMatchesHalidesCpuResult) {
    // Half the channels of a 64x56x56 activation; every other row and column.
    expect_npu_matches_cpu({"onnx_slice", {{"shape", "64x56x56"}, {"starts", "0;0;0"}, {"steps", "1;1;1"},
                                           {"out", "32x56x56"}, {"dtype", "fp32"}}},
                           "ascend-like");
    expect_npu_matches_cpu({"onnx_slice", {{"shape", "64x56x56"}, {"starts", "0;0;0"}, {"steps", "1;2;2"},
                                           {"out", "64x28x28"}, {"dtype", "fp32"}}},
                           "ascend-like");
}

TEST(OnnxOps, ReductionsOnTheNpuMatchHalidesCpuResult) {
    // ReduceMean of a 1x64x56x56 activation over H and W (the runner's view: 64x3136, axis 1
    // reduced), across the reduction.
    for (const char *g :
         {"onnx_reduce_mean", "onnx_reduce_sum", "onnx_reduce_max", "onnx_reduce_min"}) {
        expect_npu_matches_cpu({g, {{"shape", "64x3136"}, {"axes", "1"}, {"dtype", "fp32"}}},
                               "ascend-like");
    }
    // An outer dimension reduced, across rows (the inner positions).
    expect_npu_matches_cpu(
        {"onnx_reduce_mean", {{"shape", "16x1024"}, {"axes", "0"}, {"dtype", "fp32"}}},
        "ascend-like");
    // Two reduced groups: two stages; integers in their type.
    expect_npu_matches_cpu(
        {"onnx_reduce_sum", {{"shape", "4x16x256"}, {"axes", "0;2"}, {"dtype", "fp32"}}},
        "ascend-like");
    expect_npu_matches_cpu(
        {"onnx_reduce_min", {{"shape", "64x1024"}, {"axes", "1"}, {"dtype", "int8"}}},
        "ascend-like");
    expect_npu_matches_cpu(
        {"onnx_reduce_min", {{"shape", "64x3136"}, {"axes", "1"}, {"dtype", "fp32"}}},
        "gemmini-like");
}

TEST(OnnxOps, SoftmaxOnTheNpuMatchesHalidesCpuResult) {
    // Attention scores 1x12x128x128 along the last axis: 1536 rows of 128.
    expect_npu_matches_cpu({"onnx_softmax", {{"shape", "1536x128"}, {"dtype", "fp32"}}},
                           "ascend-like");
    expect_npu_matches_cpu({"onnx_logsoftmax", {{"shape", "1536x128"}, {"dtype", "fp32"}}},
                           "ascend-like");
    expect_npu_matches_cpu({"onnx_softmax", {{"shape", "1536x128"}, {"dtype", "fp32"}}},
                           "gemmini-like");
    // Along an axis that is not innermost (the channels of 32x16x256), lanes across the 256
    // inner positions.
    expect_npu_matches_cpu({"onnx_softmax", {{"shape", "32x16x256"}, {"dtype", "fp32"}}},
                           "ascend-like");
}

TEST(OnnxOps, LayerNormOnTheNpuMatchesHalidesCpuResult) {
    // A transformer's 1x128x768 activation normalised over its last axis, and its optional outputs.
    for (const char *out : {"Y", "Mean", "InvStdDev"}) {
        expect_npu_matches_cpu(
            {"onnx_layernorm", {{"shape", "128x768"}, {"output", out}, {"dtype", "fp32"}}},
            "ascend-like");
    }
    expect_npu_matches_cpu(
        {"onnx_layernorm", {{"shape", "128x768"}, {"bias", "false"}, {"dtype", "fp32"}}},
        "gemmini-like");
}

TEST(OnnxOps, GeneratorsRefuseWhatOnnxDoesNotDefine) {
    CompileRequest req;
    req.generator = "onnx_sigmoid";
    req.params = {{"N", "64"}, {"dtype", "int8"}};
    CompileResult r = compile(req);
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.diagnostics.at(0).message.find("onnx Sigmoid: dtype must be fp32, fp16 or bf16"), std::string::npos)
        << r.diagnostics.at(0).message;
    req.generator = "onnx_add";
    req.params = {{"shapes", "3x4;5"}, {"dtype", "fp32"}};
    r = compile(req);
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.diagnostics.at(0).message.find("onnx Add: shapes 3x4;5 do not broadcast"), std::string::npos)
        << r.diagnostics.at(0).message;
    req.generator = "onnx_reduce_sum";
    req.params = {{"shape", "3x4"}, {"axes", "1;1"}, {"dtype", "fp32"}};
    r = compile(req);
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.diagnostics.at(0).message.find(
                  "onnx ReduceSum: axes '1;1' must name distinct dimensions of shape 3x4"),
              std::string::npos)
        << r.diagnostics.at(0).message;
    req.generator = "onnx_layernorm";
    req.params = {{"shape", "3x4"}, {"output", "Var"}, {"dtype", "fp32"}};
    r = compile(req);
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.diagnostics.at(0).message.find("output 'Var' is not Y, Mean or InvStdDev"),
              std::string::npos)
        << r.diagnostics.at(0).message;
}

// The window and data-movement families at sizes of real networks: the auto schedule's
// vector form, the NPU's result against Halide's CPU result, and at least `floor` of the
// physical limit. The floors are half of what was measured (docs/BENCHMARKS.md, "ONNX
// operators"); Halide's default placement (scalar code) reaches about 1e-4 on these.
void expect_vector_form_matches_cpu(const Case &c, double floor) {
    SCOPED_TRACE(c.generator + " (" + format_params(c.params) + ")");
    AutoSchedule as = auto_schedule_for(c.generator, c.params, "ascend-like");
    EXPECT_EQ(as.form, "vector") << (as.warnings.empty() ? "" : as.warnings[0]);
    CompileRequest req;
    req.generator = c.generator;
    req.params = c.params;
    req.arch = "ascend-like";
    req.schedule = as.spec;
    req.check_cpu_schedule = false;
    RunReport rep = run(req, 7);
    for (const auto &d : rep.diagnostics) {
        EXPECT_NE(d.severity, Diagnostic::Error) << d.message;
    }
    EXPECT_TRUE(rep.verified) << rep.comparison;
    ASSERT_TRUE(rep.efficiency.has_value());
    EXPECT_GT(*rep.efficiency, floor) << (rep.cycles ? *rep.cycles : 0) << " cycles";
}

// ThresholdedRelu without a select (ops/OnnxUnary.cpp): exact at the floats next to alpha on
// both sides, at alpha itself, for negative and power-of-two alphas, at huge values (where the
// simplifier's t 2^k overflows) and at +-inf, on the NPU with the auto schedule, against
// x > alpha ? x : 0 in C++.
TEST(OnnxOps, ThresholdedReluIsExactAroundItsThreshold) {
    auto float_text = [](float v) { // round-trips a float
        char b[32];
        std::snprintf(b, sizeof b, "%.9g", v);
        return std::string(b);
    };
    const float inf = std::numeric_limits<float>::infinity();
    for (float alpha : {1.0f, 2.0f, 0.5f, 3.7f, -1.0f, -0.75f, -2.0f, 1e-30f, -1e-30f, 1e20f, 0.0f}) {
        SCOPED_TRACE("alpha " + std::to_string(alpha));
        std::vector<float> xs = {alpha, std::nextafter(alpha, inf), std::nextafter(alpha, -inf),
                                 std::nextafter(std::nextafter(alpha, inf), inf), 0.0f, -0.0f, 1.0f, -1.0f,
                                 3e38f, -3e38f, inf, -inf, 1e-40f, -1e-40f, 123.5f, -7.25f};
        const int n = static_cast<int>(xs.size());
        Tensor x("X", DType::FP32, {n});
        for (int i = 0; i < n; i++) {
            x.set(i, xs[i]);
        }
        const ParamMap params{{"N", std::to_string(n)}, {"alpha", float_text(alpha)}, {"dtype", "fp32"}};
        CompileRequest req;
        req.generator = "onnx_thresholdedrelu";
        req.params = params;
        req.arch = "ascend-like";
        req.schedule = auto_schedule_for(req.generator, params, "ascend-like").spec;
        req.check_cpu_schedule = false;
        req.given_inputs.push_back({x, "", -1});
        req.keep_outputs = true;
        RunReport rep = run(req, 1);
        for (const auto &d : rep.diagnostics) {
            ASSERT_NE(d.severity, Diagnostic::Error) << d.message;
        }
        ASSERT_TRUE(rep.verified) << rep.comparison;
        ASSERT_EQ(rep.outputs.size(), 1u);
        for (int i = 0; i < n; i++) {
            const float want = xs[i] > alpha ? xs[i] : 0.0f;
            EXPECT_EQ(float(rep.outputs[0].get(i)), want) << "x = " << xs[i];
        }
    }
}

TEST(OnnxOps, PoolingOnTheNpuMatchesHalidesCpuResult) {
    // ResNet's stem pool: 3x3, stride 2, padding 1 over 1x64x112x112 (0.177: each padded row's
    // first vector reads clamped indices and runs as scalar code).
    expect_vector_form_matches_cpu({"onnx_maxpool", {{"shape", "64x112x112"}, {"kernel", "3;3"}, {"strides", "2;2"},
                                                     {"pads", "1;1;1;1"}, {"out", "56x56"}, {"dtype", "fp32"}}},
                                   0.08);
    // VGG's 2x2 stride-2 pool of 1x64x56x56 (0.28); int8.
    expect_vector_form_matches_cpu({"onnx_maxpool", {{"shape", "64x56x56"}, {"kernel", "2;2"}, {"strides", "2;2"},
                                                     {"pads", "0;0;0;0"}, {"out", "28x28"}, {"dtype", "fp32"}}},
                                   0.14);
    expect_vector_form_matches_cpu({"onnx_maxpool", {{"shape", "64x56x56"}, {"kernel", "2;2"}, {"strides", "2;2"},
                                                     {"pads", "0;0;0;0"}, {"out", "28x28"}, {"dtype", "int8"}}},
                                   0.04);
    // Inception's 3x3 stride-1 average pool with the padding left out of the count (0.008:
    // the padding masks and the counts per position are 1-D Funcs of selects, scalar code).
    expect_vector_form_matches_cpu({"onnx_averagepool", {{"shape", "64x28x28"}, {"kernel", "3;3"}, {"strides", "1;1"},
                                                         {"pads", "1;1;1;1"}, {"out", "28x28"}, {"dtype", "fp32"}}},
                                   0.004);
    // ResNet's head: a global average pool of 1x512x7x7 (0.23); a global max pool of 1x256x14x14 (0.21).
    expect_vector_form_matches_cpu({"onnx_globalaveragepool", {{"shape", "512x49"}, {"dtype", "fp32"}}}, 0.11);
    expect_vector_form_matches_cpu({"onnx_globalmaxpool", {{"shape", "256x196"}, {"dtype", "fp32"}}}, 0.1);
}

TEST(OnnxOps, PadConcatGatherOnTheNpuMatchHalidesCpuResult) {
    // Two 1x64x28x56 activations along H (64 rows of 1568 + 1568 elements; 0.38).
    expect_vector_form_matches_cpu({"onnx_concat", {{"outer", "64"}, {"widths", "1568;1568"}, {"block", "1568"},
                                                    {"dtype", "fp32"}}},
                                   0.2);
    // A 1-pixel zero border around 1x64x56x56 (0.026: rows of 58 are vectorised by 2); edge padding.
    expect_vector_form_matches_cpu({"onnx_pad", {{"shape", "64x56x56"}, {"pads", "0;1;1;0;1;1"}, {"dtype", "fp32"}}},
                                   0.012);
    expect_vector_form_matches_cpu({"onnx_pad", {{"shape", "64x56x56"}, {"pads", "0;2;2;0;2;2"}, {"mode", "edge"},
                                                 {"dtype", "fp32"}}},
                                   0.014);
    // 8 of 32 rows of 256 from each of 16 tables (0.90).
    expect_vector_form_matches_cpu({"onnx_gather", {{"shape", "16x32x256"}, {"indices", "7;3;31;0;12;13;14;15"},
                                                    {"dtype", "fp32"}}},
                                   0.45);
}

TEST(OnnxOps, ResizeOnTheNpuMatchesHalidesCpuResult) {
    // An FPN's 2x nearest upsample of 1x128x14x14 (0.0081) and a bilinear 2x of 1x16x28x28
    // (0.0036): the innermost dimension is a table lookup per position, scalar code.
    expect_vector_form_matches_cpu({"onnx_resize", {{"shape", "1x128x14x14"}, {"out", "1x128x28x28"},
                                                    {"scales", "1;1;2;2"}, {"mode", "nearest"}, {"dtype", "fp32"}}},
                                   0.004);
    expect_vector_form_matches_cpu({"onnx_resize", {{"shape", "1x16x28x28"}, {"out", "1x16x56x56"},
                                                    {"mode", "linear"}, {"dtype", "fp32"}}},
                                   0.0018);
}

// ---- the mapping ----

FileTensor tensor(ElemType t, std::vector<int64_t> dims, std::vector<double> values = {}) {
    FileTensor f;
    f.type = t;
    f.dims = dims;
    const int64_t n = f.elements();
    f.data.assign(static_cast<size_t>(n * elem_bytes(t)), 0);
    for (size_t i = 0; i < values.size(); i++) {
        if (t == ElemType::Float32) {
            float v = static_cast<float>(values[i]);
            std::memcpy(f.data.data() + 4 * i, &v, 4);
        } else if (t == ElemType::Int64) {
            int64_t v = static_cast<int64_t>(values[i]);
            std::memcpy(f.data.data() + 8 * i, &v, 8);
        }
    }
    return f;
}

OnnxNode node(const std::string &op, size_t inputs, std::vector<OnnxAttribute> attrs = {}) {
    OnnxNode n;
    n.op_type = op;
    for (size_t k = 0; k < inputs; k++) {
        n.inputs.push_back("in" + std::to_string(k));
    }
    n.outputs = {"out"};
    n.attributes = attrs;
    return n;
}

OnnxAttribute float_attr(const std::string &name, double v) {
    OnnxAttribute a;
    a.name = name;
    a.kind = OnnxAttribute::Float;
    a.f = v;
    return a;
}

OnnxAttribute int_attr(const std::string &name, int64_t v) {
    OnnxAttribute a;
    a.name = name;
    a.kind = OnnxAttribute::Int;
    a.i = v;
    return a;
}

TEST(OnnxOps, UnaryTakesAttributesAndTheFlatBuffer) {
    FileTensor x = tensor(ElemType::Float32, {3, 4, 5});
    OnnxMapping m = map_onnx_node(node("LeakyRelu", 1, {float_attr("alpha", 0.25)}), 16, {&x});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_leakyrelu");
    EXPECT_EQ(m.params.at("alpha"), "0.25");
    EXPECT_EQ(m.params.at("N"), "60");
    EXPECT_EQ(m.inputs.at(0).dims, std::vector<int64_t>({60}));
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({3, 4, 5}));
    // Defaults are ONNX's.
    m = map_onnx_node(node("HardSigmoid", 1), 16, {&x});
    EXPECT_EQ(m.params.at("alpha"), "0.2");
    EXPECT_EQ(m.params.at("beta"), "0.5");
    // An attribute the operator does not have is a skip naming it.
    m = map_onnx_node(node("Relu", 1, {float_attr("alpha", 1)}), 16, {&x});
    EXPECT_EQ(m.skip, "attribute 'alpha' of Relu is not supported");
}

TEST(OnnxOps, ClipBoundsAreInputsFromOpset11) {
    FileTensor x = tensor(ElemType::Float32, {3}), lo = tensor(ElemType::Float32, {}, {-1.5}),
               hi = tensor(ElemType::Float32, {}, {2});
    OnnxNode n = node("Clip", 3);
    OnnxMapping m = map_onnx_node(n, 13, {&x, &lo, &hi});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("min"), "-1.5");
    EXPECT_EQ(m.params.at("max"), "2");
    n.inputs[1] = ""; // min omitted
    m = map_onnx_node(n, 13, {&x, nullptr, &hi});
    EXPECT_EQ(m.params.count("min"), 0u);
    EXPECT_EQ(m.params.at("max"), "2");
    // Opset 6: attributes.
    m = map_onnx_node(node("Clip", 1, {float_attr("min", -1), float_attr("max", 1)}), 6, {&x});
    EXPECT_EQ(m.params.at("min"), "-1");
}

TEST(OnnxOps, BroadcastingMergesDimensionsThatBroadcastAlike) {
    FileTensor a = tensor(ElemType::Float32, {3, 4, 5}), b = tensor(ElemType::Float32, {5});
    OnnxMapping m = map_onnx_node(node("Add", 2), 14, {&a, &b});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("shapes"), "12x5;1x5");
    EXPECT_EQ(m.outputs.at(0).dims, std::vector<int64_t>({12, 5}));
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({3, 4, 5}));
    // A per-channel operand of an NCHW tensor; a scalar.
    FileTensor x = tensor(ElemType::Float32, {1, 64, 56, 56}), c = tensor(ElemType::Float32, {64, 1, 1}),
               s = tensor(ElemType::Float32, {});
    EXPECT_EQ(map_onnx_node(node("Mul", 2), 14, {&x, &c}).params.at("shapes"), "64x3136;64x1");
    EXPECT_EQ(map_onnx_node(node("Pow", 2), 15, {&x, &s}).params.at("shapes"), "200704;1");
    // Both sides broadcast: 3x1 with 1x4.
    FileTensor p = tensor(ElemType::Float32, {3, 1}), q = tensor(ElemType::Float32, {1, 4});
    m = map_onnx_node(node("Sub", 2), 14, {&p, &q});
    EXPECT_EQ(m.params.at("shapes"), "3x1;1x4");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({3, 4}));
    // Shapes that do not broadcast, mixed types, a type Tessel lacks: skips with the reason.
    FileTensor bad = tensor(ElemType::Float32, {4});
    EXPECT_EQ(map_onnx_node(node("Add", 2), 14, {&a, &bad}).skip, "shapes do not broadcast: input 'in1' is 4");
    FileTensor i32 = tensor(ElemType::Int32, {5});
    EXPECT_EQ(map_onnx_node(node("Add", 2), 14, {&a, &i32}).skip,
              "Add of float32 and int32 inputs: mixed element types are not supported");
    FileTensor i64 = tensor(ElemType::Int64, {5});
    EXPECT_NE(map_onnx_node(node("Max", 2), 13, {&i64, &i64}).skip.find("element type int64"), std::string::npos);
    // Pow's integer exponent is converted to the float32 base's type when it is exact there.
    FileTensor e32 = tensor(ElemType::Float32, {3}), yi = tensor(ElemType::Int64, {3}, {2, -3, 4});
    m = map_onnx_node(node("Pow", 2), 15, {&e32, &yi});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    ASSERT_TRUE(m.inputs.at(1).converted.has_value());
    EXPECT_EQ(m.inputs.at(1).converted->type, ElemType::Float32);
    float third = 0;
    std::memcpy(&third, m.inputs.at(1).converted->data.data() + 4, 4);
    EXPECT_EQ(third, -3.0f);
    FileTensor huge = tensor(ElemType::Int64, {1}, {33554432});
    EXPECT_NE(map_onnx_node(node("Pow", 2), 15, {&e32, &huge}).skip.find("is not exact in float32"), std::string::npos);
    // PRelu's slope broadcasts to X only.
    EXPECT_NE(map_onnx_node(node("PRelu", 2), 16, {&b, &a}).skip.find("does not broadcast to X"), std::string::npos);
}

TEST(OnnxOps, ViewsAreShapeFunctionsAndACopy) {
    FileTensor x = tensor(ElemType::Float32, {2, 3, 4});
    auto shape_of = [&](const OnnxNode &n, int64_t opset, std::vector<const FileTensor *> in) {
        OnnxMapping m = map_onnx_node(n, opset, in);
        EXPECT_TRUE(m.skip.empty()) << m.skip;
        EXPECT_EQ(m.generator, m.skip.empty() ? "onnx_identity" : "");
        return m.skip.empty() ? m.outputs.at(0).onnx_dims : std::vector<int64_t>{};
    };
    FileTensor s1 = tensor(ElemType::Int64, {3}, {0, -1, 2});
    EXPECT_EQ(shape_of(node("Reshape", 2), 14, {&x, &s1}), std::vector<int64_t>({2, 6, 2}));
    FileTensor s2 = tensor(ElemType::Int64, {2}, {-1, 4});
    EXPECT_EQ(shape_of(node("Reshape", 2), 14, {&x, &s2}), std::vector<int64_t>({6, 4}));
    EXPECT_EQ(shape_of(node("Flatten", 1, {int_attr("axis", -1)}), 13, {&x}), std::vector<int64_t>({6, 4}));
    EXPECT_EQ(shape_of(node("Flatten", 1, {int_attr("axis", 0)}), 13, {&x}), std::vector<int64_t>({1, 24}));
    FileTensor y = tensor(ElemType::Float32, {1, 3, 1, 5}), ax = tensor(ElemType::Int64, {1}, {-2});
    EXPECT_EQ(shape_of(node("Squeeze", 2), 13, {&y, &ax}), std::vector<int64_t>({1, 3, 5}));
    EXPECT_EQ(shape_of(node("Squeeze", 1), 13, {&y}), std::vector<int64_t>({3, 5}));
    FileTensor ax2 = tensor(ElemType::Int64, {2}, {3, 0});
    EXPECT_EQ(shape_of(node("Unsqueeze", 2), 13, {&x, &ax2}), std::vector<int64_t>({1, 2, 3, 1, 4}));
    EXPECT_EQ(shape_of(node("Identity", 1), 16, {&x}), std::vector<int64_t>({2, 3, 4}));
    EXPECT_EQ(shape_of(node("Dropout", 1, {int_attr("seed", 0)}), 13, {&x}), std::vector<int64_t>({2, 3, 4}));
    // Training-mode Dropout with a ratio is random; its mask is bool.
    FileTensor r = tensor(ElemType::Float32, {}, {0.5}), t = tensor(ElemType::Bool, {});
    t.data = {1};
    EXPECT_NE(map_onnx_node(node("Dropout", 3), 13, {&x, &r, &t}).skip.find("training mode"), std::string::npos);
    OnnxNode masked = node("Dropout", 1);
    masked.outputs.push_back("mask");
    // Inference Dropout's mask keeps everything: all true, a constant of X's shape beside the copy.
    const OnnxMapping dm = map_onnx_node(masked, 13, {&x});
    EXPECT_EQ(dm.skip, "");
    EXPECT_EQ(dm.generator, "onnx_identity");
    ASSERT_EQ(dm.host_outputs.size(), 1u);
    EXPECT_EQ(dm.host_outputs[0].node_output, 1);
    EXPECT_EQ(dm.host_outputs[0].value.type, ElemType::Bool);
    EXPECT_EQ(dm.host_outputs[0].value.dims, std::vector<int64_t>({2, 3, 4}));
    EXPECT_EQ(dm.host_outputs[0].value.data, std::vector<uint8_t>(24, 1));
    // A squeezed dimension that is not 1.
    FileTensor ax0 = tensor(ElemType::Int64, {1}, {1});
    EXPECT_EQ(map_onnx_node(node("Squeeze", 2), 13, {&y, &ax0}).skip, "Squeeze: dimension 1 is 3, not 1");
}

TEST(OnnxOps, TransposeMergesDimensionsThatStayNeighbours) {
    auto ints = [](std::vector<int64_t> v) {
        OnnxAttribute a;
        a.name = "perm";
        a.kind = OnnxAttribute::Ints;
        a.ints = v;
        return a;
    };
    // NCHW -> NHWC of 1x64x56x56: the batch dropped, H and W merged: a 64x3136 matrix transposed.
    FileTensor x = tensor(ElemType::Float32, {1, 64, 56, 56});
    OnnxMapping m = map_onnx_node(node("Transpose", 1, {ints({0, 2, 3, 1})}), 13, {&x});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_transpose");
    EXPECT_EQ(m.params.at("shape"), "64x3136");
    EXPECT_EQ(m.params.at("perm"), "1;0");
    EXPECT_EQ(m.outputs.at(0).dims, std::vector<int64_t>({3136, 64}));
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 56, 56, 64}));
    // The default reverses; nothing merges in 2x3x4 reversed.
    FileTensor y = tensor(ElemType::Float32, {2, 3, 4});
    m = map_onnx_node(node("Transpose", 1), 13, {&y});
    EXPECT_EQ(m.params.at("perm"), "2;1;0");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({4, 3, 2}));
    // The identity permutation is one copy; a rotation is two groups.
    m = map_onnx_node(node("Transpose", 1, {ints({0, 1, 2})}), 13, {&y});
    EXPECT_EQ(m.params.at("shape"), "24");
    m = map_onnx_node(node("Transpose", 1, {ints({1, 2, 0})}), 13, {&y});
    EXPECT_EQ(m.params.at("shape"), "2x12");
    EXPECT_EQ(m.params.at("perm"), "1;0");
    EXPECT_EQ(map_onnx_node(node("Transpose", 1, {ints({0, 0, 1})}), 13, {&y}).skip, "Transpose: perm is not a permutation");
}

TEST(OnnxOps, SliceResolvesOnnxsStartsEndsAxesAndSteps) {
    FileTensor x = tensor(ElemType::Float32, {20, 10, 5});
    // test_slice_neg_steps: starts 20, 10, 4; ends 0, 0, 1; axes 0, 1, 2; steps -1, -3, -2.
    FileTensor st = tensor(ElemType::Int64, {3}, {20, 10, 4}), en = tensor(ElemType::Int64, {3}, {0, 0, 1}),
               ax = tensor(ElemType::Int64, {3}, {0, 1, 2}), sp = tensor(ElemType::Int64, {3}, {-1, -3, -2});
    OnnxMapping m = map_onnx_node(node("Slice", 5), 13, {&x, &st, &en, &ax, &sp});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_slice");
    EXPECT_EQ(m.params.at("starts"), "19;9;4");
    EXPECT_EQ(m.params.at("steps"), "-1;-3;-2");
    EXPECT_EQ(m.params.at("out"), "19x3x2");
    // A negative axis and an end past the dimension; the other axes whole.
    FileTensor st2 = tensor(ElemType::Int64, {1}, {1}), en2 = tensor(ElemType::Int64, {1}, {1000}),
               ax2 = tensor(ElemType::Int64, {1}, {-2});
    m = map_onnx_node(node("Slice", 4), 13, {&x, &st2, &en2, &ax2});
    EXPECT_EQ(m.params.at("starts"), "0;1;0");
    EXPECT_EQ(m.params.at("out"), "20x9x5");
    // An empty result is a constant of its shape, no kernel.
    FileTensor st3 = tensor(ElemType::Int64, {1}, {1000});
    m = map_onnx_node(node("Slice", 4), 13, {&x, &st3, &en2, &ax2});
    EXPECT_EQ(m.skip, "");
    EXPECT_EQ(m.generator, "");
    ASSERT_EQ(m.host_outputs.size(), 1u);
    EXPECT_EQ(m.host_outputs[0].value.dims, std::vector<int64_t>({20, 0, 5}));
    EXPECT_TRUE(m.host_outputs[0].value.data.empty());
}

TEST(OnnxOps, ReductionsMergeReducedAndKeptDimensions) {
    auto ints = [](const std::string &name, std::vector<int64_t> v) {
        OnnxAttribute a;
        a.name = name;
        a.kind = OnnxAttribute::Ints;
        a.ints = v;
        return a;
    };
    // ReduceMean of NCHW over H, W: 64 x 3136 with axis 1 reduced; keepdims gives 1x64x1x1.
    FileTensor x = tensor(ElemType::Float32, {1, 64, 56, 56});
    OnnxMapping m = map_onnx_node(node("ReduceMean", 1, {ints("axes", {2, 3})}), 13, {&x});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_reduce_mean");
    EXPECT_EQ(m.params.at("shape"), "64x3136");
    EXPECT_EQ(m.params.at("axes"), "1");
    EXPECT_EQ(m.outputs.at(0).dims,
              std::vector<int64_t>({64, 1})); // the view's rank, reduced dimensions 1
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 64, 1, 1}));
    // Negative axes, keepdims 0.
    FileTensor y = tensor(ElemType::Float32, {3, 2, 2});
    m = map_onnx_node(node("ReduceMax", 1, {ints("axes", {-2}), int_attr("keepdims", 0)}), 13,
                      {&y});
    EXPECT_EQ(m.params.at("shape"), "3x2x2");
    EXPECT_EQ(m.params.at("axes"), "1");
    EXPECT_EQ(m.outputs.at(0).dims, std::vector<int64_t>({3, 1, 2}));
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({3, 2}));
    // No axes: every one; the output is one element.
    m = map_onnx_node(node("ReduceMin", 1), 13, {&y});
    EXPECT_EQ(m.params.at("shape"), "12");
    EXPECT_EQ(m.outputs.at(0).dims, std::vector<int64_t>({1}));
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 1, 1}));
    // ReduceSum's axes are input 1 from opset 13; empty with noop_with_empty_axes is a copy.
    FileTensor ax = tensor(ElemType::Int64, {2}, {0, 2}), none = tensor(ElemType::Int64, {0});
    m = map_onnx_node(node("ReduceSum", 2), 13, {&y, &ax});
    EXPECT_EQ(m.params.at("axes"), "0;2");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 2, 1}));
    m = map_onnx_node(node("ReduceSum", 2), 13, {&y, &none});
    EXPECT_EQ(m.params.at("shape"), "12");
    m = map_onnx_node(node("ReduceSum", 2, {int_attr("noop_with_empty_axes", 1)}), 13, {&y, &none});
    EXPECT_EQ(m.generator, "onnx_identity");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({3, 2, 2}));
    // Skips name what is wrong.
    EXPECT_EQ(map_onnx_node(node("ReduceMean", 1, {ints("axes", {1, -2})}), 13, {&y}).skip,
              "ReduceMean: axis 1 given twice");
    EXPECT_EQ(map_onnx_node(node("ReduceMean", 1, {ints("axes", {3})}), 13, {&y}).skip,
              "ReduceMean: axis 3 is outside [-3, 2]");
    FileTensor i = tensor(ElemType::Int32, {3, 2, 2});
    EXPECT_EQ(map_onnx_node(node("ReduceMean", 1), 13, {&i}).skip,
              "ReduceMean of int32: supported for float types only");
    EXPECT_EQ(map_onnx_node(node("ReduceMax", 1), 13, {&i}).generator, "onnx_reduce_max");
}

TEST(OnnxOps, SoftmaxAlongAnAxisAndCoercedBeforeOpset13) {
    FileTensor x = tensor(ElemType::Float32, {3, 4, 5});
    // Opset 13: along the axis, the dimensions before and after it merged.
    OnnxMapping m = map_onnx_node(node("Softmax", 1, {int_attr("axis", 1)}), 13, {&x});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_softmax");
    EXPECT_EQ(m.params.at("shape"), "3x4x5");
    EXPECT_EQ(map_onnx_node(node("LogSoftmax", 1), 13, {&x}).params.at("shape"), "12x5");
    EXPECT_EQ(map_onnx_node(node("Softmax", 1, {int_attr("axis", 0)}), 13, {&x}).params.at("shape"),
              "1x3x20");
    // Opsets 11-12: coerced to 2-D at the axis (default 1).
    EXPECT_EQ(map_onnx_node(node("Softmax", 1), 11, {&x}).params.at("shape"), "3x20");
    EXPECT_EQ(
        map_onnx_node(node("LogSoftmax", 1, {int_attr("axis", 2)}), 12, {&x}).params.at("shape"),
        "12x5");
    FileTensor i = tensor(ElemType::Int8, {3});
    EXPECT_EQ(map_onnx_node(node("Softmax", 1), 13, {&i}).skip,
              "Softmax of int8: supported for float types only");
}

TEST(OnnxOps, LayerNormHasAKernelPerOutput) {
    FileTensor x = tensor(ElemType::Float32, {2, 3, 4, 5}), w = tensor(ElemType::Float32, {4, 5}),
               b = tensor(ElemType::Float32, {4, 5});
    OnnxNode n = node("LayerNormalization", 3, {int_attr("axis", -2), float_attr("epsilon", 0.1f)});
    n.outputs = {"Y", "Mean", "InvStdDev"};
    OnnxMapping m = map_onnx_node(n, 17, {&x, &w, &b});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_layernorm");
    EXPECT_EQ(m.params.at("shape"), "6x20");
    EXPECT_EQ(m.params.at("epsilon"), "0.100000001");
    EXPECT_EQ(m.params.at("bias"), "true");
    EXPECT_EQ(m.inputs.size(), 3u);
    ASSERT_EQ(m.more.size(), 2u);
    EXPECT_EQ(m.more[0].params.at("output"), "Mean");
    EXPECT_EQ(m.more[0].inputs.size(), 1u);
    EXPECT_EQ(m.more[0].outputs.at(0).node_output, 1);
    EXPECT_EQ(m.more[0].outputs.at(0).dims, std::vector<int64_t>({6, 1}));
    EXPECT_EQ(m.more[1].outputs.at(0).onnx_dims, std::vector<int64_t>({2, 3, 1, 1}));
    // B omitted, Y only; the default axis is -1, whose normalised dimensions are 5, not w's 4x5.
    OnnxNode y = node("LayerNormalization", 2);
    m = map_onnx_node(y, 17, {&x, &w});
    EXPECT_EQ(m.skip, "LayerNormalization: input 'in1' is 4x5, not the normalised dimensions 5 "
                      "(broadcasting is not "
                      "supported)");
    FileTensor w5 = tensor(ElemType::Float32, {5});
    m = map_onnx_node(y, 17, {&x, &w5});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("shape"), "24x5");
    EXPECT_EQ(m.params.at("bias"), "false");
    EXPECT_TRUE(m.more.empty());
    EXPECT_EQ(
        map_onnx_node(node("LayerNormalization", 2, {int_attr("stash_type", 0)}), 17, {&x, &w5})
            .skip,
        "LayerNormalization: stash_type 0 is not supported (the statistics are computed in "
        "float32, stash_type 1)");
}

TEST(OnnxOps, UnknownOperatorsAreNamed) {
    FileTensor x = tensor(ElemType::Float32, {3});
    EXPECT_EQ(map_onnx_node(node("NonMaxSuppression", 2), 11, {&x, &x}).skip,
              "operator NonMaxSuppression is not supported yet");
    OnnxNode ms = node("Relu", 1);
    ms.domain = "com.microsoft";
    EXPECT_EQ(map_onnx_node(ms, 11, {&x}).skip,
              "operator com.microsoft.Relu (domain 'com.microsoft') is not supported");
}

OnnxAttribute ints_attr(const std::string &name, std::vector<int64_t> v) {
    OnnxAttribute a;
    a.name = name;
    a.kind = OnnxAttribute::Ints;
    a.ints = v;
    return a;
}

OnnxAttribute string_attr(const std::string &name, const std::string &v) {
    OnnxAttribute a;
    a.name = name;
    a.kind = OnnxAttribute::String;
    a.s = v;
    return a;
}

// ---- the window and data-movement families' mapping ----

TEST(OnnxOps, PoolingResolvesAutoPadAndCeilMode) {
    FileTensor x = tensor(ElemType::Float32, {1, 3, 32, 32});
    // test_maxpool_2d_same_upper: kernel 2, stride 1 -> the one padded row and column at the end.
    OnnxMapping m = map_onnx_node(
        node("MaxPool", 1,
             {ints_attr("kernel_shape", {2, 2}), string_attr("auto_pad", "SAME_UPPER")}),
        12, {&x});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_maxpool");
    EXPECT_EQ(m.params.at("shape"), "3x32x32");
    EXPECT_EQ(m.params.at("pads"), "0;0;1;1");
    EXPECT_EQ(m.params.at("out"), "32x32");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 3, 32, 32}));
    // SAME_LOWER puts it at the beginning.
    m = map_onnx_node(
        node("MaxPool", 1,
             {ints_attr("kernel_shape", {2, 2}), string_attr("auto_pad", "SAME_LOWER")}),
        12, {&x});
    EXPECT_EQ(m.params.at("pads"), "1;1;0;0");
    // ceil_mode: 4x4, kernel 3, stride 2 -> 2x2 (the last window hangs over the end).
    FileTensor y = tensor(ElemType::Float32, {1, 1, 4, 4});
    m = map_onnx_node(node("AveragePool", 1,
                           {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {2, 2}),
                            int_attr("ceil_mode", 1)}),
                      12, {&y});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("out"), "2x2");
    EXPECT_EQ(m.params.at("count_include_pad"), "0");
    m = map_onnx_node(
        node("AveragePool", 1, {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {2, 2})}),
        12, {&y});
    EXPECT_EQ(m.params.at("out"), "1x1");
    // 1-D and 3-D windows; explicit pads and dilations.
    FileTensor x1 = tensor(ElemType::Float32, {1, 3, 32}),
               x3 = tensor(ElemType::Float32, {1, 3, 8, 8, 8});
    EXPECT_EQ(map_onnx_node(node("MaxPool", 1, {ints_attr("kernel_shape", {2})}), 12, {&x1})
                  .params.at("out"),
              "31");
    EXPECT_EQ(map_onnx_node(node("MaxPool", 1, {ints_attr("kernel_shape", {2, 2, 2})}), 12, {&x3})
                  .params.at("out"),
              "7x7x7");
    m = map_onnx_node(
        node("MaxPool", 1, {ints_attr("kernel_shape", {2, 2}), ints_attr("dilations", {2, 2})}),
        12, {&y});
    EXPECT_EQ(m.params.at("dilations"), "2;2");
    EXPECT_EQ(m.params.at("out"), "2x2");
    m = map_onnx_node(node("MaxPool", 1,
                           {ints_attr("kernel_shape", {2, 2}), ints_attr("dilations", {2, 2}),
                            ints_attr("pads", {1, 0, 1, 0})}),
                      12, {&y});
    EXPECT_EQ(m.skip,
              "MaxPool: dilations with windows reaching outside the input are not supported");
    // The Indices output is a skip that names it; a global pool is one row per image.
    OnnxNode arg = node("MaxPool", 1, {ints_attr("kernel_shape", {2, 2})});
    arg.outputs.push_back("indices");
    EXPECT_EQ(map_onnx_node(arg, 12, {&y}).skip,
              "MaxPool's Indices output (int64 flat indices) is not supported");
    FileTensor g = tensor(ElemType::Float32, {2, 512, 7, 7});
    m = map_onnx_node(node("GlobalAveragePool", 1), 12, {&g});
    EXPECT_EQ(m.params.at("shape"), "1024x49");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({2, 512, 1, 1}));
    FileTensor i8 = tensor(ElemType::Int8, {1, 1, 4, 4});
    EXPECT_NE(map_onnx_node(node("AveragePool", 1, {ints_attr("kernel_shape", {2, 2})}), 12, {&i8})
                  .skip.find("AveragePool of int8"),
              std::string::npos);
}

TEST(OnnxOps, PadConcatGatherReadTheirParameterInputs) {
    // test_constant_pad: 1x3x4x5, pads 0 0 1 3 / 0 0 2 4, value 1.2: the unpadded N and C merged.
    FileTensor x = tensor(ElemType::Float32, {1, 3, 4, 5}),
               pads = tensor(ElemType::Int64, {8}, {0, 0, 1, 3, 0, 0, 2, 4}),
               v = tensor(ElemType::Float32, {}, {1.5});
    OnnxMapping m =
        map_onnx_node(node("Pad", 3, {string_attr("mode", "constant")}), 11, {&x, &pads, &v});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_pad");
    EXPECT_EQ(m.params.at("shape"), "3x4x5");
    EXPECT_EQ(m.params.at("pads"), "0;1;3;0;2;4");
    EXPECT_EQ(m.params.at("value"), "1.5");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 3, 7, 12}));
    FileTensor big = tensor(ElemType::Int64, {8}, {0, 0, 4, 0, 0, 0, 0, 0});
    EXPECT_NE(map_onnx_node(node("Pad", 2, {string_attr("mode", "reflect")}), 11, {&x, &big})
                  .skip.find("reflect pads of dimension 2"),
              std::string::npos);
    // Concat along a negative axis: rows of the dimensions before it, blocks dividing every width.
    FileTensor a = tensor(ElemType::Float32, {2, 3, 4}), b = tensor(ElemType::Float32, {2, 5, 4});
    m = map_onnx_node(node("Concat", 2, {int_attr("axis", -2)}), 13, {&a, &b});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("outer"), "2");
    EXPECT_EQ(m.params.at("widths"), "12;20");
    EXPECT_EQ(m.params.at("block"), "4");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({2, 8, 4}));
    EXPECT_EQ(m.inputs.at(1).dims, std::vector<int64_t>({2, 5, 4}));
    EXPECT_NE(map_onnx_node(node("Concat", 2, {int_attr("axis", 2)}), 13, {&a, &b})
                  .skip.find("differ off the axis"),
              std::string::npos);
    // Gather: negative indices wrap; the indices' shape replaces the axis.
    FileTensor d = tensor(ElemType::Float32, {10, 3}),
               ind = tensor(ElemType::Int64, {1, 3}, {0, -9, -10});
    m = map_onnx_node(node("Gather", 2, {int_attr("axis", 0)}), 13, {&d, &ind});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("indices"), "0;1;0");
    EXPECT_EQ(m.params.at("shape"), "1x10x3");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 3, 3}));
    FileTensor bad = tensor(ElemType::Int64, {1}, {10});
    EXPECT_EQ(map_onnx_node(node("Gather", 2), 13, {&d, &bad}).skip,
              "Gather: index 10 is outside [-10, 9]");
}

TEST(OnnxOps, ResizeReadsScalesSizesAndRoi) {
    FileTensor x = tensor(ElemType::Float32, {1, 1, 4, 4});
    // Scales: the output is floor(scale * extent) (0.6 * 4 = 2.4 -> 2); no roi, the scales given.
    FileTensor sc = tensor(ElemType::Float32, {4}, {1, 1, 0.6, 0.6});
    OnnxNode n = node("Resize", 3, {string_attr("mode", "linear")});
    n.inputs[1] = "";
    OnnxMapping m = map_onnx_node(n, 13, {&x, nullptr, &sc});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_resize");
    EXPECT_EQ(m.params.at("out"), "1x1x2x2");
    EXPECT_EQ(m.params.at("scales"), "1;1;0.600000024;0.600000024");
    EXPECT_EQ(m.params.at("coordinate_transformation_mode"), "half_pixel");
    // Sizes instead (scales then out / extent, computed by the generator); tf_crop_and_resize's roi.
    FileTensor sz = tensor(ElemType::Int64, {4}, {1, 1, 3, 3}),
               roi = tensor(ElemType::Float32, {8}, {0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8});
    OnnxNode t = node("Resize", 4, {string_attr("coordinate_transformation_mode", "tf_crop_and_resize"),
                                    string_attr("mode", "linear")});
    t.inputs[2] = "";
    m = map_onnx_node(t, 13, {&x, &roi, nullptr, &sz});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("out"), "1x1x3x3");
    EXPECT_EQ(m.params.count("scales"), 0u);
    EXPECT_EQ(m.params.at("roi"), "0;0;0.400000006;0.600000024;1;1;0.600000024;0.800000012");
    // Upsample (opset 9) is asymmetric coordinates with floor rounding; neither scales nor sizes
    // is a skip.
    FileTensor up = tensor(ElemType::Float32, {4}, {1, 1, 2, 3});
    m = map_onnx_node(node("Upsample", 2), 9, {&x, &up});
    EXPECT_EQ(m.params.at("out"), "1x1x8x12");
    EXPECT_EQ(m.params.at("coordinate_transformation_mode"), "asymmetric");
    EXPECT_EQ(m.params.at("nearest_mode"), "floor");
    n.inputs[2] = "";
    EXPECT_EQ(map_onnx_node(n, 13, {&x, nullptr, nullptr}).skip, "Resize: neither scales nor sizes is given");
}

// ---- matrix products, convolutions, BatchNormalization (graph/OnnxOpsMatrix.cpp) ----

TEST(OnnxOps, MatrixProductsOnTheNpuMatchHalidesCpuResult) {
    // fp32 MatMul on ascend-like's matrix unit (16x8x16 fp32 fractals), and a batch of 12
    // attention heads (Q K^T of 128x64 by 64x128): the batch is a loop outside the tiles.
    expect_npu_matches_cpu({"onnx_matmul", {{"M", "256"}, {"N", "256"}, {"K", "256"}}},
                           "ascend-like", "matrix");
    expect_npu_matches_cpu({"onnx_matmul",
                            {{"M", "128"},
                             {"N", "128"},
                             {"K", "64"},
                             {"batch", "12"},
                             {"a_batch", "12"},
                             {"b_batch", "12"}}},
                           "ascend-like", "matrix");
    // BatchNormalization of a 1x64x56x56 activation, per channel.
    expect_npu_matches_cpu({"onnx_batchnorm", {{"N", "1"}, {"C", "64"}, {"S", "3136"}}},
                           "ascend-like");
}

TEST(OnnxOps, ConvolutionsVerifyOnTheNpu) {
    // Correctness of the padded, strided, grouped and transposed forms on the NPU against
    // Halide's CPU result; their speed is docs/onnx.md's "Not done yet" (the vector form).
    for (const ParamMap &p : std::vector<ParamMap>{
             {{"x", "1x8x12x12"}, {"w", "8x8x3x3"}, {"pads", "1;1;1;1"}, {"bias", "true"}},
             {{"x", "1x8x13x11"},
              {"w", "8x4x3x3"},
              {"group", "2"},
              {"strides", "2;2"},
              {"pads", "1;0;1;0"}},
             {{"x", "1x4x16"},
              {"w", "4x4x3"},
              {"strides", "1"},
              {"dilations", "2"},
              {"pads", "2;2"}}}) {
        CompileRequest req;
        req.generator = "onnx_conv";
        req.params = p;
        req.schedule = auto_schedule_for("onnx_conv", p, "ascend-like").spec;
        req.check_cpu_schedule = false;
        RunReport rep = run(req, 3);
        EXPECT_TRUE(rep.verified) << format_params(p) << ": " << rep.comparison;
    }
    // The columns of a convolution (the model compiler's Conv = onnx_im2col + onnx_matmul):
    // padded and strided, in the vector form.
    expect_npu_matches_cpu({"onnx_im2col", {{"x", "1x16x58x58"}, {"pads", "0;0;0;0"}}}, "ascend-like");
    for (const ParamMap &p : std::vector<ParamMap>{{{"x", "1x4x16x16"}, {"pads", "1;1;1;1"}},
                                                   {{"x", "1x4x17x15"}, {"strides", "2;2"}, {"pads", "1;0;1;0"}}}) {
        CompileRequest req;
        req.generator = "onnx_im2col";
        req.params = p;
        req.schedule = auto_schedule_for("onnx_im2col", p, "ascend-like").spec;
        req.check_cpu_schedule = false;
        RunReport rep = run(req, 3);
        EXPECT_TRUE(rep.verified) << format_params(p) << ": " << rep.comparison;
    }
    CompileRequest req;
    req.generator = "onnx_convtranspose";
    req.params = {{"x", "1x4x5x5"}, {"w", "4x3x3x3"},     {"strides", "2;2"},
                  {"pads", "1;1"},  {"out", "1x3x10x10"}, {"bias", "true"}};
    for (const char *arch : {"ascend-like", "auto-int8"}) {
        req.schedule = auto_schedule_for("onnx_convtranspose", req.params, arch).spec;
        req.arch = arch;
        RunReport rep = run(req, 3);
        EXPECT_TRUE(rep.verified) << arch << ": " << rep.comparison;
    }
}

TEST(OnnxOps, SplitGivesEachOutputItsOwnBandLoop) {
    // A multi-output pipeline: each piece of 1x64x56x56 split along the channels is its own
    // output with its own band loop (auto's vector form per output); X, read by both, is not
    // staged (Halide's wrapper would live in one output's loop).
    expect_npu_matches_cpu({"onnx_split", {{"shape", "1x64x3136"}, {"sizes", "16;48"}}}, "ascend-like");
    AutoSchedule as = auto_schedule_for("onnx_split", {{"shape", "1x64x3136"}, {"sizes", "16;48"}}, "ascend-like");
    std::string notes;
    for (const auto &n : as.notes) {
        notes += n + "\n";
    }
    EXPECT_NE(notes.find("bands of 4 steps of Y0.a"), std::string::npos) << notes;
    EXPECT_NE(notes.find("of Y1.a (of 48)"), std::string::npos) << notes;
    EXPECT_NE(notes.find("input X is read by 2 outputs' band loops: not staged"), std::string::npos) << notes;
    // The mapping: equal parts by default, the split input from opset 13, a bad split named.
    FileTensor x = tensor(ElemType::Float32, {2, 6, 3}), sp = tensor(ElemType::Int64, {2}, {2, 4});
    OnnxNode n = node("Split", 2, {int_attr("axis", 1)});
    n.outputs = {"a", "b"};
    OnnxMapping m = map_onnx_node(n, 13, {&x, &sp});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("shape"), "2x6x3");
    EXPECT_EQ(m.params.at("sizes"), "2;4");
    ASSERT_EQ(m.outputs.size(), 2u);
    EXPECT_EQ(m.outputs[1].onnx_dims, std::vector<int64_t>({2, 4, 3}));
    n = node("Split", 1, {int_attr("axis", 1)});
    n.outputs = {"a", "b", "c", "d"};
    EXPECT_NE(map_onnx_node(n, 11, {&x}).skip.find("Split of 6 into 4 equal parts"), std::string::npos);
}

TEST(OnnxOps, MatMulFollowsNumpysBroadcastingAndOneDimensionalOperands) {
    // 2x1x3x4 @ 5x4x6: batch 2x5 (A broadcast along 5, B along 2), then 3x4 @ 4x6.
    FileTensor a = tensor(ElemType::Float32, {2, 1, 3, 4}),
               b = tensor(ElemType::Float32, {5, 4, 6});
    OnnxMapping m = map_onnx_node(node("MatMul", 2), 13, {&a, &b});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.generator, "onnx_matmul");
    EXPECT_EQ(m.params.at("batch"), "2x5");
    EXPECT_EQ(m.params.at("a_batch"), "2x1");
    EXPECT_EQ(m.params.at("b_batch"), "1x5");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({2, 5, 3, 6}));
    // A 1-D A is one row, dropped from the result; batch dimensions broadcast alike merge.
    FileTensor v = tensor(ElemType::Float32, {4}), c = tensor(ElemType::Float32, {2, 3, 4, 6});
    m = map_onnx_node(node("MatMul", 2), 13, {&v, &c});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("batch"), "6");
    EXPECT_EQ(m.params.at("M"), "1");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({2, 3, 6}));
    FileTensor bad = tensor(ElemType::Float32, {5, 6});
    EXPECT_NE(map_onnx_node(node("MatMul", 2), 13, {&a, &bad})
                  .skip.find("the inner dimensions 4 and 5 differ"),
              std::string::npos);
}

TEST(OnnxOps, GemmTakesAlphaBetaTransposesAndABroadcastC) {
    FileTensor a = tensor(ElemType::Float32, {4, 3}), b = tensor(ElemType::Float32, {5, 4}),
               c = tensor(ElemType::Float32, {5});
    OnnxMapping m = map_onnx_node(node("Gemm", 3,
                                       {int_attr("transA", 1), int_attr("transB", 1),
                                        float_attr("alpha", 0.25), float_attr("beta", 0.5)}),
                                  13, {&a, &b, &c});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("M"), "3");
    EXPECT_EQ(m.params.at("N"), "5");
    EXPECT_EQ(m.params.at("K"), "4");
    EXPECT_EQ(m.params.at("transA"), "true");
    EXPECT_EQ(m.params.at("c"), "1x5");
    EXPECT_EQ(m.params.at("alpha"), "0.25");
    FileTensor wrong = tensor(ElemType::Float32, {3, 2});
    EXPECT_NE(
        map_onnx_node(node("Gemm", 3), 13, {&a, &b, &wrong}).skip.find("inner dimensions differ"),
        std::string::npos);
}

TEST(OnnxOps, ConvResolvesAutoPadAndConvTransposeItsOutputShape) {
    // SAME_UPPER on a 5x5 input, stride 2, 3x3 kernel: output 3x3, one pad on each side.
    FileTensor x = tensor(ElemType::Float32, {1, 1, 5, 5}),
               w = tensor(ElemType::Float32, {1, 1, 3, 3});
    OnnxMapping m = map_onnx_node(
        node("Conv", 2, {string_attr("auto_pad", "SAME_UPPER"), ints_attr("strides", {2, 2})}), 11,
        {&x, &w});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("pads"), "1;1;1;1");
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 1, 3, 3}));
    // Asymmetric pads and strides: 7x5 padded to 9x5, stride 2: 4x2.
    FileTensor x2 = tensor(ElemType::Float32, {1, 1, 7, 5});
    m = map_onnx_node(
        node("Conv", 2, {ints_attr("pads", {1, 0, 1, 0}), ints_attr("strides", {2, 2})}), 11,
        {&x2, &w});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.outputs.at(0).onnx_dims, std::vector<int64_t>({1, 1, 4, 2}));
    // ConvTranspose with output_padding: 3x3 by 3x3, strides 3x2: full 10x8 (9+1, 7+1).
    FileTensor xt = tensor(ElemType::Float32, {1, 1, 3, 3}),
               wt = tensor(ElemType::Float32, {1, 2, 3, 3});
    m = map_onnx_node(node("ConvTranspose", 2,
                           {ints_attr("strides", {3, 2}), ints_attr("output_padding", {1, 1})}),
                      11, {&xt, &wt});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("out"), "1x2x10x8");
    EXPECT_EQ(m.params.at("pads"), "0;0");
    // BatchNormalization in training mode: Y from the batch's statistics, and a kernel for each
    // running statistic.
    FileTensor bx = tensor(ElemType::Float32, {2, 3, 4}), p = tensor(ElemType::Float32, {3});
    OnnxNode bn = node("BatchNormalization", 5, {int_attr("training_mode", 1)});
    bn.outputs = {"y", "running_mean", "running_var"};
    m = map_onnx_node(bn, 15, {&bx, &p, &p, &p, &p});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("training"), "true");
    ASSERT_EQ(m.more.size(), 2u);
    EXPECT_EQ(m.more[1].params.at("output"), "running_var");
    EXPECT_EQ(m.more[1].outputs.at(0).node_output, 2);
    m = map_onnx_node(node("BatchNormalization", 5), 15, {&bx, &p, &p, &p, &p});
    ASSERT_TRUE(m.skip.empty()) << m.skip;
    EXPECT_EQ(m.params.at("S"), "4");
}

} // namespace
