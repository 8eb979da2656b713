#ifndef TESSEL_NPU_TARGET_PASSES_RINGCHECK_H
#define TESSEL_NPU_TARGET_PASSES_RINGCHECK_H

// The check of ring_panels' protocol, for check_hazards. insert_sync's
// analysis leaves a ring panel's reads (reader pipe) and loads (writer pipe)
// inside its reload loop to the ring's two counting flags; this check proves
// them ordered. The reload loop and every loop and condition inside it have
// constant bounds, so the check runs the loop nest in program order with
// concrete values (only the statements that touch the panel or its flags),
// pairs the k-th wait of each flag with its k-th set (flags count and fire in
// order; a set fires when everything its pipe issued before it is done), and
// checks that
//   - every read of a slot comes after a raw wait whose set followed the last
//     load into that slot (RAW),
//   - every load into a slot comes after a war wait whose set followed the last
//     read of that slot (WAR; loads are on one in-order pipe, so no WAW),
//   - every set is waited for and every wait has its set.
// Internal to npu_target/passes.

#include "npu_target/ir/NpuIR.h"

#include <string>
#include <vector>

namespace tessel::detail {

std::vector<std::string> ring_protocol_violations(const nir::NpuModule &m);

} // namespace tessel::detail

#endif
