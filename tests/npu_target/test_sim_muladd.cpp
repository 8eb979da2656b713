// The two multiply-add vector forms (docs/isa.md, docs/isa-semantics.md):
// VMULADD d = d + a * b and VMADD d = d * a + b, each rounded as the separate
// multiply and add (no fused multiply-add), over strided rows; both read d.
#include "SimTestUtil.h"

#include "npu_target/isa/InstrTable.h"

#include <cstring>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

const ArchSpec &ascend() { return ascend_like(); }

struct MulAddRun {
    std::vector<float> d0, a, b, d; // d before and after
    uint64_t cycles = 0;
};

/** `op`.fp32 over 3 rows of n elements: d, a, b in UB, rows `row` elements
 * apart (a row's tail beyond n untouched), on random data. */
MulAddRun run_rows(Op op, int n, int row) {
    const int rows = 3, elems = rows * row;
    ProgramBuilder b(ascend());
    b.arg("a", DType::FP32, {elems});
    b.arg("b", DType::FP32, {elems});
    b.arg("d", DType::FP32, {elems}, true);
    b.li(10, 0);     // a
    b.li(11, 32768); // b
    b.li(12, 65536); // d
    b.li(20, n);
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(elems * 4));
    b.dma("MTE2", "UB", "GM", 11, 2, b.desc_contig(elems * 4));
    b.dma("MTE2", "UB", "GM", 12, 3, b.desc_contig(elems * 4));
    b.sync(Pipe::MTE2, Pipe::V);
    Instr &i = b.vec(op, DType::FP32, 12, 10, 11, 20, rows);
    i.stride = {1, 1, 1};
    i.row_stride = {row, row, row};
    b.sync(Pipe::V, Pipe::MTE3);
    b.dma("MTE3", "GM", "UB", 3, 12, b.desc_contig(elems * 4));
    b.end();
    std::vector<Tensor> args{Tensor("a", DType::FP32, {elems}), Tensor("b", DType::FP32, {elems}),
                             Tensor("d", DType::FP32, {elems})};
    std::mt19937_64 rng(23);
    for (auto &t : args) {
        fill_random(t, rng);
    }
    MulAddRun r;
    auto floats = [](const Tensor &t) {
        std::vector<float> v(t.data.size() / 4);
        std::memcpy(v.data(), t.data.data(), t.data.size());
        return v;
    };
    r.d0 = floats(args[2]);
    r.cycles = traced_cycles(sim::simulate(b.p, ascend(), args), op);
    r.a = floats(args[0]);
    r.b = floats(args[1]);
    r.d = floats(args[2]);
    return r;
}

// Rounded as two operations: the product to fp32, then the sum.
float rounded(float x) {
    volatile float v = x;
    return v;
}

} // namespace

// d = d * a + b and d = d + a * b, element by element, bit for bit against the
// definition with two roundings, over rows longer than one repeat (200 fp32:
// 4 repeats, the last masked) with a row's tail left as it was.
TEST(SimMulAdd, ComputesTheDefinitionWithTwoRoundings) {
    const int n = 200, row = 256;
    for (Op op : {Op::VMADD, Op::VMULADD}) {
        MulAddRun r = run_rows(op, n, row);
        for (int k = 0; k < 3; ++k) {
            for (int i = 0; i < row; ++i) {
                const int e = k * row + i;
                float want = r.d0[e];
                if (i < n) {
                    want = op == Op::VMADD ? rounded(rounded(r.d0[e] * r.a[e]) + r.b[e])
                                           : rounded(r.d0[e] + rounded(r.a[e] * r.b[e]));
                }
                ASSERT_EQ(std::memcmp(&r.d[e], &want, 4), 0)
                    << isa::op_info(op).mnemonic << " row " << k << " element " << i << ": got " << r.d[e]
                    << ", want " << want;
            }
        }
    }
}

// Both read their destination, which the table says (sync and the hazard
// check treat d as a source), and cost a repeat per 64 fp32 like VMUL.
TEST(SimMulAdd, ReadsTheDestinationAndCostsARepeatPer256Bytes) {
    EXPECT_TRUE(isa::reads_destination(Op::VMADD));
    EXPECT_TRUE(isa::reads_destination(Op::VMULADD));
    EXPECT_FALSE(isa::reads_destination(Op::VMUL));
    EXPECT_FALSE(isa::reads_destination(Op::VADD));
    const uint64_t mul = run_rows(Op::VMUL, 256, 256).cycles;
    EXPECT_EQ(run_rows(Op::VMADD, 256, 256).cycles, mul);
    EXPECT_EQ(run_rows(Op::VMULADD, 256, 256).cycles, mul);
    EXPECT_GE(mul, 3u * 4u); // 3 rows x 4 repeats, plus any bank conflicts
}
