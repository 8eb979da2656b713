// The hand schedules in samples/<op>/schedules/ that `tessel bench --all` uses,
// at small shapes their tile sizes divide: each compiles for its preset, runs
// on the simulator and equals Halide's CPU result on fresh random inputs (NPU
// outputs poisoned first): integers exactly, fp16 outputs within 1e-3, fp32
// outputs of fp16 products within 1e-4 (the CPU may reassociate fp32 sums).
// Each run's measured roofline (RooflinePoints) is consistent with the
// simulation: no resource is needed for more than the whole run, the GM
// traffic is at least the compulsory one, and the physical limit's point lies
// on the lowest roof.
#include "tests/backend/NpuHarness.h"
#include "dsl/RooflinePoints.h"
#include "npu_target/arch/ArchSpec.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

struct SampleCase {
    std::string name; // test name
    std::string generator;
    ParamMap params;
    std::string arch;
    std::string schedule; // under samples/
    double tol;
    bool needs_matrix;    // the schedule tensorizes: the program must have MMADs
    bool epilogue_on_vector = false; // and its requantising epilogue runs on the vector unit (VSHRS for the shift)
};

std::vector<SampleCase> sample_cases() {
    return {
        // The A panel (128 x 1024) goes through ring_panels' ring of slots; B in 256-deep chunks.
        {"GemmAscendPanelK256Fp16", "gemm", {{"M", "256"}, {"N", "512"}, {"K", "1024"}, {"dtype", "fp16"}},
         "ascend-like", "gemm/schedules/ascend_panel_k256.json", 1e-4, true},
        {"GemmAscendPanelK256Int8", "gemm", {{"M", "256"}, {"N", "512"}, {"K", "1024"}, {"dtype", "int8"}},
         "ascend-like", "gemm/schedules/ascend_panel_k256.json", 0, true},
        // int8: B in 1024-deep chunks (the whole K here), L0 chunks 256 deep.
        {"GemmAscendPanelInt8", "gemm", {{"M", "256"}, {"N", "512"}, {"K", "1024"}, {"dtype", "int8"}},
         "ascend-like", "gemm/schedules/ascend_panel_int8.json", 0, true},
        // The B panel (1024 x 128) through the ring, A streamed in 128 x 256 (int8: 128 x 1024) chunks.
        {"GemmAscendBPanelK256Fp16", "gemm", {{"M", "512"}, {"N", "256"}, {"K", "1024"}, {"dtype", "fp16"}},
         "ascend-like", "gemm/schedules/ascend_bpanel_k256.json", 1e-4, true},
        {"GemmAscendBPanelInt8", "gemm", {{"M", "512"}, {"N", "256"}, {"K", "1024"}, {"dtype", "int8"}},
         "ascend-like", "gemm/schedules/ascend_bpanel_int8.json", 0, true},
        // The bench's int8 schedule: a 1024 x 256 B panel through the ring, 64 x 256 tiles, A in
        // 64 x 512 chunks, three buffers (two column bands here, so the ring reloads once).
        // B loaded once (in pieces), A per 64-row band: the bench's 256^3 fp16 row.
        {"GemmAscendBOnceFp16", "gemm", {{"M", "128"}, {"N", "256"}, {"K", "256"}, {"dtype", "fp16"}},
         "ascend-like", "gemm/schedules/ascend_b_once.json", 1e-4, true},
        {"GemmAscendBPanel256Int8", "gemm", {{"M", "256"}, {"N", "512"}, {"K", "1024"}, {"dtype", "int8"}},
         "ascend-like", "gemm/schedules/ascend_bpanel256_int8.json", 0, true},
        {"GemmAutoInt8Int8", "gemm", {{"M", "128"}, {"N", "256"}, {"K", "256"}, {"dtype", "int8"}}, "auto-int8",
         "gemm/schedules/auto_int8.json", 0, true},
        {"GemmAutoInt8Fp16", "gemm", {{"M", "64"}, {"N", "256"}, {"K", "256"}, {"dtype", "fp16"}}, "auto-int8",
         "gemm/schedules/auto_int8.json", 1e-4, true},
        {"GemmQ8Ascend", "gemm_q8", {{"M", "32"}, {"N", "256"}, {"K", "256"}, {"shift", "12"}}, "ascend-like",
         "gemm_q8/schedules/ascend_fused.json", 0, true, true},
        {"GemmQ8Gemmini", "gemm_q8", {{"M", "64"}, {"N", "128"}, {"K", "256"}, {"shift", "12"}}, "gemmini-like",
         "gemm_q8/schedules/gemmini_fused.json", 0, true, true},
        {"Conv3x3Ascend", "conv2d",
         {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"dtype", "fp16"}}, "ascend-like",
         "conv2d/schedules/ops_ascend_3x3.json", 1e-4, true},
        {"Conv1x1Ascend", "conv2d",
         {{"H", "4"}, {"W", "32"}, {"CI", "64"}, {"CO", "128"}, {"K", "1"}, {"dtype", "fp16"}}, "ascend-like",
         "conv2d/schedules/ops_ascend_1x1.json", 1e-4, true},
        // Stride 2 on the matrix unit: one update per input phase, each phase's
        // pixels staged dense into L0A (samples/conv2d/ConvTaps.h).
        {"Conv3x3Stride2Ascend", "conv2d",
         {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "2"}, {"dtype", "fp16"}},
         "ascend-like", "conv2d/schedules/ops_ascend_3x3_s2.json", 1e-4, true},
        {"Conv3x3Stride2AscendInt8", "conv2d",
         {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "2"}, {"dtype", "int8"}},
         "ascend-like", "conv2d/schedules/ops_ascend_3x3_s2.json", 0, true},
        {"Conv1x1Stride2Ascend", "conv2d",
         {{"H", "4"}, {"W", "32"}, {"CI", "64"}, {"CO", "128"}, {"K", "1"}, {"stride", "2"}, {"dtype", "fp16"}},
         "ascend-like", "conv2d/schedules/ops_ascend_1x1_s2.json", 1e-4, true},
        {"ConvQ8Stride2Ascend", "conv2d_q8",
         {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "2"}, {"shift", "11"}},
         "ascend-like", "conv2d_q8/schedules/ascend_fix_s2.json", 0, true},
        {"Conv1x1Gemmini", "conv2d",
         {{"H", "2"}, {"W", "32"}, {"CI", "128"}, {"CO", "64"}, {"K", "1"}, {"dtype", "int8"}}, "gemmini-like",
         "conv2d/schedules/ops_gemmini_1x1.json", 0, true},
        {"Conv1x1AutoInt8", "conv2d",
         {{"H", "2"}, {"W", "32"}, {"CI", "128"}, {"CO", "128"}, {"K", "1"}, {"dtype", "fp16"}}, "auto-int8",
         "conv2d/schedules/ops_auto_int8_1x1.json", 1e-4, true},
        {"ConvQ8Ascend", "conv2d_q8",
         {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"shift", "11"}}, "ascend-like",
         "conv2d_q8/schedules/ascend_per_tap.json", 0, true, true},
        {"DepthwiseFp16", "depthwise", {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"dtype", "fp16"}}, "ascend-like",
         "depthwise/schedules/ascend_bands.json", 1e-4, false},
        {"DepthwiseInt8", "depthwise", {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"dtype", "int8"}}, "ascend-like",
         "depthwise/schedules/ascend_bands.json", 0, false},
        {"MaxPoolInt8", "pooling", {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"op", "max"}, {"dtype", "int8"}},
         "ascend-like", "pooling/schedules/ascend_max.json", 0, false},
        {"AvgPoolFp16", "pooling", {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"op", "avg"}, {"dtype", "fp16"}},
         "ascend-like", "pooling/schedules/ascend_avg.json", 1e-3, false},
        {"BlurFp16", "blur", {{"W", "128"}, {"H", "16"}, {"dtype", "fp16"}}, "ascend-like",
         "blur/schedules/ascend_fused.json", 1e-3, false},
    };
}

