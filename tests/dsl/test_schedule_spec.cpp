// ScheduleSpec as data: JSON parsing (with its error messages), canonical JSON,
// the C++ builder and the C++ printer. Halide-free.
#include "DslTestUtil.h"
#include "dsl/ScheduleSpec.h"

#include <gtest/gtest.h>

using namespace tessel;
using tessel::test::read_text;
using tessel::test::source_path;
using tessel::test::user_error_text;

namespace {

const char *kSamples[] = {"naive", "tiled_vectorized", "tiled_staged"};

std::string sample_path(const std::string &name) { return source_path("samples/gemm/schedules/" + name + ".json"); }

std::string parse_error(const std::string &text) {
    return user_error_text([&] { parse_schedule(text, "s.json"); });
}

} // namespace

TEST(ScheduleSpec, SampleFilesAreCanonicalJson) {
    // JSON -> spec -> JSON is the identity on canonical text (the samples are kept canonical).
    for (const char *name : kSamples) {
        std::string text = read_text(sample_path(name));
        ASSERT_FALSE(text.empty()) << sample_path(name);
        ScheduleSpec s = parse_schedule(text, name);
        EXPECT_EQ(schedule_to_json(s), text) << name;
        EXPECT_EQ(parse_schedule(schedule_to_json(s)), s) << name;
    }
}

TEST(ScheduleSpec, EveryKindRoundTripsThroughJsonAndKeepsIds) {
    Schedule b;
    b.func("C").tile("j", "i", "jo", "io", "ji", "ii", 64, 32, "guard_with_if").id("t");
    b.func("C").split("ji", "jv", "jw", 8, "round_up").fuse("jw", "ii", "f").reorder({"f", "jv", "jo", "io"});
    b.func("C").vectorize("f", 8).unroll("jv").unroll("jo", 2).parallel("io").parallel("io", 4);
    b.func("acc").compute_at("C", "jo").store_at("C", "io").compute_root().compute_inline();
    b.stage("A", "L1").at("acc", "ko").buffers(2).id("sa");
    b.stage("B", "L0B").at("acc", "ki");
    b.func("acc").accumulate_in("L0C");
    b.func("acc").update(0).split("k", "ko", "ki", 64).tensorize();
    b.func("C").layout("NZ");
    ScheduleSpec s = b.spec();
    ASSERT_EQ(s.directives.size(), 19u);
    EXPECT_EQ(s.directives[0].id, "t");
    EXPECT_EQ(s.directives[1].id, "d2");
    EXPECT_EQ(s.directives[13].id, "sa");
    EXPECT_EQ(s.directives[17].kind, DirectiveKind::Tensorize);
    EXPECT_EQ(s.directives[17].stage, 0);
    std::string json = schedule_to_json(s);
    ScheduleSpec back = parse_schedule(json);
    EXPECT_EQ(back, s);
    EXPECT_EQ(schedule_to_json(back), json);
    EXPECT_EQ(schedule_hash(back), schedule_hash(s));
}

TEST(ScheduleSpec, MissingIdsAreAssignedAroundExplicitOnes) {
    ScheduleSpec s = parse_schedule(R"({"directives": [
        {"id": "d2", "kind": "compute_root", "func": "acc"},
        {"kind": "compute_root", "func": "C"},
        {"kind": "compute_root", "func": "D"}]})");
    EXPECT_EQ(s.directives[0].id, "d2");
    EXPECT_EQ(s.directives[1].id, "d3"); // d2 is taken
    EXPECT_EQ(s.directives[2].id, "d4");
    EXPECT_EQ(parse_error(R"({"directives": [{"id": "x", "kind": "compute_root", "func": "a"},
                                             {"id": "x", "kind": "compute_root", "func": "b"}]})"),
              "directive x (#1, compute_root on b): duplicate id 'x'; ids must be unique");
}

TEST(ScheduleSpec, HashIsFnv1aOfCanonicalJson) {
    ScheduleSpec empty;
    EXPECT_EQ(schedule_to_json(empty), "{\n  \"version\": 1,\n  \"directives\": []\n}\n");
    // FNV-1a 64 computed independently over the text above.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : schedule_to_json(empty)) {
        h = (h ^ c) * 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    EXPECT_EQ(schedule_hash(empty), buf);
    ScheduleSpec one = parse_schedule(read_text(sample_path("naive")));
    EXPECT_EQ(schedule_hash(one).size(), 16u);
    EXPECT_NE(schedule_hash(one), schedule_hash(empty));
}

