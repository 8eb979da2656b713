// The built `tessel` program: compile prints the lowered Stmt, run writes the
// report, and the exit codes are 0 (ok), 1 (user error, message on stderr) and
// 2 (bad usage).
#include <unistd.h>
#include "DslTestUtil.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>

using tessel::test::read_text;
using tessel::test::source_path;

namespace {

struct Result {
    int code = -1;
    std::string out, err;
};

// A sanitizer build's runtime may print its own notes on stderr (ASan's
// "==PID==WARNING: ASan doesn't fully support makecontext/swapcontext" when
// Halide's JIT switches stacks). They are not the program's output: drop lines of
// the form "==<digits>==..." so that the checks below hold in every build. A real
// sanitizer report still shows in r.err (it opens with a line of '=' alone) and
// makes the process exit non-zero.
std::string without_sanitizer_notes(const std::string &text) {
    std::string kept;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        const std::string line = text.substr(at, end - at);
        size_t digits = 2;
        while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) {
            digits++;
        }
        const bool note = line.rfind("==", 0) == 0 && digits > 2 && line.compare(digits, 2, "==") == 0;
        if (!note) {
            kept += line;
        }
        at = end;
    }
    return kept;
}

Result tessel_cli(const std::string &args) {
    std::string err_file = testing::TempDir() + "tessel_cli_stderr_" + std::to_string(::getpid()) + ".txt";
    std::string cmd = std::string(TESSEL_BIN) + " " + args + " 2>" + err_file;
    Result r;
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) {
        return r;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
        r.out.append(buf, n);
    }
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = without_sanitizer_notes(read_text(err_file));
    return r;
}

std::string schedule(const std::string &name) { return source_path("samples/gemm/schedules/" + name + ".json"); }

} // namespace

