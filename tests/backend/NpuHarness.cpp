#include "tests/backend/NpuHarness.h"

#include "dsl/HalidePipeline.h"
#include "dsl/Lowering.h"
#include "npu_target/arch/ArchSpec.h"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace tessel::test {

uint64_t fresh_seed() {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) | rd();
}

NpuRun run_npu(const std::string &generator, const ParamMap &given, const ScheduleSpec &schedule,
               const std::string &arch_name, uint64_t seed, double atol, double rtol) {
    NpuRun r;
    r.seed = seed;
    ArchSpec arch = load_arch(arch_name);
    ParamMap params = resolve_params(find_generator(generator), given);

    HalidePipeline ref = build_halide_pipeline(generator, params);
    std::vector<Tensor> inputs = make_random_inputs(ref, seed);
    std::vector<Tensor> want = run_on_cpu(ref, inputs);

    HalidePipeline p = build_halide_pipeline(generator, params);
    LoweredPipeline lowered = lower_pipeline(p, schedule, arch);
    LowerInput in;
    in.kernel_name = generator;
    in.arch = &arch;
    in.npu = lowered.npu;
    std::vector<Tensor> args;
    for (const auto &i : lowered.inputs) {
        in.args.push_back({i.name, i.dtype, i.shape, false});
        for (const auto &t : inputs) {
            if (t.name == i.name) {
                args.push_back(t);
            }
        }
    }
    for (const auto &o : lowered.outputs) {
        in.args.push_back({o.name, o.dtype, o.shape, true});
        args.emplace_back(o.name, o.dtype, o.shape);
        poison(args.back());
    }
    PassOptions opt;
    if (const char *d = std::getenv("TESSEL_DUMP_AFTER")) {
        opt.dump_after = d;
    }
    r.backend = run_backend(lowered.stmt, in, opt);
    for (const auto &[pass, text] : r.backend.dumps) {
        std::fprintf(stderr, "=== after %s ===\n%s\n", pass.c_str(), text.c_str());
    }
    r.report = sim::simulate(r.backend.program, arch, args);
    const Tensor &got = args[lowered.inputs.size()];
    r.cmp = compare(got, want[0], atol, rtol);
    return r;
}

} // namespace tessel::test
