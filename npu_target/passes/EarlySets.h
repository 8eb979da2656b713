#ifndef TESSEL_NPU_TARGET_PASSES_EARLYSETS_H
#define TESSEL_NPU_TARGET_PASSES_EARLYSETS_H

// early_sets (optional; runs right after insert_sync): a generic cross-pipe ordering is
// SET_FLAG(Q, P) immediately before WAIT_FLAG(Q, P) at the consumer. The set
// fires when every earlier operation in Q's in-order queue has completed, so
// P also waits for whatever Q was given between the operation it depends on
// and the consumer (attention: the vector unit's next tile waited for the copy
// of this tile's output, queued on MTE3 after the probabilities' copy it
// depends on). This moves the set to right after the statement that holds the
// operation (the anchor: the source pipe's latest access the ordering rests
// on, which insert_sync's analysis records in NpuModule::set_anchors), within the statement sequence of
// the set (Blocks, produce/consume markers, allocations and lets are looked
// through; loops and branches are single statements of it):
//   - the anchor is earlier in the sequence: the set goes right after it;
//   - the sequence is a loop body and the anchor is later in it (the previous
//     iteration's access): the set goes right after it, a set before the loop
//     stands for the iteration before the first, and a wait after the loop
//     takes the last iteration's set;
//   - the anchor is not in the sequence (before it, or a previous iteration
//     of an outer loop): the set goes to the start of the sequence.
// The pair gets an event id no other flag of (Q, P) uses in the kernel, so
// the wait takes exactly its set's fires; a pair is left as it is when Q has
// no operation between the new place and the old (the set would fire at the
// same time), when a statement to insert at occurs twice (Halide shares equal
// subtrees) or when (Q, P) has no free event id. The analysis counts only the
// source pipe's accesses up to the anchor as ordered, so a later access of Q
// that a later consumer needs gets its own ordering; check_hazards replays the
// moved flags by their position (NpuModule::early_flags).

#include "npu_target/ir/NpuIR.h"


namespace tessel {

/** The module with the sets of `m.set_anchors` moved; each moved flag in
 * `early_flags`, `set_anchors` cleared. */
nir::NpuModule early_sets(const nir::NpuModule &m);

} // namespace tessel

#endif
