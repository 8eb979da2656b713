// Functional exactness: hand-built programs against plain C++ references.

#include "SimTestUtil.h"

#include "npu_target/isa/InstrTable.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace tessel;
using namespace tessel::test;

namespace {

const ArchSpec &ascend() {
    static const ArchSpec a = load_arch("ascend-like");
    return a;
}

/** C[m x n] = A[m x k] * B[k x n] on the matrix unit: GM -> L0A/L0B, MMAD in two
 * k halves (init, then accumulate), L0C -> GM through FIX. */
Tensor run_gemm(DType in_t, DType acc_t, int m, int k, int n, const Tensor &A, const Tensor &B) {
    ProgramBuilder b(ascend());
    b.arg("A", in_t, {k, m});
    b.arg("B", in_t, {n, k});
    b.arg("C", acc_t, {n, m}, true);
    const int ea = dtype_bytes(in_t);
    // A is split into two packed m x k/2 tiles (k halves) with a 2-D descriptor:
    // rows of k/2 elements, source row stride k.
    isa::DmaDesc half;
    half.dims = 2;
    half.elem_bytes = static_cast<uint32_t>(k / 2 * ea);
    half.count = {1, static_cast<uint32_t>(m), 1, 1};
    half.src_stride = {half.elem_bytes, int64_t(k) * ea, 0, 0};
    half.dst_stride = {half.elem_bytes, half.elem_bytes, 0, 0};
    b.p.descs.push_back(half);
    const uint16_t dh = static_cast<uint16_t>(b.p.descs.size() - 1);
    b.li(11, 0);                       // A0 (first k/2 columns) in L0A
    b.li(12, 16384);                   // A1
    b.dma("MTE2", "L0A", "GM", 11, 1, dh);
    b.addi(13, 1, k / 2 * ea);
    b.dma("MTE2", "L0A", "GM", 12, 13, dh);
    b.li(14, 0);                       // B in L0B; B0 = its first k/2 rows
    b.dma("MTE2", "L0B", "GM", 14, 2, b.desc_contig(int64_t(k) * n * ea));
    b.li(15, int64_t(k / 2) * n * ea); // B1
    b.li(16, 0);                       // C in L0C
    b.sync(Pipe::MTE2, Pipe::M);
    b.mmad(in_t, 16, 11, 14, uint16_t(m), uint16_t(k / 2), uint16_t(n), true);
    b.mmad(in_t, 16, 12, 15, uint16_t(m), uint16_t(k / 2), uint16_t(n), false);
    b.sync(Pipe::M, Pipe::FIX);
    b.dma("FIX", "GM", "L0C", 3, 16, b.desc_contig(int64_t(m) * n * dtype_bytes(acc_t)));
    b.end();
    std::vector<Tensor> args{A, B, Tensor("C", acc_t, {n, m})};
    poison(args[2]);
    sim::simulate(b.p, ascend(), args);
    return args[2];
}

} // namespace

TEST(SimFunctional, GemmTileFp16MatchesNaiveLoopBitExactly) {
    const int m = 32, k = 64, n = 48;
    Tensor A("A", DType::FP16, {k, m}), B("B", DType::FP16, {n, k});
    std::mt19937_64 rng(1);
    fill_random(A, rng);
    fill_random(B, rng);
    Tensor C = run_gemm(DType::FP16, DType::FP32, m, k, n, A, B);
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            float acc = 0;
            for (int kk = 0; kk < k; ++kk) {
                acc += static_cast<float>(A.get(i * k + kk)) * static_cast<float>(B.get(kk * n + j));
            }
            ASSERT_EQ(static_cast<float>(C.get(i * n + j)), acc) << i << "," << j;
        }
    }
}

TEST(SimFunctional, GemmTileInt8MatchesNaiveLoop) {
    const int m = 16, k = 64, n = 32;
    Tensor A("A", DType::Int8, {k, m}), B("B", DType::Int8, {n, k});
    std::mt19937_64 rng(2);
    fill_random(A, rng);
    fill_random(B, rng);
    Tensor C = run_gemm(DType::Int8, DType::Int32, m, k, n, A, B);
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
            int32_t acc = 0;
            for (int kk = 0; kk < k; ++kk) {
                acc += static_cast<int32_t>(A.get(i * k + kk)) * static_cast<int32_t>(B.get(kk * n + j));
            }
            ASSERT_EQ(static_cast<int32_t>(C.get(i * n + j)), acc) << i << "," << j;
        }
    }
}

