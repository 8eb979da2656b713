#ifndef TESSEL_SAMPLES_GEMM_SCHEDULES_H
#define TESSEL_SAMPLES_GEMM_SCHEDULES_H

// The GEMM sample's hand schedule for ascend-like, built in C++ (the same as
// samples/gemm/schedules/tiled_staged.json with other tile sizes): output tiles
// of tile_m x tile_n, k chunks of tile_k, A and B staged GM -> L1 -> L0A/L0B and
// the accumulator in L0C, each with `buffers` copies, the chunk product on the
// matrix unit. Directive ids as in the JSON file.

#include "dsl/ScheduleSpec.h"

namespace tessel {

ScheduleSpec gemm_ascend_tensorized(int tile_m, int tile_n, int tile_k, int buffers = 2);

} // namespace tessel

#endif
