// Micro-benchmarks that reproduce the documented behaviour of the ascend-like
// preset (../shared/NPU_MODEL.md 6.2, 6.5, 6.6). Each test states the figure it
// expects and why (docs/simulator.md has the formulas).

#include "SimTestUtil.h"

#include <cmath>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

const ArchSpec &ascend() {
    static const ArchSpec a = load_arch("ascend-like");
    return a;
}

/** One GM->UB copy of `bytes`; returns the MTE2 edge statistics. */
sim::EdgeStats copy_in(int64_t bytes, int64_t gm_offset = 0) {
    ProgramBuilder b(ascend());
    b.arg("in", DType::UInt8, {bytes + gm_offset});
    b.li(10, 0);
    b.addi(11, 1, gm_offset);
    b.dma("MTE2", "UB", "GM", 10, 11, b.desc_contig(bytes));
    b.end();
    std::vector<Tensor> args{Tensor("in", DType::UInt8, {bytes + gm_offset})};
    auto r = sim::simulate(b.p, ascend(), args);
    return edge(r, "GM", "UB");
}

} // namespace

// Efficiency = (bytes / 32 B per cycle) / (MTE2 busy cycles = setup + transfer),
// first touch (every line an L2 miss, served at the 32 B/cycle HBM rate).
// 2 KiB: 64 / (64 + 64) = 50 %; 16 KiB: 512 / (64 + 512) = 88.9 % (NPU_MODEL 6.2).
TEST(SimTiming, DmaCopyEfficiencyMatchesTheModel) {
    auto e2k = copy_in(2048);
    EXPECT_EQ(e2k.busy_cycles, 128u);
    EXPECT_NEAR(2048.0 / 32 / e2k.busy_cycles, 0.50, 0.005);
    auto e16k = copy_in(16384);
    EXPECT_EQ(e16k.busy_cycles, 576u);
    EXPECT_NEAR(16384.0 / 32 / e16k.busy_cycles, 0.889, 0.005);
    // A GM address that is 32 B but not 512 B aligned pays the 0.77 bandwidth factor.
    auto mis = copy_in(16384, 32);
    EXPECT_EQ(mis.busy_cycles, 64u + static_cast<uint64_t>(std::ceil(512 / 0.77)));
}

TEST(SimTiming, L2ServesReReadsAtTheL2Rate) {
    ProgramBuilder b(ascend());
    const int64_t n = 16384;
    b.arg("in", DType::UInt8, {n});
    b.li(10, 0);
    uint16_t d = b.desc_contig(n);
    b.dma("MTE2", "UB", "GM", 10, 1, d);
    b.li(10, 65536);
    b.dma("MTE2", "UB", "GM", 10, 1, d);
    b.end();
    std::vector<Tensor> args{Tensor("in", DType::UInt8, {n})};
    auto r = sim::simulate(b.p, ascend(), args);
    EXPECT_EQ(r.l2_miss_bytes, n);
    EXPECT_EQ(r.l2_hit_bytes, n);
    // first: 64 + 512 (HBM, 32 B/cyc); second: 64 + ceil(16384 / 110) = 64 + 149 (L2, 110 B/cyc)
    EXPECT_EQ(edge(r, "GM", "UB").busy_cycles, 576u + 64u + 149u);
}

// The L2 fills 32-byte sectors, not whole lines: reading the first quarter of 64 lines does
// not make the rest of those lines resident, so the second quarter still comes from GM at the
// 32 B/cycle HBM rate. Re-reading the first quarter hits (110 B/cycle).
TEST(SimTiming, L2FillsTheSectorsReadNotTheWholeLine) {
    ProgramBuilder b(ascend());
    const int64_t rows = 64, line = 512, quarter = 128;
    b.arg("in", DType::UInt8, {rows * line});
    isa::DmaDesc q;
    q.dims = 2;
    q.elem_bytes = 32;
    q.count[0] = quarter / 32;
    q.src_stride[0] = q.dst_stride[0] = 32;
    q.count[1] = rows;
    q.src_stride[1] = line;
    q.dst_stride[1] = quarter;
    b.p.descs.push_back(q);
    const auto d = static_cast<uint16_t>(b.p.descs.size() - 1);
    b.li(10, 0);
    b.dma("MTE2", "UB", "GM", 10, 1, d); // first quarter of each line: misses
    b.addi(11, 1, quarter);
    b.dma("MTE2", "UB", "GM", 10, 11, d); // second quarter: other sectors, misses too
    b.dma("MTE2", "UB", "GM", 10, 1, d); // first quarter again: hits
    b.end();
    std::vector<Tensor> args{Tensor("in", DType::UInt8, {rows * line})};
    auto r = sim::simulate(b.p, ascend(), args);
    const int64_t n = rows * quarter;
    EXPECT_EQ(r.l2_miss_bytes, 2 * n);
    EXPECT_EQ(r.l2_hit_bytes, n);
    // 64 setup each; 8192 B at 32 B/cyc = 256 (x2, the second at the 0.77 misalignment factor
    // of a GM address that is not 512 B aligned); 8192 B at 110 B/cyc = 74.5.
    const double expect = 3 * 64 + 256 + 256 / 0.77 + 8192.0 / 110;
    EXPECT_NEAR(static_cast<double>(edge(r, "GM", "UB").busy_cycles), expect, 3.0);
}

