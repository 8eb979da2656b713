// conv2d_q8 on the NPU: int8 NHWC convolution (3x3 and 1x1, stride 1 and 2)
// with the fused epilogue (bias, ReLU, requantisation with rounding half up,
// saturation), against Halide's CPU result on fresh random inputs with the NPU
// output poisoned first; bit-exact. Unscheduled (the scalar fallback) on every
// preset; tensorised per tap with the epilogue computed per output tile
// (compute_at) on ascend-like, and the 1x1 tensorised on gemmini-like and
// auto-int8.
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

ParamMap q8_params(int h, int w, int ci, int co, int k, int stride, int shift, int relu) {
    return {{"H", std::to_string(h)},     {"W", std::to_string(w)},           {"CI", std::to_string(ci)},
            {"CO", std::to_string(co)},   {"K", std::to_string(k)},           {"stride", std::to_string(stride)},
            {"shift", std::to_string(shift)}, {"relu", std::to_string(relu)}};
}

// Instructions of `op` in the program (static count).
int instrs(const NpuRun &r, isa::Op op) {
    int n = 0;
    for (const auto &i : r.backend.program.code) {
        n += i.op == op;
    }
    return n;
}

// Per tap (kx, ky) the (pixels x CI) * (CI x CO) product on the matrix unit,
// accumulated in L0C; the epilogue computed per output tile right after it.
ScheduleSpec ascend_per_tap(int tco, int tx) {
    Schedule s;
    s.func("output").tile("co", "x", "coo", "xo", "coi", "xi", tco, tx);
    s.func("acc").compute_at("output", "coo");
    s.func("requant").compute_at("output", "coo");
    s.func("acc").update(0).reorder({"co", "x", "ci", "kx", "ky", "y", "n"});
    s.stage("input", "L1").at("acc", "kx");
    s.stage("weights", "L1").at("acc", "kx");
    s.stage("input", "L0A").at("acc", "kx").buffers(2);
    s.stage("weights", "L0B").at("acc", "kx").buffers(2);
    s.func("acc").accumulate_in("L0C");
    s.func("acc").update(0).tensorize();
    return s.spec();
}

// 1x1: chunks of CI staged into the matrix operand levels, the accumulator in
// the accumulator level, the epilogue per output tile.
ScheduleSpec conv1x1_per_tile(int tco, int tx, int tk, const std::string &a, const std::string &b, const std::string &c) {
    Schedule s;
    s.func("output").tile("co", "x", "coo", "xo", "coi", "xi", tco, tx);
    s.func("acc").compute_at("output", "coo");
    s.func("requant").compute_at("output", "coo");
    s.func("acc").update(0).split("ci", "cio", "cii", tk);
    s.func("acc").update(0).reorder({"co", "x", "cii", "cio", "y", "n"});
    s.stage("input", a).at("acc", "cio");
    s.stage("weights", b).at("acc", "cio");
    s.func("acc").accumulate_in(c);
    s.func("acc").update(0).tensorize();
    return s.spec();
}

} // namespace

TEST(ConvQ8, DefaultScheduleEveryPresetStridesAndKernels) {
    struct C {
        const char *arch;
        int k, stride;
    };
    for (const C &c : {C{"ascend-like", 3, 1}, C{"ascend-like", 3, 2}, C{"ascend-like", 1, 2}, C{"gemmini-like", 3, 2},
                       C{"gemmini-like", 1, 1}, C{"auto-int8", 3, 1}, C{"auto-int8", 1, 2}}) {
        NpuRun r = run_npu("conv2d_q8", q8_params(2, 3, 4, 8, c.k, c.stride, 7, c.stride == 1), Schedule().spec(),
                           c.arch, fresh_seed());
        EXPECT_EQ(r.cmp.mismatches, 0) << c.arch << " K" << c.k << " S" << c.stride << " " << failure(r);
    }
}

TEST(ConvQ8, AscendPerTapTensorizedWithFusedEpilogue) {
    for (int relu : {1, 0}) {
        for (int shift : {9, 13}) {
            NpuRun r = run_npu("conv2d_q8", q8_params(2, 16, 32, 32, 3, 1, shift, relu), ascend_per_tap(32, 16),
                               "ascend-like", fresh_seed());
            EXPECT_EQ(r.cmp.mismatches, 0) << "relu " << relu << " shift " << shift << " " << failure(r);
            EXPECT_GT(instrs(r, isa::Op::MMAD), 0) << failure(r);
        }
    }
}

