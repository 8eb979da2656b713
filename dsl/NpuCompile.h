#ifndef TESSEL_DSL_NPUCOMPILE_H
#define TESSEL_DSL_NPUCOMPILE_H

// The NPU half of a compile (internal to dsl/ and the tests; includes Halide.h):
// a scheduled, lowered pipeline -> the backend's passes -> an NPU program, and
// running that program on the simulator with given inputs.

#include "dsl/Lowering.h"
#include "npu_target/passes/PassRunner.h"
#include "npu_target/sim/Simulator.h"

namespace tessel {

struct NpuBuild {
    LoweredPipeline lowered;
    LowerInput input;     // kernel args (inputs then outputs), the NPU schedule
    BackendResult backend;
};

/** Applies `spec`, lowers, and runs the backend for `arch` (which must outlive the result). */
NpuBuild build_npu(HalidePipeline &p, const ScheduleSpec &spec, const ArchSpec &arch, const PassOptions &opt = {});

struct NpuRunResult {
    std::vector<Tensor> outputs;
    sim::SimReport report;
};

/** Runs the program on `arch` with `inputs` (matched by name); outputs start poisoned. */
NpuRunResult run_npu_program(const NpuBuild &b, const ArchSpec &arch, const std::vector<Tensor> &inputs,
                             const sim::SimOptions &opt = {});

} // namespace tessel

#endif
