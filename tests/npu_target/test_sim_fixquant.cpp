// The FIX engine's requantisation (FIXPARAM + a quant DMA, docs/isa-semantics.md "FIX
// requantisation"): hand-built programs against a plain C++ reference written from the
// documented formula, explicit values (rounding ties, saturation both ways, shifts 1, 30 and
// 31, negative accumulators, ReLU), and every error the simulator and the checker give.

#include "SimTestUtil.h"

#include "npu_target/isa/Binary.h"
#include "npu_target/isa/InstrTable.h"

#include <climits>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

// ascend-like plus an MTE2 edge GM -> L0C, so that a test can place arbitrary int32
// accumulators in L0C (the matrix unit alone cannot make every int32 value).
const ArchSpec &arch() {
    static const ArchSpec a = [] {
        ArchSpec x = load_arch("ascend-like");
        for (auto &e : x.engines) {
            if (e.name == "MTE2") {
                e.edges.push_back({"GM", "L0C", 32});
            }
        }
        return x;
    }();
    return a;
}

// The documented formula, in plain int64 arithmetic with explicit 32-bit wrap-around.
int64_t wrap32(int64_t v) {
    v &= 0xffffffffLL;
    return v >= 0x80000000LL ? v - 0x100000000LL : v;
}
int reference(int32_t acc, int32_t bias, int32_t scale, int shift, bool relu, DType out) {
    int64_t v = wrap32(int64_t{acc} + bias);
    if (relu && v < 0) {
        v = 0;
    }
    const int64_t x = wrap32(wrap32(v * scale) + (shift ? (int64_t{1} << (shift - 1)) : 0));
    // floor division by 2^shift, written as a division (not a shift) to be independent of the sim
    const int64_t d = int64_t{1} << shift;
    const int64_t r = x >= 0 ? x / d : -((-x + d - 1) / d);
    const int64_t lo = out == DType::UInt8 ? 0 : out == DType::Int16 ? -32768 : -128;
    const int64_t hi = out == DType::UInt8 ? 255 : out == DType::Int16 ? 32767 : 127;
    return static_cast<int>(std::min(hi, std::max(lo, r)));
}

struct Case {
    std::vector<int32_t> acc;          // rows x n, row-major
    std::vector<int32_t> bias, scale;  // n
    int n = 1, rows = 1, shift = 1;
    bool relu = false;
    DType scale_t = DType::UInt8, out = DType::Int8;
};

Instr fixparam(ProgramBuilder &b, const Case &c, uint8_t rbias, uint8_t rscale, int n) {
    Instr i;
    i.op = Op::FIXPARAM;
    i.engine = b.engine("FIX");
    i.src_level = b.level("L1");
    i.ra = rbias;
    i.rb = rscale;
    i.n = static_cast<uint16_t>(n);
    i.aux = static_cast<uint32_t>(c.shift) | (c.relu ? 32u : 0u);
    i.dtype = c.scale_t;
    i.dtype2 = c.out;
    return i;
}

// bias, scale GM -> L1, acc GM -> L0C, FIXPARAM, one quant DMA L0C -> GM of rows x n.
isa::Program program(const Case &c, bool with_fixparam = true, int fix_n = -1, int elem_bytes = -1,
                     bool flag_before_fix = true) {
    ProgramBuilder b(arch());
    const int n = c.n, rows = c.rows, sb = dtype_bytes(c.scale_t), ob = dtype_bytes(c.out);
    b.arg("acc", DType::Int32, {n, rows});
    b.arg("bias", DType::Int32, {n});
    b.arg("scale", c.scale_t, {n});
    b.arg("out", c.out, {n, rows}, true);
    b.li(10, 0);     // L0C acc
    b.li(11, 0);     // L1 bias
    b.li(12, 8192);  // L1 scale
    b.dma("MTE2", "L0C", "GM", 10, 1, b.desc_contig(int64_t{n} * rows * 4));
    if (!flag_before_fix) { // only the accumulators are ordered before FIX, not the parameter tables
        b.sync(Pipe::MTE2, Pipe::FIX);
    }
    b.dma("MTE2", "L1", "GM", 11, 2, b.desc_contig(int64_t{n} * 4));
    b.dma("MTE2", "L1", "GM", 12, 3, b.desc_contig(int64_t{n} * sb));
    if (flag_before_fix) {
        b.sync(Pipe::MTE2, Pipe::FIX);
    }
    if (with_fixparam) {
        b.emit(fixparam(b, c, 11, 12, fix_n < 0 ? n : fix_n));
    }
    isa::DmaDesc d;
    d.dims = 2;
    d.elem_bytes = static_cast<uint32_t>(elem_bytes < 0 ? ob : elem_bytes);
    d.count[0] = static_cast<uint32_t>(n);
    d.count[1] = static_cast<uint32_t>(rows);
    d.src_stride[0] = 4;
    d.src_stride[1] = 4 * n;
    d.dst_stride[0] = ob;
    d.dst_stride[1] = int64_t{ob} * n;
    const auto &names = isa::dma_transform_names();
    d.transform = static_cast<uint8_t>(std::find(names.begin(), names.end(), "quant") - names.begin());
    b.p.descs.push_back(d);
    b.dma("FIX", "GM", "L0C", 4, 10, static_cast<uint16_t>(b.p.descs.size() - 1));
    b.end();
    return b.p;
}