namespace {

/** Cycles of one vector instruction (one repeat unless n says otherwise). */
uint64_t vector_cycles(Op op, DType t, int64_t n, int64_t d, int64_t a, int64_t bb, int32_t a_stride) {
    ProgramBuilder b(ascend());
    b.li(2, d);
    b.li(3, a);
    b.li(4, bb);
    b.li(5, n);
    Instr &i = b.vec(op, t, 2, 3, 4, 5);
    i.stride = {1, a_stride, 1};
    b.end();
    std::vector<Tensor> args;
    auto r = sim::simulate(b.p, ascend(), args);
    return traced_cycles(r, op);
}

} // namespace

// UB bank model (16 groups x 3 banks x 32 B rows; a 32-B block at address x is in
// bank (x/32) % 48, group bank % 16; each group serves one read and one write per
// cycle, a bank cannot read and write different rows in one cycle). One repeat:
TEST(SimTiming, VectorBankConflictPatterns) {
    // 1 cycle: vadd.fp16, 128 elements, src0 in groups 0-7, src1 in groups 8-15,
    // dst in groups 0-7 but bank 1: every group serves <= 1 read and <= 1 write.
    EXPECT_EQ(vector_cycles(Op::VADD, DType::FP16, 128, 512, 0, 256, 1), 1u);
    // 2 cycles: src1 1536 B after src0 (same groups, next bank row): 2 reads per group.
    EXPECT_EQ(vector_cycles(Op::VADD, DType::FP16, 128, 512, 0, 1536, 1), 2u);
    // 2 cycles: dst in the same banks as src0 (one row further): read/write of one bank.
    EXPECT_EQ(vector_cycles(Op::VADD, DType::FP16, 128, 1536, 0, 256, 1), 2u);
    // 4 cycles: vmov.fp32 of 64 elements read with a 32-B stride (8 elements):
    // 64 blocks, 4 per bank group.
    EXPECT_EQ(vector_cycles(Op::VMOV, DType::FP32, 64, 65536, 0, 0, 8), 4u);
    // 8 cycles: vmov.fp16 of 128 elements read with a 32-B stride (16 elements):
    // 128 blocks, 8 per group: the whole repeat serialised on each group (the 8x
    // slowdown of [A11]).
    EXPECT_EQ(vector_cycles(Op::VMOV, DType::FP16, 128, 65536, 0, 0, 16), 8u);
    // Costs scale with repeats: 4 repeats of the 1-cycle pattern (512 fp16) at
    // 2 cycles/repeat for exp.
    EXPECT_EQ(vector_cycles(Op::VEXP, DType::FP16, 512, 4096, 0, 0, 1), 8u);
}

// A row reduction carries its sum in the unit across the row's repeats and stores
// it once per row (docs/isa-semantics.md), so its one-element destination is a
// write of the row's last repeat only, not of every repeat. vredsum.fp32 of 1024
// elements: 16 repeats reading blocks 0-127 (banks 0-47, 0-47, 0-31).
TEST(SimTiming, ReductionStoresItsResultOncePerRow) {
    // dst in bank 32 (block 2048, another bank row), which repeats 4 and 10 read
    // but not the last one: no conflict (each of those repeats was +1 when the
    // destination was charged as a write of every repeat).
    EXPECT_EQ(vector_cycles(Op::VREDSUM, DType::FP32, 1024, 65536, 0, 0, 1), 16u);
    // dst in bank 24 (block 2088), read by repeats 3, 9 and 15: the last repeat
    // reads and writes one bank in different rows, +1.
    EXPECT_EQ(vector_cycles(Op::VREDSUM, DType::FP32, 1024, 66816, 0, 0, 1), 17u);
    // The same for a maximum.
    EXPECT_EQ(vector_cycles(Op::VREDMAX, DType::FP32, 1024, 65536, 0, 0, 1), 16u);
}

