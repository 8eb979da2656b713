#ifndef TESSEL_NPU_TARGET_PASSES_BANKPLACEMENT_H
#define TESSEL_NPU_TARGET_PASSES_BANKPLACEMENT_H

// Bank-aware placement (optional, after allocate_buffers): allocates again with
// each buffer of a banked level (the vector unit's UB on ascend-like) started
// where the vector operations that use it conflict least with the operands
// already placed, by the machine's own bank model (arch/BankModel.h), within one
// bank period past the first free byte and only where the buffer still fits.
// Operand addresses are evaluated for the first iterations of the operation's
// loops; the cost weighs each operation by its repeats and loop trips. Two
// operands that walk in step on the same banks (a read and a write of one bank,
// or two reads of one group, every repeat) are what it removes; a stride-0
// operand's group is hit by half the repeats wherever it is, which stays.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule bank_placement(const nir::NpuModule &m);

} // namespace tessel

#endif