std::vector<Tensor> tensors(const Case &c) {
    std::vector<Tensor> t{Tensor("acc", DType::Int32, {c.n, c.rows}), Tensor("bias", DType::Int32, {c.n}),
                          Tensor("scale", c.scale_t, {c.n}), Tensor("out", c.out, {c.n, c.rows})};
    for (size_t i = 0; i < c.acc.size(); ++i) {
        t[0].set(static_cast<int64_t>(i), c.acc[i]);
    }
    for (int i = 0; i < c.n; ++i) {
        t[1].set(i, c.bias[static_cast<size_t>(i)]);
        t[2].set(i, c.scale[static_cast<size_t>(i)]);
    }
    poison(t[3]);
    return t;
}

std::vector<int> run(const Case &c) {
    std::vector<Tensor> t = tensors(c);
    sim::simulate(program(c), arch(), t);
    std::vector<int> r;
    for (size_t i = 0; i < c.acc.size(); ++i) {
        r.push_back(static_cast<int>(t[3].get(static_cast<int64_t>(i))));
    }
    return r;
}

// One row of accumulators through one channel (bias, scale) each.
Case one_channel(std::vector<int32_t> acc, int32_t bias, int32_t scale, int shift, bool relu = false,
                 DType out = DType::Int8, DType scale_t = DType::UInt8) {
    Case c;
    c.n = 1;
    c.rows = static_cast<int>(acc.size());
    c.acc = std::move(acc);
    c.bias = {bias};
    c.scale = {scale};
    c.shift = shift;
    c.relu = relu;
    c.out = out;
    c.scale_t = scale_t;
    return c;
}

std::string sim_error(const isa::Program &p, const Case &c) {
    std::vector<Tensor> t = tensors(c);
    try {
        sim::simulate(p, arch(), t);
    } catch (const sim::SimError &e) {
        return e.what();
    }
    return "no SimError";
}

} // namespace

TEST(SimFixQuant, RoundsHalfUpAndSaturatesBothWays) {
    // bias 0, scale 1, shift 1: x / 2 rounded half up
    EXPECT_EQ(run(one_channel({3, -3, 5, -5, 1, -1, 0, 2, -2, 1000, -1000, 255, 256, -256, -257}, 0, 1, 1)),
              (std::vector<int>{2, -1, 3, -2, 1, 0, 0, 1, -1, 127, -128, 127, 127, -128, -128}));
    // shift 2: ties at .5 go up (-6/4 = -1.5 -> -1, 6/4 = 1.5 -> 2, -10/4 = -2.5 -> -2)
    EXPECT_EQ(run(one_channel({6, -6, 10, -10, 5, -5, 7, -7}, 0, 1, 2)), (std::vector<int>{2, -1, 3, -2, 1, -1, 2, -2}));
    // bias and scale: ((acc + 10) * 3 + 4) >> 3
    EXPECT_EQ(run(one_channel({-10, 0, 30, -50, 400, -400}, 10, 3, 3)), (std::vector<int>{0, 4, 15, -15, 127, -128}));
    // ReLU between the bias and the scale
    EXPECT_EQ(run(one_channel({-7, -1, 0, 7, 8}, 0, 1, 1, true)), (std::vector<int>{0, 0, 0, 4, 4}));
    // uint8 and int16 results saturate at their own ranges
    EXPECT_EQ(run(one_channel({-3, 3, 600, 70000, -70000}, 0, 1, 1, false, DType::UInt8)),
              (std::vector<int>{0, 2, 255, 255, 0}));
    EXPECT_EQ(run(one_channel({-3, 3, 70000, -70000, 131072}, 0, 1, 1, false, DType::Int16)),
              (std::vector<int>{-1, 2, 32767, -32768, 32767}));
}

