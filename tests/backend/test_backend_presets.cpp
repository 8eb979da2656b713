// GEMM and the elementwise chain on every preset, with the three kinds of
// schedule issue 5 asks for: the scalar fallback (no schedule), staged +
// vectorised (inputs DMA'd into the vector unit's level, the arithmetic on the
// vector unit), and staged + tensorised + double-buffered (operands in the
// matrix unit's levels, accumulators in its accumulator level, two copies of
// everything). NPU result == Halide CPU result on fresh random inputs with the
// outputs poisoned: bit-exact for int8 -> int32; fp32 elementwise within 1e-6
// relative (the NPU's exp is correctly rounded, the CPU's need not be).
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {


int count(const NpuRun &r, isa::Op op) {
    int n = 0;
    for (const auto &i : r.backend.program.code) {
        n += i.op == op;
    }
    return n;
}

int vector_ops(const NpuRun &r) {
    int n = 0;
    for (const auto &i : r.backend.program.code) {
        n += i.op >= isa::Op::VADD && i.op <= isa::Op::VREQUANT;
    }
    return n;
}

struct Preset {
    std::string name;
    std::vector<std::string> l1;           // levels between GM and the matrix operands ("" = none)
    std::string a, b, c;                   // matrix unit levels
    std::string vec;                       // vector unit level
};

const Preset kPresets[] = {
    {"ascend-like", {"L1"}, "L0A", "L0B", "L0C", "UB"},
    {"gemmini-like", {}, "SPAD", "SPAD", "ACC", "ACC"},
    {"auto-int8", {}, "CBUF", "CBUF", "ACC", "ACC"},
};

ScheduleSpec tensorized(const Preset &p, int tm, int tn, int tk) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", tn, tm);
    s.func("acc").compute_at("C", "jo");
    s.func("acc").update(0).split("k", "ko", "ki", tk);
    s.func("acc").update(0).reorder({"j", "i", "ki", "ko"});
    for (const auto &l : p.l1) {
        s.stage("A", l).at("acc", "ko").buffers(2);
        s.stage("B", l).at("acc", "ko").buffers(2);
    }
    s.stage("A", p.a).at("acc", "ko").buffers(2);
    s.stage("B", p.b).at("acc", "ko").buffers(2);
    s.func("acc").accumulate_in(p.c, 2);
    s.func("acc").update(0).tensorize();
    return s.spec();
}

ScheduleSpec gemm_vector(const Preset &p) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", 32, 8);
    s.func("acc").compute_at("C", "jo");
    s.stage("A", p.vec).at("C", "jo").buffers(2);
    s.stage("B", p.vec).at("C", "jo").buffers(2);
    s.func("acc").vectorize("j", 16);
    s.func("acc").update(0).reorder({"j", "k", "i"});
    s.func("acc").update(0).vectorize("j", 16);
    return s.spec();
}

ScheduleSpec chain_vector(const Preset &p) {
    Schedule s;
    s.func("out").split("x", "xo", "xi", 256);
    s.stage("a", p.vec).at("out", "xo").buffers(2);
    s.stage("b", p.vec).at("out", "xo").buffers(2);
    s.stage("c", p.vec).at("out", "xo").buffers(2);
    s.func("ew").compute_at("out", "xo").vectorize("x", 64);
    return s.spec();
}

class Presets : public ::testing::TestWithParam<int> {};

} // namespace

TEST_P(Presets, GemmInt8ScalarFallback) {
    const Preset &p = kPresets[GetParam()];
    NpuRun r = run_npu("gemm", {{"M", "8"}, {"N", "16"}, {"K", "16"}, {"dtype", "int8"}}, Schedule().spec(), p.name,
                       fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << p.name << " " << failure(r);
}

TEST_P(Presets, GemmInt8TensorizedDoubleBuffered) {
    const Preset &p = kPresets[GetParam()];
    NpuRun r = run_npu("gemm", {{"M", "64"}, {"N", "64"}, {"K", "128"}, {"dtype", "int8"}}, tensorized(p, 32, 32, 64),
                       p.name, fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << p.name << " " << failure(r);
    EXPECT_GT(count(r, isa::Op::MMAD), 0) << p.name;
    EXPECT_GT(count(r, isa::Op::DMA), 0) << p.name;
}

TEST_P(Presets, GemmStagedVectorised) {
    // fp32 where the vector unit has no int16 (the int8 products widen through int16).
    const Preset &p = kPresets[GetParam()];
    const std::string dt = p.name == "ascend-like" ? "int8" : "fp32";
    NpuRun r = run_npu("gemm", {{"M", "16"}, {"N", "64"}, {"K", "16"}, {"dtype", dt}}, gemm_vector(p), p.name,
                       fresh_seed(), dt == "fp32" ? 1e-5 : 0, dt == "fp32" ? 1e-5 : 0);
    EXPECT_EQ(r.cmp.mismatches, 0) << p.name << " " << failure(r);
    EXPECT_GT(vector_ops(r), 0) << p.name << " " << failure(r);
}

TEST_P(Presets, ElementwiseChainScalarAndVector) {
    const Preset &p = kPresets[GetParam()];
    for (bool staged : {false, true}) {
        NpuRun r = run_npu("elementwise", {{"N", "1024"}, {"dtype", "fp32"}, {"op", "chain"}},
                           staged ? chain_vector(p) : Schedule().spec(), p.name, fresh_seed(), 1e-6, 1e-6);
        EXPECT_EQ(r.cmp.mismatches, 0) << p.name << (staged ? " staged " : " scalar ") << failure(r);
        if (staged) {
            EXPECT_GT(vector_ops(r), 0) << p.name;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllPresets, Presets, ::testing::Values(0, 1, 2), [](const auto &info) {
    std::string n = kPresets[info.param].name;
    for (auto &ch : n) {
        ch = ch == '-' ? '_' : ch;
    }
    return n;
});