// The measured roofline of run r of case c (see the file comment).
void expect_consistent_roofline(const SampleCase &c, const NpuRun &r) {
    const ArchSpec arch = load_arch(c.arch);
    const Roofline rf = compute_roofline(c.generator, c.params, arch, r.backend.program.cores);
    const RooflinePoints p = roofline_points(rf, r.report, arch);
    ASSERT_TRUE(p.valid) << p.why_not;
    EXPECT_NEAR(p.achieved, p.work / double(r.report.cycles), 1e-9 * p.achieved);
    int gm_roofs = 0;
    double lowest = 1e300;
    for (const auto &roof : p.roofs) {
        SCOPED_TRACE(roof.name);
        // Each point under its roof: the resource is needed for at most the whole run.
        EXPECT_LE(roof.utilisation, 1 + 1e-9) << roofline_points_text(p);
        EXPECT_LE(p.achieved, roof.bound * (1 + 1e-9));
        if (roof.memory) {
            EXPECT_NEAR(roof.intensity * double(roof.bytes), p.work, 1e-6 * p.work);
        }
        if (roof.compulsory_bytes > 0) {
            gm_roofs++;
            EXPECT_GE(roof.bytes, roof.compulsory_bytes) << "less GM traffic than the algorithm's compulsory bytes";
            lowest = std::min(lowest, roof.peak * p.work / double(roof.compulsory_bytes));
        } else if (!roof.memory) {
            lowest = std::min(lowest, roof.peak);
        }
    }
    EXPECT_GE(gm_roofs, 1);
    EXPECT_NEAR(p.limit_ops_per_cycle, lowest, 1e-9 * lowest) << roofline_points_text(p);
    EXPECT_FALSE(p.binding.empty());
}

class SampleSchedule : public ::testing::TestWithParam<SampleCase> {};

