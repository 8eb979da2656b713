// The search space: only legal schedules (sampled candidates compile and verify
// through the facade), footprints within every level, the rules that exclude
// candidates, and the hand schedules of samples/ inside the space.
#include "dsl/Compile.h"
#include "npu_target/common/Error.h"
#include "scheduler/Tuner.h"
#include "tests/scheduler/SchedTestUtil.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <set>
#include <thread>

using namespace tessel;
using namespace tessel::sched;

namespace {

// Draws `count` distinct candidates (a few of each path; only those `keep`
// accepts when given), runs them all through tessel::run on two threads and
// expects each to compile and verify.
void expect_sample_verifies(const std::string &generator, const ParamMap &params, const std::string &arch, int count,
                            uint64_t seed, const std::function<bool(const Candidate &)> &keep = nullptr) {
    SearchSpace space = test::space_for(generator, params, arch);
    std::mt19937_64 rng(seed);
    std::vector<Candidate> picks;
    std::set<Candidate> seen;
    for (int i = 0; static_cast<int>(picks.size()) < count && i < 1000; i++) {
        Candidate c = space.random(rng);
        if (c.path != Path::Naive && (!keep || keep(c)) && seen.insert(c).second) {
            picks.push_back(c);
        }
    }
    ASSERT_EQ(static_cast<int>(picks.size()), count);
    std::vector<std::string> failures(picks.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < picks.size(); i = next++) {
            RunReport r = run(request_for(space, picks[i], arch), seed + i);
            for (const Diagnostic &d : r.diagnostics) {
                if (d.severity == Diagnostic::Error) {
                    failures[i] += d.message + "\n";
                }
            }
            if (!r.verified) {
                failures[i] += "not verified: " + r.comparison;
            }
        }
    };
    std::thread t1(work), t2(work);
    t1.join();
    t2.join();
    for (size_t i = 0; i < picks.size(); i++) {
        EXPECT_TRUE(failures[i].empty()) << picks[i].describe() << " (seed " << seed << ")\n"
                                         << schedule_to_json(space.to_spec(picks[i])) << failures[i];
    }
}

} // namespace

TEST(SearchSpace, EveryEnumeratedCandidateIsLegalAndFits) {
    for (const char *arch : {"ascend-like", "gemmini-like"}) {
        ParamMap p = {{"M", "64"}, {"N", "64"}, {"K", "128"}, {"dtype", "int8"}};
        SearchSpace space = test::space_for("gemm", p, arch);
        std::vector<Candidate> all = space.enumerate();
        ASSERT_GT(all.size(), 20u) << arch;
        std::set<std::string> hashes;
        for (const Candidate &c : all) {
            std::string why;
            EXPECT_TRUE(space.legal(c, &why)) << c.describe() << ": " << why;
            for (const auto &[level, bytes] : space.footprint(c)) {
                EXPECT_LE(static_cast<uint64_t>(bytes), space.problem().arch.find_level(level)->size_bytes)
                    << c.describe() << " in " << level;
            }
            hashes.insert(schedule_hash(space.to_spec(c)));
        }
        EXPECT_EQ(hashes.size(), all.size()) << "two candidates give the same schedule on " << arch;
    }
}

