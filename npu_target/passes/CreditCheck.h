#ifndef TESSEL_NPU_TARGET_PASSES_CREDITCHECK_H
#define TESSEL_NPU_TARGET_PASSES_CREDITCHECK_H

// The static check of the credit protocol of multi-buffered copies
// (insert_buffer_credits), run by check_hazards. Internal to npu_target/passes.

#include "npu_target/ir/NpuIR.h"

#include <string>
#include <vector>

namespace tessel::detail {

/** What the write-after-read ordering of an N-copy buffer b (writer pipe W,
 * reader pipe R, credit flag (R -> W, e)) rests on, checked on the IR:
 *  1. b's allocation sits in its rotation loop with no branch in between, so
 *     every execution of the loop body runs the allocation's body once;
 *  2. at the top level of that body: one wait_flag(R -> W, e) before the first
 *     statement that writes b on W (none writes it before), one
 *     set_flag(R -> W, e) after the last statement that reads b on R;
 *  3. N set_flags(R -> W, e) before the rotation scope loop and N wait_flags
 *     after it, in the block that holds the scope loop;
 *  4. the flag (R, W, e) is used nowhere else.
 * Flags are FIFO counters, so W's wait in body t takes R's set from body t-N
 * (the first N waits take the initial sets): W overwrites a copy only after R
 * has finished the body that used the same copy N bodies earlier (multi_buffer
 * assigns copy = body count mod N). Returns one message per broken rule. */
std::vector<std::string> credit_protocol_violations(const nir::NpuModule &m);

} // namespace tessel::detail

#endif
