// The requantising epilogue on the FIX engine (tensorize(func, unit=fix)): gemm_q8 and
// conv2d_q8 with their ascend_fix.json schedules against Halide's CPU result on fresh random
// inputs (outputs poisoned by the harness), on exact and odd shapes; the program does the
// epilogue with FIXPARAM + quant DMAs and no vector instruction; every error names the
// directive and what is wrong.
#include "NpuHarness.h"

#include "dsl/Compile.h"
#include "npu_target/isa/InstrTable.h"
#include "tests/dsl/DslTestUtil.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;

namespace {

struct Counts {
    int fixparam = 0, quant_dmas = 0, vector = 0;
};

Counts count(const isa::Program &p) {
    Counts c;
    const auto &names = isa::dma_transform_names();
    for (const auto &i : p.code) {
        if (i.op == isa::Op::FIXPARAM) {
            c.fixparam++;
        } else if (i.op == isa::Op::DMA && names[p.descs[i.desc].transform] == "quant") {
            c.quant_dmas++;
        } else if (isa::op_info(i.op).unit == isa::Unit::Vector) {
            c.vector++;
        }
    }
    return c;
}

void expect_fix_run(const std::string &gen, const ParamMap &p, const std::string &schedule) {
    const uint64_t seed = fresh_seed();
    NpuRun r = run_npu(gen, p, sample_schedule(schedule), "ascend-like", seed);
    ASSERT_EQ(r.cmp.mismatches, 0) << failure(r);
    ASSERT_TRUE(r.cmp.equal_shape) << failure(r);
    const Counts c = count(r.backend.program);
    EXPECT_GE(c.fixparam, 1) << failure(r);
    EXPECT_GE(c.quant_dmas, 1) << failure(r);
    EXPECT_EQ(c.vector, 0) << "the epilogue left vector work: " << failure(r);
}

Directive *find(ScheduleSpec &s, const std::string &id) {
    for (auto &d : s.directives) {
        if (d.id == id) {
            return &d;
        }
    }
    ADD_FAILURE() << "no directive " << id;
    return nullptr;
}

void erase(ScheduleSpec &s, const std::string &id) {
    for (auto it = s.directives.begin(); it != s.directives.end(); ++it) {
        if (it->id == id) {
            s.directives.erase(it);
            return;
        }
    }
    ADD_FAILURE() << "no directive " << id;
}

std::string compile_error(const std::string &gen, const ParamMap &p, const ScheduleSpec &s,
                          const std::string &arch = "ascend-like") {
    CompileRequest r;
    r.generator = gen;
    r.params = p;
    r.schedule = s;
    r.arch = arch;
    CompileResult c = compile(r);
    EXPECT_FALSE(c.ok);
    return first_error(c);
}

Directive fix_directive(const std::string &id, const std::string &func) {
    Directive d;
    d.id = id;
    d.kind = DirectiveKind::Tensorize;
    d.func = func;
    d.unit = "fix";
    return d;
}

const ParamMap kGemm = {{"M", "64"}, {"N", "512"}, {"K", "256"}, {"shift", "12"}};

} // namespace

TEST(BackendFixQuant, GemmQ8MatchesHalideOnExactAndOddShapes) {
    const std::string s = "gemm_q8/schedules/ascend_fix.json";
    expect_fix_run("gemm_q8", kGemm, s);
    // tails: 80 rows (tiles of 64 shifted inwards), 320 channels (a second panel overlapping the first),
    // K = 384 (three 128-deep chunks)
    expect_fix_run("gemm_q8", {{"M", "80"}, {"N", "320"}, {"K", "384"}, {"shift", "9"}}, s);
    // shifts at both ends: 1 (nearly everything saturates) and 30 (nearly everything rounds to 0 or -1)
    expect_fix_run("gemm_q8", {{"M", "64"}, {"N", "256"}, {"K", "128"}, {"shift", "1"}}, s);
    expect_fix_run("gemm_q8", {{"M", "64"}, {"N", "256"}, {"K", "128"}, {"shift", "30"}}, s);
}

TEST(BackendFixQuant, Conv2dQ8MatchesHalideWithAndWithoutRelu) {
    const std::string s = "conv2d_q8/schedules/ascend_fix.json";
    for (const char *relu : {"1", "0"}) {
        expect_fix_run("conv2d_q8",
                       {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "1"},
                        {"shift", "13"}, {"relu", relu}},
                       s);
    }
    // odd: 7 rows (bands of 4 shifted inwards), CI 48
    expect_fix_run("conv2d_q8",
                   {{"H", "7"}, {"W", "32"}, {"CI", "48"}, {"CO", "128"}, {"K", "3"}, {"stride", "1"}, {"shift", "11"},
                    {"relu", "1"}},
                   s);
    // 40 columns in tiles of 32 shifted inwards (bands of 2 rows, so that two accumulators of 40 pixels fit
    // L0C): the column tile's index is not affine in its loop, so the tile loop stays a loop around the copy
    ScheduleSpec rows2 = sample_schedule(s);
    find(rows2, "rows")->factors = {2};
    const ParamMap odd = {{"H", "5"}, {"W", "40"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "1"},
                          {"shift", "12"}, {"relu", "0"}};
    NpuRun r = run_npu("conv2d_q8", odd, rows2, "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_GE(count(r.backend.program).quant_dmas, 1) << failure(r);
    EXPECT_EQ(count(r.backend.program).vector, 0) << failure(r);
}

