// `tessel tune` from the command line: a short run prints the progress and the
// report, writes the best schedule, records in the database and resumes; user
// errors name what is wrong and exit 1.
#include "database/ScheduleStore.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

struct CliResult {
    int code = -1;
    std::string out; // stdout and stderr
};

CliResult run_tessel(const std::string &args) {
    CliResult r;
    FILE *p = popen((std::string(TESSEL_BIN) + " " + args + " 2>&1").c_str(), "r");
    if (!p) {
        return r;
    }
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) {
        r.out.append(buf.data(), n);
    }
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string tmp(const std::string &name) { return "/tmp/tessel_tune_cli_" + std::to_string(getpid()) + "_" + name; }

} // namespace

TEST(TuneCli, ShortRunReportsWritesAndResumes) {
    const std::string db = tmp("t.db"), out = tmp("best.json");
    const std::string cmd = "tune -g gemm -p M=32,N=32,K=32,dtype=int8 --arch gemmini-like --max 3 --jobs 1 --db " + db +
                            " --out " + out;
    CliResult a = run_tessel(cmd);
    ASSERT_EQ(a.code, 0) << a.out;
    EXPECT_NE(a.out.find("measured 3 ("), std::string::npos) << a.out;
    EXPECT_NE(a.out.find("best: matrix"), std::string::npos) << a.out;
    EXPECT_NE(a.out.find("hand schedule:"), std::string::npos) << a.out;
    EXPECT_NE(a.out.find("\"kind\": \"tensorize\""), std::string::npos) << a.out;
    std::ifstream f(out);
    std::stringstream json;
    json << f.rdbuf();
    EXPECT_NE(json.str().find("\"directives\""), std::string::npos);
    EXPECT_NE(a.out.find(json.str()), std::string::npos) << "--out holds the printed best schedule";

    CliResult b = run_tessel(cmd);
    ASSERT_EQ(b.code, 0) << b.out;
    EXPECT_NE(b.out.find("3 results loaded from the database"), std::string::npos) << b.out;
    auto store = tessel::db::ScheduleStore::open(db);
    EXPECT_EQ(store.results().size(), 6u) << "six different schedules measured over the two runs";
    std::remove(db.c_str());
    std::remove(out.c_str());
}

TEST(TuneCli, UserErrorsNameTheProblem) {
    CliResult g = run_tessel("tune -g layernorm --no-db --max 1");
    EXPECT_EQ(g.code, 1);
    EXPECT_NE(g.out.find("tune: the search space covers the generators gemm, elementwise, conv2d and softmax, not "
                         "'layernorm'"),
              std::string::npos)
        << g.out;
    CliResult b = run_tessel("tune -g gemm --budget 5x --no-db");
    EXPECT_EQ(b.code, 1);
    EXPECT_NE(b.out.find("--budget 5x: unknown unit 'x' (use s, m or h)"), std::string::npos) << b.out;
    CliResult p = run_tessel("tune -g gemm -p M=0 --no-db --max 1");
    EXPECT_EQ(p.code, 1);
    EXPECT_NE(p.out.find("M=0 is not a positive integer"), std::string::npos) << p.out;
    CliResult o = run_tessel("tune -g gemm --objective speed --no-db");
    EXPECT_EQ(o.code, 2) << "bad usage";
}
