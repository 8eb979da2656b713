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

// Every buffer inside its level (and, with `aligned`, at an offset its level's alignment allows).
void expect_inside_levels(const std::vector<BufferLifetime> &lts, bool aligned) {
    const ArchSpec arch = load_arch("ascend-like");
    for (const auto &lt : lts) {
        const MemoryLevel *L = arch.find_level(lt.level);
        ASSERT_NE(L, nullptr);
        if (aligned) {
            EXPECT_EQ(lt.offset % L->alignment, 0) << lt.name;
        }
        EXPECT_LE(static_cast<uint64_t>(lt.offset + lt.bytes * lt.buffers), L->size_bytes) << lt.name;
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
    expect_inside_levels(placed.backend.module.lifetimes, true);
    // Same instructions, only addresses differ: the vector unit's busy cycles
    // are its repeats plus the conflict cycles.
    EXPECT_EQ(placed.report.instructions, plain.report.instructions);
    EXPECT_LT(busy(placed.report, "V"), busy(plain.report, "V"))
        << "placed " << busy(placed.report, "V") << ", plain " << busy(plain.report, "V");
    EXPECT_LT(placed.report.cycles, plain.report.cycles);
}

// A cast between fp16 and fp32 reads 4 blocks and writes 8 per repeat (or the
// reverse), so with both buffers dense the two sides drift apart on the banks
// and meet in one bank in 2 of every 12 repeats whatever their starts (LayerNorm
// 1024x1024: +22 cycles per 8-row input cast, +10.5 per 4-row output cast).
// bank_placement lays the fp16 side of such casts (a buffer only casts and dense
// DMAs touch) out in 128-byte runs 256 bytes apart where the buffers still fit:
// both sides then advance 8 blocks per repeat and are placed apart. LayerNorm's
// sample schedule: the staged input band and the fp16 result tile `norm` are
// padded; their casts (one repeat per row, row stride 128 on the fp16 side) run
// with no conflict cycle; same result; buffers disjoint and inside UB.
TEST(BankPlacement, CastsNarrowSideAtTheWideSidesPace) {
    // The LayerNorm bench schedule with the input in two copies, as it was until the sector L2
    // (with three, since 2026-11-30, the padded input does not fit UB and only `norm` is padded).
    ScheduleSpec spec = sample_schedule("layernorm/schedules/ascend_reduce.json");
    for (auto &d : spec.directives) {
        if (d.id == "stage_in") {
            d.buffers = 2;
        }
    }
    NpuRun r = run_npu("layernorm", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}}, spec, "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    expect_disjoint_while_live(r.backend.module.lifetimes);
    expect_inside_levels(r.backend.module.lifetimes, false);
    int in_casts = 0, out_casts = 0;
    for (const isa::Instr &i : r.backend.program.code) {
        if (i.op != isa::Op::VCAST || i.rows < 64) {
            continue;
        }
        const bool widen = i.dtype == DType::FP16;
        in_casts += widen;
        out_casts += !widen;
        // d, a: 64 elements a row; the fp16 side's rows 128 elements apart, the fp32 side's 64.
        EXPECT_EQ(i.row_stride[0], widen ? 64 : 128);
        EXPECT_EQ(i.row_stride[1], widen ? 128 : 64);
    }
    EXPECT_EQ(in_casts, 1);
    EXPECT_EQ(out_casts, 1);
    int band_casts = 0;
    for (const auto &e : r.report.trace) {
        if (e.op != isa::Op::VCAST || (e.bytes != 8 * 1024 * 4 && e.bytes != 4 * 1024 * 2)) {
            continue;
        }
        band_casts++;
        EXPECT_NE(e.stall, "bank_conflict") << "cast at pc " << e.pc << ", " << e.bytes << " bytes";
        EXPECT_EQ(e.end - e.start, e.bytes == 8 * 1024 * 4 ? 128u : 64u) << "cast at pc " << e.pc;
    }
    EXPECT_EQ(band_casts, 64 / 8 + 64 / 4);
}