TEST(SearchSpace, RulesExcludeIllegalChoices) {
    SearchSpace space = test::space_for("gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, "ascend-like");
    EXPECT_EQ(space.mid_level(), "L1");
    Candidate c;
    c.path = Path::Matrix;
    c.tile_m = 128, c.tile_n = 128, c.k_chunk = 64, c.via_mid = true, c.mid_buffers = 2, c.op_buffers = 2;
    c.acc_buffers = 2;
    std::string why;
    EXPECT_TRUE(space.legal(c, &why)) << why;
    // 256x256 fp32 accumulators: 256 KiB x 1 > L0C's 128 KiB.
    Candidate big = c;
    big.tile_m = 256, big.tile_n = 256, big.acc_buffers = 1;
    EXPECT_FALSE(space.legal(big, &why));
    EXPECT_NE(why.find("L0C needs 262144 bytes"), std::string::npos) << why;
    Candidate odd = c;
    odd.tile_n = 96; // does not divide 256
    EXPECT_FALSE(space.legal(odd, &why));
    Candidate cores = c;
    cores.cores = 64; // the chip has 24
    EXPECT_FALSE(space.legal(cores, &why));
    EXPECT_NE(why.find("chip has 24"), std::string::npos) << why;
    Candidate direct = c;
    direct.via_mid = false, direct.mid_buffers = 1; // MTE2 also copies GM -> L0A/L0B: both routes are searched
    EXPECT_TRUE(space.legal(direct, &why)) << why;
    direct.a_panel = true;
    EXPECT_FALSE(space.legal(direct, &why)) << "a panel lives in the mid level";

    // gemmini-like: GM -> SPAD directly, one core, int8 only on the matrix unit.
    SearchSpace g = test::space_for("gemm", {{"M", "128"}, {"N", "128"}, {"K", "128"}, {"dtype", "int8"}}, "gemmini-like");
    EXPECT_EQ(g.mid_level(), "");
    Candidate mid = *g.enumerate().begin();
    mid.via_mid = true;
    EXPECT_FALSE(g.legal(mid, &why));
    EXPECT_NE(why.find("no mid level"), std::string::npos) << why;
    for (const Candidate &x : g.enumerate()) {
        EXPECT_FALSE(x.via_mid);
        EXPECT_EQ(x.cores, 1);
        EXPECT_NE(x.path, Path::Vector) << "the vector level of gemmini-like is the accumulator";
    }
    SearchSpace g16 = test::space_for("gemm", {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "int16"}}, "gemmini-like");
    for (const Candidate &x : g16.enumerate()) {
        EXPECT_NE(x.path, Path::Matrix) << "the matrix unit of gemmini-like takes int8 only";
    }
    EXPECT_THROW(make_problem("layernorm", {}, load_arch("ascend-like")), UserError);
    EXPECT_THROW(make_problem("conv2d", {{"stride", "2"}}, load_arch("ascend-like")), UserError);
}

