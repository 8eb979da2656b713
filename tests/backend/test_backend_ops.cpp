// The conv2d and softmax samples on the NPU: NPU result == Halide CPU result on
// fresh random inputs (output poisoned before each run), per schedule and preset.
//
// Tolerances: int8 -> int32 is bit-exact. fp16 -> fp32 convolution: schedules
// reorder the fp32 sums (per tap, per channel chunk), so 1e-4 absolute + 1e-5
// relative (|terms| < 1, at most CI*K*K = 72 of them). softmax: the NPU's exp
// and division are correctly rounded binary32, Halide's CPU exp is not
// necessarily, so fp32 outputs (in (0, 1]) get 1e-6 + 1e-5 relative and fp16
// outputs one fp16 ulp at 1.0 (2^-10), 1e-3 absolute.
#include "tests/backend/NpuHarness.h"

#include "npu_target/common/Error.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <iostream>

using namespace tessel;
using namespace tessel::test;

namespace {


// TESSEL_OPS_VERBOSE=1 prints each run's figures and the backend's diagnostics
// (the numbers quoted in samples/*/README.md).
void note(const NpuRun &r);

struct OpCounts {
    int dma = 0, vec = 0, scalar_funcs = 0;
};

OpCounts counts(const NpuRun &r) {
    OpCounts c;
    for (const auto &i : r.backend.program.code) {
        c.dma += i.op == isa::Op::DMA;
        c.vec += i.op >= isa::Op::VADD && i.op <= isa::Op::VREQUANT;
    }
    for (const auto &d : r.backend.diagnostics) {
        c.scalar_funcs += d.message.find("runs as scalar code") != std::string::npos;
    }
    return c;
}

// Executed instructions of one opcode (from the simulator's trace).
uint64_t executed(const NpuRun &r, isa::Op op) {
    uint64_t n = 0;
    for (const auto &e : r.report.trace) {
        n += e.op == op;
    }
    return n;
}

// Instructions of one opcode in the program.
int static_count(const NpuRun &r, isa::Op op) {
    return static_cast<int>(std::count_if(r.backend.program.code.begin(), r.backend.program.code.end(),
                                          [&](const isa::Instr &i) { return i.op == op; }));
}

// Rows processed by the executed instructions of one opcode: a loop folded
// into repeats runs as one instruction of many rows.
uint64_t executed_rows(const NpuRun &r, isa::Op op) {
    uint64_t n = 0;
    for (const auto &e : r.report.trace) {
        n += e.op == op ? r.backend.program.code.at(e.pc).rows : 0;
    }
    return n;
}

// Bytes written by the executed instructions of one opcode.
uint64_t executed_bytes(const NpuRun &r, isa::Op op) {
    uint64_t n = 0;
    for (const auto &e : r.report.trace) {
        n += e.op == op ? static_cast<uint64_t>(e.bytes) : 0;
    }
    return n;
}

void note(const NpuRun &r) {
    if (!std::getenv("TESSEL_OPS_VERBOSE")) {
        return;
    }
    OpCounts c = counts(r);
    const auto *t = ::testing::UnitTest::GetInstance()->current_test_info();
    std::cerr << "[ops] " << t->test_suite_name() << "." << t->name() << ": cycles " << r.report.cycles << ", executed "
              << r.report.instructions << " (DMA " << executed(r, isa::Op::DMA) << ", MMAD " << executed(r, isa::Op::MMAD)
              << "), static vector ops " << c.vec << "; " << r.cmp.message << "\n";
    for (const auto &d : r.backend.diagnostics) {
        std::cerr << "[ops]   " << d.message << "\n";
    }
}

// A tensorized run: verified, exactly `mmads` MMADs executed, nothing left as scalar code.
void expect_tensorized(const NpuRun &r, uint64_t mmads) {
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(executed(r, isa::Op::MMAD), mmads) << "one MMAD per output tile x ci chunk\n" << failure(r);
    EXPECT_EQ(counts(r).scalar_funcs, 0) << failure(r);
}

bool mentions_scalar_func(const NpuRun &r, const std::string &func);

// The UserError a conv2d schedule on ascend-like is refused with ("" and a test
// failure if it is accepted).
std::string refusal(const ParamMap &params, const ScheduleSpec &schedule) {
    try {
        run_npu("conv2d", params, schedule, "ascend-like", fresh_seed(), 1e-4, 1e-5);
    } catch (const UserError &e) {
        if (std::getenv("TESSEL_OPS_VERBOSE")) {
            std::cerr << "[ops] refused: " << e.what() << "\n";
        }
        return e.what();
    }
    ADD_FAILURE() << "the schedule was accepted; update this test and samples/conv2d/README.md";
    return "";
}

// A staged + vectorised convolution: verified, the accumulator on the vector unit.
void expect_vector_acc(const NpuRun &r) {
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GE(counts(r).vec, 2) << "the accumulator runs on the vector unit\n" << failure(r);
    EXPECT_FALSE(mentions_scalar_func(r, "acc")) << failure(r);
}

bool mentions_scalar_func(const NpuRun &r, const std::string &func) {
    for (const auto &d : r.backend.diagnostics) {
        if (d.message.find("Func " + func) != std::string::npos && d.message.find("scalar code") != std::string::npos) {
            return true;
        }
    }
    return false;
}

ParamMap conv_params(const std::string &dtype, int h, int w, int ci, int co, int k, int stride, int n = 1) {
    return {{"N", std::to_string(n)},   {"H", std::to_string(h)}, {"W", std::to_string(w)},
            {"CI", std::to_string(ci)}, {"CO", std::to_string(co)}, {"K", std::to_string(k)},
            {"stride", std::to_string(stride)}, {"dtype", dtype}};
}

double conv_atol(const std::string &dtype) { return dtype == "int8" ? 0 : 1e-4; }
double conv_rtol(const std::string &dtype) { return dtype == "int8" ? 0 : 1e-5; }

// One output row band per tile: the input rows it reads and all the weights
// are staged into the vector level `level`; the accumulator tile lives there
// too (unplaced allocations go to the vector level) and both of its
// definitions are vectorised across output channels: the update becomes
// acc[co..] += broadcast(input) * weights[co..] on the vector unit.
// `updates`: acc's update definitions (stride 2: one per input phase, 4 for a
// 3x3; samples/conv2d/ConvTaps.h), each vectorised.
ScheduleSpec conv_staged_vector(const std::string &level, int rows, int vec, int updates = 1) {
    Schedule s;
    s.func("output").split("y", "yo", "yi", rows);
    s.func("acc").compute_at("output", "yo");
    s.stage("input", level).at("output", "yo");
    s.stage("weights", level).at("output", "yo");
    s.func("acc").vectorize("co", vec);
    for (int u = 0; u < updates; u++) {
        s.func("acc").update(u).vectorize("co", vec);
    }
    return s.spec();
}

// A 1x1 stride-1 convolution is the GEMM (pixels x CI) * (CI x CO): output
// tiles of tco channels x tx pixels, the channel reduction split in chunks of
// tk, input and weight chunks staged GM -> L1 -> the matrix operand levels,
// the accumulator tile in the accumulator level, the chunk product on the
// matrix unit. a/b/c are the matrix unit's operand levels of the preset.
ScheduleSpec conv1x1_tensorized(int tco, int tx, int tk, const std::string &l1, const std::string &a,
                                const std::string &b, const std::string &c) {
    Schedule s;
    s.func("output").tile("co", "x", "coo", "xo", "coi", "xi", tco, tx);
    s.func("acc").compute_at("output", "coo");
    s.func("acc").update(0).split("ci", "cio", "cii", tk);
    s.func("acc").update(0).reorder({"co", "x", "cii", "cio", "y", "n"});
    if (!l1.empty()) {
        s.stage("input", l1).at("acc", "cio");
        s.stage("weights", l1).at("acc", "cio");
    }
    s.stage("input", a).at("acc", "cio");
    s.stage("weights", b).at("acc", "cio");
    s.func("acc").accumulate_in(c);
    s.func("acc").update(0).tensorize();
    return s.spec();
}

} // namespace

