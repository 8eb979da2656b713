// NPU result == Halide CPU result on fresh random inputs, output poisoned
// before each run, for schedules that exercise each backend path.
#include "tests/backend/NpuHarness.h"

#include "samples/gemm/GemmSchedules.h"

#include "npu_target/arch/ArchSpec.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <unistd.h>

using namespace tessel;
using namespace tessel::test;

namespace {


ScheduleSpec naive() { return Schedule().spec(); }

// acc tiled at C's tile loop, A and B staged into the vector level per tile:
// the staging copies become DMAs, the multiply-accumulate runs as scalar code.
ScheduleSpec tiled_staged_scalar(const std::string &level, int tm, int tn) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", tn, tm);
    s.func("acc").compute_at("C", "jo");
    s.stage("A", level).at("C", "jo");
    s.stage("B", level).at("C", "jo");
    return s.spec();
}

} // namespace

TEST(BackendGemm, NaiveScalarInt8AscendLike) {
    NpuRun r = run_npu("gemm", {{"M", "16"}, {"N", "16"}, {"K", "8"}, {"dtype", "int8"}}, naive(), "ascend-like",
                       fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GT(r.report.cycles, 0u);
}

TEST(BackendGemm, NaiveScalarFp16AscendLike) {
    NpuRun r = run_npu("gemm", {{"M", "8"}, {"N", "16"}, {"K", "8"}, {"dtype", "fp16"}}, naive(), "ascend-like",
                       fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

TEST(BackendGemm, StagedCopiesBecomeDma) {
    NpuRun r = run_npu("gemm", {{"M", "32"}, {"N", "32"}, {"K", "16"}, {"dtype", "int8"}},
                       tiled_staged_scalar("UB", 16, 16), "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int dmas = 0;
    for (const auto &i : r.backend.program.code) {
        dmas += i.op == isa::Op::DMA;
    }
    EXPECT_GE(dmas, 3) << "A, B and C copies should be DMAs\n" << failure(r);
}

namespace {
// The elementwise chain sample: out = exp(relu(a + b) * c) in the vector level.
ScheduleSpec elementwise_vector(int tile, int vec) {
    Schedule s;
    s.func("out").split("x", "xo", "xi", tile);
    s.stage("a", "UB").at("out", "xo");
    s.stage("b", "UB").at("out", "xo");
    s.stage("c", "UB").at("out", "xo");
    s.func("ew").compute_at("out", "xo").vectorize("x", vec);
    return s.spec();
}
} // namespace

TEST(BackendElementwise, ScalarFallbackFp32) {
    NpuRun r = run_npu("elementwise", {{"N", "64"}, {"dtype", "fp32"}}, naive(), "ascend-like", fresh_seed(), 1e-6, 1e-6);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

TEST(BackendElementwise, StagedVectorFp16) {
    NpuRun r = run_npu("elementwise", {{"N", "2048"}, {"dtype", "fp16"}}, elementwise_vector(512, 128), "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int vec = 0, dma = 0;
    for (const auto &i : r.backend.program.code) {
        vec += i.op >= isa::Op::VADD && i.op <= isa::Op::VREQUANT;
        dma += i.op == isa::Op::DMA;
    }
    EXPECT_GE(vec, 6) << "the chain should run on the vector unit";
    EXPECT_GE(dma, 4) << failure(r);
    for (const auto &d : r.backend.diagnostics) {
        EXPECT_EQ(d.message.find("scalar code"), std::string::npos) << d.message;
    }
}

namespace {
// GM -> L1 -> L0A/L0B staging, the accumulator in L0C, the k-chunk product on
// the matrix unit, the tile written back by the FIX engine.
ScheduleSpec tensorized(int tm, int tn, int tk, int buffers) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", tn, tm);
    s.func("acc").compute_at("C", "jo");
    s.func("acc").update(0).split("k", "ko", "ki", tk);
    s.func("acc").update(0).reorder({"j", "i", "ki", "ko"});
    s.stage("A", "L1").at("acc", "ko").buffers(buffers);
    s.stage("B", "L1").at("acc", "ko").buffers(buffers);
    s.stage("A", "L0A").at("acc", "ko");
    s.stage("B", "L0B").at("acc", "ko");
    s.func("acc").accumulate_in("L0C");
    s.func("acc").update(0).tensorize();
    return s.spec();
}
} // namespace

class BackendGemmTensorized : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendGemmTensorized, MatchesCpu) {
    NpuRun r = run_npu("gemm", {{"M", "64"}, {"N", "128"}, {"K", "64"}, {"dtype", GetParam()}}, tensorized(32, 64, 32, 1),
                       "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int mmad = 0;
    for (const auto &i : r.backend.program.code) {
        mmad += i.op == isa::Op::MMAD;
    }
    EXPECT_GE(mmad, 1) << failure(r);
    for (const auto &d : r.backend.diagnostics) {
        EXPECT_EQ(d.message.find("scalar code"), std::string::npos) << d.message;
    }
}

INSTANTIATE_TEST_SUITE_P(Types, BackendGemmTensorized, ::testing::Values("fp16", "int8"));

// The copies of a multi-buffered buffer keep rotating across the loops around
// its rotation loop: with 3 k-chunks per tile and 2 or 3 copies, tile t+1's
// first chunk uses the copy after tile t's last one (not copy 0 again), the
// credits are set once before the outermost loop and taken back once after it,
// and the result is still exact. Without the continued count the next tile's
// first transfer would have to wait for the last tile's compute (a drain per
// tile); the run is shorter than with one copy.
TEST(BackendMultiBuffer, CopiesRotateAcrossTilesWithOddChunkCounts) {
    auto schedule = [](int buffers) { return gemm_ascend_tensorized(32, 32, 32, buffers); };
    ParamMap p = {{"M", "96"}, {"N", "64"}, {"K", "96"}, {"dtype", "int8"}}; // 3 x 2 tiles, 3 k-chunks each
    uint64_t seed = fresh_seed();
    NpuRun one = run_npu("gemm", p, schedule(1), "ascend-like", seed);
    EXPECT_EQ(one.cmp.mismatches, 0) << failure(one);
    for (int buffers : {2, 3}) {
        NpuRun r = run_npu("gemm", p, schedule(buffers), "ascend-like", seed);
        EXPECT_EQ(r.cmp.mismatches, 0) << "buffers=" << buffers << ": " << failure(r);
        EXPECT_LT(r.report.cycles, one.report.cycles) << "buffers=" << buffers;
        std::string ir = nir::to_string(r.backend.module);
        // Halide names carry a per-process "$N" suffix: C$3.s0.i.io.
        EXPECT_TRUE(std::regex_search(ir, std::regex(R"(rotating on acc\S*\.ko across C\S*\.s0\.i\.io)")))
            << ir.substr(0, 2000);
    }
}

// parallel(C, io, cores): each core computes a band of output rows; GM and L2
// are shared. The result is exact and the run is shorter than on one core.
TEST(BackendMultiCore, GemmSplitAcrossCores) {
    auto schedule = [](int cores) {
        Schedule s;
        s.func("C").tile("j", "i", "jo", "io", "ji", "ii", 64, 32);
        if (cores > 1) {
            s.func("C").parallel("io", cores);
        }
        s.func("acc").compute_at("C", "jo");
        s.func("acc").update(0).split("k", "ko", "ki", 32);
        s.func("acc").update(0).reorder({"j", "i", "ki", "ko"});
        s.stage("A", "L1").at("acc", "ko").buffers(2);
        s.stage("B", "L1").at("acc", "ko").buffers(2);
        s.stage("A", "L0A").at("acc", "ko").buffers(2);
        s.stage("B", "L0B").at("acc", "ko").buffers(2);
        s.func("acc").accumulate_in("L0C", 2);
        s.func("acc").update(0).tensorize();
        return s.spec();
    };
    ParamMap p = {{"M", "128"}, {"N", "128"}, {"K", "128"}, {"dtype", "int8"}};
    uint64_t seed = fresh_seed();
    NpuRun one = run_npu("gemm", p, schedule(1), "ascend-like", seed);
    NpuRun four = run_npu("gemm", p, schedule(4), "ascend-like", seed);
    EXPECT_EQ(one.cmp.mismatches, 0) << failure(one);
    EXPECT_EQ(four.cmp.mismatches, 0) << failure(four);
    EXPECT_EQ(four.backend.program.cores, 4);
    EXPECT_EQ(four.report.cores, 4);
    EXPECT_LT(four.report.cycles * 2, one.report.cycles) << "4 cores should be more than twice as fast here";
}

// With a scalar unit of 12 registers (3 hold the arguments, 8 are kept for
// expression temporaries), every let and loop counter is spilled to the scalar
// stack: the program loads and stores them there, and the result is unchanged.
TEST(BackendRegisters, SpillsToTheScalarStackUnderPressure) {
    nlohmann::json j = nlohmann::json::parse(load_arch("ascend-like").to_json());
    j["scalar"]["registers"] = 12;
    j["name"] = "ascend-like-12regs";
    std::string path = testing::TempDir() + "/ascend_12regs_" + std::to_string(::getpid()) + ".json";
    {
        std::ofstream f(path);
        f << j.dump(2);
    }
    NpuRun r = run_npu("gemm", {{"M", "8"}, {"N", "16"}, {"K", "8"}, {"dtype", "int8"}}, tiled_staged_scalar("UB", 8, 8),
                       path, fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int spill_stores = 0, spill_loads = 0;
    for (const auto &i : r.backend.program.code) {
        spill_stores += i.op == isa::Op::ST && i.level == isa::kStackLevel;
        spill_loads += i.op == isa::Op::LD && i.level == isa::kStackLevel;
    }
    EXPECT_GT(spill_stores, 0);
    EXPECT_GT(spill_loads, spill_stores) << "a spilled value is loaded at each use";
}
