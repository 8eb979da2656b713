#ifndef TESSEL_DSL_HOSTBENCH_H
#define TESSEL_DSL_HOSTBENCH_H
// The host CPU path of a generator, timed: the pipeline with a schedule for the
// CPU (Halide directives only: split, tile, reorder, vectorize, unroll,
// compute_at, ...) JIT-compiled for this machine (host_target()), run on fresh
// random inputs, single-threaded (no parallel directive is expected; Halide's
// thread pool is not used otherwise). Halide-free header: plain data.
#include "dsl/GeneratorInfo.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/common/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

struct HostTiming {
    bool ok = false;
    std::string error;            // why not, when !ok (a user error: bad schedule, generator, parameter)
    ParamMap params;              // resolved
    double jit_ms = 0;            // JIT compilation
    double best_ms = 0;           // fastest of the timed runs
    double median_ms = 0;
    int runs = 0;
    std::vector<Tensor> inputs;   // the random inputs (by the pipeline's input names, sorted)
    std::vector<Tensor> outputs;  // the outputs of the last run
};

/** Compiles `generator` with `params` and `schedule` for the host CPU, runs it
 * once to warm up and then `runs` times, timing each. Inputs are random from
 * `seed` (as run() makes them). Never throws for user errors. */
HostTiming time_on_host(const std::string &generator, const ParamMap &params, const ScheduleSpec &schedule,
                        uint64_t seed, int runs);

} // namespace tessel

#endif