// ---------------------------------------------------------------- conv 3x3, ascend-like

class ConvScalarAscend : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvScalarAscend, DefaultScheduleRunsAsScalarCode) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(dt, 3, 3, 4, 4, 3, 1), Schedule().spec(), "ascend-like", fresh_seed(),
                       conv_atol(dt), conv_rtol(dt));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GT(r.report.cycles, 0u);
    EXPECT_TRUE(mentions_scalar_func(r, "acc")) << "the fallback should be reported\n" << failure(r);
}

TEST_P(ConvScalarAscend, Stride2) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(dt, 2, 3, 3, 4, 3, 2, 2), Schedule().spec(), "ascend-like", fresh_seed(),
                       conv_atol(dt), conv_rtol(dt));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

INSTANTIATE_TEST_SUITE_P(Types, ConvScalarAscend, ::testing::Values("fp16", "int8"));

class ConvVectorAscend : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvVectorAscend, StagedVectorised3x3) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(dt, 4, 4, 8, 16, 3, 1), conv_staged_vector("UB", 2, 16), "ascend-like",
                       fresh_seed(), conv_atol(dt), conv_rtol(dt));
    expect_vector_acc(r);
    EXPECT_EQ(executed(r, isa::Op::DMA), 2u * 3) << "input, weights and the output tile per band\n" << failure(r);
}

TEST_P(ConvVectorAscend, StagedVectorised3x3Stride2) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(dt, 2, 3, 4, 16, 3, 2), conv_staged_vector("UB", 1, 16, 4), "ascend-like",
                       fresh_seed(), conv_atol(dt), conv_rtol(dt));
    expect_vector_acc(r);
}

INSTANTIATE_TEST_SUITE_P(Types, ConvVectorAscend, ::testing::Values("fp16", "int8"));

class ConvTensorAscend : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvTensorAscend, Tensorized1x1) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(dt, 2, 16, 64, 32, 1, 1), conv1x1_tensorized(16, 16, 32, "L1", "L0A", "L0B", "L0C"),
                       "ascend-like", fresh_seed(), conv_atol(dt), conv_rtol(dt));
    expect_tensorized(r, 2 * 2 * 2); // rows x channel tiles x ci chunks
}

INSTANTIATE_TEST_SUITE_P(Types, ConvTensorAscend, ::testing::Values("fp16", "int8"));

