// advance_head: the score product of attention's next key block (K block
// L1 -> L0B, Q -> L0A, MMAD, L0C -> UB) runs in the current iteration, after
// the vector unit's last read of the scores and after the deferred output
// product on MTE1, the matrix unit and FIX, so the copy of the next scores
// into UB waits only for the probabilities, not for the block's remaining
// vector work. Each case runs the same schedule and seed with the pass and
// with --skip-pass advance_head: both verify against Halide's CPU result
// (random inputs, output poisoned first) and compile through check_hazards.
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
    // in it (the output product in the loop and after it, by defer_tail).
    EXPECT_EQ(mmads(p.with), 4);
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

TEST(AdvanceHead, SoftmaxUnchanged) {
    PassPair p = run_with_and_without("advance_head", "softmax", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                                      "softmax/schedules/ascend_reduce.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.with.report.cycles, p.without.report.cycles);
}
