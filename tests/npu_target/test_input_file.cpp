// The checked way in (npu_target/common/InputFile.h): files nobody here wrote are
// read with their size capped, JSON with its nesting and numbers bounded, values
// in messages shown short, and outputs written so a failure is an error that
// names the path and leaves any old file intact.
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tessel;
using json = nlohmann::json;

namespace {

template <typename F>
std::string error_of(F f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "";
}

std::string nested(int n) { return std::string(n, '[') + std::string(n, ']'); }

std::string temp_path(const std::string &name) {
    return testing::TempDir() + "tessel_input_" + std::to_string(::getpid()) + "_" + name;
}

} // namespace

TEST(JsonInput, DeepNestingIsAnErrorWithItsPositionNotACrash) {
    // 80000 levels: nlohmann parses it iteratively, but printing the value in a
    // message used to recurse 80000 frames deep (SIGSEGV).
    std::string text = "{\"version\": 1,\n \"directives\": " + nested(80000) + "}";
    EXPECT_EQ(error_of([&] { parse_json_input(text, "deep.json"); }),
              "deep.json:2:79: arrays and objects nested deeper than 64 levels (no Tessel file nests more than a few)");
    EXPECT_NO_THROW(parse_json_input(nested(64), "ok.json"));
    EXPECT_NE(error_of([&] { parse_json_input(nested(65), "x.json"); }), "");
}

TEST(JsonInput, BracketsInsideStringsDoNotCount) {
    std::string text = "[\"" + std::string(200, '[') + "\\\"\", 1]";
    json j = parse_json_input(text, "s.json");
    EXPECT_EQ(j.size(), 2u);
}

TEST(JsonInput, NumberOutOfRangeNamesTheNumberAndWhere) {
    EXPECT_EQ(error_of([] { parse_json_input("{\"a\": [1,\n  1e400]}", "n.json"); }),
              "n.json:2:3: number '1e400' is out of range (a JSON number must fit a 64-bit float, |x| < 1.8e308)");
    EXPECT_NE(error_of([] { parse_json_input("-2e308", "n.json"); }), "");
    // Underflow is a value (0), as every JSON reader treats it; a huge integer is a
    // double, range-checked by the field that reads it.
    EXPECT_EQ(parse_json_input("1e-400", "n.json").get<double>(), 0.0);
    EXPECT_TRUE(parse_json_input("123456789012345678901234567890", "n.json").is_number_float());
}

TEST(JsonInput, MalformedJsonHasLineAndColumn) {
    std::string msg = error_of([] { parse_json_input("{\n  \"a\": ,\n}", "m.json"); });
    EXPECT_EQ(msg.rfind("m.json:2:8: malformed JSON: ", 0), 0u) << msg;
}

TEST(JsonInput, ExcerptIsShortAndShallow) {
    json deep = json::array();
    json *cur = &deep;
    for (int i = 0; i < 10; i++) {
        cur->push_back(json::array());
        cur = &(*cur)[0];
    }
    EXPECT_EQ(json_excerpt(deep), "[[[...]]]");
    EXPECT_EQ(json_excerpt(json(std::string(100, 'x')), 20), "\"xxxxxxxxxxxxxxxx...");
    json many = json::array();
    for (int i = 0; i < 1000; i++) {
        many.push_back(i);
    }
    EXPECT_LE(json_excerpt(many).size(), 60u);
    EXPECT_EQ(json_excerpt(json{{"a", 1}}), "{\"a\":1}");
    EXPECT_EQ(json_excerpt(json(4294967297ull)), "4294967297");
}

TEST(InputFiles, MissingDirectoryAndTooLargeAreErrors) {
    EXPECT_EQ(error_of([] { read_input_file("/nonexistent/s.json", "schedule file"); }),
              "cannot read schedule file '/nonexistent/s.json': No such file or directory");
    EXPECT_EQ(error_of([] { read_input_file("/tmp", "schedule file"); }),
              "cannot read schedule file '/tmp': it is a directory");
    // /dev/zero never ends: the read stops at the limit instead of exhausting memory.
    EXPECT_EQ(error_of([] { read_input_file("/dev/zero", "arch file", 1 << 20); }),
              "cannot read arch file '/dev/zero': larger than 1 MiB, the limit for arch files");
    std::string p = temp_path("small.json");
    std::ofstream(p) << "{}";
    EXPECT_EQ(read_input_file(p, "schedule file"), "{}");
    std::filesystem::remove(p);
}

TEST(OutputFiles, FailuresNameThePathAndKeepTheOldFile) {
    EXPECT_EQ(error_of([] { write_output_file("/dev/full", "x", "trace"); }),
              "cannot write trace '/dev/full': No space left on device");
    EXPECT_EQ(error_of([] { write_output_file("/etc/passwd/x", "x", "--emit asm output"); }),
              "cannot write --emit asm output '/etc/passwd/x': '/etc/passwd' is not a directory");
    std::string p = temp_path("out.txt");
    write_output_file(p, "old", "report");
    EXPECT_EQ(error_of([&] { write_output_file(p + "/y", "x", "report"); }),
              "cannot write report '" + p + "/y': '" + p + "' is not a directory");
    write_output_file(p, "new", "report");
    std::ifstream in(p);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, "new");
    EXPECT_FALSE(std::filesystem::exists(p + ".tmp" + std::to_string(::getpid())));
    std::filesystem::remove(p);
}