namespace {

/** N iterations of copy-in (16 KiB) / vexp / copy-out. nbuf = 1: one UB buffer,
 * computed in place (each stage waits for the previous iteration's copy-out).
 * nbuf = 2: two input and two output buffers (Ascend's VECIN/VECOUT queues of
 * depth 2): copy-in of i+2 waits only for the vexp of i, vexp of i+2 for the
 * copy-out of i. */
uint64_t pipeline_cycles(int nbuf, int iters, bool check_values) {
    const int64_t tile = 16384, elems = tile / 2;
    ProgramBuilder b(ascend());
    b.arg("in", DType::FP16, {elems * iters});
    b.arg("out", DType::FP16, {elems * iters}, true);
    b.li(20, elems);
    uint16_t d = b.desc_contig(tile);
    for (int i = 0; i < iters; ++i) {
        uint8_t buf = static_cast<uint8_t>(i % nbuf);
        b.li(10, buf * tile);                              // UB input buffer
        b.li(13, nbuf == 1 ? buf * tile : (2 + buf) * tile); // UB output buffer
        b.addi(11, 1, i * tile);                           // GM in
        b.addi(12, 2, i * tile);                           // GM out
        if (nbuf == 1 && i > 0) {
            b.flag(Op::WAIT_FLAG, Pipe::MTE3, Pipe::MTE2, 0); // the buffer is free again
        }
        if (nbuf == 2 && i >= 2) {
            b.flag(Op::WAIT_FLAG, Pipe::V, Pipe::MTE2, buf);  // input buffer consumed
        }
        b.dma("MTE2", "UB", "GM", 10, 11, d);
        b.sync(Pipe::MTE2, Pipe::V, buf);
        if (nbuf == 2 && i >= 2) {
            b.flag(Op::WAIT_FLAG, Pipe::MTE3, Pipe::V, buf);  // output buffer copied out
        }
        b.vec(Op::VEXP, DType::FP16, 13, 10, 0, 20);
        if (nbuf == 2) {
            b.flag(Op::SET_FLAG, Pipe::V, Pipe::MTE2, buf);
        }
        b.sync(Pipe::V, Pipe::MTE3, buf);
        b.dma("MTE3", "GM", "UB", 12, 13, d);
        b.flag(Op::SET_FLAG, Pipe::MTE3, nbuf == 1 ? Pipe::MTE2 : Pipe::V, buf);
    }
    b.end();
    std::vector<Tensor> args{Tensor("in", DType::FP16, {elems * iters}), Tensor("out", DType::FP16, {elems * iters})};
    std::mt19937_64 rng(7);
    fill_random(args[0], rng);
    auto r = sim::simulate(b.p, ascend(), args);
    if (check_values) {
        for (int64_t i = 0; i < elems * iters; i += 97) {
            float want = std::exp(static_cast<float>(args[0].get(i)));
            EXPECT_EQ(args[1].get(i), static_cast<double>(fp16_to_fp32(fp32_to_fp16(want)))) << i;
        }
    }
    return r.cycles;
}

} // namespace

// Stages per iteration: MTE2 64 + 512 = 576 busy (+500 latency), V 64 repeats x 2
// = 128, MTE3 64 + 16384/64 = 320 busy (+500 latency): GM writes land in the
// write-back L2 at min(UB->GM edge 64, L2 write 86) B/cycle.
// One buffer serialises everything: sum = 576+500+128+320+500 = 2024 per iteration.
// Two buffers overlap the stages: the copy-in engine (576) is the binding stage;
// the in-chain of one buffer (576 + 500 + 128 = 1204, shared by 2 iterations)
// gives 602 per iteration, within 5 % of max(stage).
TEST(SimTiming, DoubleBufferingRunsAtMaxStage) {
    const int iters = 8;
    uint64_t one = pipeline_cycles(1, iters, true);
    uint64_t two = pipeline_cycles(2, iters, true);
    const double sum_stage = 576 + 500 + 128 + 320 + 500, max_stage = 576;
    EXPECT_NEAR(static_cast<double>(one) / iters, sum_stage, 0.05 * sum_stage) << one;
    // Two buffers: iterations issue every max_stage, plus one pipeline fill/drain.
    double fill = 500 + 128 + 320 + 500 + 64;
    EXPECT_LE(static_cast<double>(two), iters * max_stage * 1.1 + fill) << two;
    EXPECT_GE(static_cast<double>(two), iters * max_stage) << two;
    EXPECT_GT(static_cast<double>(one) / static_cast<double>(two), 2.5);
}