TEST(SearchSpace, HandSchedulesAreInTheSpace) {
    const std::string dir = test::source_dir() + "/samples/";
    struct Case {
        std::string generator, arch, file;
        ParamMap params;
        Candidate c;
    };
    Candidate staged;
    staged.tile_m = 128, staged.tile_n = 128, staged.k_chunk = 64, staged.via_mid = true, staged.mid_buffers = 2;
    staged.op_buffers = 2, staged.acc_buffers = 2;
    Candidate panel = staged;
    panel.k_chunk = 128, panel.a_panel = true;
    Candidate gemmini;
    gemmini.tile_m = 64, gemmini.tile_n = 128, gemmini.k_chunk = 128, gemmini.op_buffers = 2, gemmini.acc_buffers = 2;
    Candidate add;
    add.path = Path::Vector, add.tile_n = 16384, add.op_buffers = 2, add.vector = 128;
    Candidate conv; // 32 output channels x 16 pixels per tile, every buffer doubled
    conv.tile_n = 32, conv.tile_m = 16, conv.k_chunk = 32, conv.op_buffers = 2, conv.acc_buffers = 2;
    Candidate conv_l1 = conv;
    conv_l1.via_mid = true, conv_l1.mid_buffers = 2;
    auto softmax = [](int64_t rows, int vec) {
        Candidate c;
        c.path = Path::Vector, c.tile_m = rows, c.vector = vec;
        return c;
    };
    Candidate resident; // ops_ascend_3x3.json: whole rows x 128 channels, weights in L1, bands of 4 rows
    resident.tile_m = 32, resident.tile_n = 128, resident.k_chunk = 64, resident.band = 4, resident.via_mid = true;
    resident.mid_buffers = resident.op_buffers = resident.acc_buffers = 2;
    Candidate reduce = softmax(16, 1024); // ascend_reduce.json: the row reductions along the row
    reduce.row_reduce = true, reduce.op_buffers = 2;
    const ParamMap conv_fp16 = {{"H", "16"}, {"W", "16"}, {"CI", "32"}, {"CO", "32"}, {"dtype", "fp16"}};
    const ParamMap conv_int8 = {{"H", "16"}, {"W", "16"}, {"CI", "32"}, {"CO", "32"}, {"dtype", "int8"}};
    const std::vector<Case> cases = {
        {"gemm", "ascend-like", "gemm/schedules/tiled_staged.json", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, staged},
        {"gemm", "ascend-like", "gemm/schedules/ascend_panel.json", {{"M", "1024"}, {"N", "1024"}, {"K", "1024"}}, panel},
        {"gemm", "gemmini-like", "gemm/schedules/gemmini_int8.json",
         {{"M", "512"}, {"N", "512"}, {"K", "512"}, {"dtype", "int8"}}, gemmini},
        {"elementwise", "ascend-like", "elementwise/schedules/add_staged.json",
         {{"N", "262144"}, {"op", "add"}}, add},
        {"conv2d", "ascend-like", "conv2d/schedules/ascend_tensorized.json", conv_fp16, conv_l1},
        {"conv2d", "ascend-like", "conv2d/schedules/ops_ascend_3x3.json",
         {{"H", "16"}, {"W", "32"}, {"CI", "64"}, {"CO", "128"}, {"dtype", "fp16"}}, resident},
        {"conv2d", "gemmini-like", "conv2d/schedules/gemmini_int8.json", conv_int8, conv},
        {"conv2d", "auto-int8", "conv2d/schedules/auto_int8.json", conv_int8, conv},
        {"softmax", "ascend-like", "softmax/schedules/staged_vector.json",
         {{"ROWS", "256"}, {"COLS", "256"}, {"dtype", "fp16"}}, softmax(8, 64)},
        {"softmax", "ascend-like", "softmax/schedules/ascend_reduce.json",
         {{"ROWS", "256"}, {"COLS", "1024"}, {"dtype", "fp16"}}, reduce},
        {"softmax", "gemmini-like", "softmax/schedules/gemmini_fp32.json",
         {{"ROWS", "64"}, {"COLS", "256"}, {"dtype", "fp32"}}, softmax(16, 16)},
        {"softmax", "auto-int8", "softmax/schedules/auto_int8.json",
         {{"ROWS", "32"}, {"COLS", "128"}, {"dtype", "fp16"}}, softmax(8, 16)},
    };
    for (const Case &k : cases) {
        SearchSpace space = test::space_for(k.generator, k.params, k.arch);
        std::string why;
        EXPECT_TRUE(space.legal(k.c, &why)) << k.file << ": " << why;
        EXPECT_EQ(schedule_to_json(space.to_spec(k.c)), schedule_to_json(load_schedule(dir + k.file))) << k.file;
        std::vector<Candidate> all = space.enumerate();
        EXPECT_NE(std::find(all.begin(), all.end(), k.c), all.end()) << k.file << " not enumerated";
    }
}

TEST(SearchSpace, MutationsStayLegalAndChange) {
    SearchSpace space = test::space_for("gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, "ascend-like");
    std::mt19937_64 rng(7);
    Candidate c = space.random(rng);
    for (int i = 0; i < 300; i++) {
        Candidate m = space.mutate(c, rng);
        std::string why;
        ASSERT_TRUE(space.legal(m, &why)) << m.describe() << ": " << why;
        EXPECT_NE(m, c);
        c = m;
    }
}

TEST(SearchSpace, SampledGemmSchedulesCompileAndVerify) {
    expect_sample_verifies("gemm", {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "fp16"}}, "ascend-like", 14, 11);
    expect_sample_verifies("gemm", {{"M", "64"}, {"N", "64"}, {"K", "128"}, {"dtype", "int8"}}, "gemmini-like", 6, 12);
}

TEST(SearchSpace, SampledConvSchedulesCompileAndVerify) {
    expect_sample_verifies("conv2d", {{"H", "2"}, {"W", "8"}, {"CI", "16"}, {"CO", "32"}, {"K", "3"}, {"dtype", "int8"}},
                           "ascend-like", 6, 15);
}