TEST(ConvQ8, Tensorized1x1OnEveryPreset) {
    struct P {
        const char *arch, *a, *b, *c;
        int tk;
    };
    for (const P &p : {P{"ascend-like", "L0A", "L0B", "L0C", 32}, P{"gemmini-like", "SPAD", "SPAD", "ACC", 32},
                       P{"auto-int8", "CBUF", "CBUF", "ACC", 64}}) {
        NpuRun r = run_npu("conv2d_q8", q8_params(2, 16, 64, 32, 1, 1, 10, 1),
                           conv1x1_per_tile(32, 16, p.tk, p.a, p.b, p.c), p.arch, fresh_seed());
        EXPECT_EQ(r.cmp.mismatches, 0) << p.arch << " " << failure(r);
        EXPECT_GT(instrs(r, isa::Op::MMAD), 0) << p.arch << " " << failure(r);
    }
}

// The sample's ascend schedule (epilogue vectorised over all 128 channels):
// the epilogue's pixel loop folds into repeats, and its loop-invariant
// operation (the per-channel scale widened to int32) runs once per folded
// instruction group instead of once per pixel row; the per-pixel operations
// (the shift among them, one VSHRS) keep many rows.
TEST(ConvQ8, SampleScheduleEpilogueFoldsAndHoistsInvariants) {
    const ParamMap p = {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "1"}, {"shift", "12"}};
    NpuRun r = run_npu("conv2d_q8", p, sample_schedule("conv2d_q8/schedules/ascend_per_tap.json"), "ascend-like",
                       fresh_seed(), 0, 0);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int dups = 0, divs = 0, scale_casts = 0;
    for (const auto &i : r.backend.program.code) {
        if (i.op == isa::Op::VCAST && i.dtype == DType::UInt8) {
            scale_casts++;
            EXPECT_EQ(i.rows, 1) << "the scale is widened once per group\n" << failure(r);
        }
        if (i.op == isa::Op::VDUP) {
            dups++;
            EXPECT_EQ(i.rows, 1) << "the broadcast divisor is loop-invariant\n" << failure(r);
        }
        EXPECT_NE(i.op, isa::Op::VDIV) << "the shift is a VSHRS, not a division\n" << failure(r);
        if (i.op == isa::Op::VSHRS) {
            divs++;
            EXPECT_GT(i.rows, 1) << "the shift runs over the folded pixels\n" << failure(r);
        }
    }
    EXPECT_EQ(dups, 0) << "the shift by a constant needs no broadcast divisor\n" << failure(r);
    EXPECT_GT(divs, 0) << failure(r);
    EXPECT_GT(scale_casts, 0) << failure(r);
}

// An int8 row of 128 channels x 34 pixels is a 4352-byte contiguous run, and
// a band's rows are contiguous in L1: the engines count a run in 32-byte
// bursts (DmaEngine::count_limit: 4095 bursts), so the band goes L1 -> L0A as
// one run of 8704 bytes, not split at 4095 elements into a second dimension.
TEST(ConvQ8, LongInt8RunsAreOneDescriptorDimension) {
    const ParamMap p = {{"H", "4"}, {"W", "32"}, {"CI", "128"}, {"CO", "128"}, {"K", "3"}, {"stride", "1"}, {"shift", "12"}};
    NpuRun r = run_npu("conv2d_q8", p, sample_schedule("conv2d_q8/schedules/ascend_per_tap.json"), "ascend-like",
                       fresh_seed(), 0, 0);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    bool long_run = false;
    for (const auto &d : r.backend.program.descs) {
        EXPECT_LE(d.count[0] * d.elem_bytes, 4095u * 32u) << failure(r);
        long_run |= d.elem_bytes == 1 && d.count[0] > 4095 && isa::contiguous_run(d);
    }
    EXPECT_TRUE(long_run) << "no int8 descriptor has a run over 4095 elements\n" << failure(r);
}