// softmax of one fp32 row of 200 elements (the last repeat is masked):
// m = max(x); e = exp(x - m); s = sum(e) (sequential fp32); y = e / s.
TEST(SimFunctional, SoftmaxRowMatchesReference) {
    const int n = 200;
    ProgramBuilder b(ascend());
    b.arg("x", DType::FP32, {n});
    b.arg("y", DType::FP32, {n}, true);
    const uint8_t UB = b.level("UB");
    b.li(10, 0);       // x / e in UB
    b.li(11, 1024);    // scalar results in UB
    b.li(20, n);
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(n * 4));
    b.sync(Pipe::MTE2, Pipe::V);
    b.vec(Op::VREDMAX, DType::FP32, 11, 10, 0, 20);
    b.barrier(Pipe::V); // the scalar unit reads the max
    Instr ld;
    ld.op = Op::LD;
    ld.dtype = DType::FP32;
    ld.rd = 12;
    ld.level = UB;
    ld.ra = 11;
    b.emit(ld);
    Instr neg;
    neg.op = Op::FSUB;
    neg.rd = 13;
    neg.ra = 0; // 0.0f
    neg.rb = 12;
    b.emit(neg);
    b.vec(Op::VADDS, DType::FP32, 10, 13, 10, 20); // x - m (a from rc, scalar rb)
    b.vec(Op::VEXP, DType::FP32, 10, 10, 0, 20);
    b.vec(Op::VREDSUM, DType::FP32, 11, 10, 0, 20);
    Instr &div = b.vec(Op::VDIV, DType::FP32, 10, 10, 11, 20);
    div.stride = {1, 1, 0}; // b broadcast
    b.sync(Pipe::V, Pipe::MTE3);
    b.dma("MTE3", "GM", "UB", 2, 10, b.desc_contig(n * 4));
    b.end();
    std::vector<Tensor> args{Tensor("x", DType::FP32, {n}), Tensor("y", DType::FP32, {n})};
    std::mt19937_64 rng(3);
    fill_random(args[0], rng);
    for (int i = 0; i < n; ++i) {
        args[0].set(i, args[0].get(i) * 8);
    }
    poison(args[1]);
    sim::simulate(b.p, ascend(), args);
    std::vector<float> x(n);
    std::memcpy(x.data(), args[0].data.data(), n * 4);
    float m = x[0];
    for (float v : x) {
        m = v > m ? v : m;
    }
    std::vector<float> e(n);
    for (int i = 0; i < n; ++i) {
        e[i] = std::exp(x[i] + (0.0f - m));
    }
    float s = e[0];
    for (int i = 1; i < n; ++i) {
        s += e[i];
    }
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(static_cast<float>(args[1].get(i)), e[i] / s) << i;
    }
}

namespace {

// Reference written independently of the simulator: exact rational rounding.
int ref_requant(int32_t a, int16_t mult, int shift, int16_t zp, int lo, int hi) {
    long double v = static_cast<long double>(a) * mult / std::ldexp(1.0L, shift);
    long double r = v < 0 ? -std::floor(-v + 0.5L) : std::floor(v + 0.5L);
    long double z = r + zp;
    return static_cast<int>(z < lo ? lo : z > hi ? hi : z);
}

} // namespace

namespace {

std::vector<int> run_requant(int16_t mult, int shift, int16_t zp, DType out, const std::vector<int32_t> &in) {
    const int n = static_cast<int>(in.size());
    ProgramBuilder b(ascend());
    b.arg("a", DType::Int32, {n});
    b.arg("q", out, {n}, true);
    b.li(10, 0);
    b.li(11, 4096);
    b.li(20, n);
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(n * 4));
    b.sync(Pipe::MTE2, Pipe::V);
    Instr &q = b.vec(Op::VREQUANT, DType::Int32, 11, 10, 0, 20);
    q.dtype2 = out;
    q.aux = static_cast<uint32_t>(shift);
    q.imm = static_cast<uint16_t>(mult) | (int64_t(static_cast<uint16_t>(zp)) << 16);
    b.sync(Pipe::V, Pipe::MTE3);
    b.dma("MTE3", "GM", "UB", 2, 11, b.desc_contig(n));
    b.end();
    std::vector<Tensor> args{Tensor("a", DType::Int32, {n}), Tensor("q", out, {n})};
    for (int i = 0; i < n; ++i) {
        args[0].set(i, in[i]);
    }
    poison(args[1]);
    sim::simulate(b.p, ascend(), args);
    std::vector<int> r;
    for (int i = 0; i < n; ++i) {
        r.push_back(static_cast<int>(args[1].get(i)));
    }
    return r;
}

} // namespace

