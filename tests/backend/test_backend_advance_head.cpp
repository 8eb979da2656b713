// advance_head: the score product of attention's next key block (K block
// L1 -> L0B, Q -> L0A, MMAD, L0C -> UB) runs in the current iteration, after
// the vector unit's last read of the scores and after the deferred output
// product on MTE1, the matrix unit and FIX, so the copy of the next scores
// into UB waits only for the probabilities, not for the block's remaining
// vector work. Each case runs the same schedule and seed with the pass and
// with --skip-pass advance_head: both verify against Halide's CPU result
// (random inputs, output poisoned first) and compile through check_hazards.
#include "npu_target/isa/InstrTable.h"
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace tessel;
using namespace tessel::test;

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
    const ParamMap params{{"S", "256"}, {"L", "512"}, {"D", "64"}, {"BK", "256"}};
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

TEST(AdvanceHead, SoftmaxUnchanged) {
    PassPair p = run_with_and_without("advance_head", "softmax", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                                      "softmax/schedules/ascend_reduce.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.with.report.cycles, p.without.report.cycles);
}
