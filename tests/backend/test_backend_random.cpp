// Randomised schedules: for GEMM and 3x3 convolution, 200 schedules each drawn
// from a generator of legal schedule choices (tilings, compute_at levels,
// reduction splits and orders, vectorisation, staging into on-chip levels with
// one or two buffers, and for GEMM the full GM -> L1 -> L0 -> matrix unit path)
// all compile for ascend-like and give the Halide CPU result, bit-exactly
// (int8 -> int32). The reference is computed once per operator; each schedule
// runs on the same fresh random inputs with its outputs poisoned.
#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "npu_target/common/Error.h"
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <sstream>

using namespace tessel;

namespace {

int pick(std::mt19937_64 &rng, std::initializer_list<int> v) {
    std::vector<int> c(v);
    return c[rng() % c.size()];
}
bool coin(std::mt19937_64 &rng) { return rng() % 2 == 0; }

ScheduleSpec random_gemm_schedule(std::mt19937_64 &rng) {
    Schedule s;
    const bool tiled = rng() % 4 != 0;
    const bool ksplit = coin(rng);
    const int tn = pick(rng, {8, 16, 48}), tm = pick(rng, {8, 16, 32}), tk = pick(rng, {8, 16});
    if (!tiled) {
        if (coin(rng)) {
            s.func("acc").compute_root();
        }
        if (coin(rng)) {
            s.func("acc").update(0).vectorize("j", pick(rng, {8, 16}));
        }
        return s.spec();
    }
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", tn, tm);
    if (coin(rng)) {
        s.func("C").vectorize("ji", tn >= 16 ? pick(rng, {8, 16}) : 8);
    }
    const std::string acc_at = coin(rng) ? "jo" : "io";
    s.func("acc").compute_at("C", acc_at);
    if (acc_at == "jo" && ksplit && rng() % 3 == 0) {
        // The matrix-unit path (tile sizes are multiples of the 16x16x16 fractal or not: both run).
        s.func("acc").update(0).split("k", "ko", "ki", tk);
        std::vector<std::string> inner = {"j", "i", "ki"};
        std::shuffle(inner.begin(), inner.end(), rng);
        inner.push_back("ko");
        s.func("acc").update(0).reorder(inner);
        const int b = pick(rng, {1, 2});
        s.stage("A", "L1").at("acc", "ko").buffers(b);
        s.stage("B", "L1").at("acc", "ko").buffers(b);
        s.stage("A", "L0A").at("acc", "ko").buffers(pick(rng, {1, 2}));
        s.stage("B", "L0B").at("acc", "ko").buffers(pick(rng, {1, 2}));
        s.func("acc").accumulate_in("L0C", pick(rng, {1, 2}));
        s.func("acc").update(0).tensorize();
        return s.spec();
    }
    std::string stage_loop = acc_at;
    std::string stage_func = "C";
    if (ksplit) {
        s.func("acc").update(0).split("k", "ko", "ki", tk);
        if (coin(rng)) {
            s.func("acc").update(0).reorder({"j", "ki", "i", "ko"});
            stage_func = "acc";
            stage_loop = "ko";
        }
    }
    if (coin(rng)) {
        s.stage("A", "UB").at(stage_func, stage_loop).buffers(pick(rng, {1, 2}));
    }
    if (coin(rng)) {
        s.stage("B", coin(rng) ? "UB" : "L1").at(stage_func, stage_loop).buffers(pick(rng, {1, 2}));
    }
    if (coin(rng)) {
        s.func("acc").vectorize("j", pick(rng, {8}));
    }
    return s.spec();
}

ScheduleSpec random_conv_schedule(std::mt19937_64 &rng) {
    Schedule s;
    const int rows = pick(rng, {1, 2, 3}), vec = pick(rng, {8, 16});
    const bool tiled = rng() % 4 != 0;
    if (!tiled) {
        if (coin(rng)) {
            s.func("acc").compute_root();
        }
        return s.spec();
    }
    s.func("output").split("y", "yo", "yi", rows);
    std::string at = "yo";
    if (coin(rng)) {
        s.func("output").split("x", "xo", "xi", pick(rng, {2, 3}));
        s.func("output").reorder({"co", "xi", "yi", "xo", "yo", "n"});
        at = coin(rng) ? "xo" : "yo";
    }
    s.func("acc").compute_at("output", at);
    if (coin(rng)) {
        s.stage("input", "UB").at("output", at).buffers(pick(rng, {1, 2}));
    }
    if (coin(rng)) {
        s.stage("weights", coin(rng) ? "UB" : "L1").at("output", at).buffers(pick(rng, {1, 2}));
    }
    if (coin(rng)) {
        s.func("acc").vectorize("co", vec);
        if (coin(rng)) {
            s.func("acc").update(0).vectorize("co", vec);
        }
    }
    if (coin(rng)) {
        std::vector<std::string> r = {"ci", "kx", "ky"};
        std::shuffle(r.begin(), r.end(), rng);
        std::vector<std::string> order = {"co", r[0], "x", r[1], r[2], "y", "n"};
        s.func("acc").update(0).reorder(order);
    }
    return s.spec();
}

void run_random(const std::string &generator, const ParamMap &given, ScheduleSpec (*draw)(std::mt19937_64 &),
                int count) {
    const uint64_t seed = test::fresh_seed();
    std::mt19937_64 rng(seed);
    ArchSpec arch = load_arch("ascend-like");
    ParamMap params = resolve_params(find_generator(generator), given);
    HalidePipeline ref = build_reference_pipeline(generator, params);
    std::vector<Tensor> inputs = make_random_inputs(ref, seed);
    std::vector<Tensor> want = run_on_cpu(ref, inputs);
    int failures = 0, mmad_schedules = 0, rejected = 0, legal = 0;
    std::string first_rejection;
    for (int attempt = 0; legal < count && attempt < 5 * count; attempt++) {
        ScheduleSpec spec = draw(rng);
        // A draw the compiler refuses with a user error (e.g. a vector wider than
        // the tile reads outside an argument) is not a legal schedule: redraw.
        HalidePipeline p = build_halide_pipeline(generator, params);
        std::unique_ptr<NpuBuild> b;
        try {
            b = std::make_unique<NpuBuild>(build_npu(p, spec, arch));
        } catch (const UserError &e) {
            rejected++;
            if (first_rejection.empty()) {
                first_rejection = e.what();
            }
            continue;
        }
        legal++;
        std::string why;
        try {
            sim::SimOptions so;
            so.trace = false; // the per-instruction trace is not needed here and costs most of the time
            NpuRunResult out = run_npu_program(*b, arch, inputs, so);
            Comparison c = compare(out.outputs[0], want[0]);
            if (c.mismatches != 0) {
                why = c.message;
            }
            for (const auto &ins : b->backend.program.code) {
                if (ins.op == isa::Op::MMAD) {
                    mmad_schedules++;
                    break;
                }
            }
        } catch (const std::exception &e) {
            why = e.what();
        }
        if (!why.empty()) {
            failures++;
            ADD_FAILURE() << generator << " schedule #" << attempt << " (seed " << seed << "):\n"
                          << schedule_to_json(spec) << "\n" << why;
        }
    }
    EXPECT_EQ(legal, count) << "too many rejected draws; first: " << first_rejection;
    EXPECT_EQ(failures, 0);
    std::cout << generator << ": " << legal << " random legal schedules (seed " << seed << "), " << mmad_schedules
              << " on the matrix unit, " << rejected << " draws refused by the compiler, " << failures << " failures\n";
}

} // namespace

