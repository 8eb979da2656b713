#ifndef TESSEL_NPU_TARGET_LOWER_HOISTADDRESSES_H
#define TESSEL_NPU_TARGET_LOWER_HOISTADDRESSES_H

// hoist_addresses (optional, the last pass before select_instructions): the
// loop-invariant part of every NPU operation's index is computed once before
// the loop instead of before every operation.
//
// select_instructions evaluates an operation's indices from the loop variables
// before each operation. In depthwise's tap loops (form=matrix) every MMAD
// recomputed its three addresses from the group, the copy index (g mod 2) and
// the taps: ~16 scalar instructions for 13 cycles of matrix work, so the scalar
// unit, not the matrix unit, set the pace once the input had arrived. This pass
// writes an index inside a loop as (the terms invariant in the loop) + (the
// rest); the invariant sum, when it costs instructions (not a constant or a
// single variable), becomes a let before the loop, and is split the same way
// against the loop around that one, so each term is computed in the outermost
// loop it depends on. Terms that read memory (scalar loads) are left in place.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule hoist_addresses(const nir::NpuModule &m);

} // namespace tessel

#endif