// The 3x3 tap-by-tap GEMM: the innermost nest (x, ci, co) per (kx, ky) is
// matmul-shaped in the loops, but the update reads input and weights through
// three shared reduction variables (ci, kx, ky) and tensorize only accepts
// one. The request is refused with a message naming the directive and the
// reason (see samples/conv2d/README.md).
TEST(ConvTensorize3x3, PerTapMatrixProductsVerify) {
    // The reduction over (ci, kx, ky) with ci innermost: for each tap (kx, ky) the
    // nest (co, x, ci) is a (pixels x CI) * (CI x CO) product on the matrix unit,
    // accumulated over the taps in L0C.
    Schedule s;
    s.func("output").tile("co", "x", "coo", "xo", "coi", "xi", 16, 4);
    s.func("acc").compute_at("output", "coo");
    s.func("acc").update(0).reorder({"co", "x", "ci", "kx", "ky", "y", "n"});
    s.stage("input", "L1").at("acc", "kx");
    s.stage("weights", "L1").at("acc", "kx");
    s.stage("input", "L0A").at("acc", "kx");
    s.stage("weights", "L0B").at("acc", "kx");
    s.func("acc").accumulate_in("L0C");
    s.func("acc").update(0).tensorize();
    for (const char *dt : {"fp16", "int8"}) {
        NpuRun r = run_npu("conv2d", conv_params(dt, 2, 4, 16, 16, 3, 1), s.spec(), "ascend-like", fresh_seed(),
                           std::string(dt) == "fp16" ? 1e-4 : 0, std::string(dt) == "fp16" ? 1e-5 : 0);
        EXPECT_EQ(r.cmp.mismatches, 0) << dt << " " << failure(r);
        EXPECT_GT(executed(r, isa::Op::MMAD), 0u) << dt << " " << failure(r);
    }
}

// A strided 1x1 convolution reads every other pixel: staging the input itself,
// the tile (the footprint box) has row stride stride*CI, not CI, and tensorize
// refuses it naming the strides. Staging the input's phase in_p0 instead (a
// gather of every other pixel, samples/conv2d/ConvTaps.h) gives dense tiles:
// ops_ascend_1x1_s2.json, test_backend_sample_schedules Conv1x1Stride2Ascend.
TEST(ConvTensorize1x1Stride2, RefusedWithAReason) {
    std::string m = refusal(conv_params("fp16", 2, 16, 64, 32, 1, 2),
                            conv1x1_tensorized(16, 16, 32, "L1", "L0A", "L0B", "L0C"));
    EXPECT_NE(m.find("dense row-major"), std::string::npos) << m;
    EXPECT_NE(m.find("row strides A 64"), std::string::npos) << m;
}

// ---------------------------------------------------------------- softmax, ascend-like

namespace {

double sm_atol(const std::string &dt) { return dt == "fp16" ? 1e-3 : 1e-6; }
double sm_rtol(const std::string &dt) { return dt == "fp16" ? 0 : 1e-5; }

// A band of `rows` rows per tile: the input band staged into the vector level,
// every statistic computed per band in that level. The row reductions are
// vectorised across the band's rows (each lane walks one row: strided loads),
// the elementwise stages across columns (dense, with the row statistic
// broadcast).
ScheduleSpec softmax_staged_vector(const std::string &level, int rows, int vec) {
    Schedule s;
    s.func("out").split("y", "yo", "yi", rows);
    s.stage("in", level).at("out", "yo");
    for (const char *f : {"rowmax", "expd", "rowsum", "norm"}) {
        s.func(f).compute_at("out", "yo");
    }
    s.func("rowmax").vectorize("y", rows);
    s.func("rowmax").update(0).vectorize("y", rows);
    s.func("expd").vectorize("x", vec);
    s.func("rowsum").vectorize("y", rows);
    s.func("rowsum").update(0).vectorize("y", rows);
    s.func("norm").vectorize("x", vec);
    return s.spec();
}

ScheduleSpec softmax_scalar() {
    Schedule s;
    s.func("rowmax").compute_root();
    s.func("rowsum").compute_root();
    return s.spec();
}

} // namespace

class SoftmaxAscend : public ::testing::TestWithParam<std::string> {};

// With no schedule Halide computes the reductions rowmax and rowsum at each use
// (they cannot be inlined), so rowmax is realised twice (inside rowsum's loop
// and inside norm's loop): the backend gives each allocation its own buffer.
TEST_P(SoftmaxAscend, DefaultSchedule) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("softmax", {{"ROWS", "4"}, {"COLS", "32"}, {"dtype", dt}}, Schedule().spec(), "ascend-like",
                       fresh_seed(), sm_atol(dt), sm_rtol(dt));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

// The scalar fallback: the row statistics computed once (compute_root), no
// staging, no vectorisation.
TEST_P(SoftmaxAscend, ScalarStatisticsAtRoot) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("softmax", {{"ROWS", "4"}, {"COLS", "32"}, {"dtype", dt}}, softmax_scalar(), "ascend-like",
                       fresh_seed(), sm_atol(dt), sm_rtol(dt));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(counts(r).vec, 0) << failure(r);
    EXPECT_TRUE(mentions_scalar_func(r, "rowsum")) << failure(r);
}

