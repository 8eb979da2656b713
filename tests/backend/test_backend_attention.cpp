// The attention sample on the NPU against Halide's CPU result (fresh random
// inputs, output poisoned first; fp16 output within 1e-3): unscheduled (all
// scalar code, a tiny shape), and with the FlashAttention-style schedule of
// samples/attention/schedules/ascend_flash.json (written for S = 64 queries
// and D = 64, key blocks of 64 or more): per tile of 64 queries a reduction over key blocks, the score and output products on the matrix unit,
// the block statistics and probabilities on the vector unit, K and V blocks
// double-buffered in L1.
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <map>

using namespace tessel;
using namespace tessel::test;

namespace {

int count(const NpuRun &r, isa::Op lo, isa::Op hi) {
    int n = 0;
    for (const auto &i : r.backend.program.code) {
        n += i.op >= lo && i.op <= hi;
    }
    return n;
}

} // namespace

TEST(Attention, DefaultScheduleTiny) {
    NpuRun r = run_npu("attention", {{"S", "2"}, {"L", "16"}, {"D", "4"}, {"BK", "8"}}, Schedule().spec(), "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
}

TEST(Attention, FlashScheduleMatrixAndVector) {
    ScheduleSpec spec = sample_schedule("attention/schedules/ascend_flash.json");
    for (const char *bk : {"64"}) { // one shape: the CPU JIT of the 64-lane fp16 schedule takes ~20-60 s
        NpuRun r = run_npu("attention", {{"S", "64"}, {"L", "256"}, {"D", "64"}, {"BK", bk}}, spec, "ascend-like",
                           fresh_seed(), 1e-3, 1e-3);
        EXPECT_EQ(r.cmp.mismatches, 0) << "BK " << bk << " " << failure(r);
        // Both products on the matrix unit (two MMADs per key block in the
        // program), the softmax pieces on the vector unit.
        EXPECT_GE(count(r, isa::Op::MMAD, isa::Op::MMAD), 2) << failure(r);
        EXPECT_GT(count(r, isa::Op::VEXP, isa::Op::VEXP), 0) << failure(r);
        EXPECT_GT(count(r, isa::Op::VREDMAX, isa::Op::VREDMAX) + count(r, isa::Op::VMAX, isa::Op::VMAX), 0)
            << failure(r);
    }
}

// The online softmax's state is a Tuple (running maximum, sum, output): its
// update stores the three elements in turn, each computed from the old ones.
// The last element, out = out * alpha + blockout * beta, reads only its own
// elements and is stored after the others, so it is computed in place: VMUL
// (out *= alpha) then VMULADD (out += beta * blockout). Before, it went into a
// scratch buffer and a VMOV copied it back: 16 extra repeats per 16 query rows
// and key block (attention bench row 387818 -> 362226 cycles at 712f438).
TEST(Attention, StateUpdatedInPlace) {
    NpuRun r = run_npu("attention", {{"S", "128"}, {"L", "512"}, {"D", "64"}, {"BK", "256"}},
                       sample_schedule("attention/schedules/ascend_flash_bk256.json"), "ascend-like", fresh_seed(), 1e-3,
                       1e-3);
    ASSERT_EQ(r.cmp.mismatches, 0) << failure(r);
    struct Ops : public Halide::Internal::IRVisitor {
        std::map<isa::Op, int> into_out; // ops writing the running output (state.2)
        using Halide::Internal::IRVisitor::visit;
        void visit(const Halide::Internal::Evaluate *op) override {
            // "state.2", or "state$1.2" when Halide uniquified the Func's name
            auto v = nir::as_vec(Halide::Internal::Stmt(op));
            const std::string d = v ? v->dst.buffer : "";
            if (d.rfind("state", 0) == 0 && d.size() > 2 && d.compare(d.size() - 2, 2, ".2") == 0) {
                into_out[v->op]++;
            }
        }
    } ops;
    r.backend.module.body.accept(&ops);
    EXPECT_GE(ops.into_out[isa::Op::VMUL], 1);
    EXPECT_GE(ops.into_out[isa::Op::VMULADD], 1);
    EXPECT_EQ(ops.into_out[isa::Op::VMOV], 0) << "the output's update goes through a scratch copy";
}
