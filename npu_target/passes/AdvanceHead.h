#ifndef TESSEL_NPU_TARGET_PASSES_ADVANCEHEAD_H
#define TESSEL_NPU_TARGET_PASSES_ADVANCEHEAD_H

// advance_head (optional): a serial loop whose body starts with operations of
// pipes other than the vector and scalar units (the *head*: attention's score
// product of a key block: K block L1 -> L0B, Q L1 -> L0A, MMAD, L0C -> UB) runs
// the head of iteration t + 1 inside iteration t, after the last operation of
// iteration t that touches what the head writes (the vector unit's last read
// of the scores: the probabilities) and after the last one on a pipe the head
// uses (so on each pipe it queues behind iteration t's work: after
// defer_tail's group, the previous block's output product); the head of the
// first iteration runs before the loop.
//
// The pipes are in-order queues and a cross-pipe ordering makes the later
// pipe wait for everything the earlier one has queued before it, so with the
// head at the top of the body the copy of block t + 1's scores into UB waits
// for all of block t's vector work (the block sum, the deferred state update),
// and the vector unit then waits for that copy. Advanced, the copy waits only
// for the probabilities, and the scores are in UB when the vector unit
// finishes block t.
//
// The head may follow a run of vector operations that touch nothing it reads
// or writes (attention's tile loop: the VDUPs that start the running state,
// then the first key block's score product, which the block loop's own
// advance put before it); that run stays at the top of the body.
//
// The prefetch form: a body that starts with loads into buffers multi-buffered
// on the loop (depthwise's input band, GM -> L1, two copies) loads the copy of
// iteration t + 1 in iteration t: each load becomes `if (t == min) load(t)`
// and, after the last, `if (t + 1 < end) load(t + 1)`, in place. The copy an
// access reaches is read from its index (copies_ahead, InsertSync.h), so the
// hazard analysis keeps the two copies apart and the writer gets N - 1 initial
// credits (insert_buffer_credits, CreditCheck). Only when the loads read
// nothing the body writes, no other operation of the body is on their pipes
// or writes their buffers, the loop has more iterations than copies or its
// rotation ends with it, and one
// iteration gives another pipe a full queue (counting a flag per operation)
// of operations (the scalar unit would stall there before the next load).
//
// A loop qualifies when its body has vector operations, the head's operations are single DMAs and MMADs (not
// in an inner loop or a branch), the buffers they write are single-copy, nothing
// after the insertion point writes what they read or write, nothing after the
// loop reads what they write (their allocations move out of the loop), and
// they use no variable bound in the body but the loop's. Runs
// after defer_tail, before allocate_buffers and insert_sync.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule advance_head(const nir::NpuModule &m);

} // namespace tessel

#endif