TEST_P(SoftmaxAscend, StagedVectorised) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("softmax", {{"ROWS", "16"}, {"COLS", "128"}, {"dtype", dt}}, softmax_staged_vector("UB", 8, 64),
                       "ascend-like", fresh_seed(), sm_atol(dt), sm_rtol(dt));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    OpCounts c = counts(r);
    EXPECT_GE(c.dma, 2) << failure(r);
    EXPECT_EQ(executed(r, isa::Op::DMA), 4u) << "one input band in and one output band out per tile\n" << failure(r);
    EXPECT_GE(c.vec, 7) << failure(r);
    // VDUP only for the two statistics' initial values: expd and norm read
    // the row's max and sum in place (element stride 0), not broadcast first.
    EXPECT_EQ(static_count(r, isa::Op::VDUP), 2) << failure(r);
    EXPECT_EQ(c.scalar_funcs, 0) << failure(r);
}

// The row reductions vectorised along the row (atomic + vectorize of the
// reduction variable): Halide makes them vector reductions, which run as
// VREDMAX/VREDSUM plus a one-element combine on the vector unit. Each band's
// temporaries reuse the space of the previous stage's, and the scalar unit
// stores the next statistic's initial value there: the synchronisation has
// to see that the two buffers share bytes (a race before it did). Faster
// than the reductions vectorised across rows.
TEST_P(SoftmaxAscend, AtomicRowReductionsOnTheVectorUnit) {
    const std::string dt = GetParam();
    const int cols = 1024;
    Schedule s;
    s.func("out").split("y", "yo", "yi", 8);
    s.stage("in", "UB").at("out", "yo");
    for (const char *f : {"rowmax", "expd", "rowsum", "norm"}) {
        s.func(f).compute_at("out", "yo");
    }
    s.func("rowmax").update(0).atomic().vectorize("r", cols);
    s.func("expd").vectorize("x", cols);
    s.func("rowsum").update(0).atomic().vectorize("r", cols);
    s.func("norm").vectorize("x", cols);
    const ParamMap p = {{"ROWS", "16"}, {"COLS", std::to_string(cols)}, {"dtype", dt}};
    const uint64_t seed = fresh_seed();
    NpuRun r = run_npu("softmax", p, s.spec(), "ascend-like", seed, sm_atol(dt), sm_rtol(dt));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(executed_rows(r, isa::Op::VREDMAX), 16u) << "one per row\n" << failure(r);
    EXPECT_EQ(executed_rows(r, isa::Op::VREDSUM), 16u) << "one per row\n" << failure(r);
    // The band's rows fold into the repeat count: one instruction per band.
    EXPECT_EQ(executed(r, isa::Op::VREDMAX), 2u) << "one per band of 8 rows\n" << failure(r);
    EXPECT_EQ(executed(r, isa::Op::VREDSUM), 2u) << "one per band of 8 rows\n" << failure(r);
    if (dt == "fp16") { // the maximum of the fp16 row, widened once (not the row widened first)
        for (const auto &e : r.report.trace) {
            if (e.op == isa::Op::VREDMAX) {
                EXPECT_EQ(r.backend.program.code.at(e.pc).dtype, DType::FP16) << failure(r);
            }
        }
    }
    NpuRun across = run_npu("softmax", p, softmax_staged_vector("UB", 8, cols), "ascend-like", seed, sm_atol(dt),
                            sm_rtol(dt));
    EXPECT_EQ(across.cmp.mismatches, 0) << failure(across);
    EXPECT_LT(r.report.cycles * 2, across.report.cycles) << "vector reductions along the rows should be much faster";
}

INSTANTIATE_TEST_SUITE_P(Types, SoftmaxAscend, ::testing::Values("fp32", "fp16"));

// A vectorised reduction the vector unit cannot compute is a user error that
// names the Func, the reason and the directive (gemmini-like has no fp16 vectors).
TEST(SoftmaxAtomic, ReductionTheVectorUnitCannotTakeIsAUserError) {
    Schedule s;
    s.func("out").split("y", "yo", "yi", 2);
    s.stage("in", "ACC").at("out", "yo");
    for (const char *f : {"rowmax", "expd", "rowsum", "norm"}) {
        s.func(f).compute_at("out", "yo");
    }
    s.func("rowmax").update(0).atomic().vectorize("r", 256).id("rowmax_red");
    try {
        run_npu("softmax", {{"ROWS", "16"}, {"COLS", "256"}, {"dtype", "fp16"}}, s.spec(), "gemmini-like", fresh_seed(),
                1e-3, 1e-3);
        ADD_FAILURE() << "the fp16 reduction on gemmini-like was accepted";
    } catch (const UserError &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("Func rowmax: its vectorized reduction"), std::string::npos) << msg;
        EXPECT_NE(msg.find("does not compute on float16"), std::string::npos) << msg;
        EXPECT_NE(msg.find("[directive rowmax_red]"), std::string::npos) << msg;
    }
}