TEST(SearchSpace, SampledConvSchedulesCompileAndVerifyOnTheSmallPresets) {
    // gemmini-like: GM -> SPAD; auto-int8: GM -> CBUF directly or through SRAM.
    const ParamMap p = {{"H", "2"}, {"W", "8"}, {"CI", "32"}, {"CO", "32"}, {"K", "3"}, {"dtype", "int8"}};
    expect_sample_verifies("conv2d", p, "gemmini-like", 3, 16);
    expect_sample_verifies("conv2d", p, "auto-int8", 4, 17);
}

TEST(SearchSpace, SampledSoftmaxSchedulesCompileAndVerify) {
    expect_sample_verifies("softmax", {{"ROWS", "32"}, {"COLS", "128"}, {"dtype", "fp16"}}, "ascend-like", 8, 18);
    expect_sample_verifies("softmax", {{"ROWS", "32"}, {"COLS", "64"}, {"dtype", "fp32"}}, "gemmini-like", 4, 19);
    // auto-int8: no engine writes ACC, the band is copied in by scalar code (slow: a small shape)
    expect_sample_verifies("softmax", {{"ROWS", "8"}, {"COLS", "32"}, {"dtype", "fp16"}}, "auto-int8", 2, 20);
}

TEST(SearchSpace, SoftmaxSpace) {
    SearchSpace space = test::space_for("softmax", {{"ROWS", "256"}, {"COLS", "256"}, {"dtype", "fp16"}}, "ascend-like");
    std::vector<Candidate> all = space.enumerate();
    ASSERT_GT(all.size(), 50u);
    std::set<int64_t> bands, along;
    for (const Candidate &c : all) {
        if (c.path == Path::Vector) {
            (c.row_reduce ? along : bands).insert(c.tile_m);
            EXPECT_LE(static_cast<uint64_t>(space.footprint(c).at("UB")), 196608u) << c.describe();
        }
    }
    EXPECT_EQ(bands, (std::set<int64_t>{2, 4, 8, 16, 32})) << "64 rows x 256 fp16 with its fp32 scratch exceed UB";
    // Reductions along the row need no band-sized cast: one row and up to 64 rows.
    EXPECT_EQ(along, (std::set<int64_t>{1, 2, 4, 8, 16, 32, 64}));
    Candidate big;
    big.path = Path::Vector, big.tile_m = 64, big.vector = 64;
    std::string why;
    EXPECT_FALSE(space.legal(big, &why));
    EXPECT_NE(why.find("UB needs"), std::string::npos) << why;
    // gemmini-like's vector unit has no fp16: only the default schedule is left.
    SearchSpace g16 = test::space_for("softmax", {{"ROWS", "16"}, {"COLS", "64"}, {"dtype", "fp16"}}, "gemmini-like");
    ASSERT_EQ(g16.enumerate().size(), 1u);
    EXPECT_EQ(g16.enumerate()[0].path, Path::Naive);
}

TEST(SearchSpace, SampledElementwiseSchedulesCompileAndVerify) {
    expect_sample_verifies("elementwise", {{"N", "16384"}, {"op", "chain"}}, "ascend-like", 10, 13);
    expect_sample_verifies("elementwise", {{"N", "16384"}, {"op", "add"}}, "ascend-like", 10, 14);
}