TEST(SimFixQuant, ShiftsOneThirtyAndThirtyOneOnExtremeAccumulators) {
    const std::vector<int32_t> acc = {INT32_MAX, INT32_MIN, INT32_MIN + 1, -1, 1, 0, 1 << 30, -(1 << 30),
                                      (1 << 29) + 1, -(1 << 29) - 1};
    for (int shift : {1, 30, 31}) {
        for (int32_t scale : {1, 255}) {
            Case c = one_channel(acc, 0, scale, shift);
            std::vector<int> want;
            for (int32_t a : acc) {
                want.push_back(reference(a, 0, scale, shift, false, DType::Int8));
            }
            EXPECT_EQ(run(c), want) << "shift " << shift << " scale " << scale;
        }
    }
    // shift 31: x >> 31 is 0 for x >= 0 and -1 below; the 2^30 rounding term wraps INT32_MAX negative
    EXPECT_EQ(run(one_channel({INT32_MAX, 0, -1, INT32_MIN}, 0, 1, 31)), (std::vector<int>{-1, 0, 0, -1}));
    // shift 30: (2^29 + 2^29) >> 30 = 1, (-(2^29) - 1 + 2^29) >> 30 = -1
    EXPECT_EQ(run(one_channel({1 << 29, -(1 << 29) - 1, (1 << 29) - 1}, 0, 1, 30)), (std::vector<int>{1, -1, 0}));
}

TEST(SimFixQuant, ManyRandomValuesPerChannelMatchTheReference) {
    std::mt19937_64 rng(20261130);
    for (DType scale_t : {DType::UInt8, DType::Int8, DType::Int16, DType::Int32}) {
        for (DType out : {DType::Int8, DType::UInt8, DType::Int16}) {
            Case c;
            c.n = 48;
            c.rows = 9;
            c.scale_t = scale_t;
            c.out = out;
            c.shift = static_cast<int>(rng() % 31) + 1;
            c.relu = rng() % 2;
            std::uniform_int_distribution<int32_t> wide(INT32_MIN, INT32_MAX), narrow(-300000, 300000);
            for (int i = 0; i < c.n * c.rows; ++i) {
                c.acc.push_back(i % 3 ? narrow(rng) : wide(rng));
            }
            for (int i = 0; i < c.n; ++i) {
                c.bias.push_back(narrow(rng));
                const int64_t s = static_cast<int64_t>(rng());
                c.scale.push_back(scale_t == DType::UInt8  ? static_cast<int32_t>(s & 0xff)
                                  : scale_t == DType::Int8 ? static_cast<int8_t>(s)
                                  : scale_t == DType::Int16 ? static_cast<int16_t>(s)
                                                            : static_cast<int32_t>(s));
            }
            std::vector<int> want;
            for (int r = 0; r < c.rows; ++r) {
                for (int i = 0; i < c.n; ++i) {
                    want.push_back(reference(c.acc[static_cast<size_t>(r * c.n + i)], c.bias[static_cast<size_t>(i)],
                                             c.scale[static_cast<size_t>(i)], c.shift, c.relu, out));
                }
            }
            EXPECT_EQ(run(c), want) << dtype_name(scale_t) << " -> " << dtype_name(out) << " shift " << c.shift;
        }
    }
}

TEST(SimFixQuant, ChannelIsTheIndexInDimensionZeroModuloTheTable) {
    // 8 parameters, a row of 16: elements 8..15 use channels 0..7 again
    Case c;
    c.n = 16;
    c.rows = 2;
    c.shift = 1;
    for (int i = 0; i < 32; ++i) {
        c.acc.push_back(2 * i);
    }
    for (int i = 0; i < 16; ++i) {
        c.bias.push_back(i < 8 ? 100 * i : -5000);
        c.scale.push_back(1);
    }
    std::vector<Tensor> t = tensors(c);
    sim::simulate(program(c, true, 8), arch(), t);
    for (int i = 0; i < 32; ++i) {
        const int ch = (i % 16) % 8;
        EXPECT_EQ(t[3].get(i), reference(2 * i, 100 * ch, 1, 1, false, DType::Int8)) << i;
    }
}