// LayerNorm's statistics as vector reductions along the row: the variance's
// (x - mean) is a vector let Halide factored out of (x - mean)^2; the selector
// substitutes it into the reduction so the whole row runs on the vector unit.
TEST(LayerNormAscend, AtomicStatisticsOnTheVectorUnit) {
    const ParamMap p = {{"ROWS", "32"}, {"COLS", "1024"}, {"dtype", "fp16"}};
    NpuRun r = run_npu("layernorm", p, sample_schedule("layernorm/schedules/ascend_reduce.json"), "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(executed_rows(r, isa::Op::VREDSUM), 64u) << "mean and variance, one per row\n" << failure(r);
    // The per-row scalars mean / n and 1 / sqrt(var / n + eps) are computed
    // by vector operations (read back once per row by the row-scalar forms), not
    // by the scalar unit: 1 / sqrt is one VRSQRT per row (32 fp32 results), in
    // folded instructions whose rows are contiguous, so several rows per repeat.
    EXPECT_EQ(executed_bytes(r, isa::Op::VRSQRT), 32u * 4) << failure(r);
    EXPECT_LT(executed_rows(r, isa::Op::VRSQRT), 32u) << "one repeat covers several rows' values\n" << failure(r);
    EXPECT_LT(executed(r, isa::Op::VRSQRT), 32u) << "the norm row loop should fold\n" << failure(r);
    EXPECT_FALSE(mentions_scalar_func(r, "var") &&
                 std::any_of(r.backend.diagnostics.begin(), r.backend.diagnostics.end(),
                             [](const BackendDiagnostic &d) { return d.message.find("runs as scalar code") != std::string::npos; }))
        << failure(r);
}

// ---------------------------------------------------------------- int8 requantising epilogue, ascend-like

// conv2d_q8's epilogue sat_int8((relu(acc + bias) * scale + 2^(shift-1)) >> shift)
// on the vector unit: Halide writes the shift as a division by 2^shift, which
// one VSHRS computes exactly (an arithmetic shift is floor division; Halide's
// Euclidean division agrees for a positive divisor), a quarter of VDIV's
// cycles. Bit-exact, and far faster than the same per-tap schedule with a
// scalar epilogue.
TEST(RequantEpilogue, VectorUnitShiftsForTheDivisionByThePowerOfTwo) {
    const ParamMap p = {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"shift", "11"}};
    const uint64_t seed = fresh_seed();
    NpuRun vec = run_npu("conv2d_q8", p, sample_schedule("conv2d_q8/schedules/ascend_vector_epilogue.json"),
                         "ascend-like", seed);
    EXPECT_EQ(vec.cmp.mismatches, 0) << failure(vec);
    EXPECT_GT(executed(vec, isa::Op::VSHRS), 0u) << failure(vec);
    EXPECT_EQ(executed(vec, isa::Op::VDIV), 0u) << failure(vec);
    EXPECT_FALSE(mentions_scalar_func(vec, "requant")) << failure(vec);
    // The same per-tap schedule without the vector directives: scalar code.
    ScheduleSpec scalar_epilogue = sample_schedule("conv2d_q8/schedules/ascend_per_tap.json");
    auto &ds = scalar_epilogue.directives;
    ds.erase(std::remove_if(ds.begin(), ds.end(),
                            [](const Directive &d) {
                                return d.id == "acc_UB" || d.id == "bias_UB" || d.id == "scale_UB" ||
                                       d.id == "requant_vec";
                            }),
             ds.end());
    NpuRun scalar = run_npu("conv2d_q8", p, scalar_epilogue, "ascend-like", seed);
    EXPECT_TRUE(mentions_scalar_func(scalar, "requant")) << failure(scalar);
    EXPECT_EQ(scalar.cmp.mismatches, 0) << failure(scalar);
    EXPECT_LT(vec.report.cycles * 20, scalar.report.cycles);
}

// ---------------------------------------------------------------- folding loops with lets