TEST(BackendFixQuant, TheEpilogueFuncInUbIsWrittenByFixThenCopiedOut) {
    // requant computed per tile into its own buffer (UB, the default level) and tensorized on FIX:
    // the quant DMA goes L0C -> UB, C's copy UB -> GM is MTE3's
    ScheduleSpec s = sample_schedule("gemm_q8/schedules/ascend_fix.json");
    find(s, "requant_fix")->func = "requant";
    Directive at;
    at.id = "requant_at";
    at.kind = DirectiveKind::ComputeAt;
    at.func = "requant";
    at.at_func = "C";
    at.at_loop = "io";
    s.directives.push_back(at);
    NpuRun r = run_npu("gemm_q8", {{"M", "128"}, {"N", "512"}, {"K", "256"}, {"shift", "11"}}, s, "ascend-like",
                       fresh_seed());
    ASSERT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(count(r.backend.program).vector, 0);
    int64_t fix_to_ub = 0, mte3 = 0;
    for (const auto &e : r.report.edges) {
        if (e.engine == "FIX" && e.dst == "UB") {
            fix_to_ub += e.bytes;
        }
        if (e.engine == "MTE3" && e.dst == "GM") {
            mte3 += e.bytes;
        }
    }
    EXPECT_EQ(fix_to_ub, 128 * 512);
    EXPECT_EQ(mte3, 128 * 512);
}

TEST(BackendFixQuant, TheEpilogueIsOneQuantDmaPerTile) {
    NpuRun r = run_npu("gemm_q8", kGemm, sample_schedule("gemm_q8/schedules/ascend_fix.json"), "ascend-like", 7);
    ASSERT_EQ(r.cmp.mismatches, 0) << failure(r);
    // 64 x 512 in tiles of 64 x 256: two tiles, each a FIXPARAM and a quant DMA (L0C -> GM) in the code
    const Counts c = count(r.backend.program);
    EXPECT_EQ(c.fixparam, 1);
    EXPECT_EQ(c.quant_dmas, 1);
    int64_t fix_bytes = 0;
    for (const auto &e : r.report.edges) {
        if (e.engine == "FIX" && e.bytes > 0) {
            EXPECT_EQ(e.src + "->" + e.dst, "L0C->GM");
            fix_bytes += e.bytes;
        }
    }
    EXPECT_EQ(fix_bytes, 64 * 512); // int8 written, once
}

