// LayerNorm on ascend-like with samples/layernorm/schedules/ascend_reduce.json:
// bands of 8 rows, the input double-buffered, gamma and beta staged once at
// the root (a stage's `at` loop "root": outside every loop), the result tile
// `norm` double-buffered in UB, `centered` computed once per band. Compared with Halide's CPU result (fp16 output:
// one ulp at the output's magnitude, 1e-3 absolute and relative).
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

// gamma and beta load once per run (they were reloaded and widened again per
// block of 32 rows): one 2 KiB DMA each.
TEST(LayerNormStages, GammaBetaOnceNormInTwoBuffersCenteredOnce) {
    NpuRun r = run_npu("layernorm", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}},
                       sample_schedule("layernorm/schedules/ascend_reduce.json"), "ascend-like", fresh_seed(), 1e-3,
                       1e-3);
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
    // norm: two whole-row VADDs per row (that subtraction and + beta), not three.
    uint64_t row_adds = 0;
    for (const auto &e : r.report.trace) {
        const int64_t row_bytes = 1024 * 4; // a row of fp32
        row_adds += e.op == isa::Op::VADD && e.bytes >= row_bytes ? e.bytes / row_bytes : 0;
    }
    EXPECT_EQ(row_adds, 2u * 64) << failure(r);
}

} // namespace
