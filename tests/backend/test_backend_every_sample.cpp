// Every sample generator, on every preset, for each element type it takes:
// compiled unscheduled (the scalar fallback every preset supports), simulated
// and compared with Halide's CPU result on fresh random inputs, the NPU
// outputs poisoned first. The generators come from the registry, so a new
// sample without small parameters here fails this test instead of going
// unchecked. The hand schedules per preset are checked at their own sizes in
// test_backend_sample_schedules.cpp and the bench.
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

using namespace tessel;
using namespace tessel::test;

namespace {

struct Variant {
    ParamMap params;
    double tol; // absolute and relative tolerance; 0 = bit-exact
};

// Small shapes, one per element type the generator takes (fp16 results
// within 1e-3, fp32 within 1e-4, integers exact).
const std::map<std::string, std::vector<Variant>> &variants() {
    static const std::map<std::string, std::vector<Variant>> v = {
        // Unscheduled, Halide inlines the online-softmax state into every output:
        // the work grows steeply with L, hence the tiny head.
        {"attention", {{{{"S", "2"}, {"L", "16"}, {"D", "4"}, {"BK", "8"}}, 1e-3}}},
        {"blur",
         {{{{"W", "16"}, {"H", "8"}, {"dtype", "uint8"}}, 0},
          {{{"W", "16"}, {"H", "8"}, {"dtype", "fp16"}}, 1e-3},
          {{{"W", "16"}, {"H", "8"}, {"dtype", "fp32"}}, 1e-4}}},
        {"conv2d",
         {{{{"H", "4"}, {"W", "4"}, {"CI", "8"}, {"CO", "8"}, {"K", "3"}, {"dtype", "int8"}}, 0},
          {{{"H", "3"}, {"W", "3"}, {"CI", "8"}, {"CO", "8"}, {"K", "1"}, {"stride", "2"}, {"dtype", "fp16"}}, 1e-4}}},
        {"conv2d_q8",
         {{{{"H", "4"}, {"W", "4"}, {"CI", "8"}, {"CO", "8"}, {"K", "3"}}, 0},
          {{{"H", "3"}, {"W", "3"}, {"CI", "8"}, {"CO", "8"}, {"K", "1"}, {"stride", "2"}, {"relu", "0"}}, 0}}},
        {"depthwise",
         {{{{"H", "4"}, {"W", "4"}, {"C", "8"}, {"dtype", "int8"}}, 0},
          {{{"H", "4"}, {"W", "4"}, {"C", "8"}, {"stride", "2"}, {"dtype", "fp16"}}, 1e-4}}},
        {"elementwise",
         {{{{"N", "256"}, {"dtype", "fp16"}, {"op", "chain"}}, 1e-3},
          {{{"N", "256"}, {"dtype", "fp32"}, {"op", "add"}}, 1e-4}}},
        {"gemm",
         {{{{"M", "8"}, {"N", "8"}, {"K", "8"}, {"dtype", "int8"}}, 0},
          {{{"M", "8"}, {"N", "8"}, {"K", "8"}, {"dtype", "fp16"}}, 1e-4}}},
        {"gemm_q8", {{{{"M", "8"}, {"N", "8"}, {"K", "16"}, {"shift", "7"}}, 0}}},
        {"layernorm", {{{{"ROWS", "4"}, {"COLS", "16"}, {"dtype", "fp16"}}, 1e-3}}},
        {"pooling",
         {{{{"H", "4"}, {"W", "4"}, {"C", "8"}, {"op", "max"}, {"dtype", "int8"}}, 0},
          {{{"H", "4"}, {"W", "4"}, {"C", "8"}, {"op", "avg"}, {"dtype", "fp16"}}, 1e-3}}},
        {"softmax", {{{{"ROWS", "4"}, {"COLS", "16"}, {"dtype", "fp16"}}, 1e-3}}},
    };
    return v;
}

} // namespace

TEST(EverySample, VerifiesUnscheduledOnEveryPreset) {
    int runs = 0;
    for (const auto &g : list_generators()) {
        auto it = variants().find(g.name);
        if (it == variants().end()) {
            ADD_FAILURE() << "sample generator '" << g.name << "' has no small parameters in this test";
            continue;
        }
        for (const char *arch : {"ascend-like", "gemmini-like", "auto-int8"}) {
            for (const auto &v : it->second) {
                SCOPED_TRACE(g.name + " on " + arch);
                NpuRun r = run_npu(g.name, v.params, ScheduleSpec{}, arch, fresh_seed(), v.tol, v.tol);
                EXPECT_EQ(r.cmp.mismatches, 0) << g.name << " on " << arch << ": " << failure(r);
                EXPECT_TRUE(r.cmp.equal_shape) << g.name << " on " << arch << ": " << failure(r);
                runs++;
            }
        }
    }
    // Every entry here names a registered sample (none left over from a rename).
    size_t registered = 0;
    for (const auto &[name, vs] : variants()) {
        bool found = false;
        for (const auto &g : list_generators()) {
            found |= g.name == name;
        }
        EXPECT_TRUE(found) << "'" << name << "' is not a registered generator";
        registered += found ? vs.size() : 0;
    }
    EXPECT_EQ(runs, static_cast<int>(3 * registered));
    EXPECT_GE(runs, 3 * 11);
}
