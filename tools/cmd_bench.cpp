// tessel bench: the performance table of docs/BENCHMARKS.md from one command.
// Each case compiles a sample with its hand schedule for a preset, simulates,
// verifies against Halide's CPU result and reports the physical limit, the
// simulated cycles, the efficiency and the binding resource.
#include "tools/Commands.h"

#include "dsl/Compile.h"
#include "npu_target/common/Error.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#ifndef TESSEL_SOURCE_DIR
#define TESSEL_SOURCE_DIR "."
#endif

namespace tessel::cli {

namespace {

struct BenchCase {
    std::string op;       // what the table calls it
    std::string generator;
    ParamMap params;
    std::string shape;
    std::string arch;
    std::string schedule; // relative to the samples directory
    bool quick;           // part of --quick
};

const std::vector<BenchCase> &cases() {
    static const std::vector<BenchCase> c = {
        {"GEMM", "gemm", {{"M", "1024"}, {"N", "1024"}, {"K", "1024"}, {"dtype", "fp16"}}, "1024x1024x1024",
         "ascend-like", "gemm/schedules/ascend_panel.json", false},
        {"GEMM", "gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}, {"dtype", "fp16"}}, "256x256x256", "ascend-like",
         "gemm/schedules/tiled_staged.json", true},
        {"GEMM", "gemm", {{"M", "512"}, {"N", "512"}, {"K", "512"}, {"dtype", "int8"}}, "512x512x512", "gemmini-like",
         "gemm/schedules/gemmini_int8.json", false},
        {"elementwise add", "elementwise", {{"N", "4194304"}, {"dtype", "fp16"}, {"op", "add"}}, "4M", "ascend-like",
         "elementwise/schedules/add_staged.json", false},
        {"elementwise add", "elementwise", {{"N", "262144"}, {"dtype", "fp16"}, {"op", "add"}}, "256K", "ascend-like",
         "elementwise/schedules/add_staged.json", true},
        {"elementwise chain", "elementwise", {{"N", "262144"}, {"dtype", "fp16"}, {"op", "chain"}}, "256K",
         "ascend-like", "elementwise/schedules/chain_staged.json", true},
    };
    return c;
}

struct BenchOptions {
    std::string samples = std::string(TESSEL_SOURCE_DIR) + "/samples";
    bool quick = false;
    uint64_t seed = 1;
};

} // namespace

Command add_bench_command(CLI::App &root, GlobalOptions &) {
    auto o = std::make_shared<BenchOptions>();
    Command c;
    c.app = root.add_subcommand("bench", "Compile, simulate and verify the sample kernels; print the efficiency table");
    c.app->add_option("--samples", o->samples, "the samples directory (schedules are read from it)")->capture_default_str();
    c.app->add_flag("--quick", o->quick, "only the small cases");
    c.app->add_option("--seed", o->seed, "random seed for the inputs")->capture_default_str();
    c.run = [o] {
        std::printf("| op | dtype | shape | preset | t_phys_cycles | cycles | efficiency | binding resource | verified | "
                    "compile ms |\n|---|---|---|---|---|---|---|---|---|---|\n");
        bool all_ok = true;
        for (const BenchCase &b : cases()) {
            if (o->quick && !b.quick) {
                continue;
            }
            CompileRequest req;
            req.generator = b.generator;
            req.params = b.params;
            req.arch = b.arch;
            req.schedule = load_schedule(o->samples + "/" + b.schedule);
            RunReport r = run(req, o->seed);
            for (const auto &d : r.diagnostics) {
                if (d.severity == Diagnostic::Error) {
                    std::cerr << "tessel bench: " << b.op << " " << b.shape << " on " << b.arch << ": " << d.message << "\n";
                }
            }
            all_ok = all_ok && r.verified;
            std::printf("| %s | %s | %s | %s | %lld | %lld | %.3f | %s | %s | %.1f |\n", b.op.c_str(),
                        b.params.at("dtype").c_str(), b.shape.c_str(), b.arch.c_str(),
                        static_cast<long long>(r.t_phys_cycles.value_or(0)), static_cast<long long>(r.cycles.value_or(0)),
                        r.efficiency.value_or(0), r.binding_resource.value_or("-").c_str(), r.verified ? "yes" : "NO",
                        r.compile_ms);
            std::fflush(stdout);
        }
        return all_ok ? 0 : 1;
    };
    return c;
}

} // namespace tessel::cli
