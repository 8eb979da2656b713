#ifndef TESSEL_DSL_APPLIER_H
#define TESSEL_DSL_APPLIER_H

// The schedule applier (internal to dsl/, includes Halide.h): gives a
// ScheduleSpec its meaning on a generator's Halide pipeline. Halide directives
// become calls of Halide's scheduling API; NPU directives become Func::in()
// wrappers plus compute_at (stage) and entries of NpuSchedule. Every failure is
// a UserError that names the directive id, its index, the Func and the loop.

#include "Halide.h"

#include "dsl/HalidePipeline.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/lower/NpuSchedule.h"

#include <string>
#include <vector>

namespace tessel {

/** Applies `spec` to `p` (in order) and checks it against `arch` as far as is
 * possible before lowering: levels exist, tensorize finds a matmul-shaped update
 * with operand types the matrix unit supports, accumulate_in has a compute_at.
 * Returns the NPU side of the schedule. Throws UserError. */
NpuSchedule apply_schedule(HalidePipeline &p, const ScheduleSpec &spec, const ArchSpec &arch);

/** Bytes of each allocation in a lowered Stmt whose extents are constant:
 * allocation name -> bytes (the largest if a name is allocated twice). */
std::map<std::string, int64_t> constant_allocation_bytes(const Halide::Internal::Stmt &s);

/** Checks the footprint of every staged buffer and accumulator (times buffers)
 * against its level's capacity, from the allocations in the lowered Stmt.
 * Throws UserError ("stage(A, L1) at C.jo needs 288 KiB with buffers=2; L1 has
 * 256 KiB"); returns warnings (footprints that are not constant, levels whose
 * staged buffers together exceed the capacity). */
std::vector<std::string> check_footprints(const Halide::Internal::Stmt &s, const NpuSchedule &npu,
                                          const ScheduleSpec &spec, const ArchSpec &arch);

/** Re-raises a Halide error thrown while lowering `spec` as a UserError naming
 * the directive that last scheduled a Func the message mentions. */
[[noreturn]] void rethrow_lowering_error(const Halide::Error &e, const ScheduleSpec &spec, const NpuSchedule &npu);

/** "288 KiB", "1.5 KiB", "96 B". */
std::string format_bytes(int64_t bytes);

} // namespace tessel

#endif
