#ifndef TESSEL_NPU_TARGET_LOWER_LOWERTONPU_H
#define TESSEL_NPU_TARGET_LOWER_LOWERTONPU_H

// The backend's entry point: Halide's lowered Stmt (captured by dsl/ before
// parallel/async outlining) + the NPU side of the schedule -> an NPU program.
// The steps, in order, each its own file:
//   Specialize      constants for the argument shapes, intrinsics lowered
//   ScalarCodegen   the scalar fallback (correct for any pipeline)

#include "npu_target/lower/LowerInput.h"

#include <string>
#include <vector>

namespace Halide::Internal {
struct Stmt;
}

namespace tessel {

struct LowerResult {
    isa::Program program;
    std::vector<BackendDiagnostic> diagnostics;
    std::string specialized_stmt; // the Stmt after Specialize, as text
};

/** Throws UserError (naming the buffer, level, bytes and directive) when the
 * program cannot be built for the arch. */
LowerResult lower_to_npu(const Halide::Internal::Stmt &s, const LowerInput &in);

} // namespace tessel

#endif
