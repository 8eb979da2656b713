#ifndef TESSEL_DSL_LOWERING_H
#define TESSEL_DSL_LOWERING_H

// Lowering a scheduled pipeline (internal to dsl/ and the backend; includes
// Halide.h): apply a ScheduleSpec, let Halide lower the pipeline, capture the
// lowered Stmt with a custom lowering pass (it runs after every Halide pass but
// before parallel/async outlining, so Fork/Acquire are still in it), and check
// the NPU directives' footprints against the ArchSpec.

#include "Halide.h"

#include "dsl/HalidePipeline.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/lower/NpuSchedule.h"

#include <string>
#include <vector>

namespace tessel {

struct LoweredPipeline {
    Halide::Internal::Stmt stmt;          // Halide's lowered Stmt (names contain '$' and '.')
    NpuSchedule npu;                      // staged buffers, accumulators, tensorize, cores, provenance
    std::vector<PipelineInput> inputs;    // sorted by name; shapes innermost first, dense, min 0
    std::vector<PipelineOutput> outputs;  // in generator order
    std::string stmt_text;                // Halide's printing of `stmt`
    std::string loop_nest;                // loop_nest_text(stmt, ...)
    std::vector<std::string> warnings;    // footprints that could not be checked, crowded levels
};

/** The target lowering uses: the host's features (as host_target()) without
 * JIT, plus no_runtime, no_asserts and no_bounds_query. */
Halide::Target lowering_target();

/** Applies `spec` to `p` and lowers it (p is scheduled afterwards; it can still
 * be run with run_on_cpu). Every failure is a UserError naming the directive. */
LoweredPipeline lower_pipeline(HalidePipeline &p, const ScheduleSpec &spec, const ArchSpec &arch);

/** An indented summary of `s`: For loops (name, min, extent, for-type),
 * Allocate (name, type, extents, bytes, memory type), produce/consume and the
 * Funcs stored to. Buffer metadata of the arguments (A.extent.1, ...) is
 * replaced by the shapes given, so loop bounds print as numbers. */
std::string loop_nest_text(const Halide::Internal::Stmt &s, const std::vector<PipelineInput> &inputs,
                           const std::vector<PipelineOutput> &outputs);

} // namespace tessel

#endif