// The blur's fused schedule: Halide puts scalar lets (row offsets) between the
// row loop and the vector operations; they are substituted into the operands
// so the loop still becomes the operations' repeat count (rows > 1) instead of
// one scalar-issued instruction per row.
TEST(FoldVectorLoops, ScalarLetsInTheLoopBodyStillFold) {
    NpuRun r = run_npu("blur", {{"W", "128"}, {"H", "16"}, {"dtype", "fp16"}},
                       sample_schedule("blur/schedules/ascend_fused.json"), "ascend-like", fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int multi_row = 0;
    for (const auto &i : r.backend.program.code) {
        multi_row += i.op >= isa::Op::VADD && i.op <= isa::Op::VREQUANT && i.rows > 1;
    }
    EXPECT_GT(multi_row, 0) << failure(r);
    // 164 of them at this size when the lets fold (about 264 when
    // the per-row loop stayed a scalar loop).
    EXPECT_LE(executed(r, isa::Op::VADD) + executed(r, isa::Op::VCAST) + executed(r, isa::Op::VMULS), 180u) << failure(r);
}

// The blur's input band (8 + 2 rows of W + 2 = 1026 columns, fp16) is read
// through the same widening under its three column taps: it is widened once
// per band into `.wide` although its size is not a multiple of the 1024 lanes
// the taps read (the rows of 1024, then the last 20 elements by a cast of
// their own), so each input element is cast once, not three times (blur
// 1024x256 on ascend-like: 52707 -> 44787 cycles, measured 2026-11-30).
TEST(WidenStagedReads, BandWhoseSizeIsNotAMultipleOfTheLanesIsWidenedOnce) {
    NpuRun r = run_npu("blur", {{"W", "1024"}, {"H", "16"}, {"dtype", "fp16"}},
                       sample_schedule("blur/schedules/ascend_fused.json"), "ascend-like", fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    bool widened = false;
    for (const auto &[name, b] : r.backend.module.buffers) {
        widened = widened || (name.rfind("in_", 0) == 0 && name.find(".wide") != std::string::npos);
    }
    EXPECT_TRUE(widened) << failure(r);
    int64_t widened_elems = 0;
    for (const auto &e : r.report.trace) {
        const isa::Instr &i = r.backend.program.code.at(e.pc);
        if (e.op == isa::Op::VCAST && i.dtype == DType::FP16 && i.dtype2 == DType::FP32) {
            widened_elems += e.bytes / 4;
        }
    }
    EXPECT_EQ(widened_elems, 2 * 10 * 1026) << failure(r); // 2 bands of 10 rows, each element once
}

// Max pooling's window loop: the input operand's index is ((y*2 + ry)*W + (x*2 + rx))*C,
// whose coefficient in rx the simplifier cannot prove (it does not distribute the
// *C); nir::affine_coefficient reads it off the expression tree, so the loop
// folds into a two-row VMAX instead of one instruction per window column.
TEST(FoldVectorLoops, WindowLoopWithAProductIndexFolds) {
    NpuRun r = run_npu("pooling", {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"op", "max"}, {"dtype", "int8"}},
                       sample_schedule("pooling/schedules/ascend_max.json"), "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int folded = 0;
    for (const auto &i : r.backend.program.code) {
        folded += i.op == isa::Op::VMAX && i.rows > 1;
    }
    EXPECT_GT(folded, 0) << failure(r);
}

// ---------------------------------------------------------------- vector lets

// Attention's online-softmax state update is a Tuple update: Halide loads the
// old state into vector lets, stores state.0, then state.1 and state.2 from the
// same lets. Inlining a let past the store of a buffer it loads would read the
// new state.0 (wrong results); such a let is computed once into a scratch
// buffer where it stood (".vlet"), the others are substituted. Before, the
// vector lets reached the scalar code generator (internal error).
TEST(VectorLets, TupleUpdateKeepsTheOldStateAndVerifies) {
    // Without defer_tail, which places the state update twice in the program
    // (in the block loop for the previous block, after it for the last one).
    PassOptions opt;
    opt.skip = {"defer_tail"};
    NpuRun r = run_npu("attention", {{"S", "64"}, {"L", "128"}, {"D", "64"}, {"BK", "64"}},
                       sample_schedule("attention/schedules/ascend_flash.json"), "ascend-like", fresh_seed(), 1e-3,
                       1e-3, opt);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int materialised = 0;
    for (const auto &[name, b] : r.backend.module.buffers) {
        materialised += name.find(".vlet") != std::string::npos;
    }
    EXPECT_GT(materialised, 0) << "the state's old value should be kept in a scratch buffer";
    // The three Tuple values share the new maximum and the two rescale
    // factors exp(M - M') and exp(mb - M'): computed once each (common
    // subexpressions across the values), so two VEXP for the state and one
    // for the probabilities, not 1 + 4.
    int exps = 0;
    for (const auto &i : r.backend.program.code) {
        exps += i.op == isa::Op::VEXP;
    }
    EXPECT_EQ(exps, 3) << failure(r);
}

// ---------------------------------------------------------------- depthwise: accumulation and widening

// The depthwise update acc = acc + cast(in) * cast(w) accumulates into the
// buffer it reads: one VMULADD per tap (d = d + a * b, rounded as the separate
// multiply and add), not a VMUL into scratch and a VADD. The staged input is
// read through the same widening cast under all nine taps: it is widened once
// per band after its DMA (".wide"), so the taps read the wide copy and no
// cast runs per tap; int8's exact int16 product (Halide's int32(int16(in) *
// int16(w))) becomes an int32 product, so int8 takes the same VMULADD.
TEST(DepthwiseVector, OneMultiplyAddPerTapAndTheInputWidenedOncePerBand) {
    for (const char *dt : {"fp16", "int8"}) {
        const double tol = std::string(dt) == "fp16" ? 1e-4 : 0;
        // Two bands of two output rows, nine taps, each tap one folded instruction per band row.
        NpuRun r = run_npu("depthwise", {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"dtype", dt}},
                           sample_schedule("depthwise/schedules/ascend_bands.json"), "ascend-like", fresh_seed(), tol,
                           tol);
        EXPECT_EQ(r.cmp.mismatches, 0) << dt << " " << failure(r);
        // The first tap writes the accumulator (VMUL, no zero fill: see
        // FuseConstantInit below), the other eight accumulate into it.
        EXPECT_EQ(executed(r, isa::Op::VMULADD), 2u * 2u * 8u) << dt << " " << failure(r);
        EXPECT_EQ(executed(r, isa::Op::VMUL), 2u * 2u) << dt << " " << failure(r);
        EXPECT_EQ(executed(r, isa::Op::VADD), 0u) << dt << " " << failure(r);
        EXPECT_EQ(executed(r, isa::Op::VDUP), 0u) << dt << " " << failure(r);
        bool widened = false;
        for (const auto &[name, b] : r.backend.module.buffers) {
            widened = widened || (name.rfind("in_", 0) == 0 && name.find(".wide") != std::string::npos);
        }
        EXPECT_TRUE(widened) << dt << " " << failure(r);
        // The casts of many rows: the input's, one folded VCAST per band (4
        // input rows x 8 columns), and the filter's, staged once and widened
        // once (9 taps as 9 rows); before, one per tap and band row (36 of 6
        // rows each per band). A cast left per tap would run on one row.
        // Counted as executions, not rows: bank_placement may lay the fp16
        // input band out in 128-byte runs, its cast then one row per repeat.
        uint64_t casts = 0;
        for (const auto &e : r.report.trace) {
            const isa::Instr &i = r.backend.program.code.at(e.pc);
            casts += e.op == isa::Op::VCAST && i.rows > 1;
        }
        EXPECT_EQ(casts, 2u + 1u) << dt << " " << failure(r);
    }
}

// At 28x28x128 fp16 the filter is not widened (the wide input band, the
// double-buffered input and accumulator leave no room), so each tap casts its
// filter row: once per tap and output row, one row each, hoisted out of the
// 28 folded pixels. The first tap's cast too: it multiplies a plain load and
// gets scratch of its own rather than the accumulator, where it ran on all 28
// rows. 14 bands x (4 input rows x 30 pixels + 2 output rows x 9 taps).
TEST(DepthwiseVector, FilterCastsRunOncePerTapAtFullSize) {
    NpuRun r = run_npu("depthwise", {{"H", "28"}, {"W", "28"}, {"C", "128"}, {"dtype", "fp16"}},
                       sample_schedule("depthwise/schedules/ascend_bands.json"), "ascend-like", fresh_seed(), 1e-4,
                       1e-4);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(executed_rows(r, isa::Op::VCAST), 14u * (4u * 30u + 2u * 9u)) << failure(r);
}

// A reduction whose initial value is a constant (pooling's 0 or the type's
// lowest value, depthwise's 0) starts from its first iteration instead: the
// first window tap writes the result (a VCAST or VMOV of the input), the other
// taps combine into it, and no VDUP fills the buffer first. Same results.
TEST(FuseConstantInit, PoolingStartsFromTheFirstWindowTap) {
    // Output 4 x 6 pixels of 128 channels; avg in bands of 2 output rows, max in one band of 4.
    const ParamMap avg = {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"op", "avg"}, {"dtype", "fp16"}};
    NpuRun a = run_npu("pooling", avg, sample_schedule("pooling/schedules/ascend_avg.json"), "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(a.cmp.mismatches, 0) << failure(a);
    EXPECT_EQ(executed(a, isa::Op::VDUP), 0u) << failure(a);
    EXPECT_EQ(executed(a, isa::Op::VADD), 4u * 3u) << "3 of the 4 taps add, per output row\n" << failure(a);
    const ParamMap max = {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"op", "max"}, {"dtype", "int8"}};
    NpuRun m = run_npu("pooling", max, sample_schedule("pooling/schedules/ascend_max.json"), "ascend-like",
                       fresh_seed());
    EXPECT_EQ(m.cmp.mismatches, 0) << failure(m);
    EXPECT_EQ(executed(m, isa::Op::VDUP), 0u) << failure(m);
    EXPECT_EQ(executed(m, isa::Op::VMAX), 4u * 3u) << "3 of the 4 taps take the maximum, per output row\n"
                                                    << failure(m);
}

