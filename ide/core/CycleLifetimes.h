#ifndef TESSEL_IDE_CORE_CYCLELIFETIMES_H
#define TESSEL_IDE_CORE_CYCLELIFETIMES_H

// Buffer lifetimes in simulated cycles (the buffer-lifetime view's other time
// axis), as plain data: a buffer is in use from the start of the first traced
// instruction that reads or writes its bytes at its level to the end of the
// last one (TraceEvent::accesses, every core). Buffers whose scopes are
// disjoint share addresses; an access that falls in several of them goes to
// those placed by the directive that issued it (the staging DMA of stage_A
// writes stage_A's buffer), else to all of them. Scalar loads and stores are
// not traced: a buffer only scalar code touches has no cycle span.
// Tested in tests/ide/test_ide_models.cpp (synthetic traces and a real run).

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/lower/LowerInput.h"
#include "npu_target/sim/Simulator.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace tessel::ide {

struct CycleLifetime {
    bool used = false;
    int64_t first = 0, last = 0; // [first, last): cycles
    int accesses = 0;            // traced accesses attributed to it
    /** Per copy (multi-buffering): its own [first, last), {-1, -1} when unused. */
    std::vector<std::pair<int64_t, int64_t>> copies;
    /** Per copy: the intervals it holds data, in time order: each from a write
     * that follows a read (or the first access) to the end of the last access
     * before the next such write. Double buffering shows as alternating copies. */
    std::vector<std::vector<std::pair<int64_t, int64_t>>> live;
};

/** One entry per lifetime in `lifetimes` (same order), from the events of `run`'s trace
 * (SimReport::trace and their accesses; a capped trace gives the spans up to its cut). */
std::vector<CycleLifetime> cycleLifetimes(const std::vector<tessel::BufferLifetime> &lifetimes,
                                          const tessel::sim::SimReport &run,
                                          const std::vector<tessel::isa::Provenance> &provenance,
                                          const tessel::ArchSpec &arch);

} // namespace tessel::ide

#endif
