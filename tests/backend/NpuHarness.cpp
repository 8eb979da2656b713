#include "tests/backend/NpuHarness.h"

#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "npu_target/arch/ArchSpec.h"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace tessel::test {

std::string failure(const NpuRun &r) {
    std::string s = "seed " + std::to_string(r.seed) + ": " + r.cmp.message;
    for (const auto &d : r.backend.diagnostics) {
        s += "\n  " + d.message;
    }
    return s;
}

#ifndef TESSEL_SOURCE_DIR
#define TESSEL_SOURCE_DIR "."
#endif

ScheduleSpec sample_schedule(const std::string &path_under_samples) {
    return load_schedule(std::string(TESSEL_SOURCE_DIR) + "/samples/" + path_under_samples);
}

uint64_t fresh_seed() {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) | rd();
}

NpuRun run_npu(const std::string &generator, const ParamMap &given, const ScheduleSpec &schedule,
               const std::string &arch_name, uint64_t seed, double atol, double rtol, PassOptions opt) {
    NpuRun r;
    r.seed = seed;
    ArchSpec arch = load_arch(arch_name);
    ParamMap params = resolve_params(find_generator(generator), given);

    HalidePipeline ref = build_reference_pipeline(generator, params);
    std::vector<Tensor> inputs = make_random_inputs(ref, seed);
    std::vector<Tensor> want = run_on_cpu(ref, inputs);

    HalidePipeline p = build_halide_pipeline(generator, params);
    if (const char *d = std::getenv("TESSEL_DUMP_AFTER")) {
        opt.dump_after = d;
    }
    NpuBuild b = build_npu(p, schedule, arch, opt);
    for (const auto &[pass, text] : b.backend.dumps) {
        std::fprintf(stderr, "=== after %s ===\n%s\n", pass.c_str(), text.c_str());
    }
    NpuRunResult out = run_npu_program(b, arch, inputs);
    r.backend = std::move(b.backend);
    r.report = std::move(out.report);
    r.cmp = compare(out.outputs[0], want[0], atol, rtol);
    return r;
}

PassPair run_with_and_without(const std::string &pass, const std::string &generator, const ParamMap &params,
                              const std::string &schedule_under_samples, double tol, const std::string &arch) {
    const uint64_t seed = fresh_seed();
    ScheduleSpec spec = sample_schedule(schedule_under_samples);
    PassOptions skip;
    skip.skip = {pass};
    return {run_npu(generator, params, spec, arch, seed, tol, tol),
            run_npu(generator, params, spec, arch, seed, tol, tol, skip)};
}

nir::NpuModule module_after(const std::string &pass, const std::string &generator, const ParamMap &params,
                            const std::string &schedule_under_samples) {
    static ArchSpec keep = load_arch("ascend-like"); // the module points at its arch
    HalidePipeline p = build_halide_pipeline(generator, resolve_params(find_generator(generator), params));
    PassOptions opt;
    opt.stop_after = pass;
    return build_npu(p, sample_schedule(schedule_under_samples), keep, opt).backend.module;
}

} // namespace tessel::test
