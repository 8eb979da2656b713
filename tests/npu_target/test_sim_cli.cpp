// The built `tessel sim` / `tessel run` against a full disk and a runaway program:
// exit 1 with a message, never 0 having written nothing, never a hang.
#include "tests/common/BuildSlowdown.h"
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Result {
    int code = -1;
    std::string err;
    double seconds = 0;
};

std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Runs `tessel <args>` with stdout to `out` (a path) and stderr captured.
Result run_tessel(const std::string &args, const std::string &out = "/dev/null") {
    std::string err_file = testing::TempDir() + "tessel_sim_cli_" + std::to_string(::getpid()) + ".err";
    std::string cmd = std::string(TESSEL_BIN) + " " + args + " >" + out + " 2>" + err_file;
    auto t0 = std::chrono::steady_clock::now();
    int status = std::system(cmd.c_str());
    Result r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = read_text(err_file);
    return r;
}

std::string write_program(const std::string &name, const std::string &text) {
    std::string path = testing::TempDir() + name + "_" + std::to_string(::getpid()) + ".s";
    std::ofstream(path) << text;
    return path;
}

const char *kCopy = ".kernel \"copy\"\n.arg \"x\" uint8 1024 in\n.arg \"y\" uint8 1024 out\n"
                    ".desc d0 dims=1 elem=32 count=32/1/1/1 src=32/0/0/0 dst=32/0/0/0 transform=none\n"
                    " li r10, 0\n dma MTE2, UB, r10, GM, r1, d0\n set_flag MTE2, MTE3, 0\n"
                    " wait_flag MTE2, MTE3, 0\n dma MTE3, GM, r2, UB, r10, d0\n end\n";

} // namespace

TEST(SimCli, TraceToAFullDiskExitsOne) {
    std::string s = write_program("copy", kCopy);
    Result r = run_tessel("sim " + s + " --trace /dev/full");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("cannot write the trace to '/dev/full'"), std::string::npos) << r.err;
}

TEST(SimCli, StdoutToAFullDiskExitsOne) {
    std::string s = write_program("copy", kCopy);
    EXPECT_EQ(run_tessel("sim " + s).code, 0);
    Result r = run_tessel("sim " + s, "/dev/full");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("tessel sim: cannot write to standard output"), std::string::npos) << r.err;
}

TEST(SimCli, AnInfiniteLoopStopsByTheDefaultBudget) {
    std::string s = write_program("spin", ".kernel \"spin\"\nloop: jmp loop\n");
    Result r = run_tessel("sim " + s);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("simulation exceeded max_instructions = 50000000 on core 0 at pc 0 (jmp)"), std::string::npos)
        << r.err;
    EXPECT_LT(r.seconds, 30.0 * tessel::test::kBuildSlowdown);
    r = run_tessel("sim " + s + " --max-instructions 0 --max-cycles 2000");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("simulation exceeded max_cycles = 2000"), std::string::npos) << r.err;
}

TEST(SimCli, TheTraceFileIsStreamedAndComplete) {
    std::string s = write_program("copy", kCopy);
    std::string t = testing::TempDir() + "copy_trace_" + std::to_string(::getpid()) + ".json";
    Result r = run_tessel("sim " + s + " --trace " + t);
    EXPECT_EQ(r.code, 0) << r.err;
    std::string json = read_text(t);
    EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u) << json;
    EXPECT_NE(json.find("\"otherData\":{\"kernel\":\"copy\""), std::string::npos) << json;
    EXPECT_EQ(json.back(), '}');
}

TEST(SimCli, HelpStatesTheDefaultBudgets) {
    std::string out = testing::TempDir() + "sim_help_" + std::to_string(::getpid()) + ".txt";
    EXPECT_EQ(run_tessel("sim --help", out).code, 0);
    std::string help = read_text(out);
    EXPECT_NE(help.find("default 50000000,"), std::string::npos) << help;
    EXPECT_NE(help.find("default 5000000000)"), std::string::npos) << help;
    EXPECT_NE(help.find("default 2000000"), std::string::npos) << help;
}
