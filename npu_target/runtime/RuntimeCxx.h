#ifndef TESSEL_NPU_TARGET_RUNTIME_RUNTIMECXX_H
#define TESSEL_NPU_TARGET_RUNTIME_RUNTIMECXX_H

// C++ side of the runtime: load an in-memory isa::Program without going
// through the binary format (the compiler and tests use it).

#include "npu_target/isa/Program.h"
#include "npu_target/runtime/tessel_runtime.h"
#include "npu_target/sim/Simulator.h"

namespace tessel::runtime {

/** Like tessel_program_load, from a Program value. Returns a tessel_status. */
int program_from_isa(tessel_device *dev, const isa::Program &p, tessel_program **out);
/** The full report of the device's last launch (nullptr before the first). */
const sim::SimReport *last_report(const tessel_device *dev);
/** Simulation options used by tessel_launch (trace on by default). */
void set_sim_options(tessel_device *dev, const sim::SimOptions &opt);

} // namespace tessel::runtime

#endif
