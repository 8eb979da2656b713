// The row-scalar vector forms (VADDRS, VSUBRS, VMULRS, VDIVRS, VMAXRS, VMINRS;
// docs/isa.md, docs/isa-semantics.md): d = a op b[row], b one element per row,
// fetched by the vector unit once, in the row's first repeat. What they compute
// (the element-wise op with b at element stride 0, b held for the row) and what
// they cost on the UB banks (docs/simulator.md "Bank model").
#include "SimTestUtil.h"

#include "npu_target/isa/InstrTable.h"

#include <cstring>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

const ArchSpec &ascend() { return ascend_like(); }

/** Cycles of `op`.fp32 over 2 rows of 1024 elements: a at 0 (row stride 1024),
 * d at 32768 (row stride 1024), b at `b_addr` read at element stride 0 with row
 * stride 1 (one value per row). */
uint64_t row_op_cycles(Op op, int64_t b_addr) {
    ProgramBuilder b(ascend());
    b.li(2, 32768);
    b.li(3, 0);
    b.li(4, b_addr);
    b.li(5, 1024);
    Instr &i = b.vec(op, DType::FP32, 2, 3, 4, 5, 2);
    i.stride = {1, 1, 0};
    i.row_stride = {1024, 1024, 1};
    b.end();
    std::vector<Tensor> args;
    return traced_cycles(sim::simulate(b.p, ascend(), args), op);
}

} // namespace

// 2 rows x 16 repeats. a's repeat k reads blocks 8k..8k+7 of its row: bank groups
// 0-7 in even repeats, 8-15 in odd ones (a row is 128 blocks, a multiple of 16).
// b's value is in block 3080 (98560 B): bank 8, group 8. d writes banks 16 (row 0)
// and 0 (row 1) blocks after a's, never a's bank, never bank 8 when a's half is 0-7.
TEST(SimRowScalar, PerRowOperandIsFetchedOncePerRow) {
    // vadd with b at element stride 0 reads b's block in every repeat: in every odd
    // repeat group 8 serves a's block and b's: +1, 8 per row.
    EXPECT_EQ(row_op_cycles(Op::VADD, 98560), 32u + 16u);
    // vaddrs reads it only in repeat 0 of each row (groups 0-7 for a): no conflict.
    EXPECT_EQ(row_op_cycles(Op::VADDRS, 98560), 32u);
    EXPECT_EQ(row_op_cycles(Op::VMULRS, 98560), 32u);
    // In group 0 (block 3072, bank 0) b meets a's block 0 in repeat 0 of row 0
    // (and of row 1, a's block 128 being bank 32 of group 0): +1 per row.
    EXPECT_EQ(row_op_cycles(Op::VADDRS, 98304), 34u);
    // vdiv costs 4 per repeat (cycles_per_repeat "div"), the row-scalar form too.
    EXPECT_EQ(row_op_cycles(Op::VDIVRS, 98560), 4u * 32u);
}

namespace {

/** Runs `op`.fp32 over 3 rows of n elements (d, a, b in UB; b at element stride
 * 0, row stride 1) on random data and returns d. */
std::vector<float> run_rows(Op op, int n, std::vector<float> &a, std::vector<float> &bv) {
    const int rows = 3;
    ProgramBuilder b(ascend());
    b.arg("a", DType::FP32, {rows * n});
    b.arg("b", DType::FP32, {rows});
    b.arg("d", DType::FP32, {rows * n}, true);
    b.li(10, 0);     // a
    b.li(11, 65536); // b
    b.li(12, 32768); // d
    b.li(20, n);
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(rows * n * 4));
    b.dma("MTE2", "UB", "GM", 11, 2, b.desc_contig(rows * 4));
    b.sync(Pipe::MTE2, Pipe::V);
    Instr &i = b.vec(op, DType::FP32, 12, 10, 11, 20, rows);
    i.stride = {1, 1, 0};
    i.row_stride = {n, n, 1};
    b.sync(Pipe::V, Pipe::MTE3);
    b.dma("MTE3", "GM", "UB", 3, 12, b.desc_contig(rows * n * 4));
    b.end();
    std::vector<Tensor> args{Tensor("a", DType::FP32, {rows * n}), Tensor("b", DType::FP32, {rows}),
                             Tensor("d", DType::FP32, {rows * n})};
    std::mt19937_64 rng(11);
    fill_random(args[0], rng);
    fill_random(args[1], rng);
    args[1].set(1, 0.0); // a zero divisor and a -0 row value: the same as the element-wise op
    args[1].set(2, -0.0);
    poison(args[2]);
    sim::simulate(b.p, ascend(), args);
    a.resize(rows * n);
    bv.resize(rows);
    std::memcpy(a.data(), args[0].data.data(), a.size() * 4);
    std::memcpy(bv.data(), args[1].data.data(), bv.size() * 4);
    std::vector<float> d(rows * n);
    std::memcpy(d.data(), args[2].data.data(), d.size() * 4);
    return d;
}

} // namespace