TEST_P(SampleSchedule, VerifiesOnItsPreset) {
    const SampleCase &c = GetParam();
    ScheduleSpec spec = sample_schedule(c.schedule);
    NpuRun r = run_npu(c.generator, c.params, spec, c.arch, fresh_seed(), c.tol, c.tol);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int mmad = 0, vec = 0;
    for (const auto &i : r.backend.program.code) {
        mmad += i.op == isa::Op::MMAD;
        vec += i.op >= isa::Op::VADD && i.op <= isa::Op::VREQUANT;
    }
    int vshift = 0;
    for (const auto &i : r.backend.program.code) {
        vshift += i.op == isa::Op::VSHRS;
    }
    if (c.epilogue_on_vector) {
        EXPECT_GT(vshift, 0) << "the requantising epilogue no longer runs on the vector unit";
    }
    if (c.needs_matrix) {
        EXPECT_GT(mmad, 0) << "the schedule no longer reaches the matrix unit";
    } else {
        EXPECT_GT(vec, 0) << "the schedule no longer reaches the vector unit";
    }
    expect_consistent_roofline(c, r);
}

// LayerNorm's ascend_rows.json at a small shape (once failed the simulator's
// race check under this harness while `tessel run` verified it: "pc 50 (vcast)
// on pipe V writes UB ..., which pc 69 (st) on pipe S ... wrote before it"; it
// passes since the backend's sync changes of 4ffb30c and earlier).
TEST(SampleScheduleLayerNorm, AscendRowsVerifies) {
    ScheduleSpec spec = sample_schedule("layernorm/schedules/ascend_rows.json");
    NpuRun r = run_npu("layernorm", {{"ROWS", "16"}, {"COLS", "128"}, {"dtype", "fp16"}}, spec, "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

INSTANTIATE_TEST_SUITE_P(Samples, SampleSchedule, ::testing::ValuesIn(sample_cases()),
                         [](const ::testing::TestParamInfo<SampleCase> &i) { return i.param.name; });

} // namespace

// Regression (backend fix in npu_target/lower/Tensorize.cpp): a pure loop
// inside the tensorised accumulator (here the band's rows, acc.y) was taken for
// a reduction loop whenever the Func's name carried Halide's uniquing suffix
// ("acc$2.s1.y"), which a second instance of a generator in one process gets;
// the zero-init was then folded into the first row only and the other rows
// accumulated onto stale L0C contents (visible from the third band on, when
// the double-buffered L0C tile is reused). Each instance must verify.
TEST(TensorizeZeroInit, PureLoopInsideTheAccumulatorInEveryInstance) {
    ScheduleSpec spec = sample_schedule("conv2d/schedules/ops_ascend_1x1.json");
    ParamMap p = {{"H", "12"}, {"W", "32"}, {"CI", "128"}, {"CO", "128"}, {"K", "1"}, {"dtype", "fp16"}};
    for (int instance = 0; instance < 3; ++instance) {
        NpuRun r = run_npu("conv2d", p, spec, "ascend-like", fresh_seed(), 1e-4, 1e-4);
        EXPECT_EQ(r.cmp.mismatches, 0) << "instance " << instance << " " << failure(r);
    }
}

// multi_buffer stops a rotation below a loop that also rotates another buffer
// of the same level in a separate part of its body: conv2d's stride-2 phases
// each double-buffer their L0A and L0B tiles inside their own update, so each
// phase's copies are held for its update only (rotated across the band loop,
// the four phases' copies did not fit L0B: "needs 128 KiB with the buffers
// live here").
TEST(SampleScheduleConvStride2, EachPhaseRotatesItsL0TilesInItsOwnUpdate) {
    ScheduleSpec spec = sample_schedule("conv2d/schedules/ops_ascend_3x3_s2.json");
    NpuRun r = run_npu("conv2d",
                       {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "2"},
                        {"dtype", "fp16"}},
                       spec, "ascend-like", fresh_seed(), 1e-4, 1e-4);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int phases = 0;
    for (const auto &[name, b] : r.backend.module.buffers) {
        for (int p = 0; p < 3; p++) { // phase 3 has one tap and one copy
            // "in_p0_global_wrapper$0", or with Halide's uniquing suffix "in_p0$2_global_wrapper$0".
            auto of_phase = [&](const std::string &f) {
                return name.rfind(f, 0) == 0 && name.size() > f.size() && (name[f.size()] == '_' || name[f.size()] == '$');
            };
            const std::string tag = std::to_string(p);
            if ((of_phase("in_p" + tag) || of_phase("w_p" + tag)) && (b.level == "L0A" || b.level == "L0B")) {
                phases++;
                EXPECT_EQ(b.buffers, 2) << name;
                EXPECT_NE(b.rotate_scope.find(".s" + std::to_string(p + 1) + "."), std::string::npos)
                    << name << " rotates across " << b.rotate_scope << ", outside its update";
            }
        }
    }
    EXPECT_EQ(phases, 6) << failure(r);
}