// ---- one test per user-facing message ----

TEST(ScheduleSpecErrors, MalformedJsonGivesLineAndColumn) {
    std::string msg = parse_error("{\n  \"directives\": [\n    {\"kind\": \"split\",, }\n  ]\n}\n");
    EXPECT_EQ(msg.rfind("s.json:3:22: malformed JSON: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("unexpected ','"), std::string::npos) << msg;
}

TEST(ScheduleSpecErrors, StringWhereANumberIsExpected) {
    EXPECT_EQ(parse_error(R"({"directives": [{"id": "d1", "kind": "compute_root", "func": "C"},
        {"id": "s", "kind": "split", "func": "C", "var": "j", "outer": "jo", "inner": "ji", "factor": "16"}]})"),
              "s.json: directive s (#1, split on C): 'factor' must be an integer, found string \"16\"");
}

TEST(ScheduleSpecErrors, UnknownKindListsTheKnownOnes) {
    std::string msg = parse_error(R"({"directives": [{"kind": "spilt", "func": "C"}]})");
    EXPECT_EQ(msg.rfind("s.json: directive (#0): unknown kind 'spilt'; known kinds: split, tile, reorder,", 0), 0u) << msg;
}

TEST(ScheduleSpecErrors, HostileJsonIsAMessageNotACrash) {
    // The issue's reproducer: 80000 levels (SIGSEGV in printing the value), 1e400 (exit 3).
    int n = 80000;
    std::string deep = "{\"version\":1,\"directives\":[" + std::string(n, '[') + std::string(n, ']') + "]}";
    EXPECT_EQ(parse_error(deep), "s.json:1:90: arrays and objects nested deeper than 64 levels (no Tessel file nests "
                                 "more than a few)");
    EXPECT_EQ(parse_error(R"({"directives": [{"kind": "split", "func": "C", "var": "j", "outer": "jo", "inner": "ji", "factor": 1e400}]})"),
              "s.json:1:100: number '1e400' is out of range (a JSON number must fit a 64-bit float, |x| < 1.8e308)");
    // A long value is shown cut, never whole.
    std::string many = "[" + std::string(9999, '1') + "]";
    std::string msg = parse_error("{\"directives\": [{\"kind\": \"reorder\", \"func\": \"C\", \"vars\": [" + many + "]}]}");
    EXPECT_LT(msg.size(), 200u) << msg;
}

TEST(ScheduleSpecErrors, FactorsHalideCannotTakeAreRefused) {
    auto directive = [](const std::string &kind, const std::string &factor) {
        std::string fields = kind == "split" ? R"("var": "j", "outer": "jo", "inner": "ji")" : R"("var": "j")";
        return parse_error(R"({"directives": [{"id": "x", "kind": ")" + kind + R"(", "func": "C", )" + fields +
                           R"(, "factor": )" + factor + "}]}");
    };
    // 4294967297 used to be cast to an int (1) while --emit json still printed it.
    EXPECT_EQ(directive("split", "4294967297"),
              "s.json: directive x (#0, split on C): 'factor' is 4294967297, out of range: schedule integers are at "
              "most 2147483647 in magnitude (Halide's loop extents and factors are 32-bit)");
    EXPECT_EQ(directive("split", "18446744073709551615"),
              "s.json: directive x (#0, split on C): 'factor' is 18446744073709551615, out of range: schedule integers "
              "are at most 2147483647 in magnitude (Halide's loop extents and factors are 32-bit)");
    // 65536 lanes: SIGFPE in Halide (its lane count is 16-bit); 1e9: a Halide internal error.
    EXPECT_EQ(directive("vectorize", "65536"),
              "s.json: directive x (#0, vectorize on C): vectorize factor 65536 is too large: at most 16384 lanes (one "
              "vector instruction of the widest preset holds 255 repeats of 256 B, 32640 fp16 elements; split the "
              "loop and vectorize its inner part)");
    EXPECT_NE(directive("vectorize", "1000000000").find("vectorize factor 1000000000 is too large"), std::string::npos);
    EXPECT_EQ(directive("vectorize", "1e9"),
              "s.json: directive x (#0, vectorize on C): 'factor' must be an integer, found number 1000000000.0");
    // unroll 100000: SIGSEGV; 10000: over a minute of lowering.
    EXPECT_EQ(directive("unroll", "100000"),
              "s.json: directive x (#0, unroll on C): unroll factor 100000 is too large: at most 256 (each unrolled "
              "iteration is a copy of the loop body in the program; split the loop and unroll its inner part)");
    EXPECT_NE(directive("unroll", "10000").find("unroll factor 10000 is too large"), std::string::npos);
    EXPECT_EQ(directive("unroll", "256"), "(no error)");
    EXPECT_EQ(directive("vectorize", "16384"), "(no error)");
}

