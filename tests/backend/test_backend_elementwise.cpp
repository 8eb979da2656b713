// The elementwise chain exp(max(a + b, 0) * c) on ascend-like with
// samples/elementwise/schedules/chain_staged.json: 8192-element tiles, inputs
// and the result tile `ew` double-buffered in UB (accumulate_in on a pure Func
// with buffers=2), and fold_vector_loops sharing scratch between interior
// nodes whose lifetimes do not overlap. Results are compared with Halide's CPU
// result (fp16 output: one ulp at 1.0 plus 1e-3 relative).
#include "tests/backend/NpuHarness.h"

#include "npu_target/common/Error.h"

#include <gtest/gtest.h>

#include <set>

using namespace tessel;
using namespace tessel::test;

namespace {

const ParamMap kChain = {{"N", "16384"}, {"dtype", "fp16"}, {"op", "chain"}};

uint64_t executed(const NpuRun &r, isa::Op op) {
    uint64_t n = 0;
    for (const auto &e : r.report.trace) {
        n += e.op == op;
    }
    return n;
}

// The tile's 64 rows of 128 lanes need three fp32 temporaries without sharing
// (a's cast, b's cast, c's cast: 1.5 KiB per row): with half of the 64 KiB the
// kernel's own buffers leave free, 16 rows fold per instruction, four chunks
// of 9 vector instructions per tile, more than the vector unit's 32-entry
// queue, so the scalar unit reached the next tile's loads late. c's cast can
// reuse b's scratch (b's last read, the add, comes before it): two
// temporaries, 32 rows per instruction, two chunks per tile.
TEST(FoldVectorLoops, ScratchWithDisjointLifetimesIsSharedSoMoreRowsFold) {
    NpuRun r = run_npu("elementwise", kChain, sample_schedule("elementwise/schedules/chain_staged.json"), "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    // Two tiles of two chunks: one VEXP per chunk.
    EXPECT_EQ(executed(r, isa::Op::VEXP), 4u) << failure(r);
    std::set<std::string> scratch;
    for (const auto &[name, b] : r.backend.module.buffers) {
        if (name.find(".vtmp") != std::string::npos) {
            scratch.insert(name);
            EXPECT_EQ(b.elems, 32 * 128) << name;
        }
    }
    EXPECT_EQ(scratch.size(), 2u) << failure(r);
}

// A loop-invariant temporary (the fold hoists it to one row) keeps its own
// scratch: softmax and LayerNorm, whose broadcast constants are hoisted,
// still verify with the same schedules.
TEST(FoldVectorLoops, SharingKeepsResultsOfOtherSamples) {
    NpuRun ln = run_npu("layernorm", {{"ROWS", "32"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                        sample_schedule("layernorm/schedules/ascend_reduce.json"), "ascend-like", fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(ln.cmp.mismatches, 0) << failure(ln);
    NpuRun blur = run_npu("blur", {{"W", "256"}, {"H", "16"}, {"dtype", "fp16"}},
                          sample_schedule("blur/schedules/ascend_fused.json"), "ascend-like", fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(blur.cmp.mismatches, 0) << failure(blur);
}

// accumulate_in(ew, UB, buffers=2) on a pure Func: two copies of the result
// tile rotating on the tile loop, so the vector unit writes tile t + 1 while
// MTE3 still reads tile t.
TEST(AccumulateIn, PureFuncTileDoubleBuffered) {
    NpuRun r = run_npu("elementwise", kChain, sample_schedule("elementwise/schedules/chain_staged.json"), "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    int tiles = 0;
    for (const auto &[name, b] : r.backend.module.buffers) {
        if (name.rfind("ew", 0) == 0 && name.find(".v") == std::string::npos) {
            tiles++;
            EXPECT_EQ(b.buffers, 2) << name;
            EXPECT_EQ(b.level, "UB") << name;
        }
    }
    EXPECT_EQ(tiles, 1) << failure(r);
}

// With one buffer, accumulate_in still takes only a reduction's accumulator.
TEST(AccumulateIn, PureFuncWithOneBufferIsAUserError) {
    ScheduleSpec s = sample_schedule("elementwise/schedules/chain_staged.json");
    for (auto &d : s.directives) {
        if (d.id == "ew_ub") {
            d.buffers = 1;
        }
    }
    try {
        run_npu("elementwise", kChain, s, "ascend-like", 1, 1e-3, 1e-3);
        FAIL() << "expected a user error";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("ew has no update definition"), std::string::npos) << e.what();
    }
}

} // namespace
