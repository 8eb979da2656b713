#ifndef TESSEL_NPU_TARGET_PASSES_ALLOCATEBUFFERS_H
#define TESSEL_NPU_TARGET_PASSES_ALLOCATEBUFFERS_H

// Gives every on-chip buffer a byte offset in its level. A buffer is live for
// the scope of its Allocate; buffers whose scopes are disjoint share space
// (scoped stack allocation per level), every offset is aligned to the level's
// alignment, and a buffer with buffers=N takes N consecutive copies. When the
// live buffers of a level exceed its capacity, the error names the buffer, the
// level, the bytes needed and available, and the directive that placed it.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule allocate_buffers(const nir::NpuModule &m);

} // namespace tessel

#endif