// select_instructions: an integer constant operand is the immediate of ADDI /
// MULI (no LI into a register first, no multiply by 1), a binary operation on a
// variable writes a fresh register directly (no MOV copy first), and a loop of
// a constant positive trip count tests at the bottom (one BLT per iteration, no
// BGE at the top and JMP back). Max pooling's first input DMA then leaves at
// the 13th instruction of the program (the 21st before).
TEST(SelectInstructions, ConstantsAreImmediatesAndCountedLoopsTestAtTheBottom) {
    NpuRun r = run_npu("pooling", {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"op", "max"}, {"dtype", "int8"}},
                       sample_schedule("pooling/schedules/ascend_max.json"), "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(static_count(r, isa::Op::MUL), 0) << failure(r);
    EXPECT_EQ(static_count(r, isa::Op::BGE), 0) << failure(r);
    EXPECT_EQ(static_count(r, isa::Op::JMP), 0) << failure(r);
    // Every loop is a backward BLT at its bottom (the schedule's loops: the
    // bands, the output rows in a band, and the pixels of a row).
    const auto &code = r.backend.program.code;
    int backward = 0;
    for (size_t pc = 0; pc < code.size(); ++pc) {
        if (code[pc].op == isa::Op::BLT) {
            EXPECT_LT(code[pc].imm, static_cast<int64_t>(pc)) << "a BLT that does not close a loop at pc " << pc;
            backward++;
        }
    }
    EXPECT_GE(backward, 3) << failure(r);
    const auto first_dma = std::find_if(code.begin(), code.end(), [](const isa::Instr &i) { return i.op == isa::Op::DMA; });
    ASSERT_NE(first_dma, code.end());
    EXPECT_LE(first_dma - code.begin(), 12) << failure(r);
    // The copies' index t mod 2 is one REMI, no LI of the 2 first.
    EXPECT_EQ(static_count(r, isa::Op::REM), 0) << failure(r);
    EXPECT_GT(static_count(r, isa::Op::REMI), 0) << failure(r);
}

// ---------------------------------------------------------------- gemmini-like, auto-int8
// Both keep their vector unit in the accumulator level ACC. gemmini-like
// multiplies int8 only and its vector unit has no fp16; auto-int8 multiplies
// int8 and fp16, but none of its DMA engines writes ACC (GM -> CBUF, GM <-> SRAM,
// ACC -> GM/SRAM), so nothing can be staged where its vector unit reads.

struct PresetCase {
    std::string arch, dtype;
};

void PrintTo(const PresetCase &c, std::ostream *os) { *os << c.arch << " " << c.dtype; }