TEST(SimFixQuant, TheQuantCopyCostsItsWrittenBytesAtTheEdgeRate) {
    Case c;
    c.n = 256;
    c.rows = 32;
    c.out = DType::Int16; // rows of 512 bytes: every row starts 512-byte aligned (FIX's align_bytes)
    c.acc.assign(256 * 32, 5);
    c.bias.assign(256, 0);
    c.scale.assign(256, 1);
    std::vector<Tensor> t = tensors(c);
    sim::SimOptions o;
    o.trace = true;
    const sim::SimReport r = sim::simulate(program(c), arch(), t, o);
    uint64_t quant = 0;
    for (const auto &e : r.trace) {
        if (e.op == Op::DMA && e.pipe == "FIX") {
            quant = e.end - e.start;
        }
    }
    // 16 KiB of int16 at L0C->GM's 64 B/cycle after 16 setup cycles (GM writes land in the L2 at 86
    // B/cycle, above the edge), not the 32 KiB of int32 it reads
    EXPECT_EQ(quant, 16u + 16384u / 64u);
    EXPECT_EQ(traced_cycles(r, Op::FIXPARAM), 16u + (256u * 5u + 255u) / 256u);
}

TEST(SimFixQuant, ErrorsNameTheInstruction) {
    Case c = one_channel({1, 2, 3}, 0, 1, 1);
    EXPECT_NE(sim_error(program(c, false), c).find("no fixparam has loaded engine FIX"), std::string::npos)
        << sim_error(program(c, false), c);
    EXPECT_NE(sim_error(program(c, true, 257), c).find("257 channels; engine FIX's parameter table holds 1..256"),
              std::string::npos)
        << sim_error(program(c, true, 257), c);
    EXPECT_NE(sim_error(program(c, true, -1, 2), c).find("elem_bytes 2 but the loaded requantisation writes int8"),
              std::string::npos);
    // FIXPARAM on an engine without quant
    isa::Program p = program(c);
    for (auto &i : p.code) {
        if (i.op == Op::FIXPARAM) {
            i.engine = ProgramBuilder(arch()).engine("MTE3");
        }
    }
    EXPECT_NE(sim_error(p, c).find("engine MTE3 does not list the transform quant"), std::string::npos)
        << sim_error(p, c);
    EXPECT_NE(sim_error(p, c).find("(fixparam)"), std::string::npos) << sim_error(p, c);
}

TEST(SimFixQuant, TheRaceCheckSeesTheParameterReads) {
    // With the MTE2 -> FIX flag only after the accumulators' load, fixparam reads the bias in L1 before
    // MTE2 has written it.
    Case c = one_channel({1, 2, 3}, 0, 1, 1);
    const std::string m = sim_error(program(c, true, -1, -1, false), c);
    EXPECT_NE(m.find("(fixparam) on pipe FIX reads L1 [0x0, 0x4) while"), std::string::npos) << m;
    EXPECT_NE(m.find("(dma) on pipe MTE2 is still writing it"), std::string::npos) << m;
}

TEST(SimFixQuant, TheCheckerRejectsWhatTheMachineCannotRun) {
    const ArchSpec a = load_arch("ascend-like");
    Case c = one_channel({1, 2, 3}, 0, 1, 1);
    auto check = [&](isa::Program p) {
        p.arch_name = a.name;
        p.arch_hash = a.hash();
        for (auto &i : p.code) { // the test arch's GM -> L0C edge is not in ascend-like: load into L1 instead
            if (i.op == Op::DMA && i.dst_level == ProgramBuilder(a).level("L0C")) {
                i.dst_level = ProgramBuilder(a).level("L1");
            }
        }
        try {
            isa::check_program_against_arch(p, a);
        } catch (const std::exception &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(check(program(c)), "accepted");
    EXPECT_NE(check(program(c, false)).find("a quant DMA on engine FIX with no earlier fixparam"), std::string::npos)
        << check(program(c, false));
    EXPECT_NE(check(program(c, true, 300)).find("300 channels; engine FIX's parameter table holds 1..256"),
              std::string::npos);
    EXPECT_NE(check(program(c, true, -1, 4)).find("writes int8, uint8 or int16 elements"), std::string::npos);
    isa::Program p = program(c);
    for (auto &i : p.code) {
        if (i.op == Op::FIXPARAM) {
            i.engine = ProgramBuilder(a).engine("MTE3");
        }
    }
    EXPECT_NE(check(p).find("engine MTE3 of ascend-like has no requantisation"), std::string::npos) << check(p);
    // gemmini-like lists quant on its store engine but has no parameter table
    const ArchSpec g = load_arch("gemmini-like");
    bool table = false;
    for (const auto &e : g.engines) {
        table = table || e.quant_channels > 0;
    }
    EXPECT_FALSE(table);
}
