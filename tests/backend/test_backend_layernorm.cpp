// LayerNorm on ascend-like with samples/layernorm/schedules/ascend_reduce.json:
// bands of 8 rows, the input double-buffered, gamma and beta staged once at
// the root (a stage's `at` loop "root": outside every loop), the result tile
// `norm` double-buffered in UB, `centered` computed once per band. Compared with Halide's CPU result (fp16 output:
// one ulp at the output's magnitude, 1e-3 absolute and relative).
#include "tests/backend/NpuHarness.h"

#include "npu_target/isa/InstrTable.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

// The bench schedule at 64 x 1024 fp16 on ascend-like, fresh inputs.
NpuRun run_bench_schedule_64_rows() {
    return run_npu("layernorm", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                   sample_schedule("layernorm/schedules/ascend_reduce.json"), "ascend-like", fresh_seed(), 1e-3, 1e-3);
}

// gamma and beta load once per run (they were reloaded and widened again per
// block of 32 rows): one 2 KiB DMA each.
TEST(LayerNormStages, GammaBetaOnceNormInTwoBuffersCenteredOnce) {
    NpuRun r = run_bench_schedule_64_rows();
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    uint64_t rows_loaded = 0, gamma_beta_loads = 0;
    for (const auto &e : r.report.trace) {
        if (e.op == isa::Op::DMA && e.src == "GM") {
            gamma_beta_loads += e.bytes == 1024 * 2;
            rows_loaded += e.bytes / (1024 * 2);
        }
    }
    EXPECT_EQ(gamma_beta_loads, 2u) << failure(r);
    EXPECT_EQ(rows_loaded, 64u + 2) << failure(r);
    int norm_tiles = 0;
    for (const auto &[name, b] : r.backend.module.buffers) {
        if (name.rfind("norm", 0) == 0 && name.find(".v") == std::string::npos) {
            norm_tiles++;
            EXPECT_EQ(b.buffers, 2) << name;
        }
    }
    EXPECT_EQ(norm_tiles, 1) << failure(r);
    // centered = x - mean / n is computed once per row for the variance and
    // norm: two whole-row adds per row (that subtraction, a VADDRS of the row's
    // -mean / n, and + beta), not three.
    uint64_t row_adds = 0;
    for (const auto &e : r.report.trace) {
        const int64_t row_bytes = 1024 * 4; // a row of fp32
        const bool add = e.op == isa::Op::VADD || e.op == isa::Op::VADDRS;
        row_adds += add && e.bytes >= row_bytes ? e.bytes / row_bytes : 0;
    }
    EXPECT_EQ(row_adds, 2u * 64) << failure(r);
}

// The two per-row values (-mean / n and 1 / std) are read by the row-scalar
// forms (row_scalar_forms: VADDRS, VMULRS, b fetched once per row), not by
// VADD/VMUL with b at element stride 0, whose block meets the row's blocks in
// every other repeat (+8 cycles per row each, measured 2026-11-30). Same result;
// fewer cycles than with the pass skipped.
TEST(LayerNormStages, PerRowValuesUseTheRowScalarForms) {
    PassPair p = run_with_and_without("row_scalar_forms", "layernorm",
                                      {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                                      "layernorm/schedules/ascend_reduce.json", 1e-3);
    EXPECT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    EXPECT_EQ(p.without.cmp.mismatches, 0) << failure(p.without);
    auto rows_of = [](const NpuRun &r, isa::Op op) {
        uint64_t rows = 0;
        for (const auto &e : r.report.trace) {
            rows += e.op == op && e.bytes >= 1024 * 4 ? e.bytes / (1024 * 4) : 0;
        }
        return rows;
    };
    EXPECT_EQ(rows_of(p.with, isa::Op::VADDRS), 64u) << failure(p.with);
    EXPECT_EQ(rows_of(p.with, isa::Op::VMULRS), 64u) << failure(p.with);
    EXPECT_EQ(rows_of(p.without, isa::Op::VADDRS) + rows_of(p.without, isa::Op::VMULRS), 0u);
    for (const isa::Instr &i : p.with.backend.program.code) {
        const bool elementwise = i.op == isa::Op::VADD || i.op == isa::Op::VSUB || i.op == isa::Op::VMUL;
        EXPECT_FALSE(elementwise && i.stride[2] == 0 && i.stride[1] != 0)
            << "a per-row operand at stride 0 left in " << isa::op_info(i.op).mnemonic;
    }
    // 64 rows x 2 operations x 8 conflict cycles (measured: 13442 -> 12545).
    EXPECT_LE(p.with.report.cycles + 800, p.without.report.cycles)
        << p.with.report.cycles << " vs " << p.without.report.cycles;
}

// inv = 1 / sqrt(var / n + eps) is its own Func, computed once per 4 rows with
// var and norm (the schedule's yio: var's square then needs 4 rows of UB, not 8,
// which leaves room for bank_placement to pad the input and norm tiles; one
// repeat per operation, not once per norm instruction), and
// 1 / sqrt(x) in fp32 is one VRSQRT (1.0f / sqrtf(x), the same two roundings),
// not a VSQRT, a VDUP of 1.0 and a VDIV (4 cycles per repeat).
TEST(LayerNormStages, InvOncePerBandAsOneRsqrt) {
    NpuRun r = run_bench_schedule_64_rows();
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    uint64_t rsqrt = 0, sqrt_or_div = 0;
    for (const auto &e : r.report.trace) {
        rsqrt += e.op == isa::Op::VRSQRT;
        sqrt_or_div += e.op == isa::Op::VSQRT || e.op == isa::Op::VDIV;
    }
    EXPECT_EQ(rsqrt, 64u / 4) << failure(r);
    EXPECT_EQ(sqrt_or_div, 0u) << failure(r);
}

} // namespace
