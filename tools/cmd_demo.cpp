// tessel demo: Tessel's main job on its built-in defaults (what `make demo` runs):
//  1. the GEMM sample through Halide on the host CPU, checked against a plain C++
//     reference;
//  2. the same GEMM compiled for the NPU (on ascend-like with a built-in hand
//     schedule (A and B staged GM -> L1 -> L0A/L0B double-buffered, the
//     accumulator in L0C double-buffered, the k-chunk product on the matrix
//     unit; on any other arch with the automatic scheduler's schedule),
//     simulated, verified against Halide's CPU result, and reported: cycles, the
//     physical limit, the efficiency and the binding resource.
#include "tools/Commands.h"

#include "dsl/Compile.h"
#include "dsl/HalidePipeline.h"
#include "npu_target/arch/ArchSpec.h"
#include "scheduler/AutoSchedule.h"
#include "samples/gemm/GemmReference.h"
#include "samples/gemm/GemmSchedules.h"

#include <chrono>
#include <iostream>

namespace tessel::cli {

namespace {
struct DemoOptions {
    std::string params = "M=256,N=256,K=256,dtype=fp16";
    std::string arch = "ascend-like";
    uint64_t seed = 1;
};

} // namespace

Command add_demo_command(CLI::App &root, GlobalOptions &) {
    auto opts = std::make_shared<DemoOptions>();
    Command c;
    c.app = root.add_subcommand("demo", "GEMM on the CPU vs a C++ reference, then compiled for the NPU, simulated, "
                                        "verified and reported");
    auto *popt = c.app->add_option("-p,--params", opts->params, "GEMM parameters K=V,...")->capture_default_str();
    c.app->add_option("--arch", opts->arch,
                      "NPU preset or arch file (ascend-like: the hand schedule; any other: --schedule auto)")
        ->capture_default_str();
    c.app->add_option("--seed", opts->seed, "random seed for the inputs")->capture_default_str();
    c.run = [opts, popt] {
        const bool params_given = popt->count() > 0;
        GeneratorInfo info = find_generator("gemm");
        ParamMap given = parse_params(opts->params);
        // A matrix unit without fp16 (gemmini-like) gets the demo in int8, unless -p says otherwise.
        if (!params_given && !load_arch(opts->arch).matrix.shapes.count(DType::FP16)) {
            given["dtype"] = "int8";
        }
        ParamMap params = resolve_params(info, given);
        std::cout << "Tessel demo: generator gemm (" << format_params(params) << ")\n";

        std::cout << "1. Halide on the host CPU against a plain C++ reference\n";
        auto t0 = std::chrono::steady_clock::now();
        HalidePipeline p = build_halide_pipeline("gemm", params);
        std::vector<Tensor> inputs = make_random_inputs(p, opts->seed);
        std::vector<Tensor> outs = run_on_cpu(p, inputs);
        auto t1 = std::chrono::steady_clock::now();
        Tensor ref = gemm_reference(inputs[0], inputs[1], outs[0].dtype);
        double tol = dtype_is_float(outs[0].dtype) ? 1e-4 : 0;
        Comparison cmp = compare(outs[0], ref, tol, tol);
        for (const auto &t : inputs) {
            std::cout << "   input  " << t.describe() << " (random, seed " << opts->seed << ")\n";
        }
        std::cout << "   output " << outs[0].describe() << "\n";
        std::cout << "   Halide CPU (JIT compile + run): " << std::chrono::duration<double, std::milli>(t1 - t0).count()
                  << " ms\n";
        std::cout << "   check against the C++ reference: " << (cmp.mismatches == 0 ? "PASS" : "FAIL") << " ("
                  << cmp.message << ")\n";

        std::cout << "2. NPU (" << opts->arch << "): compile -> simulate -> verify against Halide's CPU result\n";
        CompileRequest req;
        req.generator = "gemm";
        req.params = params;
        req.arch = opts->arch;
        if (opts->arch == "ascend-like") {
            req.schedule = gemm_ascend_tensorized(128, 128, 64); // = samples/gemm/schedules/tiled_staged.json
            std::cout << "   schedule: the hand schedule samples/gemm/schedules/tiled_staged.json\n";
        } else {
            // Any other arch: the automatic scheduler derives the schedule from the arch (docs/autoschedule.md).
            AutoSchedule as = auto_schedule_for("gemm", params, opts->arch);
            for (const auto &n : as.notes) {
                std::cout << "   schedule: --schedule auto: " << n << "\n";
            }
            for (const auto &w : as.warnings) {
                std::cout << "   warning: auto: " << w << "\n";
            }
            req.schedule = as.spec;
        }
        RunReport rep = run(req, opts->seed);
        bool error = false;
        for (const auto &d : rep.diagnostics) {
            std::cout << "   " << severity_name(d.severity) << ": " << d.message << "\n";
            error = error || d.severity == Diagnostic::Error;
        }
        if (!error) {
            std::cout << "   schedule " << rep.schedule_hash << ", compile " << rep.compile_ms << " ms\n"
                      << "   check: " << (rep.verified ? "PASS" : "FAIL") << " (" << rep.comparison << ")\n"
                      << "   cycles: " << rep.cycles.value_or(0) << "   physical limit: " << rep.t_phys_cycles.value_or(0)
                      << " cycles (bound by " << rep.binding_resource.value_or("-") << ")   efficiency: "
                      << rep.efficiency.value_or(0) << "\n   pipes busy:";
            for (const auto &kv : rep.pipes) {
                std::cout << " " << kv.first << " " << static_cast<int>(kv.second + 0.5) << "%";
            }
            std::cout << "\n";
        }
        return cmp.mismatches == 0 && rep.verified && !error ? 0 : 1;
    };
    return c;
}

} // namespace tessel::cli
