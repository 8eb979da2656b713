#ifndef TESSEL_NPU_TARGET_PASSES_NPUINSTRS_H
#define TESSEL_NPU_TARGET_PASSES_NPUINSTRS_H

// The instruction fields of each NPU operation (DMA, vector, matrix, sync),
// given the registers select_instructions put its addresses and counts in.
// Plain field filling, apart from the scalar code generation and register use
// of SelectInstructions.cpp; the field meanings are docs/isa.md's.

#include "npu_target/ir/NpuIR.h"
#include "npu_target/isa/Program.h"

namespace tessel {

/** The descriptor of a DMA (strides in bytes). */
isa::DmaDesc dma_descriptor(const nir::DmaOp &d);

/** The index of `d` in the program's descriptor table, added when new. */
uint16_t intern_descriptor(isa::Program &p, const isa::DmaDesc &d);

/** A DMA of descriptor `desc` between the levels, dst and src addresses in registers. */
isa::Instr dma_instr(const nir::DmaOp &d, int dst_level, int src_level, int dst, int src, uint16_t desc);

/** FIXPARAM for `f`, the bias and scale read from `src_level` at the addresses in registers bias/scale. */
isa::Instr fixparam_instr(const nir::FixParamOp &f, int src_level, int bias, int scale);

/** A vector instruction: dst/a/b addresses, the scalar operand (for the *S
 * ops and VDUP) and the element count in registers. */
isa::Instr vector_instr(const nir::VecOp &v, int dst, int a, int b, int scalar, int count);

/** A matrix instruction with C, A and B addresses in registers. */
isa::Instr mmad_instr(const nir::MmadOp &mm, int c, int a, int b);

/** set_flag / wait_flag / barrier. */
isa::Instr sync_instr(const nir::SyncOp &s);

} // namespace tessel

#endif