// Each row-scalar op computes its element-wise op (VADD ...) with b at element
// stride 0, bit for bit, over rows longer than one repeat (200 fp32: 4 repeats).
TEST(SimRowScalar, ComputesTheElementWiseOpWithTheRowsValue) {
    const int n = 200;
    for (Op op : {Op::VADDRS, Op::VSUBRS, Op::VMULRS, Op::VDIVRS, Op::VMAXRS, Op::VMINRS}) {
        std::vector<float> a, bv;
        std::vector<float> got = run_rows(op, n, a, bv);
        std::vector<float> a2, bv2;
        std::vector<float> want = run_rows(isa::row_scalar_base(op), n, a2, bv2);
        ASSERT_EQ(a, a2);
        for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0) << sim::op_mnemonic(op) << " element " << i;
        }
        // And against the definition: d = a op b[row].
        for (int r = 0; r < 3; ++r) {
            for (int i = 0; i < n; i += 37) {
                float x = a[r * n + i], y = bv[r];
                float w = op == Op::VADDRS ? x + y : op == Op::VSUBRS ? x - y : op == Op::VMULRS ? x * y
                        : op == Op::VDIVRS ? x / y : op == Op::VMAXRS ? (x > y ? x : y) : (x < y ? x : y);
                ASSERT_EQ(std::memcmp(&got[r * n + i], &w, 4), 0) << sim::op_mnemonic(op) << " row " << r << " " << i;
            }
        }
    }
}

// b[row] is fetched before the row is computed: a destination that overwrites
// it (d = b's buffer, in place) does not change the value the row's later
// elements see. vaddrs d = a + b[0] over 128 elements with b = d[0].
TEST(SimRowScalar, HoldsTheRowsValueForTheWholeRow) {
    ProgramBuilder b(ascend());
    b.arg("a", DType::FP32, {128});
    b.arg("d", DType::FP32, {128}, true);
    b.li(10, 0);    // a
    b.li(12, 4096); // d (and b = d[0])
    b.li(20, 128);
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(512));
    b.dma("MTE2", "UB", "GM", 12, 1, b.desc_contig(512)); // d = a
    b.sync(Pipe::MTE2, Pipe::V);
    Instr &i = b.vec(Op::VADDRS, DType::FP32, 12, 10, 12, 20);
    i.stride = {1, 1, 0};
    b.sync(Pipe::V, Pipe::MTE3);
    b.dma("MTE3", "GM", "UB", 2, 12, b.desc_contig(512));
    b.end();
    std::vector<Tensor> args{Tensor("a", DType::FP32, {128}), Tensor("d", DType::FP32, {128})};
    for (int k = 0; k < 128; ++k) {
        args[0].set(k, 1.0 + k);
    }
    sim::simulate(b.p, ascend(), args);
    for (int k = 0; k < 128; ++k) {
        EXPECT_EQ(args[1].get(k), 1.0 + k + 1.0) << k; // a[k] + the old d[0] (= a[0] = 1)
    }
}

TEST(SimRowScalar, RejectsAMovingB) {
    ProgramBuilder b(ascend());
    b.li(20, 64);
    b.li(11, 1024);
    Instr &i = b.vec(Op::VMULRS, DType::FP32, 0, 0, 11, 20);
    i.stride = {1, 1, 1};
    b.end();
    std::vector<Tensor> args;
    try {
        sim::simulate(b.p, ascend(), args);
        FAIL() << "vmulrs with b stride 1 ran";
    } catch (const sim::SimError &e) {
        EXPECT_NE(std::string(e.what()).find("s2 must be 0"), std::string::npos) << e.what();
    }
}

TEST(SimRowScalar, EncodesAndAssemblesLikeTheBinaryOps) {
    Instr i;
    i.op = Op::VSUBRS;
    i.dtype = DType::FP32;
    i.ra = 2, i.rb = 3, i.rc = 4, i.rd = 5;
    i.rows = 8;
    i.stride = {1, 1, 0};
    i.row_stride = {1024, 1024, 1};
    uint8_t word[32];
    isa::encode_instr(i, word);
    EXPECT_EQ(word[0], 0x6a);
    Instr back = isa::decode_instr(word);
    EXPECT_EQ(back.op, Op::VSUBRS);
    EXPECT_EQ(back.rows, 8);
    EXPECT_EQ(back.row_stride[2], 1);
    EXPECT_EQ(back.stride[2], 0);
    EXPECT_STREQ(isa::op_info(Op::VMULRS).cost_key, "mul");
}
