// Depthwise convolution's two forms (samples/depthwise): "vector" as written
// (per-channel multiply-adds) and "matrix" (the same sums as a block-diagonal
// product over 16-channel groups, its pixels flattened over the input's row
// pitch). The matrix form adds only exact zeros, so both forms give
// bit-identical results: checked on the CPU (Halide's JIT, both forms, same
// inputs) and on the NPU (the matrix form with
// samples/depthwise/schedules/ascend_matrix.json, tensorized on the matrix
// unit, against the vector form's CPU result with no tolerance).
//
// It also checks two things of the backend the matrix form relies on: the
// flattened read `in(q % W, q / W + ky)` is affine again for tensorize
// (join_div_mod: without it tensorize refuses the update), so one MMAD covers
// a band's rows; and the MMAD that overwrites the accumulator runs on the
// peeled first tap (no branch per MMAD: without the peel every MMAD tests
// "first tap?").
#include "tests/backend/NpuHarness.h"

#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "npu_target/arch/ArchSpec.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

// The vector form's and the matrix form's parameters: 8 rows (two bands of 4,
// the schedule's split), W = 6 (input rows 8 wide), 32 channels (2 groups).
std::pair<ParamMap, ParamMap> both_forms(const std::string &dtype) {
    ParamMap given{{"H", "8"}, {"W", "6"}, {"C", "32"}, {"K", "3"}, {"dtype", dtype}};
    ParamMap plain_p = resolve_params(find_generator("depthwise"), given);
    given["form"] = "matrix";
    return {plain_p, resolve_params(find_generator("depthwise"), given)};
}

void both_forms_bit_identical(const std::string &dtype) {
    const uint64_t seed = fresh_seed();
    auto [plain_p, matrix_p] = both_forms(dtype);

    HalidePipeline plain = build_reference_pipeline("depthwise", plain_p);
    std::vector<Tensor> inputs = make_random_inputs(plain, seed);
    std::vector<Tensor> want = run_on_cpu(plain, inputs);
    HalidePipeline matrix_ref = build_reference_pipeline("depthwise", matrix_p);
    ASSERT_EQ(make_random_inputs(matrix_ref, seed).size(), inputs.size());
    Comparison cpu = compare(run_on_cpu(matrix_ref, inputs)[0], want[0], 0, 0);
    EXPECT_EQ(cpu.mismatches, 0) << "seed " << seed << ", CPU, matrix form against vector form: " << cpu.message;

    ArchSpec arch = load_arch("ascend-like");
    HalidePipeline p = build_halide_pipeline("depthwise", matrix_p);
    NpuBuild b = build_npu(p, sample_schedule("depthwise/schedules/ascend_matrix.json"), arch, {});
    NpuRunResult out = run_npu_program(b, arch, inputs);
    Comparison npu = compare(out.outputs[0], want[0], 0, 0);
    EXPECT_EQ(npu.mismatches, 0) << "seed " << seed << ", NPU matrix form against the vector form's CPU result: "
                                 << npu.message;
    // Tensorized: one MMAD per band (2), group (2) and tap (9), each over the
    // band's 4 rows flattened at the input's pitch (3 x 8 + 6 = 30 pixels); no
    // multiply-add on the vector unit, no branch taken or tested but the loops'
    // and advance_head's two per band around the band's input load (`t == min`:
    // this band's, `t + 1 < end`: the next band's; the band loop gives the
    // matrix unit 36 MMADs, with their flags more than its queue holds).
    uint64_t mmads = 0, vector_macs = 0, branches = 0;
    for (const auto &e : out.report.trace) {
        mmads += e.op == isa::Op::MMAD;
        vector_macs += e.op == isa::Op::VMULADD || e.op == isa::Op::VMUL;
        branches += e.op == isa::Op::BEQ || e.op == isa::Op::BNE || e.op == isa::Op::JMP;
    }
    EXPECT_EQ(mmads, 2u * 2 * 9);
    EXPECT_EQ(vector_macs, 0u);
    EXPECT_EQ(branches, 2u * 2);
    for (const isa::Instr &i : b.backend.program.code) {
        if (i.op == isa::Op::MMAD) {
            EXPECT_EQ(i.m, 30);
        }
    }
}

// hoist_addresses: the tap loops' MMAD addresses are computed from lets before
// the loops (the group's copy index, the group's filter block), not from
// scratch before every MMAD; the same program otherwise. Fails without the pass
// (no fewer scalar instructions; skipping an unknown pass is an error).
TEST(DepthwiseForms, HoistedAddressesCutTheScalarWorkPerMmad) {
    const uint64_t seed = fresh_seed();
    auto [plain_p, matrix_p] = both_forms("fp16");
    HalidePipeline plain = build_reference_pipeline("depthwise", plain_p);
    std::vector<Tensor> inputs = make_random_inputs(plain, seed);
    std::vector<Tensor> want = run_on_cpu(plain, inputs);
    ArchSpec arch = load_arch("ascend-like");
    uint64_t scalar[2] = {0, 0};
    for (int hoist = 0; hoist < 2; hoist++) {
        PassOptions opt;
        if (!hoist) {
            opt.skip = {"hoist_addresses"};
        }
        HalidePipeline p = build_halide_pipeline("depthwise", matrix_p);
        NpuBuild b = build_npu(p, sample_schedule("depthwise/schedules/ascend_matrix.json"), arch, opt);
        NpuRunResult out = run_npu_program(b, arch, inputs);
        Comparison c = compare(out.outputs[0], want[0], 0, 0);
        EXPECT_EQ(c.mismatches, 0) << "seed " << seed << (hoist ? "" : ", hoist_addresses skipped") << ": " << c.message;
        for (const auto &e : out.report.trace) {
            scalar[hoist] += e.pipe == "S";
        }
    }
    // 36 MMADs (each band's first tap has no loop around it); measured 837 -> 681 with
    // bands of 7 rows at H = 14.
    EXPECT_LT(scalar[1] + 36 * 3, scalar[0]) << "scalar instructions with the pass " << scalar[1] << ", without "
                                              << scalar[0];
}

TEST(DepthwiseForms, MatrixFormIsBitIdenticalFp16) { both_forms_bit_identical("fp16"); }

TEST(DepthwiseForms, MatrixFormIsBitIdenticalInt8) { both_forms_bit_identical("int8"); }

} // namespace
