// uniform_rows: attention's state is a Tuple per (d, i), so its running maximum
// and sum repeat along d; the pass proves those rows hold equal values and keeps
// one element per query row, so the maximum, the two rescale factors and the sum
// are computed once per row (64 rows in one repeat) instead of D times. Each case
// runs the same schedule and seed with the pass and with --skip-pass uniform_rows:
// both verify against Halide's CPU result (random inputs, output poisoned
// first) and compile through check_hazards. A kernel with no such buffer is
// left unchanged.
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <regex>

using namespace tessel;
using namespace tessel::test;

namespace {

PassPair both(const std::string &gen, const ParamMap &params, const std::string &schedule, double tol) {
    return run_with_and_without("uniform_rows", gen, params, schedule, tol);
}

// Bytes the executed instructions of one opcode wrote.
uint64_t written(const NpuRun &r, isa::Op op) {
    uint64_t n = 0;
    for (const auto &e : r.report.trace) {
        n += e.op == op ? static_cast<uint64_t>(e.bytes) : 0;
    }
    return n;
}

// Elements of a Tuple value of attention's state ("state.k"; Halide numbers a
// Func's name, "state$1.k", when the process built the pipeline before).
int64_t elems(const NpuRun &r, int k) {
    const std::regex name("state(\\$[0-9]+)?\\." + std::to_string(k));
    for (const auto &[n, b] : r.backend.module.buffers) {
        if (std::regex_match(n, name)) {
            return b.elems;
        }
    }
    ADD_FAILURE() << "no buffer state." << k;
    return -1;
}

} // namespace

TEST(UniformRows, AttentionStatisticsOncePerRow) {
    PassPair p = both("attention", {{"S", "64"}, {"L", "512"}, {"D", "64"}, {"BK", "256"}},
                  "attention/schedules/ascend_flash_bk256.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.without.cmp.mismatches, 0) << failure(p.without);
    // The running maximum and sum: one element per query row (64 rows), not
    // one per (d, i); the output accumulator keeps its 64 x 64.
    EXPECT_EQ(elems(p.with, 0), 64);
    EXPECT_EQ(elems(p.with, 1), 64);
    EXPECT_EQ(elems(p.with, 2), 64 * 64);
    EXPECT_EQ(elems(p.without, 0), 64 * 64);
    // Per block the update's two exponentials (exp(M - M'), exp(mb - M')) are
    // 64 fp32 values each, not 64 x 64: the probabilities' exponentials
    // (64 x 256 per block, 2 blocks) are what remains.
    const uint64_t prob_exp = 2ull * 64 * 256 * 4;
    EXPECT_EQ(written(p.with, isa::Op::VEXP), prob_exp + 2ull * 2 * 64 * 4);
    EXPECT_EQ(written(p.without, isa::Op::VEXP), prob_exp + 2ull * 2 * 64 * 64 * 4);
    EXPECT_LT(p.with.report.cycles, p.without.report.cycles)
        << "with " << p.with.report.cycles << ", without " << p.without.report.cycles;
}

TEST(UniformRows, SoftmaxUnchanged) {
    PassPair p = both("softmax", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                  "softmax/schedules/ascend_reduce.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.with.report.cycles, p.without.report.cycles);
}
