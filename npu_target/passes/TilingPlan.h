#ifndef TESSEL_NPU_TARGET_PASSES_TILINGPLAN_H
#define TESSEL_NPU_TARGET_PASSES_TILINGPLAN_H

// Reads the tiling out of an NPU module (an analysis, not a pass): every
// on-chip allocation with its shape, level, copies and the loops around it.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

TilingPlan tiling_plan(const nir::NpuModule &m);

} // namespace tessel

#endif
