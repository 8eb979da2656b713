#ifndef TESSEL_SCHEDULER_COSTMODEL_H
#define TESSEL_SCHEDULER_COSTMODEL_H

// The analytical cost model (docs/tuner.md): predicts the cycles of a
// candidate from the ArchSpec alone, in microseconds, without compiling.
// Each loop level is a linear pipeline of stages (one per pipe: a DMA engine,
// the matrix or vector unit, the write-back engine); a stage's time per
// iteration comes from the peak rates (MACs per cycle, vector repeats) and
// from DMA setup + bytes / bandwidth per engine edge (GM first touch at the GM
// rate, re-reads at the L2 read rate, writes at the L2 write rate, bursts and
// misalignment as the simulator charges them). Stages overlap as far as the
// buffer counts allow: iteration t of a stage starts after the producer's
// iteration t is visible (end + latency), after its own iteration t-1, and,
// when it writes a buffer with b copies, after the consumer completed
// iteration t-b (latency included). With two buffers everywhere this is the
// max of the stage times plus one pipeline fill; with one buffer, their sum.

#include "scheduler/SearchSpace.h"

#include <string>
#include <vector>

namespace tessel::sched {

/** One pipeline stage of the prediction. */
struct StageTime {
    std::string name;   // "load A,B chunk (GM->L1)", "mmad", "write back C (L0C->GM)"
    std::string pipe;   // the pipe it runs on (MTE2, MTE1, M, V, FIX, MTE3, S)
    std::string loop;   // the loop it is per iteration of ("chunk", "tile")
    double per_iter = 0; // cycles per iteration
    int64_t iters = 0;   // iterations per core
    double total = 0;    // per_iter * iters: busy cycles of the stage
};

/** A bar of the predicted timeline (the data the IDE draws next to the simulated one). */
struct PredictedBar {
    std::string pipe;
    std::string name;
    int64_t iteration = 0;
    double start = 0, end = 0;
};

struct Prediction {
    double cycles = 0;            // predicted total cycles
    std::string bound;            // the stage (or resource) that sets the steady-state period
    std::vector<StageTime> stages;
    std::vector<PredictedBar> timeline; // the first iterations of the innermost pipeline
};

/** Predicts `c` on the problem's ArchSpec. `timeline_iters` > 0 fills
 * Prediction::timeline with that many iterations of the innermost pipeline. */
Prediction predict(const SearchSpace &space, const Candidate &c, int timeline_iters = 0);

} // namespace tessel::sched

#endif
