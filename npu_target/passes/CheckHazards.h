#ifndef TESSEL_NPU_TARGET_PASSES_CHECKHAZARDS_H
#define TESSEL_NPU_TARGET_PASSES_CHECKHAZARDS_H

#include "npu_target/ir/NpuIR.h"

namespace tessel {

/** The hazard checker (run after insert_sync): replays the same dependence
 * analysis over the finished IR, taking its orderings only from the sync
 * operations present (barriers, set/wait pairs), and fails the compile
 * (InternalError: the backend produced an unsafe program) if any cross-pipe
 * RAW, WAR or WAW on a buffer is left unordered. The write-after-read
 * orderings of multi-buffered copies come from the credit protocol
 * (insert_buffer_credits), whose structure is checked here too
 * (CreditCheck.h says what it rests on); the simulator checks every access at
 * run time as well. */
nir::NpuModule check_hazards(const nir::NpuModule &m);

} // namespace tessel

#endif
