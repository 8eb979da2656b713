// defer_tail: the state update at the end of attention's key-block loop (vector
// work waiting for the block's output product: UB -> L1 -> L0A, MMAD, L0C ->
// UB) runs one iteration later, so the vector unit computes the next block's
// probabilities while the other pipes produce this block's output. Each case
// runs the same schedule and seed with the pass and with --skip-pass defer_tail:
// both verify against Halide's CPU result (random inputs, output poisoned
// first), both compile through check_hazards (a cross-pipe access left
// unordered fails the compile), and the deferred program takes fewer cycles.
// The group's copies and products of other pipes go ahead of the next block's
// vector work when nothing in between needs them later (AttentionBlocksOf256).
// A kernel whose loops have no such tail (softmax) is left unchanged.
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace tessel;
using namespace tessel::test;

namespace {

using Pair = PassPair;

Pair both(const std::string &gen, const ParamMap &params, const std::string &schedule, double tol) {
    return run_with_and_without("defer_tail", gen, params, schedule, tol);
}

// The loop was rewritten: the copy of the state update after the loop has
// scratch buffers of its own ("<name>.last").
bool deferred(const NpuRun &r) {
    for (const auto &[name, b] : r.backend.module.buffers) {
        if (name.size() > 5 && name.compare(name.size() - 5, 5, ".last") == 0) {
            return true;
        }
    }
    return false;
}

// Both verify; the pass rewrote the loop and took fewer cycles; every buffer
// is allocated once (the update after the loop has scratch of its own:
// allocate_buffers places by name, so a second allocation of a name moved the
// first one's scratch onto the probabilities, live in the loop).
void expect_deferred_and_faster(const Pair &p) {
    std::set<std::string> names;
    for (const auto &lt : p.with.backend.module.lifetimes) {
        EXPECT_TRUE(names.insert(lt.name).second) << lt.name << " is allocated twice";
    }
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.without.cmp.mismatches, 0) << failure(p.without);
    EXPECT_TRUE(deferred(p.with));
    EXPECT_FALSE(deferred(p.without));
    EXPECT_LT(p.with.report.cycles, p.without.report.cycles)
        << "with " << p.with.report.cycles << ", without " << p.without.report.cycles;
}

} // namespace

// MMAD instructions in the program.
int mmads(const NpuRun &r) {
    return static_cast<int>(std::count_if(r.backend.program.code.begin(), r.backend.program.code.end(),
                                          [](const isa::Instr &i) { return i.op == isa::Op::MMAD; }));
}

TEST(DeferTail, AttentionBlocksOf256) {
    Pair p = both("attention", {{"S", "64"}, {"L", "512"}, {"D", "64"}, {"BK", "256"}},
                  "attention/schedules/ascend_flash_bk256.json", 1e-3);
    expect_deferred_and_faster(p);
    // V single-copy (staged GM -> L0B per block): the output product and its
    // operand copies join the deferred group, so its MMAD is in the loop
    // (block t - 1, after block t's score product) and after it (the last
    // block): one MMAD more.
    EXPECT_EQ(mmads(p.with), mmads(p.without) + 1);
    // Block t - 1's copies and output product are issued before block t's
    // probabilities (after its block maximum, which waits for FIX's copy of
    // the scores), its state update after them: the flag with which the copy
    // of the output into UB waits for the vector unit then sits ahead of the
    // probabilities in the vector unit's queue. Program order: the first
    // output product (k = BK) before the first VEXP; without the pass, after.
    auto first = [](const NpuRun &r, auto pred) {
        const auto &c = r.backend.program.code;
        return std::find_if(c.begin(), c.end(), pred) - c.begin();
    };
    auto output_product = [](const isa::Instr &i) { return i.op == isa::Op::MMAD && i.k == 256; };
    auto vexp = [](const isa::Instr &i) { return i.op == isa::Op::VEXP; };
    EXPECT_LT(first(p.with, output_product), first(p.with, vexp));
    EXPECT_GT(first(p.without, output_product), first(p.without, vexp));
}

TEST(DeferTail, AttentionBlocksOf64) {
    Pair p = both("attention", {{"S", "64"}, {"L", "128"}, {"D", "64"}, {"BK", "64"}},
                  "attention/schedules/ascend_flash.json", 1e-3);
    expect_deferred_and_faster(p);
    // V double-buffered in L1 (its copies rotate with the loop): the product
    // stays in its iteration, only the copy of its result joins the tail.
    EXPECT_EQ(mmads(p.with), mmads(p.without));
}

TEST(DeferTail, SoftmaxUnchanged) {
    Pair p = both("softmax", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                  "softmax/schedules/ascend_reduce.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.with.report.cycles, p.without.report.cycles);
    EXPECT_EQ(p.with.backend.program.code.size(), p.without.backend.program.code.size());
}