TEST(ScheduleSpecErrors, IntegerFieldsOutsideInt32AreRefusedBeforeACast) {
    EXPECT_EQ(parse_error(R"({"directives": [{"id": "s", "kind": "stage", "func": "A", "level": "L1",
        "at": {"func": "C", "loop": "jo"}, "buffers": 4294967298}]})"),
              "s.json: directive s (#0, stage(A, L1)): 'buffers' is 4294967298, out of range: schedule integers are at "
              "most 2147483647 in magnitude (Halide's loop extents and factors are 32-bit)");
}

TEST(ScheduleSpecErrors, MissingAndUnknownArguments) {
    EXPECT_EQ(parse_error(R"({"directives": [{"id": "v", "kind": "vectorize", "func": "C", "stage": 0}]})"),
              "s.json: directive v (#0, vectorize on C.update(0)): missing 'var'");
    EXPECT_EQ(parse_error(R"({"directives": [{"id": "v", "kind": "vectorize", "func": "C", "var": "j", "factr": 8}]})"),
              "s.json: directive v (#0, vectorize on C): unknown key 'factr'; vectorize has keys id, kind, func, stage, var, factor");
    EXPECT_EQ(parse_error(R"({"directives": [{"id": "s", "kind": "stage", "func": "A", "level": "L1", "at": {"func": "C"}}]})"),
              "s.json: directive s (#0, stage(A, L1)): 'at.loop' must be a non-empty string, found nothing");
}

TEST(ScheduleSpecErrors, BadSplitFactor) {
    EXPECT_EQ(parse_error(R"({"directives": [{"id": "d1", "kind": "split", "func": "acc", "stage": 0,
        "var": "k", "outer": "ko", "inner": "ki", "factor": 0}]})"),
              "s.json: directive d1 (#0, split on acc.update(0)): split factor must be a positive integer, got 0");
    EXPECT_EQ(parse_error(R"({"directives": [{"kind": "tile", "func": "C", "x": "j", "y": "i", "xo": "a", "yo": "b",
        "xi": "c", "yi": "d", "fx": 8, "fy": -4}]})"),
              "s.json: directive (#0, tile on C): tile factor must be a positive integer, got -4");
}

TEST(ScheduleSpecErrors, TopLevelShape) {
    EXPECT_EQ(parse_error("[]"), "s.json: a schedule is a JSON object {\"version\": 1, \"directives\": [...]}, found array []");
    EXPECT_EQ(parse_error(R"({"version": 2, "directives": []})"),
              "s.json: unsupported schedule version 2; this Tessel reads version 1");
    EXPECT_EQ(user_error_text([] { load_schedule("/nonexistent/x.json"); }),
              "cannot read schedule file '/nonexistent/x.json': No such file or directory");
}

// ---- C++ text ----

TEST(ScheduleSpec, CppTextMatchesTheCheckedInInc) {
    // The .inc files are schedule_to_cpp() of the sample JSON, checked in so that
    // test_dsl_applier compiles them. TESSEL_UPDATE_GOLDEN=1 rewrites them.
    for (const char *name : kSamples) {
        std::string cpp = schedule_to_cpp(parse_schedule(read_text(sample_path(name))));
        std::string inc = source_path(std::string("tests/dsl/golden/gemm_") + name + ".schedule.inc");
        if (std::getenv("TESSEL_UPDATE_GOLDEN")) {
            std::ofstream(inc) << cpp;
        }
        EXPECT_EQ(read_text(inc), cpp) << inc << " is stale: rerun with TESSEL_UPDATE_GOLDEN=1";
    }
}

TEST(ScheduleSpec, CppTextReadsLikeTheBuilder) {
    Schedule b;
    b.func("acc").update(0).split("j", "jo", "ji", 16).vectorize("ji");
    b.stage("A", "L1").at("C", "jo").buffers(2);
    EXPECT_EQ(schedule_to_cpp(b.spec()), "Schedule s;\n"
                                         "s.func(\"acc\").update(0).split(\"j\", \"jo\", \"ji\", 16)\n"
                                         "    .vectorize(\"ji\");\n"
                                         "s.stage(\"A\", \"L1\").at(\"C\", \"jo\").buffers(2);\n");
}
