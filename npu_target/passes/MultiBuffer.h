#ifndef TESSEL_NPU_TARGET_PASSES_MULTIBUFFER_H
#define TESSEL_NPU_TARGET_PASSES_MULTIBUFFER_H

// buffers=N: a staged buffer allocated inside a loop gets N copies laid out
// back to back, and iteration t of that loop uses copy (t - min) mod N. Every
// access to the buffer inside its allocation (DMA, vector, matrix and scalar)
// is offset by that copy, so the DMA filling the copy for iteration t+1 touches
// different bytes than the compute reading the copy of iteration t: the sync
// pass then orders only accesses to the same copy, and the two overlap.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule multi_buffer(const nir::NpuModule &m);

} // namespace tessel

#endif
