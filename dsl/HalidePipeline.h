#ifndef TESSEL_DSL_HALIDEPIPELINE_H
#define TESSEL_DSL_HALIDEPIPELINE_H

// A generator instantiated with concrete parameters: the Halide pipeline, its
// inputs (with the Parameter to bind) and outputs, and their shapes taken from
// the generator's estimates. Internal to dsl/ (includes Halide.h).

#include "Halide.h"

#include "dsl/GeneratorInfo.h"
#include "npu_target/common/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace tessel {

struct PipelineInput {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape; // innermost first, all mins are 0
    Halide::Internal::Parameter param;
};

struct PipelineOutput {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    Halide::Func func;
};

struct HalidePipeline {
    std::string generator;
    ParamMap params;
    std::unique_ptr<Halide::Internal::GeneratorBase> gen; // owns the Funcs
    Halide::Pipeline pipeline;
    std::vector<PipelineInput> inputs;   // sorted by name
    std::vector<PipelineOutput> outputs; // in generator order
};

/** Instantiates `generator` with `params` (already resolved). Halide errors
 * become UserErrors naming the generator and parameters. */
HalidePipeline build_halide_pipeline(const std::string &generator, const ParamMap &params);

/** The generator instantiated for a reference run on the CPU: Halide's
 * default schedule computes a reduction at the innermost loop of each
 * consumer, which recomputes a softmax's row sum for every element (O(COLS^2)
 * per row; 105 s for 256 x 1024); here every reduction that is not an output
 * is computed once (compute_root). Scheduling does not change Halide's result:
 * each reduction still runs its own loop in order. */
HalidePipeline build_reference_pipeline(const std::string &generator, const ParamMap &params);

/** Schedules every Func of the pipeline but its outputs `compute_root`: all
 * of them, or only those with update definitions (reductions). */
void compute_intermediates_at_root(HalidePipeline &p, bool reductions_only);

/** Runs the pipeline on the host CPU through Halide's JIT with the given
 * inputs (matched by name) and returns the outputs. */
std::vector<Tensor> run_on_cpu(HalidePipeline &p, const std::vector<Tensor> &inputs);

/** Allocates the pipeline's inputs and fills them with random data. */
std::vector<Tensor> make_random_inputs(const HalidePipeline &p, uint64_t seed);

} // namespace tessel

#endif
