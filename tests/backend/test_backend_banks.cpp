// bank_placement: buffers of the vector unit's banked level (UB) are started
// where the vector operations using them conflict least on the banks. The
// result still equals Halide's CPU result, the buffers still never overlap
// while both are live, and the vector unit's busy cycles (which include the
// simulator's bank-conflict cycles, by the same model) drop against the plain
// stack placement (--skip-pass bank_placement) on the same inputs.
#include "npu_target/arch/ArchSpec.h"
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

uint64_t busy(const sim::SimReport &r, const std::string &pipe) {
    for (const auto &p : r.pipes) {
        if (p.pipe == pipe) {
            return p.busy_cycles;
        }
    }
    ADD_FAILURE() << "no pipe " << pipe << " in the report";
    return 0;
}

// Every pair of lifetimes in one level that are live at the same time occupy
// disjoint byte ranges (all copies of a multi-buffered buffer included). A
// lifetime closed at statement counter c and one opened at c do not overlap.
void expect_disjoint_while_live(const std::vector<BufferLifetime> &lts) {
    for (size_t i = 0; i < lts.size(); ++i) {
        for (size_t j = i + 1; j < lts.size(); ++j) {
            const BufferLifetime &a = lts[i], &b = lts[j];
            if (a.level != b.level || a.last <= b.first || b.last <= a.first) {
                continue;
            }
            const int64_t a_end = a.offset + a.bytes * a.buffers, b_end = b.offset + b.bytes * b.buffers;
            EXPECT_TRUE(a_end <= b.offset || b_end <= a.offset)
                << a.name << " [" << a.offset << ", " << a_end << ") and " << b.name << " [" << b.offset << ", " << b_end
                << ") overlap in " << a.level << " while both are live";
        }
    }
}

} // namespace

TEST(BankPlacement, SoftmaxFewerConflictCyclesSameResult) {
    const ScheduleSpec spec = sample_schedule("softmax/schedules/ascend_reduce.json");
    const ParamMap params{{"ROWS", "64"}, {"COLS", "1024"}};
    const uint64_t seed = fresh_seed();
    NpuRun placed = run_npu("softmax", params, spec, "ascend-like", seed, 1e-3, 1e-3);
    PassOptions skip;
    skip.skip = {"bank_placement"};
    NpuRun plain = run_npu("softmax", params, spec, "ascend-like", seed, 1e-3, 1e-3, skip);
    EXPECT_EQ(placed.cmp.mismatches, 0) << failure(placed);
    EXPECT_EQ(plain.cmp.mismatches, 0) << failure(plain);
    expect_disjoint_while_live(placed.backend.module.lifetimes);
    const ArchSpec arch = load_arch("ascend-like");
    for (const auto &lt : placed.backend.module.lifetimes) {
        const MemoryLevel *L = arch.find_level(lt.level);
        ASSERT_NE(L, nullptr);
        EXPECT_EQ(lt.offset % L->alignment, 0) << lt.name;
        EXPECT_LE(static_cast<uint64_t>(lt.offset + lt.bytes * lt.buffers), L->size_bytes) << lt.name;
    }
    // Same instructions, only addresses differ: the vector unit's busy cycles
    // are its repeats plus the conflict cycles.
    EXPECT_EQ(placed.report.instructions, plain.report.instructions);
    EXPECT_LT(busy(placed.report, "V"), busy(plain.report, "V"))
        << "placed " << busy(placed.report, "V") << ", plain " << busy(plain.report, "V");
    EXPECT_LT(placed.report.cycles, plain.report.cycles);
}
