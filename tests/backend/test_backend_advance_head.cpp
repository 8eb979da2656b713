// advance_head: the score product of attention's next key block (K block
// L1 -> L0B, Q -> L0A, MMAD, L0C -> UB) runs in the current iteration, after
// the vector unit's last read of the scores and after the deferred output
// product on MTE1, the matrix unit and FIX, so the copy of the next scores
// into UB waits only for the probabilities, not for the block's remaining
// vector work. Each case runs the same schedule and seed with the pass and
// with --skip-pass advance_head: both verify against Halide's CPU result
// (random inputs, output poisoned first) and compile through check_hazards.
#include "npu_target/isa/InstrTable.h"
#include "npu_target/passes/InsertSync.h"
#include "tests/backend/HazardMessage.h"
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

using namespace tessel;
using namespace tessel::test;
using namespace Halide;
using namespace Halide::Internal;

namespace {

int mmads(const NpuRun &r) {
    return static_cast<int>(std::count_if(r.backend.program.code.begin(), r.backend.program.code.end(),
                                          [](const isa::Instr &i) { return i.op == isa::Op::MMAD; }));
}

} // namespace

TEST(AdvanceHead, AttentionScoresOneBlockAhead) {
    // Two 64-query tiles of four key blocks.
    PassPair p = run_with_and_without("advance_head", "attention", {{"S", "128"}, {"L", "1024"}, {"D", "64"}, {"BK", "256"}},
                                      "attention/schedules/ascend_flash_bk256.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.without.cmp.mismatches, 0) << failure(p.without);
    // The score product of the first block before the loop, of the next one
    // in it (the output product in the loop and after it, by defer_tail); the
    // tile loop's head (the first score product of the next tile) is
    // advanced too: one more copy of it, in the tile loop after the block loop.
    EXPECT_EQ(mmads(p.with), 5);
    EXPECT_EQ(mmads(p.without), 3);
    EXPECT_LT(p.with.report.cycles, p.without.report.cycles)
        << "with " << p.with.report.cycles << ", without " << p.without.report.cycles;
}

// Q staged into L0A once per tile: the tile loop's head (the next tile's K
// panel and Q) goes after the deferred output product after the block loop.
// defer_tail's copy of the group in the loop and after it share the
// statements that do not depend on the block (Halide shares equal subtrees),
// so an insertion by identity put the next tile's Q into the block loop too
// (3553 of 8192 outputs wrong); the pass now leaves a loop alone when its
// insertion point or a head statement occurs more than once.
TEST(AdvanceHead, QueriesStagedOncePerTile) {
    const uint64_t seed = fresh_seed();
    ScheduleSpec spec = sample_schedule("attention/schedules/ascend_flash_bk256.json");
    bool moved = false;
    for (auto &d : spec.directives) {
        if (d.id == "Q_L0A") {
            d.at_func = "out";
            d.at_loop = "io";
            moved = true;
        }
    }
    ASSERT_TRUE(moved);
    NpuRun r = run_npu("attention", {{"S", "128"}, {"L", "1024"}, {"D", "64"}, {"BK", "256"}}, spec, "ascend-like", seed,
                       1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

// The tile loop's body starts with the vector unit's initialisation of the
// running state (three VDUPs) before the first key block's score product; the
// head after that prefix is advanced into the previous tile, after its block
// loop, its deferred output product and the state update that reads it, so
// the vector unit finds the next tile's scores in UB. Before, the prefix made
// the loop not qualify and the vector unit waited for the whole chain (K and
// Q L1 -> L0, MMAD, L0C -> UB) at the start of every tile.
TEST(AdvanceHead, NextTileScoresDuringThisTile) {
    // Four 64-query tiles of two key blocks.
    const tessel::ParamMap params{{"S", "256"}, {"L", "512"}, {"D", "64"}, {"BK", "256"}};
    NpuRun r = run_npu("attention", params, sample_schedule("attention/schedules/ascend_flash_bk256.json"), "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    ASSERT_EQ(r.cmp.mismatches, 0) << failure(r);
    // In program order, the next tile's score product is an MMAD with n = 256 (keys)
    // issued after the last block's output product
    // (n = 64) and before the tile's division by the row sums (VDIV, or its
    // row-scalar form VDIVRS).
    const auto &code = r.backend.program.code;
    int last_div = -1, next_scores = -1, last_out = -1;
    for (int i = 0; i < static_cast<int>(code.size()); i++) {
        if (code[i].op == isa::Op::VDIV || isa::row_scalar_base(code[i].op) == isa::Op::VDIV) {
            last_div = i;
        }
        if (code[i].op == isa::Op::MMAD && code[i].n == 64) {
            last_out = i;
        }
        if (code[i].op == isa::Op::MMAD && code[i].n == 256 && last_out >= 0) {
            next_scores = i;
        }
    }
    ASSERT_GE(last_div, 0);
    EXPECT_GT(next_scores, last_out) << "no score product after the last block's output product";
    EXPECT_LT(next_scores, last_div) << "the next tile's score product is not issued before this tile's division";
}

// Softmax has no head for the head form (its body is vector work); since the
// prefetch form counts a flag per operation (2026-11-30) its row band's input
// loads one band ahead, which changes little here (14147 -> 14145 cycles at
// 64 x 1024, 48887 -> 48873 at 256 x 1024): never slower.
TEST(AdvanceHead, SoftmaxNoSlower) {
    PassPair p = run_with_and_without("advance_head", "softmax", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                                      "softmax/schedules/ascend_reduce.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_LE(p.with.report.cycles, p.without.report.cycles);
}

// The prefetch form: depthwise's band loop (form=matrix, ascend_matrix.json)
// starts with the load of the band's input (GM -> L1, two copies) and then
// gives the matrix unit 72 MMADs, more than its queue holds, which wait for
// that load; the scalar unit stalled there and issued the next band's load
// only once the matrix unit had drained most of this band. With the pass the
// body loads band t + 1 into the other copy right after band t's load
// (`if (t + 1 < end)`, band 0 under `if (t == min)`), so MTE2 loads the bands
// back to back while the matrix unit works. Fails without the prefetch (the
// loads then start only after the previous band's MMADs; no fewer cycles).
namespace {

const tessel::ParamMap kDepthwise{{"H", "8"}, {"W", "28"}, {"C", "128"}, {"K", "3"}, {"dtype", "fp16"}, {"form", "matrix"}};

// The starts of the input band loads (GM -> L1) and of the first MMAD.
std::pair<std::vector<uint64_t>, uint64_t> band_loads(const NpuRun &r) {
    std::vector<uint64_t> loads;
    uint64_t first_mmad = UINT64_MAX;
    for (const auto &e : r.report.trace) {
        if (e.op == isa::Op::DMA && e.src == "GM" && e.dst == "L1") {
            loads.push_back(e.start);
        }
        if (e.op == isa::Op::MMAD) {
            first_mmad = std::min(first_mmad, e.start);
        }
    }
    return {loads, first_mmad};
}

nir::NpuModule depthwise_after_early_sets() {
    return module_after("early_sets", "depthwise", kDepthwise, "depthwise/schedules/ascend_matrix.json");
}

// The prefetch's load writes the copy of the current iteration instead of the next one's.
class PrefetchIntoTheCurrentCopy : public IRMutator {
public:
    explicit PrefetchIntoTheCurrentCopy(const nir::NpuModule &m) : m_(m) {}
    int changed = 0;

private:
    const nir::NpuModule &m_;
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        auto d = nir::as_dma(op);
        if (!d || copies_ahead(m_, d->dst.buffer, d->dst.index) != 1) {
            return op;
        }
        struct Back : public IRMutator {
            using IRMutator::visit;
            Expr visit(const Mod *m) override { return Mod::make(m->a - 1, m->b); }
        } back;
        d->dst.index = back.mutate(d->dst.index);
        changed++;
        return d->make();
    }
};

} // namespace

TEST(AdvanceHead, DepthwiseNextBandLoadedDuringThisBand) {
    PassPair p = run_with_and_without("advance_head", "depthwise", kDepthwise, "depthwise/schedules/ascend_matrix.json", 0);
    ASSERT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    ASSERT_EQ(p.without.cmp.mismatches, 0) << failure(p.without);
    // With the prefetch the second band loads right after the first, while
    // the first band's MMADs wait for its arrival; without it, once the
    // matrix unit has drained part of the first band.
    auto [with, with_mmad] = band_loads(p.with);
    auto [without, without_mmad] = band_loads(p.without);
    ASSERT_EQ(with.size(), 2u);
    ASSERT_EQ(without.size(), 2u);
    EXPECT_LT(with[1], with_mmad) << "the second band's input is loaded after the first band's MMADs started";
    EXPECT_GT(without[1], without_mmad);
    EXPECT_LT(p.with.report.cycles, p.without.report.cycles)
        << "with " << p.with.report.cycles << ", without " << p.without.report.cycles;
}

// The hazard checker tells the two copies apart by their index: the prefetch
// (copy t + 1) after the flag that orders band t's load before its reads
// passes, the same load into copy t (a real race with MTE1's reads of band t)
// fails; and the writer, one iteration ahead, starts with one credit of two.
TEST(AdvanceHead, CheckerKnowsTheCopyThePrefetchWrites) {
    nir::NpuModule ok = depthwise_after_early_sets();
    EXPECT_EQ(hazard_message(ok), "");

    nir::NpuModule bad = depthwise_after_early_sets();
    PrefetchIntoTheCurrentCopy current(bad);
    bad.body = current.mutate(bad.body);
    ASSERT_EQ(current.changed, 1);
    const std::string msg = hazard_message(bad);
    EXPECT_NE(msg.find("_global_wrapper$0#0 while an earlier write of it on MTE2 is not ordered"), std::string::npos)
        << "a load into the copy being read passed: " << msg;

    nir::NpuModule two = depthwise_after_early_sets();
    two.body = Block::make(nir::SyncOp{isa::Op::SET_FLAG, isa::Pipe::MTE1, isa::Pipe::MTE2, 1}.make(),
                           Block::make(two.body, nir::SyncOp{isa::Op::WAIT_FLAG, isa::Pipe::MTE1, isa::Pipe::MTE2, 1}.make()));
    EXPECT_NE(hazard_message(two).find("there must be 1 initial set_flag(s) and 1 final wait_flag(s) (MTE1 -> MTE2"),
              std::string::npos)
        << hazard_message(two);
}

// The prefetch form counts two queue entries per operation (itself and about
// one flag, which insert_sync adds later): conv2d's stride-2 band gives the
// matrix unit 18 MMADs (and 27 flags) per band, which fill its 32-entry queue,
// so the scalar unit issued the next band's input load only once the band's
// products had drained; now it is issued during the band (56x32x128->128
// fp16: 128027 -> 102026 cycles, measured 2026-11-30).
TEST(AdvanceHead, StrideTwoConvolutionLoadsTheNextBandDuringThisBand) {
    PassPair p = run_with_and_without(
        "advance_head", "conv2d",
        {{"H", "8"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "2"}, {"dtype", "fp16"}},
        "conv2d/schedules/ops_ascend_3x3_s2.json", 1e-4);
    ASSERT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    ASSERT_EQ(p.without.cmp.mismatches, 0) << failure(p.without);
    EXPECT_LT(p.with.report.cycles + p.with.report.cycles / 10, p.without.report.cycles)
        << "with " << p.with.report.cycles << ", without " << p.without.report.cycles;
}

// A loop of no more iterations than its copies is not prefetched: the
// rotation already loads the next tile's first chunk while this tile computes,
// and the prefetch would make it wait for this tile's last read (auto-int8's
// GEMM, two k chunks in two copies: 92493 -> 104721 cycles when it was).
TEST(AdvanceHead, NoPrefetchInALoopOfNoMoreIterationsThanCopies) {
    PassPair p = run_with_and_without("advance_head", "gemm", {{"M", "128"}, {"N", "256"}, {"K", "512"}, {"dtype", "int8"}},
                                      "gemm/schedules/auto_int8.json", 0, "auto-int8");
    ASSERT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.with.report.cycles, p.without.report.cycles);
}
