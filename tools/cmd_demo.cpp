// tessel demo: Tessel's main job on its built-in defaults (what `make demo` runs).
// Today: the GEMM sample through Halide on the CPU, checked against a plain C++
// reference. It grows into compile -> simulate -> verify -> report on the
// default NPU preset as the backend lands.
#include "tools/Commands.h"

#include "dsl/HalidePipeline.h"
#include "samples/gemm/GemmReference.h"

#include <chrono>
#include <iostream>

namespace tessel::cli {

namespace {
struct DemoOptions {
    std::string params = "M=256,N=256,K=256,dtype=fp16";
    uint64_t seed = 1;
};
} // namespace

Command add_demo_command(CLI::App &root, GlobalOptions &) {
    auto opts = std::make_shared<DemoOptions>();
    Command c;
    c.app = root.add_subcommand("demo", "Run the GEMM sample and check it against a plain C++ reference");
    c.app->add_option("-p,--params", opts->params, "GEMM parameters K=V,...")->capture_default_str();
    c.app->add_option("--seed", opts->seed, "random seed for the inputs")->capture_default_str();
    c.run = [opts] {
        GeneratorInfo info = find_generator("gemm");
        ParamMap params = resolve_params(info, parse_params(opts->params));
        std::cout << "Tessel demo: generator gemm (" << format_params(params) << ")\n";
        auto t0 = std::chrono::steady_clock::now();
        HalidePipeline p = build_halide_pipeline("gemm", params);
        std::vector<Tensor> inputs = make_random_inputs(p, opts->seed);
        std::vector<Tensor> outs = run_on_cpu(p, inputs);
        auto t1 = std::chrono::steady_clock::now();
        Tensor ref = gemm_reference(inputs[0], inputs[1], outs[0].dtype);
        double tol = dtype_is_float(outs[0].dtype) ? 1e-4 : 0;
        Comparison cmp = compare(outs[0], ref, tol, tol);
        for (const auto &t : inputs) {
            std::cout << "  input  " << t.describe() << " (random, seed " << opts->seed << ")\n";
        }
        std::cout << "  output " << outs[0].describe() << "\n";
        std::cout << "  Halide CPU (JIT compile + run): "
                  << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms\n";
        std::cout << "  check against the C++ reference: " << (cmp.mismatches == 0 ? "PASS" : "FAIL") << " ("
                  << cmp.message << ")\n";
        return cmp.mismatches == 0 ? 0 : 1;
    };
    return c;
}

} // namespace tessel::cli
