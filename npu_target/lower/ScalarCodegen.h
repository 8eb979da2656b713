#ifndef TESSEL_NPU_TARGET_LOWER_SCALARCODEGEN_H
#define TESSEL_NPU_TARGET_LOWER_SCALARCODEGEN_H

// The scalar fallback: turns a specialised Halide Stmt (see Specialize.h) into
// NPU scalar code that is correct for any pipeline. Loops become counted
// branches, let-bound values and loop counters get a register when one is free
// at their definition and a slot in the scalar stack otherwise (the choice is
// fixed for the whole scope, so loop back-edges stay consistent), vector
// expressions are executed lane by lane, and every allocation is placed in a
// memory level (the schedule's stage/accumulate_in level, else the vector
// unit's level) with its capacity checked. Every Func that runs here is
// reported as a scalar-fallback warning naming its directive.

#include "npu_target/lower/LowerInput.h"

#include <vector>

namespace Halide::Internal {
struct Stmt;
}

namespace tessel {

struct ScalarCodegenResult {
    isa::Program program;
    std::vector<BackendDiagnostic> diagnostics;
};

ScalarCodegenResult scalar_codegen(const Halide::Internal::Stmt &s, const LowerInput &in);

} // namespace tessel

#endif
