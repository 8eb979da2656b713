// More pipelines on the NPU (issue 10's operator suite, first part): the 3x3
// blur as a classic two-stage Halide pipeline (fused by compute_at), max and
// average pooling, LayerNorm. Each runs unscheduled (the scalar fallback) and
// with a staged + vectorised schedule, and equals Halide's CPU result on fresh
// random inputs: exactly for uint8/int8; LayerNorm fp32 within 1e-5 relative,
// fp16 within one fp16 ulp at 1 (1e-3), since the CPU and NPU may round the
// fp32 statistics' reciprocal square root differently.
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {


int vector_ops(const NpuRun &r) {
    int n = 0;
    for (const auto &i : r.backend.program.code) {
        n += i.op >= isa::Op::VADD && i.op <= isa::Op::VREQUANT;
    }
    return n;
}

} // namespace

TEST(Blur, DefaultScheduleUint8) {
    NpuRun r = run_npu("blur", {{"W", "16"}, {"H", "8"}, {"dtype", "uint8"}}, Schedule().spec(), "ascend-like",
                       fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

TEST(Blur, FusedStagedVectorisedFp32) {
    // Tiles of 8 rows: the input band staged into UB, blur_x computed per tile
    // (fused into the consumer: the classic Halide schedule), both vectorised.
    Schedule s;
    s.func("out").split("y", "yo", "yi", 8);
    s.stage("in", "UB").at("out", "yo").buffers(2);
    s.func("blur_y").compute_at("out", "yo").vectorize("x", 16);
    s.func("blur_x").compute_at("out", "yo").vectorize("x", 16);
    s.func("out").vectorize("x", 16);
    NpuRun r = run_npu("blur", {{"W", "32"}, {"H", "16"}, {"dtype", "fp32"}}, s.spec(), "ascend-like", fresh_seed(),
                       1e-6, 1e-6);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GT(vector_ops(r), 0) << failure(r);
}

TEST(Pooling, MaxAndAverageDefaultSchedule) {
    for (const char *op : {"max", "avg"}) {
        NpuRun r = run_npu("pooling", {{"H", "4"}, {"W", "4"}, {"C", "16"}, {"op", op}, {"dtype", "int8"}},
                           Schedule().spec(), "ascend-like", fresh_seed());
        EXPECT_EQ(r.cmp.mismatches, 0) << op << " " << failure(r);
    }
}

TEST(Pooling, MaxStagedVectorised) {
    Schedule s;
    s.func("out").split("y", "yo", "yi", 2);
    s.stage("in", "UB").at("out", "yo").buffers(2);
    s.func("pool").compute_at("out", "yo").vectorize("c", 32);
    s.func("pool").update(0).vectorize("c", 32);
    NpuRun r = run_npu("pooling", {{"H", "4"}, {"W", "4"}, {"C", "32"}, {"op", "max"}, {"dtype", "int8"}}, s.spec(),
                       "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GT(vector_ops(r), 0) << failure(r);
}

TEST(LayerNorm, StatisticsAtRoot) {
    for (const char *dt : {"fp32", "fp16"}) {
        Schedule s;
        s.func("mean").compute_root();
        s.func("var").compute_root();
        bool fp16 = std::string(dt) == "fp16";
        NpuRun r = run_npu("layernorm", {{"ROWS", "4"}, {"COLS", "32"}, {"dtype", dt}}, s.spec(), "ascend-like",
                           fresh_seed(), fp16 ? 1e-3 : 1e-5, fp16 ? 1e-3 : 1e-5);
        EXPECT_EQ(r.cmp.mismatches, 0) << dt << " " << failure(r);
    }
}

// The int8 GEMM with its requantising epilogue: the product on the matrix unit
// (accumulators in L0C, double-buffered operands), the epilogue (bias, per-channel
// scale, rounding shift, saturation) fused into each output tile. Bit-exact.
TEST(GemmQ8, TensorizedWithFusedEpilogue) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", 32, 32);
    s.func("acc").compute_at("C", "jo");
    s.func("acc").update(0).split("k", "ko", "ki", 32);
    s.func("acc").update(0).reorder({"j", "i", "ki", "ko"});
    s.stage("A", "L1").at("acc", "ko").buffers(2);
    s.stage("B", "L1").at("acc", "ko").buffers(2);
    s.stage("A", "L0A").at("acc", "ko").buffers(2);
    s.stage("B", "L0B").at("acc", "ko").buffers(2);
    s.func("acc").accumulate_in("L0C");
    s.func("acc").update(0).tensorize();
    for (const char *shift : {"8", "14"}) {
        NpuRun r = run_npu("gemm_q8", {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"shift", shift}}, s.spec(), "ascend-like",
                           fresh_seed());
        EXPECT_EQ(r.cmp.mismatches, 0) << "shift " << shift << " " << failure(r);
        int mmad = 0;
        for (const auto &i : r.backend.program.code) {
            mmad += i.op == isa::Op::MMAD;
        }
        EXPECT_GT(mmad, 0);
    }
}

TEST(GemmQ8, DefaultScheduleOnEveryPreset) {
    for (const char *arch : {"ascend-like", "gemmini-like", "auto-int8"}) {
        NpuRun r = run_npu("gemm_q8", {{"M", "8"}, {"N", "16"}, {"K", "16"}, {"shift", "6"}}, Schedule().spec(), arch,
                           fresh_seed());
        EXPECT_EQ(r.cmp.mismatches, 0) << arch << " " << failure(r);
    }
}

// Depthwise 3x3: unscheduled (scalar fallback) and with bands of output rows
// staged into the vector level, the per-channel multiply-accumulate vectorised
// across channels; stride 1 and 2, int8 exact and fp32 within 1e-5.
TEST(Depthwise, DefaultAndStagedVectorised) {
    Schedule s;
    s.func("out").split("y", "yo", "yi", 2);
    s.func("acc").compute_at("out", "yo");
    s.stage("in", "UB").at("out", "yo").buffers(2);
    s.stage("w", "UB").at("out", "yo");
    s.func("acc").vectorize("c", 16);
    s.func("acc").update(0).vectorize("c", 16);
    for (const char *dt : {"int8", "fp32"}) {
        for (const char *st : {"1", "2"}) {
            ParamMap p = {{"H", "4"}, {"W", "4"}, {"C", "32"}, {"stride", st}, {"dtype", dt}};
            double tol = std::string(dt) == "fp32" ? 1e-5 : 0;
            NpuRun plain = run_npu("depthwise", p, Schedule().spec(), "ascend-like", fresh_seed(), tol, tol);
            EXPECT_EQ(plain.cmp.mismatches, 0) << dt << " stride " << st << " " << failure(plain);
            NpuRun staged = run_npu("depthwise", p, s.spec(), "ascend-like", fresh_seed(), tol, tol);
            EXPECT_EQ(staged.cmp.mismatches, 0) << dt << " stride " << st << " " << failure(staged);
            EXPECT_GT(vector_ops(staged), 0) << dt << " " << failure(staged);
        }
    }
}