std::string preset_name(const ::testing::TestParamInfo<PresetCase> &info) {
    std::string n = info.param.arch + "_" + info.param.dtype;
    for (char &ch : n) {
        ch = ch == '-' ? '_' : ch;
    }
    return n;
}

class ConvOtherPresets : public ::testing::TestWithParam<PresetCase> {};

TEST_P(ConvOtherPresets, DefaultScheduleScalar3x3) {
    const PresetCase &c = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(c.dtype, 3, 3, 4, 4, 3, 1), Schedule().spec(), c.arch, fresh_seed(),
                       conv_atol(c.dtype), conv_rtol(c.dtype));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

INSTANTIATE_TEST_SUITE_P(Presets, ConvOtherPresets,
                         ::testing::Values(PresetCase{"gemmini-like", "int8"}, PresetCase{"auto-int8", "int8"},
                                           PresetCase{"auto-int8", "fp16"}),
                         preset_name);

TEST(ConvGemmini, StagedVectorised3x3Int8) {
    NpuRun r = run_npu("conv2d", conv_params("int8", 4, 4, 8, 16, 3, 1), conv_staged_vector("ACC", 2, 16), "gemmini-like",
                       fresh_seed());
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GE(executed(r, isa::Op::DMA), 6u) << "input, weights and output tile per band\n" << failure(r);
    // Measured: Halide turns cast<int32>(int8) * cast<int32>(int8) into an int16
    // product widened to int32, and gemmini-like's vector unit has no int16, so
    // acc falls back to scalar code; the fallback must at least be reported.
    if (counts(r).vec < 2) {
        EXPECT_TRUE(mentions_scalar_func(r, "acc")) << failure(r);
    }
}

TEST(ConvGemmini, Tensorized1x1Int8) {
    NpuRun r = run_npu("conv2d", conv_params("int8", 2, 16, 32, 32, 1, 1), conv1x1_tensorized(16, 16, 16, "", "SPAD", "SPAD", "ACC"),
                       "gemmini-like", fresh_seed());
    expect_tensorized(r, 2 * 2 * 2); // rows x channel tiles x ci chunks
}

class ConvAutoInt8 : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvAutoInt8, Tensorized1x1) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(dt, 2, 8, 64, 64, 1, 1), conv1x1_tensorized(32, 8, 64, "", "CBUF", "CBUF", "ACC"),
                       "auto-int8", fresh_seed(), conv_atol(dt), conv_rtol(dt));
    expect_tensorized(r, 2 * 2); // rows x channel tiles, one ci chunk
}

// The input and weight copies into ACC have no DMA engine on auto-int8, so they
// run as scalar copies (reported); the accumulator still runs on the vector unit.
TEST_P(ConvAutoInt8, StagedVectorised3x3) {
    const std::string dt = GetParam();
    NpuRun r = run_npu("conv2d", conv_params(dt, 4, 4, 8, 16, 3, 1), conv_staged_vector("ACC", 2, 16), "auto-int8",
                       fresh_seed(), conv_atol(dt), conv_rtol(dt));
    expect_vector_acc(r);
    EXPECT_GE(counts(r).scalar_funcs, 1) << "the staging copies into ACC are scalar code and should be reported\n"
                                         << failure(r);
}

INSTANTIATE_TEST_SUITE_P(Types, ConvAutoInt8, ::testing::Values("int8", "fp16"));

TEST(SoftmaxGemmini, StagedVectorisedFp32) {
    NpuRun r = run_npu("softmax", {{"ROWS", "16"}, {"COLS", "64"}, {"dtype", "fp32"}}, softmax_staged_vector("ACC", 8, 16),
                       "gemmini-like", fresh_seed(), sm_atol("fp32"), sm_rtol("fp32"));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GE(counts(r).vec, 7) << failure(r);
    EXPECT_EQ(static_count(r, isa::Op::VDUP), 2) << "the statistics' initial values only\n" << failure(r);
    EXPECT_EQ(counts(r).scalar_funcs, 0) << failure(r);
}

class SoftmaxOtherPresets : public ::testing::TestWithParam<PresetCase> {};

TEST_P(SoftmaxOtherPresets, ScalarStatisticsAtRoot) {
    const PresetCase &c = GetParam();
    NpuRun r = run_npu("softmax", {{"ROWS", "4"}, {"COLS", "32"}, {"dtype", c.dtype}}, softmax_scalar(), c.arch,
                       fresh_seed(), sm_atol(c.dtype), sm_rtol(c.dtype));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

INSTANTIATE_TEST_SUITE_P(Presets, SoftmaxOtherPresets,
                         ::testing::Values(PresetCase{"gemmini-like", "fp32"}, PresetCase{"gemmini-like", "fp16"},
                                           PresetCase{"auto-int8", "fp32"}, PresetCase{"auto-int8", "fp16"}),
                         preset_name);

// As for the convolution: the input band is copied into ACC by scalar code.
TEST(SoftmaxAutoInt8, StagedVectorisedFp16) {
    NpuRun r = run_npu("softmax", {{"ROWS", "16"}, {"COLS", "64"}, {"dtype", "fp16"}}, softmax_staged_vector("ACC", 8, 32),
                       "auto-int8", fresh_seed(), sm_atol("fp16"), sm_rtol("fp16"));
    note(r);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GE(counts(r).vec, 8) << failure(r);
}