TEST(SimFunctional, RequantisationIsBitExact) {
    const int16_t mult = 23456, zp = -3;
    const int shift = 20;
    std::mt19937_64 rng(4);
    std::uniform_int_distribution<int32_t> dist(-20000, 20000);
    std::vector<int32_t> in(300);
    for (auto &v : in) {
        v = dist(rng);
    }
    in[0] = 0;
    in[1] = INT32_MAX;
    in[2] = INT32_MIN;
    for (DType out : {DType::Int8, DType::UInt8}) {
        auto got = run_requant(mult, shift, zp, out, in);
        int lo = out == DType::UInt8 ? 0 : -128, hi = out == DType::UInt8 ? 255 : 127;
        for (size_t i = 0; i < in.size(); ++i) {
            ASSERT_EQ(got[i], ref_requant(in[i], mult, shift, zp, lo, hi)) << i << " a=" << in[i];
        }
    }
    // Half-way cases round away from zero: 3/2 -> 2, -3/2 -> -2, 5/2 -> 3, -5/2 -> -3;
    // then + zp and saturation.
    EXPECT_EQ(run_requant(1, 1, 0, DType::Int8, {3, -3, 5, -5, 1000, -1000}),
              (std::vector<int>{2, -2, 3, -3, 127, -128}));
    EXPECT_EQ(run_requant(-2, 2, 100, DType::UInt8, {6, -6, 200}), (std::vector<int>{97, 103, 0}));
}

// Integer narrowing casts wrap and float->int truncates toward zero (Halide's cast).
TEST(SimFunctional, CastsFollowHalideSemantics) {
    auto run = [](DType from, DType to, std::vector<double> in) {
        const int n = static_cast<int>(in.size());
        ProgramBuilder b(ascend());
        b.arg("a", from, {n});
        b.arg("d", to, {n}, true);
        b.li(10, 0);
        b.li(11, 4096);
        b.li(20, n);
        b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(n * dtype_bytes(from)));
        b.sync(Pipe::MTE2, Pipe::V);
        Instr &c = b.vec(Op::VCAST, from, 11, 10, 0, 20);
        c.dtype2 = to;
        b.sync(Pipe::V, Pipe::MTE3);
        b.dma("MTE3", "GM", "UB", 2, 11, b.desc_contig(n * dtype_bytes(to)));
        b.end();
        std::vector<Tensor> args{Tensor("a", from, {n}), Tensor("d", to, {n})};
        for (int i = 0; i < n; ++i) {
            args[0].set(i, in[i]);
        }
        sim::simulate(b.p, ascend(), args);
        std::vector<double> out;
        for (int i = 0; i < n; ++i) {
            out.push_back(args[1].get(i));
        }
        return out;
    };
    EXPECT_EQ(run(DType::FP32, DType::Int8, {300.7, -1.9, 2.5, -128.0}), (std::vector<double>{44, -1, 2, -128}));
    EXPECT_EQ(run(DType::Int32, DType::Int8, {200, -129, 255, 7}), (std::vector<double>{-56, 127, -1, 7}));
    EXPECT_EQ(run(DType::FP32, DType::FP16, {1.0 + 1.0 / 2048, 65520.0}),
              (std::vector<double>{1.0, INFINITY}));
}

