#ifndef TESSEL_NPU_TARGET_PASSES_SELECTINSTRUCTIONS_H
#define TESSEL_NPU_TARGET_PASSES_SELECTINSTRUCTIONS_H

// The last pass: NPU IR -> NPU instructions, with scalar register allocation.
//  - tessel.dma / tessel.vec / tessel.mmad / sync operations become one
//    instruction each, their addresses computed into registers;
//  - loops become counted branches, lets and loop counters get a register when
//    more than a reserve of registers is free at their definition and a slot
//    in the scalar stack otherwise (spilled values are loaded at each use; the
//    choice is fixed for the whole scope, so loop back-edges stay consistent);
//  - scalar stores of vector values are executed lane by lane: that is the
//    scalar fallback, correct for any pipeline, and every Func that needs it is
//    reported as a warning naming its directive.
// Integers live sign-/zero-extended in 64-bit registers and are re-wrapped
// after arithmetic in narrow types; floats live as binary32 bits, rounded
// through fp16/bf16 when that is their type.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

struct SelectedProgram {
    isa::Program program;
    std::vector<BackendDiagnostic> diagnostics;
};

SelectedProgram select_instructions(const nir::NpuModule &m);

} // namespace tessel

#endif
