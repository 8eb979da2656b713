#ifndef TESSEL_SCHEDULER_AUTOSCHEDULE_H
#define TESSEL_SCHEDULER_AUTOSCHEDULE_H

// --schedule auto: an NPU schedule derived from a pipeline's structure
// (dsl/PipelineInfo) and the ArchSpec alone, for any generator; no measurement.
// docs/autoschedule.md says what it decides and why. Halide-free.
//
// Two forms:
//  - matrix: a Func whose update is self + a * b over one reduction variable,
//    with a and b inputs of a type the matrix unit takes, becomes the tiled
//    matrix product of the hand schedules: output tiles, the reduction split in
//    chunks, a and b staged along the engines' path from GM to the matrix unit's
//    operand levels (double-buffered), the accumulator in its level, tensorize.
//    Tile sizes are chosen by a roofline estimate (GM traffic, matrix time, DMA
//    setup per chunk) among the sizes that fit every level.
//  - vector: every other pipeline is cut into bands of its output's outermost
//    dimension that fit the vector unit's level with double-buffered inputs;
//    each input is staged there per band, every intermediate Func is computed at
//    the band (fusion: producers at their consumer's tiles) and vectorised over
//    its innermost dimension.
// What it cannot map falls back per Func (Halide's default placement: scalar
// code) with a warning naming the Func and the reason.

#include "dsl/PipelineInfo.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/arch/ArchSpec.h"

#include <string>
#include <vector>

namespace tessel {

struct AutoSchedule {
    ScheduleSpec spec;
    std::string form;                  // "matrix", "vector" or "none"
    std::vector<std::string> warnings; // "Func acc: ..." per Func left to the default placement
    std::vector<std::string> notes;    // what was decided, one line each (tile sizes, levels, ...)
};

/** `arch_ref` (a preset name or an arch file, as CompileRequest::arch takes it): when given,
 * a vector-form schedule is compiled (no simulation) and made smaller while the backend says
 * a buffer does not fit; "" returns the first estimate unchecked. */
AutoSchedule auto_schedule(const PipelineInfo &p, const ArchSpec &arch, const std::string &arch_ref = "");
/** The same from names, as the CLI, the IDE and the bench call it: describes `generator`
 * with `params` and loads `arch_ref` (a preset or an arch file); throws UserError as they do. */
AutoSchedule auto_schedule_for(const std::string &generator, const ParamMap &params, const std::string &arch_ref);

} // namespace tessel

#endif