// fp32 -> fp16 rounding of the vector unit equals DType.h's conversion on every
// fp16 value, every exact tie between neighbours and one ulp either side of it
// (subnormals, the normal range, the overflow edge, both signs).
TEST(SimFunctional, Fp16RoundingMatchesDTypeConversion) {
    std::vector<float> vals;
    for (uint32_t h = 0; h < 0x7c00; h += 1) {
        float lo = fp16_to_fp32(static_cast<uint16_t>(h)), hi = fp16_to_fp32(static_cast<uint16_t>(h + 1));
        float mid = lo + (hi - lo) / 2; // exact in binary32
        for (float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
            vals.push_back(v);
            vals.push_back(-v);
        }
    }
    vals.push_back(65520.0f);
    vals.push_back(1e30f);
    vals.push_back(std::nanf(""));
    while (vals.size() % 16) {
        vals.push_back(0.0f); // whole 32-B units for the DMA descriptors
    }
    const int chunk = 16384;
    for (size_t off = 0; off < vals.size(); off += chunk) {
        const int n = static_cast<int>(std::min<size_t>(chunk, vals.size() - off));
        ProgramBuilder b(ascend());
        b.arg("a", DType::FP32, {n});
        b.arg("d", DType::FP16, {n}, true);
        b.li(10, 0);
        b.li(11, 65536);
        b.li(20, n);
        b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(int64_t(n) * 4));
        b.sync(Pipe::MTE2, Pipe::V);
        Instr &c = b.vec(Op::VCAST, DType::FP32, 11, 10, 0, 20);
        c.dtype2 = DType::FP16;
        b.sync(Pipe::V, Pipe::MTE3);
        b.dma("MTE3", "GM", "UB", 2, 11, b.desc_contig(int64_t(n) * 2));
        b.end();
        std::vector<Tensor> args{Tensor("a", DType::FP32, {n}), Tensor("d", DType::FP16, {n})};
        std::memcpy(args[0].data.data(), vals.data() + off, size_t(n) * 4);
        sim::simulate(b.p, ascend(), args);
        for (int i = 0; i < n; ++i) {
            uint16_t got;
            std::memcpy(&got, args[1].data.data() + 2 * i, 2);
            ASSERT_EQ(got, fp32_to_fp16(vals[off + i])) << "value " << vals[off + i];
        }
    }
}

// The same int8 GEMM tile on every preset, with whatever engines the preset has
// from GM to the matrix operand levels and back: the simulator takes any
// well-formed ArchSpec.
TEST(SimFunctional, Int8GemmTileOnEveryPreset) {
    for (const std::string &name : arch_presets()) {
        ArchSpec a = load_arch(name);
        auto engine_for = [&](const std::string &src, const std::string &dst) {
            for (const auto &e : a.engines) {
                for (const auto &ed : e.edges) {
                    if (ed.src == src && ed.dst == dst) {
                        return e.name;
                    }
                }
            }
            ADD_FAILURE() << name << ": no engine " << src << "->" << dst;
            return std::string();
        };
        auto pipe_of = [&](const std::string &engine) {
            for (const auto &e : a.engines) {
                if (e.name == engine) {
                    isa::Pipe p = Pipe::MTE2;
                    isa::parse_pipe(e.pipe, p);
                    return p;
                }
            }
            return Pipe::MTE2;
        };
        const int m = 16, k = 64, n = 32;
        ProgramBuilder b(a, "gemm_" + name);
        b.arg("A", DType::Int8, {k, m});
        b.arg("B", DType::Int8, {n, k});
        b.arg("C", DType::Int32, {n, m}, true);
        std::string ea = engine_for("GM", a.matrix.a_level), eb = engine_for("GM", a.matrix.b_level);
        std::string ec = engine_for(a.matrix.c_level, "GM");
        b.li(10, 0);
        b.li(11, 4096);
        b.li(12, 0);
        b.dma(ea, a.matrix.a_level, "GM", 10, 1, b.desc_contig(m * k));
        b.dma(eb, a.matrix.b_level, "GM", 11, 2, b.desc_contig(k * n));
        b.barrier(Pipe::ALL); // engines may differ: drain them all before the matrix unit reads
        b.mmad(DType::Int8, 12, 10, 11, m, k, n, true);
        b.sync(Pipe::M, pipe_of(ec));
        b.dma(ec, "GM", a.matrix.c_level, 3, 12, b.desc_contig(m * n * 4));
        b.end();
        std::vector<Tensor> args{Tensor("A", DType::Int8, {k, m}), Tensor("B", DType::Int8, {n, k}),
                                 Tensor("C", DType::Int32, {n, m})};
        std::mt19937_64 rng(9);
        fill_random(args[0], rng);
        fill_random(args[1], rng);
        poison(args[2]);
        auto r = sim::simulate(b.p, a, args);
        EXPECT_GT(r.cycles, 0u);
        for (int i = 0; i < m; ++i) {
            for (int j = 0; j < n; ++j) {
                int32_t acc = 0;
                for (int kk = 0; kk < k; ++kk) {
                    acc += static_cast<int32_t>(args[0].get(i * k + kk)) * static_cast<int32_t>(args[1].get(kk * n + j));
                }
                ASSERT_EQ(static_cast<int32_t>(args[2].get(i * n + j)), acc) << name << " " << i << "," << j;
            }
        }
    }
}