TEST(BackendFixQuant, ErrorsNameTheDirective) {
    const ScheduleSpec base = sample_schedule("gemm_q8/schedules/ascend_fix.json");
    // a Func with an update
    {
        ScheduleSpec s = base;
        find(s, "requant_fix")->func = "acc";
        const std::string m = compile_error("gemm_q8", kGemm, s);
        EXPECT_NE(m.find("requant_fix"), std::string::npos) << m;
        EXPECT_NE(m.find("acc has an update definition; tensorize with unit 'fix' maps a pure Func"),
                  std::string::npos)
            << m;
    }
    // a pure Func whose value is not the pattern: gemm's C is a copy of the accumulator (infer_dma
    // has made it a plain DMA, so no loop nest of C computes anything)
    {
        ScheduleSpec s = base;
        erase(s, "bias_L1");
        erase(s, "scale_L1");
        const std::string m =
            compile_error("gemm", {{"M", "64"}, {"N", "256"}, {"K", "128"}, {"dtype", "int8"}}, s);
        EXPECT_NE(m.find("directive requant_fix (tensorize C, unit fix): "), std::string::npos) << m;
        EXPECT_NE(m.find("no loop nest of C"), std::string::npos) << m;
        EXPECT_NE(m.find("stores a requantising epilogue the FIX engine can run; expected"), std::string::npos) << m;
    }
    // a Func that computes something else: elementwise's out = a + b
    {
        ScheduleSpec s;
        s.directives.push_back(fix_directive("fix_add", "out"));
        const std::string m = compile_error("elementwise", {{"N", "256"}, {"dtype", "fp16"}, {"op", "add"}}, s);
        EXPECT_NE(m.find("directive fix_add (tensorize out, unit fix): out"), std::string::npos) << m;
        EXPECT_NE(m.find("'s value is not a requantising epilogue the FIX engine computes; expected"),
                  std::string::npos)
            << m;
    }
    // a preset whose engines cannot requantise (gemmini-like lists quant but has no parameter table)
    {
        ScheduleSpec s = sample_schedule("gemm_q8/schedules/gemmini_fused.json");
        erase(s, "requant_at");
        erase(s, "requant_vec");
        s.directives.push_back(fix_directive("fix_on_gemmini", "C"));
        const std::string m = compile_error("gemm_q8", {{"M", "64"}, {"N", "128"}, {"K", "128"}, {"shift", "12"}}, s,
                                            "gemmini-like");
        EXPECT_NE(m.find("directive fix_on_gemmini (tensorize C, unit fix): gemmini-like has no engine that "
                         "requantises"),
                  std::string::npos)
            << m;
    }
    // the accumulator not in L0C (no accumulate_in, no matrix tensorize: acc is placed in UB)
    {
        ScheduleSpec s = base;
        erase(s, "acc_L0C");
        erase(s, "mmad");
        erase(s, "stage_A0");
        erase(s, "stage_B0");
        const std::string m = compile_error("gemm_q8", {{"M", "64"}, {"N", "256"}, {"K", "128"}, {"shift", "12"}}, s);
        EXPECT_NE(m.find("directive requant_fix (tensorize C, unit fix): the accumulator acc"), std::string::npos) << m;
        EXPECT_NE(m.find("is in UB; the FIX engine reads it from L0C"), std::string::npos) << m;
    }
    // more channels per tile than the parameter table holds
    {
        ScheduleSpec s = base;
        find(s, "tile_C")->factors = {512, 16};
        find(s, "k_chunks")->factors = {32}; // L0B holds two 32 x 512 chunks
        const std::string m = compile_error("gemm_q8", kGemm, s);
        EXPECT_NE(m.find("directive requant_fix (tensorize C, unit fix): a tile of 512 channels; engine FIX's "
                         "parameter table holds 256"),
                  std::string::npos)
            << m;
    }
    // the Func vectorised as for the vector unit
    {
        ScheduleSpec s = base;
        Directive v;
        v.id = "C_vec";
        v.kind = DirectiveKind::Vectorize;
        v.func = "C";
        v.vars = {"ji"};
        v.factors = {256};
        s.directives.push_back(v);
        const std::string m = compile_error("gemm_q8", kGemm, s);
        EXPECT_NE(m.find("directive requant_fix (tensorize C, unit fix): C"), std::string::npos) << m;
        EXPECT_NE(m.find("is vectorised (256 lanes); the FIX engine copies the whole tile"), std::string::npos) << m;
    }
    // bias left in GM
    {
        ScheduleSpec s = base;
        erase(s, "bias_L1");
        const std::string m = compile_error("gemm_q8", kGemm, s);
        EXPECT_NE(m.find("directive requant_fix (tensorize C, unit fix): bias"), std::string::npos) << m;
        EXPECT_NE(m.find("is in GM; the FIX engine loads its parameters from an on-chip level"), std::string::npos)
            << m;
    }
    // bias and scale in different levels
    {
        ScheduleSpec s = base;
        find(s, "scale_L1")->level = "UB";
        const std::string m = compile_error("gemm_q8", kGemm, s);
        EXPECT_NE(m.find("must be staged into the same level"), std::string::npos) << m;
    }
}

TEST(BackendFixQuant, ScheduleJsonOfTheFixUnit) {
    // 'update' does not apply to the FIX engine; an unknown unit names the two there are
    auto parse_error = [](const std::string &text) {
        try {
            parse_schedule(text, "test");
        } catch (const std::exception &e) {
            return std::string(e.what());
        }
        return std::string("parsed");
    };
    const std::string head = R"({"version": 1, "directives": [{"id": "q", "kind": "tensorize", "func": "C", )";
    EXPECT_EQ(parse_error(head + R"("unit": "fix"}]})"), "parsed");
    EXPECT_NE(parse_error(head + R"("unit": "fix", "update": 0}]})").find("unit 'fix' maps the Func's pure definition"),
              std::string::npos);
    EXPECT_NE(parse_error(head + R"("unit": "vector"}]})").find("the units are 'matrix'"), std::string::npos);
    EXPECT_NE(parse_error(head + R"("unit": "matrix"}]})").find("missing 'update'"), std::string::npos);
    // written back without 'update'
    ScheduleSpec s = parse_schedule(head + R"("unit": "fix"}]})", "test");
    EXPECT_EQ(schedule_to_json(s).find("update"), std::string::npos) << schedule_to_json(s);
    EXPECT_EQ(parse_schedule(schedule_to_json(s), "again"), s);
}