TEST(SearchSpace, ResidentWeightConvForm) {
    // 16x32 pixels, 64 -> 128 channels: all 3x3 weights (144 KiB fp16) fit L1, so
    // the space has bands of rows with resident weights; the band's accumulator
    // must fit L0C (16 rows x 32 x 128 fp32 = 256 KiB does not).
    const ParamMap p = {{"H", "16"}, {"W", "32"}, {"CI", "64"}, {"CO", "128"}, {"dtype", "fp16"}};
    SearchSpace space = test::space_for("conv2d", p, "ascend-like");
    std::set<int64_t> bands;
    for (const Candidate &c : space.enumerate()) {
        if (c.band > 0) {
            bands.insert(c.band);
            EXPECT_TRUE(c.via_mid && c.tile_m == 32 && c.tile_n == 128 && c.k_chunk == 64) << c.describe();
        }
    }
    EXPECT_EQ(bands, (std::set<int64_t>{1, 2, 4, 8})) << "8 rows only with one accumulator";
    Candidate c;
    c.tile_m = 32, c.tile_n = 128, c.k_chunk = 64, c.band = 16, c.via_mid = true;
    std::string why;
    EXPECT_FALSE(space.legal(c, &why));
    EXPECT_NE(why.find("L0C needs 262144 bytes"), std::string::npos) << why;
    c.band = 4, c.tile_n = 64; // a band's accumulator holds whole rows of all channels
    EXPECT_FALSE(space.legal(c, &why));
    EXPECT_NE(why.find("whole output rows"), std::string::npos) << why;
    // gemmini-like has no mid level to hold the weights: no such form.
    SearchSpace g = test::space_for("conv2d", {{"H", "4"}, {"W", "8"}, {"CI", "32"}, {"CO", "32"}, {"dtype", "int8"}},
                                    "gemmini-like");
    for (const Candidate &x : g.enumerate()) {
        EXPECT_EQ(x.band, 0) << x.describe();
    }
}

TEST(SearchSpace, SampledResidentWeightConvSchedulesCompileAndVerify) {
    auto resident = [](const Candidate &c) { return c.band > 0; };
    expect_sample_verifies("conv2d", {{"H", "4"}, {"W", "8"}, {"CI", "16"}, {"CO", "32"}, {"K", "3"}, {"dtype", "fp16"}},
                           "ascend-like", 4, 21, resident);
    // auto-int8: weights and bands in SRAM, then SRAM -> CBUF
    expect_sample_verifies("conv2d", {{"H", "2"}, {"W", "8"}, {"CI", "32"}, {"CO", "32"}, {"K", "3"}, {"dtype", "int8"}},
                           "auto-int8", 2, 22, resident);
}

TEST(SearchSpace, SampledRowReduceSoftmaxSchedulesCompileAndVerify) {
    auto along = [](const Candidate &c) { return c.row_reduce; };
    expect_sample_verifies("softmax", {{"ROWS", "8"}, {"COLS", "256"}, {"dtype", "fp16"}}, "ascend-like", 4, 23, along);
    expect_sample_verifies("softmax", {{"ROWS", "8"}, {"COLS", "64"}, {"dtype", "fp32"}}, "gemmini-like", 2, 24, along);
}

TEST(SearchSpace, SoftmaxOnAutoInt8StagesTheBandThroughALevelNearerTheScalarUnit) {
    // No engine writes ACC: the band is copied in by scalar code, from GM (1024
    // cycles a load) or, staged there by DMA first, from SRAM (128) or CBUF (4).
    const ParamMap p = {{"ROWS", "32"}, {"COLS", "128"}, {"dtype", "fp16"}};
    SearchSpace space = test::space_for("softmax", p, "auto-int8");
    EXPECT_EQ(space.softmax_mid_levels(), (std::vector<std::string>{"SRAM", "CBUF"}));
    EXPECT_TRUE(test::space_for("softmax", p, "ascend-like").softmax_mid_levels().empty()) << "MTE2 writes UB";
    double slowest = 0, fastest = 1e30;
    std::set<int> levels;
    for (const Candidate &c : space.enumerate()) {
        if (c.path != Path::Naive) {
            const double cycles = predict(space, c).cycles;
            slowest = std::max(slowest, cycles), fastest = std::min(fastest, cycles);
            levels.insert(c.via_level);
        }
    }
    EXPECT_EQ(levels, (std::set<int>{0, 1, 2}));
    EXPECT_GT(slowest / fastest, 10.0) << "the choices change the copy's cycles, so the ranking is not noise";
    auto via = [](const Candidate &c) { return c.via_level > 0; };
    expect_sample_verifies("softmax", {{"ROWS", "4"}, {"COLS", "32"}, {"dtype", "fp16"}}, "auto-int8", 2, 25, via);
}