// DIVI / REMI: division and modulo by an immediate round toward minus
// infinity, as DIV / REM and Halide do (a zero divisor gives 0).
TEST(SimFunctional, DivideAndModuloByAnImmediateFloor) {
    ProgramBuilder b(ascend());
    b.arg("out", DType::Int32, {6}, true);
    const uint8_t GM = b.level("GM");
    b.li(5, -7);
    const std::vector<std::pair<Op, int64_t>> ops = {{Op::DIVI, 2},  {Op::REMI, 2}, {Op::DIVI, -2},
                                                     {Op::REMI, -2}, {Op::DIVI, 0}, {Op::REMI, 0}};
    for (size_t k = 0; k < ops.size(); ++k) {
        Instr alu;
        alu.op = ops[k].first;
        alu.rd = 6;
        alu.ra = 5;
        alu.imm = ops[k].second;
        b.emit(alu);
        Instr st;
        st.op = Op::ST;
        st.dtype = DType::Int32;
        st.level = GM;
        st.ra = 1; // the output's base address
        st.rb = 6;
        st.imm = static_cast<int64_t>(4 * k);
        b.emit(st);
    }
    b.end();
    std::vector<Tensor> args{Tensor("out", DType::Int32, {6})};
    sim::simulate(b.p, ascend(), args);
    const std::vector<int64_t> want = {-4, 1, 3, -1, 0, 0};
    for (size_t k = 0; k < want.size(); ++k) {
        EXPECT_EQ(args[0].get(static_cast<int64_t>(k)), static_cast<double>(want[k])) << "result " << k;
    }
}

// VSHRS: a shift right by a scalar register is floor(a / 2^s) for signed
// (arithmetic) and unsigned (logical) integers, as Halide's division by a
// power of two; a float dtype or a shift outside the type's bits is refused.
static std::vector<double> run_shift(DType t, int64_t shift, const std::vector<int64_t> &in) {
    const int n = static_cast<int>(in.size());
    ProgramBuilder b(ascend());
    b.arg("a", t, {n});
    b.arg("d", t, {n}, true);
    b.li(10, 0);
    b.li(11, 4096);
    b.li(13, shift);
    b.li(20, n);
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(n * dtype_bytes(t)));
    b.sync(Pipe::MTE2, Pipe::V);
    b.vec(Op::VSHRS, t, 11, 13, 10, 20); // d = a >> scalar(r13)
    b.sync(Pipe::V, Pipe::MTE3);
    b.dma("MTE3", "GM", "UB", 2, 11, b.desc_contig(n * dtype_bytes(t)));
    b.end();
    std::vector<Tensor> args{Tensor("a", t, {n}), Tensor("d", t, {n})};
    for (int i = 0; i < n; ++i) {
        args[0].set(i, static_cast<double>(in[i]));
    }
    poison(args[1]);
    sim::simulate(b.p, ascend(), args);
    std::vector<double> r;
    for (int i = 0; i < n; ++i) {
        r.push_back(args[1].get(i));
    }
    return r;
}

TEST(SimFunctional, ShiftRightByAScalarIsFloorDivisionByAPowerOfTwo) {
    std::mt19937_64 rng(9);
    std::uniform_int_distribution<int64_t> dist(INT32_MIN, INT32_MAX);
    std::vector<int64_t> in = {0, -1, 1, -4096, -4097, 4095, INT32_MIN, INT32_MAX};
    for (int i = 0; i < 200; ++i) {
        in.push_back(dist(rng));
    }
    for (int64_t s : {0, 1, 12, 31}) {
        auto got = run_shift(DType::Int32, s, in);
        for (size_t i = 0; i < in.size(); ++i) {
            const double want = std::floor(static_cast<double>(in[i]) / std::ldexp(1.0, static_cast<int>(s)));
            ASSERT_EQ(got[i], want) << "int32 " << in[i] << " >> " << s;
        }
    }
    EXPECT_EQ(run_shift(DType::UInt8, 3, {255, 8, 7, 128}), (std::vector<double>{31, 1, 0, 16}));
    EXPECT_EQ(run_shift(DType::Int8, 2, {-128, -5, 5, 127}), (std::vector<double>{-32, -2, 1, 31}));
    try {
        run_shift(DType::Int8, 8, {1});
        ADD_FAILURE() << "a shift of 8 on int8 ran";
    } catch (const sim::SimError &e) {
        EXPECT_NE(std::string(e.what()).find("vshrs shift 8 is outside 0..7"), std::string::npos) << e.what();
    }
    try {
        run_shift(DType::FP32, 1, {1});
        ADD_FAILURE() << "a shift of fp32 ran";
    } catch (const sim::SimError &e) {
        EXPECT_NE(std::string(e.what()).find("vshrs needs an integer dtype"), std::string::npos) << e.what();
    }
}