TEST(Cli, CompileEmitsTheLoweredStmt) {
    Result r = tessel_cli("compile -g gemm -p M=256,N=256,K=256 --schedule " + schedule("tiled_staged") +
                          " --arch ascend-like --emit stmt");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("produce C {"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("for (acc.s1.k$x.ko, 0, 4) {"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("allocate A_im_global_wrapper$0[float16 * 64 * 128]"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
}

TEST(Cli, CompileWritesEveryEmitToADirectory) {
    std::string dir = testing::TempDir() + "tessel_cli_out_" + std::to_string(::getpid());
    Result r = tessel_cli("compile -g gemm --schedule " + schedule("naive") + " --emit stmt,loopnest,cpp,json -o " + dir);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_text(dir + "/schedule.json"), read_text(schedule("naive")));
    EXPECT_EQ(read_text(dir + "/schedule.cpp").rfind("Schedule s;\n", 0), 0u);
    EXPECT_NE(read_text(dir + "/loopnest.txt").find("for C.s0.i.rebased in [0, 256) serial"), std::string::npos);
    EXPECT_NE(read_text(dir + "/stmt.txt").find("produce acc"), std::string::npos);
}

TEST(Cli, RunWritesTheReport) {
    std::string report = testing::TempDir() + "tessel_cli_report_" + std::to_string(::getpid()) + ".json";
    Result r = tessel_cli("run -g gemm -p M=64,N=64,K=64,dtype=int8 --schedule " + schedule("tiled_vectorized") +
                          " --seed 3 --report-json " + report);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
    std::string j = read_text(report);
    EXPECT_NE(j.find("\"verified\": true"), std::string::npos) << j;
    EXPECT_NE(j.find("\"seed\": 3"), std::string::npos) << j;
    // The measured roofline: the table on stdout, the object in the report.
    EXPECT_NE(r.out.find("roofline: work "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  GM read "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  binds: "), std::string::npos) << r.out;
    EXPECT_NE(j.find("\"roofline\": {"), std::string::npos) << j;
    EXPECT_NE(j.find("\"achieved_ops_per_cycle\""), std::string::npos) << j;
}

TEST(CliErrors, UserErrorsExitOneWithTheMessage) {
    Result bad_gen = tessel_cli("compile -g nosuch");
    EXPECT_EQ(bad_gen.code, 1);
    EXPECT_EQ(bad_gen.err.rfind("tessel: error: unknown generator 'nosuch'; known generators: ", 0), 0u) << bad_gen.err;
    Result bad_p = tessel_cli("compile -g gemm -p M=64,N");
    EXPECT_EQ(bad_p.code, 1);
    EXPECT_EQ(bad_p.err, "tessel: error: bad parameter 'N' in 'M=64,N': expected NAME=VALUE[,NAME=VALUE...]\n");
    Result bad_emit = tessel_cli("compile -g gemm --emit asmx");
    EXPECT_EQ(bad_emit.code, 1);
    EXPECT_EQ(bad_emit.err, "tessel: error: --emit: unknown output 'asmx'; known: stmt, loopnest, cpp, json, npuir, asm, bin, tiling, lifetimes\n");
    Result bad_level = tessel_cli("compile -g gemm --schedule " + schedule("tiled_staged") + " --arch gemmini-like");
    EXPECT_EQ(bad_level.code, 1);
    EXPECT_NE(bad_level.err.find("tessel: error: directive stage_A (#4, stage(A, L1)): level 'L1' does not exist in gemmini-like"),
              std::string::npos)
        << bad_level.err;
}

TEST(CliErrors, UnwritableOutputsExitOneWithThePath) {
    // A raw filesystem exception used to end the program (exit 3); writes to a full
    // disk were ignored (exit 0, nothing written).
    Result bad_dir = tessel_cli("compile -g gemm -p M=64,N=64,K=64 --emit json -o /etc/passwd/x");
    EXPECT_EQ(bad_dir.code, 1);
    // (after the compiler's warnings that C and acc run as scalar code)
    EXPECT_NE(bad_dir.err.find("\ntessel: error: cannot create the output folder '/etc/passwd/x': Not a directory"),
              std::string::npos)
        << bad_dir.err;
    Result full = tessel_cli("compile -g gemm -p M=64,N=64,K=64 --emit json > /dev/full");
    EXPECT_EQ(full.code, 1);
    std::string last = "\ntessel: error: cannot write the output to standard output: No space left on device\n";
    ASSERT_GE(full.err.size(), last.size());
    EXPECT_EQ(full.err.substr(full.err.size() - last.size()), last) << full.err;
    Result listing = tessel_cli("isa > /dev/full");
    EXPECT_EQ(listing.code, 1) << listing.err;
    EXPECT_EQ(listing.err, "tessel: error: cannot write the output to standard output: No space left on device\n");
}

TEST(CliErrors, HostileScheduleFilesExitOneWithTheMessage) {
    std::string dir = testing::TempDir() + "tessel_cli_hostile_" + std::to_string(::getpid());
    std::string mk = "mkdir -p " + dir;
    ASSERT_EQ(std::system(mk.c_str()), 0);
    auto write = [&](const std::string &name, const std::string &text) {
        std::string p = dir + "/" + name;
        FILE *f = std::fopen(p.c_str(), "wb");
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
        return p;
    };
    int n = 80000;
    std::string deep = write("deep.json", "{\"version\":1,\"directives\":[" + std::string(n, '[') + std::string(n, ']') + "]}");
    Result r = tessel_cli("compile -g gemm -p M=64,N=64,K=64 --schedule " + deep);
    EXPECT_EQ(r.code, 1); // was 139 (SIGSEGV)
    EXPECT_EQ(r.err, "tessel: error: " + deep + ":1:90: arrays and objects nested deeper than 64 levels (no Tessel "
                     "file nests more than a few)\n");
    std::string vec = write("vec.json", R"({"version": 1, "directives": [{"id": "v", "kind": "vectorize", "func": "C", "var": "j", "factor": 65536}]})");
    r = tessel_cli("compile -g gemm -p M=64,N=64,K=64 --schedule " + vec);
    EXPECT_EQ(r.code, 1); // was SIGFPE
    EXPECT_NE(r.err.find("vectorize factor 65536 is too large"), std::string::npos) << r.err;
    std::string dev = tessel_cli("compile -g gemm -p M=64,N=64,K=64 --schedule /dev/zero").err;
    EXPECT_EQ(dev, "tessel: error: cannot read schedule file '/dev/zero': larger than 64 MiB, the limit for schedule files\n");
}

TEST(CliErrors, BadUsageExitsTwo) {
    EXPECT_EQ(tessel_cli("compile").code, 2); // -g is required
    EXPECT_EQ(tessel_cli("run -g gemm --seed notanumber").code, 2);
}

TEST(Cli, HelpOnEachCommand) {
    for (const char *cmd : {"compile", "run"}) {
        Result r = tessel_cli(std::string(cmd) + " --help");
        EXPECT_EQ(r.code, 0) << cmd;
        EXPECT_NE(r.out.find("--schedule"), std::string::npos) << cmd << ": " << r.out;
        EXPECT_NE(r.out.find("--arch"), std::string::npos) << cmd;
    }
}

// What a new user runs first works on every preset: the hand schedule on ascend-like, the
// automatic scheduler's elsewhere (gemmini-like and auto-int8 used to fail with "level 'L1'
// does not exist"), int8 where the matrix unit has no fp16.
TEST(Cli, DemoRunsOnEveryPreset) {
    for (const char *arch : {"ascend-like", "gemmini-like", "auto-int8"}) {
        Result r = tessel_cli(std::string("demo --arch ") + arch);
        EXPECT_EQ(r.code, 0) << arch << ": " << r.out << r.err;
        EXPECT_NE(r.out.find("check: PASS"), std::string::npos) << arch << ": " << r.out;
        EXPECT_NE(r.out.find(std::string(arch) == "ascend-like" ? "schedule: the hand schedule"
                                                                 : "schedule: --schedule auto: matrix form"),
                  std::string::npos)
            << arch << ": " << r.out;
    }
    EXPECT_NE(tessel_cli("demo --arch gemmini-like").out.find("dtype=int8"), std::string::npos);
}

// --schedule auto on the command line: what it decided on stderr, the schedule with --emit json,
// and a run without a schedule says it is scalar code and points at auto.
TEST(Cli, ScheduleAutoPrintsItsDecisionsAndTheSchedule) {
    Result r = tessel_cli("compile -g gemm -p M=128,N=128,K=128,dtype=int8 --arch gemmini-like --schedule auto --emit json");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("tessel: auto: matrix form: acc = A x B (int8, 128x128x128)"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("\"kind\": \"tensorize\""), std::string::npos) << r.out;
    r = tessel_cli("run -g elementwise -p N=1024");
    EXPECT_NE(r.err.find("tessel: note: no --schedule: elementwise runs with Halide's default placement"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("--schedule auto"), std::string::npos) << r.err;
}
