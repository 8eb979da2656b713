#ifndef TESSEL_TESTS_DATABASE_DBTESTUTIL_H
#define TESSEL_TESTS_DATABASE_DBTESTUTIL_H

// Helpers shared by the database tests: a fresh temporary directory per test
// and a RunRecord builder with realistic fields.

#include "database/ScheduleStore.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace tessel::db::test {

inline std::filesystem::path fresh_dir(const std::string &name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("tessel_db_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

inline std::string read_bytes(const std::filesystem::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

inline const char *kArchA = R"({"name":"ascend-like","clock_hz":1000000000,"memories":[{"name":"GM"}]})";
inline const char *kArchB = R"({"name":"gemmini-like","clock_hz":500000000,"memories":[{"name":"DRAM"}]})";

/** A run of `schedule_tile` (the schedule differs by its tile size). */
inline RunRecord make_run(int schedule_tile, int64_t cycles, bool verified = true, const char *arch = kArchA,
                          const std::string &params = R"({"K":"256","M":"256","N":"256","dtype":"fp16"})") {
    RunRecord r;
    r.generator = "gemm";
    r.algorithm_hash = "a1g0";
    r.params_json = params;
    r.arch_name = std::string(arch).find("gemmini") != std::string::npos ? "gemmini-like" : "ascend-like";
    r.arch_json = arch;
    r.schedule_json = R"({"version":1,"directives":[{"op":"tile","func":"C","size":)" +
                      std::to_string(schedule_tile) + "}]}";
    r.origin = "tuner";
    r.result.predicted_cycles = cycles - 10;
    r.result.simulated_cycles = cycles;
    r.result.t_phys_cycles = cycles / 2;
    r.result.efficiency = 0.5;
    r.result.verified = verified;
    r.result.max_error = 0.0;
    r.result.compile_ms = 12.5;
    r.result.tool_version = "0.1.0";
    return r;
}

} // namespace tessel::db::test

#endif
