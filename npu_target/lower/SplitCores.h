#ifndef TESSEL_NPU_TARGET_LOWER_SPLITCORES_H
#define TESSEL_NPU_TARGET_LOWER_SPLITCORES_H

// parallel(func, loop, cores): the program runs on `cores` cores (every core
// runs the same code; COREID tells them apart) and the named loop of the Func's
// pure stage is split into contiguous chunks, core c taking iterations
// [min + c*chunk, min + min((c+1)*chunk, extent)), chunk = ceil(extent/cores).
// Every core has its own on-chip levels and pipes; GM and the L2 are shared, so
// the output regions the cores write must be disjoint, which a split of an
// output loop guarantees. The variable "tessel.core_id" stands for the core's
// index in the NPU IR; select_instructions reads it with COREID.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

constexpr const char *kCoreIdVar = "tessel.core_id";

nir::NpuModule split_cores(const nir::NpuModule &m);

} // namespace tessel

#endif
