#ifndef TESSEL_TESTS_GRAPH_CLIRUN_H
#define TESSEL_TESTS_GRAPH_CLIRUN_H

// Running the built `tessel` (TESSEL_BIN) from a test: exit code, stdout and
// stderr, with a scratch directory per test program.

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tessel::test {

struct CliResult {
    int code = -1;
    std::string out, err;
};

inline std::string read_text(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/** A fresh directory for this test program (`prefix` + pid, under gtest's TempDir). */
inline std::string make_scratch(const std::string &prefix) {
    std::string p = testing::TempDir() + prefix + std::to_string(::getpid());
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p;
}

/** Runs `tessel ARGS` (a shell command line), its output captured in files in `scratch`. */
inline CliResult run_tessel_in(const std::string &scratch, const std::string &args) {
    const std::string out = scratch + "/stdout.txt", err = scratch + "/stderr.txt";
    int status = std::system((std::string(TESSEL_BIN) + " " + args + " >" + out + " 2>" + err).c_str());
    CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
}

} // namespace tessel::test

#endif
