#ifndef TESSEL_NPU_TARGET_LOWER_INFERDMA_H
#define TESSEL_NPU_TARGET_LOWER_INFERDMA_H

// Replaces every producer that is a pure copy between two placed buffers
// (DmaInference.h) by one tessel.dma on the engine that owns the src->dst
// edge, splitting dimensions the engine's descriptor cannot hold into scalar
// loops. A copy with no engine for its edge stays scalar code, with the reason
// kept for the scalar-fallback warning.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule infer_dma(const nir::NpuModule &m);

} // namespace tessel

#endif
