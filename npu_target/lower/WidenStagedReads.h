#ifndef TESSEL_NPU_TARGET_LOWER_WIDENSTAGEDREADS_H
#define TESSEL_NPU_TARGET_LOWER_WIDENSTAGEDREADS_H

// Part of select_vector_ops, run before its selection: a buffer a DMA fills in
// the vector level whose every read is the same exact widening (depthwise's
// cast(fp32, in(..)) under each of the nine taps; one operand of an exact
// narrow product) is widened once after its DMA into <buffer>.wide and the
// reads load that, when they read each element at least twice and the wide
// copy fits the level with a sixteenth to spare. Adds the .wide buffers to m.

#include "npu_target/ir/NpuIR.h"

namespace tessel::detail {

Halide::Internal::Stmt widen_staged_reads(nir::NpuModule &m, const Halide::Internal::Stmt &body);

} // namespace tessel::detail

#endif
