// LayerNorm on ascend-like with samples/layernorm/schedules/ascend_reduce.json:
// bands of 8 rows, the input double-buffered, gamma and beta staged once at
// the root (a stage's `at` loop "root": outside every loop), the result tile
// `norm` double-buffered in UB, `centered` computed once per band. Compared with Halide's CPU result (fp16 output:
// one ulp at the output's magnitude, 1e-3 absolute and relative).
#include "tests/backend/NpuHarness.h"

#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "npu_target/isa/InstrTable.h"
#include "npu_target/passes/BufferCredits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

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
    // -mean / n, and + beta, in the VMADD), not three.
    uint64_t row_adds = 0;
    for (const auto &e : r.report.trace) {
        const int64_t row_bytes = 1024 * 4; // a row of fp32
        const bool add = e.op == isa::Op::VADD || e.op == isa::Op::VADDRS || e.op == isa::Op::VMADD;
        row_adds += add && e.bytes >= row_bytes ? e.bytes / row_bytes : 0;
    }
    EXPECT_EQ(row_adds, 2u * 64) << failure(r);
}

// The input's initial credits (insert_buffer_credits: the vector unit hands
// MTE2 one per copy) are given at the kernel's start, not behind the vector
// unit's widening of gamma and beta, which waits for their loads: the first
// input band's load starts before the vector unit's first instruction, where it
// waited ~500 cycles for the vector queue to reach the credits (64 x 1024:
// 11777 -> 11264 cycles, measured 2026-11-30).
TEST(LayerNormStages, FirstInputLoadDoesNotWaitForTheVectorUnit) {
    NpuRun r = run_bench_schedule_64_rows();
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    uint64_t first_band_load = UINT64_MAX, first_vector_op = UINT64_MAX;
    for (const auto &e : r.report.trace) {
        if (e.op == isa::Op::DMA && e.src == "GM" && e.bytes == 8 * 1024 * 2) {
            first_band_load = std::min(first_band_load, e.start);
        }
        if (isa::op_info(e.op).unit == isa::Unit::Vector) {
            first_vector_op = std::min(first_vector_op, e.start);
        }
    }
    ASSERT_NE(first_band_load, UINT64_MAX) << failure(r);
    EXPECT_LT(first_band_load, first_vector_op) << failure(r);
}

// The same initial credits do not move above a statement that uses the
// buffer's bytes: with the input's copies placed over gamma's UB bytes (as
// allocate_buffers may share the space of buffers whose lifetimes do not
// overlap), they stay after gamma's widening; with their own bytes they go
// above it (and beta's: the vector unit's first operations).
TEST(LayerNormStages, InitialCreditsStayBelowAStatementUsingTheirBytes) {
    static const ArchSpec arch = load_arch("ascend-like"); // the module points at its arch
    HalidePipeline p = build_halide_pipeline(
        "layernorm", resolve_params(find_generator("layernorm"), {{"ROWS", "16"}, {"COLS", "1024"}, {"dtype", "fp16"}}));
    PassOptions opt;
    opt.stop_after = "bank_placement";
    const nir::NpuModule placed =
        build_npu(p, sample_schedule("layernorm/schedules/ascend_reduce.json"), arch, opt).backend.module;
    // The staged copies' names (Halide numbers Funcs per process: gamma_im$4_global_wrapper$0).
    auto staged = [&](const std::string &func) {
        for (const auto &[name, b] : placed.buffers) {
            if (name.rfind(func + "_im", 0) == 0 && name.find("_global_wrapper") != std::string::npos &&
                name.find('.') == std::string::npos) {
                return name;
            }
        }
        return std::string();
    };
    const std::string gamma_wide = staged("gamma") + ".wide", input = staged("in");
    // Where, in program order, the first initial V -> MTE2 credit and gamma's widening are.
    struct Order : public Halide::Internal::IRVisitor {
        const std::string &gamma_wide;
        explicit Order(const std::string &g) : gamma_wide(g) {}
        int n = 0, credit = -1, gamma = -1;
        using Halide::Internal::IRVisitor::visit;
        void visit(const Halide::Internal::Evaluate *op) override {
            n++;
            auto s = nir::as_sync(op);
            if (credit < 0 && s && s->op == isa::Op::SET_FLAG && s->src == isa::Pipe::V && s->dst == isa::Pipe::MTE2 &&
                s->event >= 1) {
                credit = n;
            }
            auto v = nir::as_vec(op);
            if (gamma < 0 && v && v->dst.buffer == gamma_wide) {
                gamma = n;
            }
        }
    };
    auto order = [&](const nir::NpuModule &m) {
        Order o(gamma_wide);
        m.body.accept(&o);
        return o;
    };
    const Order free_bytes = order(insert_buffer_credits(placed));
    nir::NpuModule shared = placed;
    shared.buffers.at(input).offset = placed.buffer(staged("gamma")).offset;
    const Order shared_bytes = order(insert_buffer_credits(shared));
    ASSERT_GT(free_bytes.gamma, 0);
    ASSERT_GT(free_bytes.credit, 0);
    EXPECT_LT(free_bytes.credit, free_bytes.gamma) << "the credit is given before gamma's widening";
    EXPECT_GT(shared_bytes.credit, shared_bytes.gamma) << "the credit passed a statement using the input's bytes";
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

// The vector work per row the limit does not count, made smaller:
// - norm = centered * inv * gamma + beta is a VMULRS (centered * inv) and one
//   VMADD (d = d * gamma + beta), not a VMUL and a VADD after it;
// - var = sum(centered^2): the squares accumulate into 128 partial sums per row
//   (a VMUL of the first 128 elements, a VMULADD of each further 128), and the
//   VREDSUM reads those 128, not the row's 1024 squares.
// 9 whole-row passes per row became 7 and a bit (64 x 1024: 11668 -> 9972
// cycles, 1024 x 1024: 155828 -> 128692, measured 2026-11-30).
TEST(LayerNormStages, NormIsOneMultiplyAddAndSquaresSumInPartialSums) {
    NpuRun r = run_bench_schedule_64_rows();
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    const int64_t row_bytes = 1024 * 4; // a row of fp32
    uint64_t madd_rows = 0, whole_row_muls = 0, redsum_cycles = 0;
    int64_t square_bytes = 0;
    for (const auto &e : r.report.trace) {
        madd_rows += e.op == isa::Op::VMADD ? e.bytes / row_bytes : 0;
        whole_row_muls += e.op == isa::Op::VMUL && e.bytes >= row_bytes;
        redsum_cycles += e.op == isa::Op::VREDSUM ? e.end - e.start : 0;
        if ((e.op == isa::Op::VMUL || e.op == isa::Op::VMULADD) && e.bytes < row_bytes) {
            square_bytes += e.bytes;
        }
    }
    EXPECT_EQ(madd_rows, 64u) << failure(r);
    EXPECT_EQ(whole_row_muls, 0u) << "a multiply by gamma left out of the VMADD";
    // Every square is written once, into the partial sums.
    EXPECT_EQ(square_bytes, 64 * row_bytes) << failure(r);
    // mean: 16 repeats per row; var: 2 (128 fp32), where it was 16.
    EXPECT_LE(redsum_cycles, 64u * (16 + 4)) << failure(r);
    EXPECT_GE(redsum_cycles, 64u * (16 + 2)) << failure(r);
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
