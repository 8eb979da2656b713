#ifndef TESSEL_NPU_TARGET_PASSES_ALLOCATEBUFFERS_H
#define TESSEL_NPU_TARGET_PASSES_ALLOCATEBUFFERS_H

// Gives every on-chip buffer a byte offset in its level. A buffer is live for
// the scope of its Allocate; buffers whose scopes are disjoint share space
// (scoped stack allocation per level), every offset is aligned to the level's
// alignment, and a buffer with buffers=N takes N consecutive copies. Two kinds
// hold their space for a whole loop instead of their Allocate's scope: a
// multi-buffered buffer for the loop its copies rotate across, and a
// single-copy buffer that a DMA reads inside a loop nest, for the outermost
// loop of the nest (a copy-out runs late on its engine; sharing its bytes with
// an earlier operation of the body would make the next iteration wait for it).
// When that does not fit, the innermost loop is tried, then the scopes alone.
// When the live buffers of a level exceed its capacity, the error names the
// buffer, the level, the bytes needed and available, and the directive that
// placed it.

#include "npu_target/ir/NpuIR.h"

#include <functional>
#include <map>
#include <string>

namespace tessel {

/** Where a buffer of `total` bytes in `level` starts, given the first aligned
 * free byte `at` and the offsets of the level's live buffers; it must return a
 * multiple of `align` >= at (e.g. bank_placement's choice). */
using StartChooser = std::function<int64_t(const std::string &name, int64_t at, int64_t total, const MemoryLevel &level,
                                           int64_t align, const std::map<std::string, int64_t> &live_offsets)>;

nir::NpuModule allocate_buffers(const nir::NpuModule &m);
/** The same allocation with each buffer's start chosen by `choose`. */
nir::NpuModule allocate_buffers(const nir::NpuModule &m, const StartChooser &choose);

} // namespace tessel

#endif
