#ifndef TESSEL_NPU_TARGET_LOWER_PLACEBUFFERS_H
#define TESSEL_NPU_TARGET_LOWER_PLACEBUFFERS_H

// Builds the NPU module from the specialised Stmt: one BufferInfo per kernel
// argument (in the off-chip level) and per Allocate (in the level the schedule
// gave it with stage/accumulate_in, else the vector unit's level), with the
// number of rotating copies (buffers=N). Sizes must be constant.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

/** Fills m.buffers from m.args and the Allocate nodes of m.body. */
nir::NpuModule place_buffers(const nir::NpuModule &m);

} // namespace tessel

#endif
