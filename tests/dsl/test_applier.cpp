// The applier and the compile facade: one test per user-facing message, the
// NPU side of tiled_staged GEMM, and the C++ round trip (the checked-in .inc
// files, compiled here, lower to the same Stmt as the JSON they came from).
#include "DslTestUtil.h"
#include "dsl/Compile.h"
#include "dsl/Generator.h"
#include "dsl/Applier.h"
#include "dsl/Lowering.h"

#include <gtest/gtest.h>

using namespace tessel;
using tessel::test::first_error;
using tessel::test::read_text;
using tessel::test::source_path;
using tessel::test::user_error_text;

namespace {

// A reduction that is not a matrix product: row sums.
class RowSum : public Halide::Generator<RowSum> {
public:
    GeneratorParam<int> M{"M", 64};
    GeneratorParam<int> K{"K", 32};
    Input<Buffer<int8_t>> A{"A", 2};
    Output<Buffer<int32_t>> S{"S", 1};
    Halide::Func acc{"acc"};
    void generate() {
        Halide::Var i("i");
        Halide::RDom k(0, K, "k");
        acc(i) = 0;
        acc(i) += Halide::cast<int32_t>(A(k, i));
        S(i) = acc(i);
        A.set_estimates({{0, K}, {0, M}});
        S.set_estimates({{0, M}});
    }
};

ScheduleSpec sample(const std::string &name) {
    return load_schedule(source_path("samples/gemm/schedules/" + name + ".json"));
}

CompileResult compile_with(const std::string &generator, const ScheduleSpec &s, const ParamMap &params = {},
                           const std::string &arch = "ascend-like") {
    CompileRequest r;
    r.generator = generator;
    r.params = params;
    r.schedule = s;
    r.arch = arch;
    return compile(r);
}

CompileResult compile_gemm(const ScheduleSpec &s, const ParamMap &params = {}, const std::string &arch = "ascend-like") {
    return compile_with("gemm", s, params, arch);
}


// Halide makes Func names unique per process ("acc$3"); a second instantiation of
// a generator in one test differs from the first only by these suffixes.
std::string without_suffixes(const std::string &text);

// Stmt text up to Halide's process-wide counters: Func suffixes and let names (t123).
std::string normalized(const std::string &stmt) {
    std::string s = without_suffixes(stmt), out;
    std::map<std::string, std::string> renamed;
    for (size_t i = 0; i < s.size(); i++) {
        bool starts = s[i] == 't' && (i == 0 || !(isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_' || s[i - 1] == '.'));
        size_t j = i + 1;
        while (starts && j < s.size() && isdigit(static_cast<unsigned char>(s[j]))) {
            j++;
        }
        if (starts && j > i + 1 && (j == s.size() || !isalnum(static_cast<unsigned char>(s[j])))) {
            std::string name = s.substr(i, j - i);
            auto it = renamed.emplace(name, "t" + std::to_string(renamed.size())).first;
            out += it->second;
            i = j - 1;
            continue;
        }
        out += s[i];
    }
    return out;
}

std::string without_suffixes(const std::string &text) {
    std::string out;
    for (size_t i = 0; i < text.size(); i++) {
        if (text[i] == '$' && i + 1 < text.size() && isdigit(static_cast<unsigned char>(text[i + 1]))) {
            while (i + 1 < text.size() && isdigit(static_cast<unsigned char>(text[i + 1]))) {
                i++;
            }
            continue;
        }
        out += text[i];
    }
    return out;
}

Schedule tiled_base() {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", 256, 128);
    s.func("acc").compute_at("C", "jo");
    return s;
}

// Three updates: the first two reduce over `k`, the last over `q`.
class ThreeUpdates : public Halide::Generator<ThreeUpdates> {
public:
    Input<Buffer<int32_t>> A{"A", 2};
    Output<Buffer<int32_t>> S{"S", 1};
    Halide::Func acc{"acc"};
    void generate() {
        Halide::Var i("i");
        Halide::RDom k(0, 8, "k"), q(0, 4, "q");
        acc(i) = 0;
        acc(i) += A(k, i);
        acc(i) += 2 * A(k, i);
        acc(i) += A(q, i);
        S(i) = acc(i);
        A.set_estimates({{0, 8}, {0, 16}});
        S.set_estimates({{0, 16}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(RowSum, test_rowsum, "row sums (a reduction that is not a matmul)",
                          {{"M", "64", "rows"}, {"K", "32", "columns"}})
TESSEL_REGISTER_GENERATOR(ThreeUpdates, test_three_updates, "three row reductions, two over the same RVar", {})

// ---- errors, one per message ----

TEST(ApplierErrors, UnknownFunc) {
    Schedule s;
    s.func("accc").compute_root();
    CompileResult r = compile_gemm(s.spec());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(first_error(r), "directive d1 (#0, compute_root on accc): unknown Func 'accc'; Funcs: C, acc; inputs: A, B");
    EXPECT_EQ(r.diagnostics[0].directive_id, "d1");
    EXPECT_EQ(r.diagnostics[0].directive_index, 0);
}

TEST(ApplierErrors, UnrolledCopiesOfOneStageAreBounded) {
    // 64 x 64 unrolled copies of the GEMM body took 22 s to lower; 32 x 32 (the limit) 5 s.
    Schedule s;
    s.func("C").split("j", "jo", "ji", 64).unroll("ji", 64).unroll("i", 32).id("u2");
    CompileResult r = compile_gemm(s.spec());
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(first_error(r), "directive u2 (#2, unroll on C): the unroll directives of C make 2048 copies of its loop "
                              "body; at most 1024 (unroll less, or unroll only the innermost loop)");
    Schedule ok;
    ok.func("C").split("j", "jo", "ji", 64).unroll("ji", 64).unroll("i", 2);
    EXPECT_TRUE(compile_gemm(ok.spec()).ok);
}

TEST(ApplierErrors, UnknownLoopListsTheStagesLoops) {
    Schedule s;
    s.func("acc").compute_at("C", "i");
    s.func("acc").update(0).split("k", "ko", "ki", 16).split("jj", "jo", "ji", 8);
    CompileResult r = compile_gemm(s.spec());
    EXPECT_EQ(first_error(r), "directive d3 (#2, split on acc.update(0)): unknown loop 'jj'; loops of acc.update(0): ki, ko, j, i");
    EXPECT_EQ(r.diagnostics[0].directive_id, "d3");
    EXPECT_EQ(r.diagnostics[0].directive_index, 2);
}

TEST(ApplierErrors, UnknownLoopOfComputeAt) {
    Schedule s;
    s.func("acc").compute_at("C", "jo");
    EXPECT_EQ(first_error(compile_gemm(s.spec())),
              "directive d1 (#0, compute_at on acc): unknown loop 'jo' of C; loops of C: j, i");
}

// conv2d with stride 2 has one update per input phase (samples/conv2d/ConvTaps.h).
CompileResult compile_conv_s2(const ScheduleSpec &s, int K) {
    return compile_with("conv2d", s,
                        {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", std::to_string(K)}, {"stride", "2"}});
}

// Halide 14 refuses a LoopLevel with an explicit stage index; a loop of an
// update other than the last is reached by its own name (a LoopLevel of stage
// -1 matches it in any stage): staging at kx0, the first phase's tap loop,
// compiles (it failed with "computed at the following invalid location").
// A name several stages share, naming an earlier one, is an error that says so.
TEST(ApplierErrors, LoopOfAnEarlierUpdate) {
    Schedule ok;
    ok.func("acc").compute_at("output", "y");
    ok.stage("in_p0", "L1").at("acc", "kx0");
    CompileResult r = compile_conv_s2(ok.spec(), 3);
    EXPECT_TRUE(r.ok) << first_error(r);
    Schedule shared;
    shared.func("acc").compute_at("S", "i");
    shared.stage("A", "UB").at("acc", "k");
    EXPECT_EQ(first_error(compile_with("test_three_updates", shared.spec())),
              "directive d2 (#1, stage(A, UB)): loop 'k' of acc is in update 1 and in update 0; Halide can "
              "compute at a loop of an update other than the last only by a name no other stage of acc has");
}

TEST(ApplierErrors, UpdateTheFuncDoesNotHave) {
    Schedule s;
    s.func("acc").update(1).reorder({"ci", "x"});
    EXPECT_EQ(first_error(compile_conv_s2(s.spec(), 1)),
              "directive d1 (#0, reorder on acc.update(1)): acc has 1 update definition; update(1) does not exist");
}

TEST(ApplierErrors, BadSplitFactorFromTheBuilder) {
    Schedule s;
    s.func("C").split("j", "jo", "ji", -8);
    EXPECT_EQ(first_error(compile_gemm(s.spec())),
              "directive d1 (#0, split on C): split factor must be a positive integer, got -8");
}

TEST(ApplierErrors, LevelTheArchLacks) {
    Schedule s = tiled_base();
    s.stage("A", "L3").at("acc", "i");
    EXPECT_EQ(first_error(compile_gemm(s.spec())),
              "directive d3 (#2, stage(A, L3)): level 'L3' does not exist in ascend-like; its levels: GM, L1, L0A, L0B, L0C, UB");
    Schedule g = tiled_base();
    g.func("acc").accumulate_in("L0C");
    EXPECT_EQ(first_error(compile_gemm(g.spec(), {{"dtype", "int8"}}, "gemmini-like")),
              "directive d3 (#2, accumulate_in(acc, L0C)): level 'L0C' does not exist in gemmini-like; its levels: GM, SPAD, ACC");
}

TEST(ApplierErrors, StageThatOverflowsItsLevel) {
    // A at C.jo is all of K for 128 rows: 1152 x 128 x 2 B = 288 KiB, twice = 576 KiB > 512 KiB.
    Schedule s = tiled_base();
    s.stage("A", "L1").at("C", "jo").buffers(2);
    CompileResult r = compile_gemm(s.spec(), {{"K", "1152"}});
    EXPECT_EQ(first_error(r), "directive d3 (#2, stage(A, L1)): stage(A, L1) at C.jo needs 576 KiB with buffers=2; L1 has 512 KiB");
    EXPECT_EQ(r.diagnostics[0].directive_id, "d3");
    // With one buffer it fits.
    Schedule one = tiled_base();
    one.stage("A", "L1").at("C", "jo");
    EXPECT_TRUE(compile_gemm(one.spec(), {{"K", "1152"}}).ok);
}

TEST(ApplierErrors, AccumulatorThatOverflowsItsLevel) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", 256, 256);
    s.func("acc").compute_at("C", "jo").accumulate_in("L0C");
    EXPECT_EQ(first_error(compile_gemm(s.spec())),
              "directive d3 (#2, accumulate_in(acc, L0C)): accumulate_in(acc, L0C) needs 256 KiB for the acc tile; L0C has 128 KiB");
}

TEST(ApplierErrors, AccumulateInNeedsComputeAt) {
    Schedule s;
    s.func("acc").accumulate_in("L0C");
    EXPECT_EQ(first_error(compile_gemm(s.spec())),
              "directive d1 (#0, accumulate_in(acc, L0C)): acc is not computed inside a loop; add compute_at(acc, <loop>) "
              "so that its accumulator is a tile that fits L0C");
}

TEST(ApplierErrors, TensorizeOnANonMatmulUpdateIsExplained) {
    Schedule s;
    s.func("acc").update(0).tensorize();
    EXPECT_EQ(first_error(compile_with("test_rowsum", s.spec())), "directive d1 (#0, tensorize(acc, 0)): acc.update(0) is not matmul-shaped: what is added "
                                       "is not a product a * b\n"
                                       "  expected: acc(i) = acc(i) + cast(a(.., r, ..)) * cast(b(.., r, ..)) with a "
                                       "reduction variable r in both a and b\n"
                                       "  found:    acc(i) = (acc(i) + int32((int8)A(k, i)))");
}

TEST(ApplierErrors, TensorizeOnADtypeTheMatrixUnitLacks) {
    Schedule s;
    s.func("acc").update(0).tensorize();
    EXPECT_EQ(first_error(compile_gemm(s.spec(), {{"dtype", "int16"}})),
              "directive d1 (#0, tensorize(acc, 0)): the matrix unit of ascend-like does not take int16 operands; it takes "
              "int8, fp16, bf16, fp32");
}

TEST(ApplierErrors, HalideErrorsNameTheDirective) {
    // Halide rejects RoundUp on an RVar; the message keeps Halide's text after the directive.
    Schedule s;
    s.func("acc").update(0).split("k", "ko", "ki", 16, "round_up");
    std::string msg = first_error(compile_gemm(s.spec()));
    EXPECT_EQ(msg.rfind("directive d1 (#0, split on acc.update(0)): ", 0), 0u) << msg;
    EXPECT_NE(msg.find("the tail strategy must be GuardWithIf"), std::string::npos) << msg;
}

TEST(ApplierErrors, GeneratorThatDoesNotExist) {
    CompileRequest r;
    r.generator = "gemmm";
    CompileResult res = compile(r);
    EXPECT_FALSE(res.ok);
    EXPECT_EQ(first_error(res).rfind("unknown generator 'gemmm'; known generators: ", 0), 0u) << first_error(res);
    EXPECT_NE(first_error(res).find("gemm"), std::string::npos);
    EXPECT_EQ(res.diagnostics[0].directive_id, "");
}

TEST(ApplierErrors, BadParamValue) {
    EXPECT_EQ(first_error(compile_gemm({}, {{"dtype", "int7"}})).rfind("parameter dtype=int7 is not an element type", 0), 0u);
    EXPECT_EQ(first_error(compile_gemm({}, {{"Q", "1"}})),
              "generator 'gemm' has no parameter 'Q'; its parameters are: M, N, K, dtype");
}

// ---- what the backend gets ----

TEST(Applier, TiledStagedFillsNpuSchedule) {
    HalidePipeline p = build_halide_pipeline("gemm", resolve_params(find_generator("gemm"), {}));
    LoweredPipeline lp = lower_pipeline(p, sample("tiled_staged"), load_arch("ascend-like"));
    ASSERT_EQ(lp.npu.staged.size(), 4u); // A and B into L1, then into L0A and L0B
    const StagedBuffer &a = lp.npu.staged[0];
    EXPECT_EQ(a.source, "A");
    EXPECT_EQ(without_suffixes(a.func), "A_im_global_wrapper");
    EXPECT_EQ(a.level, "L1");
    EXPECT_EQ(a.buffers, 2);
    EXPECT_EQ(without_suffixes(a.at_func), "acc");
    EXPECT_EQ(a.at_loop, "ko");
    EXPECT_EQ(without_suffixes(lp.npu.staged[1].func), "B_im_global_wrapper");
    // The second stage of A wraps the first copy (GM -> L1 -> L0A).
    EXPECT_EQ(lp.npu.staged[2].source, "A");
    EXPECT_EQ(lp.npu.staged[2].level, "L0A");
    EXPECT_EQ(without_suffixes(lp.npu.staged[2].func), "A_im_global_wrapper_global_wrapper");
    EXPECT_EQ(lp.npu.staged[3].level, "L0B");
    ASSERT_EQ(lp.npu.accumulate.size(), 1u);
    std::string acc = lp.npu.accumulate[0].func;
    EXPECT_EQ(without_suffixes(acc), "acc");
    ASSERT_EQ(lp.npu.tensorize.size(), 1u);
    EXPECT_EQ(lp.npu.tensorize[0].func, acc);
    // Provenance uses Halide's names, as the Stmt does.
    EXPECT_EQ(lp.npu.provenance.at(lp.outputs[0].func.name() + ".jo"), "tile_C");
    EXPECT_EQ(lp.npu.provenance.at(acc + ".ko"), "k_chunks");
    EXPECT_EQ(lp.npu.provenance.at(a.func), "stage_A");
    // The staged copies are allocations inside the K-chunk loop, of the tile's size.
    std::map<std::string, int64_t> bytes = constant_allocation_bytes(lp.stmt);
    EXPECT_EQ(bytes.at(a.func), 128 * 64 * 2); // a 128-row tile of a 64-wide K chunk
    EXPECT_EQ(bytes.at(lp.npu.staged[1].func), 64 * 128 * 2);
    EXPECT_EQ(bytes.at(lp.npu.staged[2].func), 128 * 64 * 2);
    EXPECT_EQ(bytes.at(acc), 128 * 128 * 4);
    EXPECT_NE(without_suffixes(lp.loop_nest)
                  .find("for acc.s1.k$x.ko in [0, 4) serial\n"
                        "          allocate A_im_global_wrapper: float16[64 x 128] 16 KiB in auto"),
              std::string::npos)
        << lp.loop_nest;
    ASSERT_EQ(lp.inputs.size(), 2u);
    EXPECT_EQ(without_suffixes(lp.outputs[0].name), "C");
    EXPECT_TRUE(lp.warnings.empty());
}

TEST(Applier, ParallelWithCoresIsACoreSplitNotAHalideParallelLoop) {
    Schedule s = tiled_base();
    s.func("C").parallel("io", 2);
    HalidePipeline p = build_halide_pipeline("gemm", resolve_params(find_generator("gemm"), {}));
    LoweredPipeline lp = lower_pipeline(p, s.spec(), load_arch("ascend-like"));
    ASSERT_EQ(lp.npu.core_splits.size(), 1u);
    EXPECT_EQ(lp.npu.core_splits[0].cores, 2);
    EXPECT_EQ(lp.npu.core_splits[0].loop, "io");
    EXPECT_NE(without_suffixes(lp.loop_nest).find("for C.s0.i.io in [0, 2) serial"), std::string::npos) << lp.loop_nest;
}

// ---- C++ round trip: the generated builder code, compiled, lowers identically ----

namespace {
ScheduleSpec cpp_naive() {
#include "golden/gemm_naive.schedule.inc"
    return s.spec();
}
ScheduleSpec cpp_tiled_vectorized() {
#include "golden/gemm_tiled_vectorized.schedule.inc"
    return s.spec();
}
ScheduleSpec cpp_tiled_staged() {
#include "golden/gemm_tiled_staged.schedule.inc"
    return s.spec();
}
} // namespace

TEST(ScheduleRoundTrip, CompiledCppLowersToTheSameStmtAsTheJson) {
    std::vector<std::pair<std::string, ScheduleSpec>> cases = {
        {"naive", cpp_naive()}, {"tiled_vectorized", cpp_tiled_vectorized()}, {"tiled_staged", cpp_tiled_staged()}};
    for (const auto &c : cases) {
        ScheduleSpec from_json = sample(c.first);
        EXPECT_EQ(c.second, from_json) << c.first;
        CompileResult a = compile_gemm(from_json), b = compile_gemm(c.second);
        ASSERT_TRUE(a.ok) << first_error(a);
        ASSERT_TRUE(b.ok) << first_error(b);
        EXPECT_EQ(normalized(a.stmt_text), normalized(b.stmt_text)) << c.first;
        EXPECT_EQ(a.schedule_hash, b.schedule_hash) << c.first;
    }
}

// ---- the GEMM sample's schedules compute what the unscheduled pipeline does ----

TEST(GemmSchedules, CpuResultsEqualTheReference) {
    uint64_t seed = std::random_device{}();
    for (const char *name : {"naive", "tiled_vectorized", "tiled_staged"}) {
        for (const char *dtype : {"fp16", "int8"}) {
            CompileRequest r;
            r.generator = "gemm";
            r.params = {{"M", "128"}, {"N", "256"}, {"K", "384"}, {"dtype", dtype}};
            r.schedule = sample(name);
            r.npu = false; // the scheduled pipeline on the CPU; the NPU path is tested in tests/backend
            RunReport rep = run(r, seed);
            EXPECT_TRUE(rep.verified) << name << " " << dtype << " seed " << seed << ": " << rep.comparison;
            EXPECT_TRUE(rep.diagnostics.empty()) << name << " seed " << seed << ": " << rep.diagnostics[0].message;
            if (std::string(dtype) == "int8") {
                EXPECT_EQ(rep.max_abs_error, 0) << name << " seed " << seed;
            }
        }
    }
}

TEST(GemmSchedules, RunReportJsonHasTheStableKeys) {
    CompileRequest r;
    r.generator = "gemm";
    r.params = {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "int8"}};
    r.schedule = sample("tiled_vectorized");
    r.npu = false;
    RunReport rep = run(r, 7);
    std::string j = run_report_json(rep);
    for (const char *key : {"\"generator\": \"gemm\"", "\"params\": {", "\"arch\": \"ascend-like\"", "\"schedule_hash\": \"",
                            "\"verified\": true", "\"max_abs_error\": 0", "\"compile_ms\": ", "\"seed\": 7"}) {
        EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
    }
    EXPECT_EQ(j.find("\"cycles\""), std::string::npos) << "NPU fields are absent when the NPU did not run";
    rep.cycles = 1000;
    rep.pipes["M"] = 87.5;
    j = run_report_json(rep);
    EXPECT_NE(j.find("\"cycles\": 1000"), std::string::npos) << j;
    EXPECT_NE(j.find("\"M\": 87.5"), std::string::npos) << j;
}

// The scheduled pipeline's CPU run is a check of its own (cpu_schedule_verified);
// the IDE turns it off (one JIT compile less per edit) and the report then says
// it was not run (null), not that it failed.
TEST(GemmSchedules, ScheduledCpuCheckCanBeSkipped) {
    CompileRequest r;
    r.generator = "gemm";
    r.params = {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "int8"}};
    r.schedule = sample("tiled_vectorized");
    RunReport with = run(r, 3);
    ASSERT_TRUE(with.diagnostics.empty() || with.verified) << with.diagnostics.front().message;
    EXPECT_TRUE(with.verified);
    EXPECT_TRUE(with.cpu_schedule_checked);
    EXPECT_TRUE(with.cpu_schedule_verified);
    EXPECT_NE(run_report_json(with).find("\"cpu_schedule_verified\": true"), std::string::npos);
    r.check_cpu_schedule = false;
    RunReport without = run(r, 3);
    EXPECT_TRUE(without.verified) << "the NPU result is still checked against the reference";
    EXPECT_FALSE(without.cpu_schedule_checked);
    EXPECT_EQ(without.cycles, with.cycles);
    EXPECT_NE(run_report_json(without).find("\"cpu_schedule_verified\": null"), std::string::npos)
        << run_report_json(without);
}
