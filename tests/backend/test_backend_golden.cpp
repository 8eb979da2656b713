// Golden files: the NPU IR after every backend pass, the assembly and the tiling plan, for a
// small tensorized GEMM (32x32x32 fp16 on ascend-like, 16x16 tiles, k chunks of
// 16, everything double-buffered). Each file starts with '#' lines saying why
// the output is right; those lines are kept and not compared. After an
// intended change, regenerate with TESSEL_UPDATE_GOLDEN=1 and review the diff.
#include "dsl/Compile.h"
#include "samples/gemm/GemmSchedules.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

using namespace tessel;

namespace {

std::string source_dir() {
    const char *s = std::getenv("TESSEL_SOURCE_DIR");
    return s ? s : ".";
}

// Halide makes names unique per process ("acc$3"): drop the counters.
std::string normalized(const std::string &s) { return std::regex_replace(s, std::regex(R"(\$[0-9]+)"), ""); }

void check_golden(const std::string &name, const std::string &text) {
    std::string path = source_dir() + "/tests/backend/golden/" + name;
    std::ifstream in(path);
    std::string header, body, line;
    bool in_header = true;
    while (std::getline(in, line)) {
        if (in_header && line.rfind("#", 0) == 0) {
            header += line + "\n";
            continue;
        }
        in_header = false;
        body += line + "\n";
    }
    std::string got = normalized(text);
    if (!got.empty() && got.back() != '\n') {
        got += "\n";
    }
    if (std::getenv("TESSEL_UPDATE_GOLDEN")) {
        std::ofstream out(path);
        out << header << got;
        return;
    }
    EXPECT_FALSE(header.empty()) << path << " needs a '#' header saying why its content is right";
    EXPECT_EQ(body, got) << path << " differs; if the change is intended, rerun with TESSEL_UPDATE_GOLDEN=1";
}

CompileResult compile_small_gemm() {
    ScheduleSpec s = gemm_ascend_tensorized(16, 16, 16);
    CompileRequest r;
    r.generator = "gemm";
    r.params = {{"M", "32"}, {"N", "32"}, {"K", "32"}, {"dtype", "fp16"}};
    r.schedule = s;
    r.dump_after = "all";
    return compile(r);
}

} // namespace

TEST(BackendGolden, NpuIrAfterEveryPassAndAssembly) {
    CompileResult r = compile_small_gemm();
    ASSERT_TRUE(r.ok);
    ASSERT_FALSE(r.pass_dumps.empty());
    for (const auto &[pass, text] : r.pass_dumps) {
        check_golden("gemm_small." + pass + ".txt", text);
    }
    check_golden("gemm_small.s", r.asm_text);
    check_golden("gemm_small.tiling.txt", tiling_text(r.tiling));
}
