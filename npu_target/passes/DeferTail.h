#ifndef TESSEL_NPU_TARGET_PASSES_DEFERTAIL_H
#define TESSEL_NPU_TARGET_PASSES_DEFERTAIL_H

// defer_tail (optional): a serial loop whose body ends in vector work that
// waits for another pipe's result of the same iteration (attention's state
// update after the block's output product: probabilities UB -> L1 -> L0A,
// MMAD, L0C -> UB) runs that tail one iteration later. Iteration t executes
// the tail of iteration t - 1 right before the first write by another pipe
// of a buffer the tail reads, so in the vector unit's in-order queue the tail
// of t - 1 follows the vector work of iteration t that precedes that write,
// and the other pipes' chain of iteration t runs meanwhile; the tail of the
// last iteration runs after the loop.
//
// The values the tail reads stay those of its own iteration:
//   - a buffer first written (in the body) after the insertion point keeps
//     its contents across iterations: its allocation moves out of the loop;
//   - a buffer written (by the vector unit only) before the insertion point is
//     copied at the end of each iteration into a new buffer `<name>.prev`
//     (VMOV) allocated outside the loop, and the deferred tail reads the copy.
// The group also takes, transitively, the single DMAs and MMADs of other pipes
// whose outputs only the group reads and whose inputs the vector unit does
// not write in the body (attention's output product: the probabilities
// L1 -> L0A, the V block GM -> L1 -> L0B, the MMAD, the copy L0C -> UB), so in
// the in-order queues of MTE1 and the matrix unit block t - 1's product follows
// block t's score product; when that does not qualify (a multi-buffered
// operand), only the DMAs writing what the tail reads join.
// Runs before allocate_buffers and insert_sync, so placement and every
// cross-pipe ordering are derived from the transformed program. A loop is left
// alone when anything else in its body touches what the tail writes, a
// buffer the tail reads is written both before and after the insertion point,
// the tail has scalar operands or the write by another pipe is inside a loop.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule defer_tail(const nir::NpuModule &m);

} // namespace tessel

#endif