// Two cores copying 16 KiB each through a GM whose aggregate bandwidth equals one
// core's (32 B/cycle) take 512 transfer cycles longer than one core.
TEST(SimTiming, CoresShareGmBandwidth) {
    ArchSpec a = ascend();
    a.chip.gm_aggregate_bytes_per_cycle = 32;
    auto run = [&](int cores) {
        ProgramBuilder b(a);
        const int64_t tile = 16384;
        b.p.cores = cores;
        b.arg("in", DType::UInt8, {tile * 2});
        Instr ci;
        ci.op = Op::COREID;
        ci.rd = 5;
        b.emit(ci);
        b.li(6, tile);
        Instr mul;
        mul.op = Op::MUL;
        mul.rd = 7;
        mul.ra = 5;
        mul.rb = 6;
        b.emit(mul);
        Instr add;
        add.op = Op::ADD;
        add.rd = 8;
        add.ra = 1;
        add.rb = 7;
        b.emit(add);
        b.li(10, 0);
        b.dma("MTE2", "UB", "GM", 10, 8, b.desc_contig(tile));
        b.end();
        std::vector<Tensor> args{Tensor("in", DType::UInt8, {tile * 2})};
        return sim::simulate(b.p, a, args);
    };
    auto r1 = run(1), r2 = run(2);
    EXPECT_EQ(r2.cycles, r1.cycles + 512) << r1.cycles << " vs " << r2.cycles;
    // With the preset's 768 B/cycle aggregate, two cores do not slow each other.
    a.chip.gm_aggregate_bytes_per_cycle = 768;
    EXPECT_EQ(run(2).cycles, r1.cycles);
}

TEST(SimTiming, MatrixUnitCostAndFillDrain) {
    ArchSpec a = ascend();
    a.matrix.fill_drain_cycles = 32;
    ProgramBuilder b(a);
    b.li(2, 0);
    b.li(3, 0);
    b.li(4, 0);
    b.mmad(DType::FP16, 2, 3, 4, 64, 64, 64, true); // 4*4*4 = 64 fractal cycles + 32 fill
    b.mmad(DType::FP16, 2, 3, 4, 64, 64, 64, false); // back to back: 64
    b.end();
    std::vector<Tensor> args;
    auto r = sim::simulate(b.p, a, args);
    ASSERT_EQ(r.trace.size(), 6u);
    uint64_t first = 0, second = 0;
    for (const auto &e : r.trace) {
        if (e.op == Op::MMAD) {
            (first ? second : first) = e.end - e.start;
        }
    }
    EXPECT_EQ(first, 96u);
    EXPECT_EQ(second, 64u);
    EXPECT_EQ(r.cycles, 3 + 96 + 64 + 16u); // 3 LIs issue first, +latency 16 at the end
}

// A full pipe queue stalls the front end: 40 vector instructions of 8 cycles into
// a queue of 32 entries; issue waits for the vector unit to take the 33rd.
TEST(SimTiming, FullQueueStallsIssue) {
    ProgramBuilder b(ascend());
    b.li(2, 0);
    b.li(5, 1024); // 8 repeats of fp16
    for (int i = 0; i < 40; ++i) {
        b.vec(Op::VRELU, DType::FP16, 2, 2, 0, 5);
    }
    b.end();
    std::vector<Tensor> args;
    auto r = sim::simulate(b.p, ascend(), args);
    uint64_t s_stall = 0, v_busy = 0;
    for (const auto &p : r.pipes) {
        if (p.pipe == "S") {
            s_stall = p.stall_cycles;
        }
        if (p.pipe == "V") {
            v_busy = p.busy_cycles;
        }
    }
    EXPECT_EQ(v_busy, 40u * 8);
    EXPECT_EQ(r.cycles, 2u + 40 * 8);
    // Without the stall the front end would reach END at cycle 42; it is blocked
    // on the full queue (7 times) and then waits at END for the drain.
    EXPECT_GT(s_stall, 40u * 8 - 42);
    // The front end reaches END only after the vector unit has taken enough
    // instructions: the 40th issues when the 8th has left the queue (cycle 2 + 7*8).
    uint64_t end_reached = 0;
    for (const auto &e : r.trace) {
        if (e.op == Op::END) {
            end_reached = e.start;
        }
    }
    EXPECT_EQ(end_reached, 2u + 7 * 8 + 1);
}