TEST(RandomSchedules, Gemm200) {
    run_random("gemm", {{"M", "32"}, {"N", "48"}, {"K", "32"}, {"dtype", "int8"}}, random_gemm_schedule, 200);
}

TEST(RandomSchedules, Conv3x3_200) {
    run_random("conv2d", {{"H", "6"}, {"W", "6"}, {"CI", "8"}, {"CO", "16"}, {"K", "3"}, {"dtype", "int8"}},
               random_conv_schedule, 200);
}

// Found by the randomised test: a vector operation whose scalar operand is an
// element loaded from a multi-buffered tile must load from the current copy.
TEST(RandomSchedules, RegressionScalarOperandFromRotatingCopy) {
    Schedule s;
    s.func("output").split("y", "yo", "yi", 1);
    s.func("output").split("x", "xo", "xi", 2);
    s.func("output").reorder({"co", "xi", "yi", "xo", "yo", "n"});
    s.func("acc").compute_at("output", "xo");
    s.stage("input", "UB").at("output", "xo").buffers(2);
    s.stage("weights", "UB").at("output", "xo").buffers(2);
    s.func("acc").vectorize("co", 16);
    s.func("acc").update(0).vectorize("co", 16);
    s.func("acc").update(0).reorder({"co", "ky", "x", "kx", "ci", "y", "n"});
    test::NpuRun r = test::run_npu("conv2d", {{"H", "6"}, {"W", "6"}, {"CI", "8"}, {"CO", "16"}, {"K", "3"}, {"dtype", "int8"}},
                                   s.spec(), "ascend-like", test::fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << "seed " << r.seed << ": " << r.cmp.message;
}
