#ifndef TESSEL_TESTS_BACKEND_NPUHARNESS_H
#define TESSEL_TESTS_BACKEND_NPUHARNESS_H

// Differential testing of the NPU backend: the same generator and params run
// (1) unscheduled on the CPU through Halide's JIT (the reference) and (2) with a
// schedule through lower_pipeline -> run_backend -> simulate, on the same fresh
// random inputs, with the NPU outputs poisoned before the run.

#include "dsl/GeneratorInfo.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/common/Tensor.h"
#include "npu_target/passes/PassRunner.h"
#include "npu_target/sim/Simulator.h"

#include <string>

namespace tessel::test {

struct NpuRun {
    Comparison cmp;
    sim::SimReport report;
    BackendResult backend;
    uint64_t seed = 0;
};

NpuRun run_npu(const std::string &generator, const ParamMap &params, const ScheduleSpec &schedule,
               const std::string &arch, uint64_t seed, double atol = 0, double rtol = 0, PassOptions opt = {});

/** "seed N: <comparison>" and the backend's diagnostics, for a failing test's message. */
std::string failure(const NpuRun &r);

/** A fresh seed from std::random_device (printed by failing tests). */
uint64_t fresh_seed();

/** A hand schedule of the samples, by its path under samples/ ("gemm/schedules/x.json"). */
ScheduleSpec sample_schedule(const std::string &path_under_samples);

/** One sample schedule run with an optimisation pass and with it skipped, same seed, on `arch`. */
struct PassPair {
    NpuRun with, without;
};
PassPair run_with_and_without(const std::string &pass, const std::string &generator, const ParamMap &params,
                              const std::string &schedule_under_samples, double tol,
                              const std::string &arch = "ascend-like");

/** The NPU module of a sample schedule on ascend-like as it is after `pass`
 * (for tests that edit it and run check_hazards on it). */
nir::NpuModule module_after(const std::string &pass, const std::string &generator, const ParamMap &params,
                            const std::string &schedule_under_samples);

} // namespace tessel::test

#endif
