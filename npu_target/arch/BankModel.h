#ifndef TESSEL_NPU_TARGET_ARCH_BANKMODEL_H
#define TESSEL_NPU_TARGET_ARCH_BANKMODEL_H

// The bank-conflict model of a banked memory level (the vector unit's operand
// level, e.g. UB on ascend-like: groups x banks x rows of bank_row_bytes). One
// definition for the simulator, which charges the cycles, and the compiler,
// which places buffers to avoid them. Model: docs/simulator.md "Vector unit".

#include "npu_target/arch/ArchSpec.h"

#include <cstdint>

namespace tessel {

/** One operand of a vector instruction as the banks see it: byte address of
 * element 0 of row 0, element stride and row stride (in elements), element
 * size in bytes, and whether the instruction writes it. */
struct BankAccess {
    uint64_t addr = 0;
    int64_t stride = 1;
    int64_t row_stride = 0;
    int esz = 1;
    bool write = false;
    /** An operand accessed once per row (its element 0 of the row), by the
     * repeat that holds element `row_result_at` of the row:
     * - a reduction's destination (VREDSUM/VREDMAX): the sum or maximum is
     *   carried in the unit across the row's repeats and stored once, in the
     *   row's last repeat (count - 1);
     * - a row-scalar op's b (VADDRS ...): fetched once, in the row's first
     *   repeat (0), and held in the unit for the row.
     * -1: an ordinary operand, accessed every repeat. */
    int64_t row_result_at = -1;
};

/** True when `level` has a bank model (otherwise no conflicts are charged). */
bool has_bank_model(const MemoryLevel &level);

/** Bytes after which the bank pattern repeats: row bytes x banks. */
int64_t bank_period_bytes(const MemoryLevel &level);

/** Extra cycles of one repeat (elements [i0, i1) of row `row`) from bank
 * conflicts: 0 when every bank group serves its accesses in one cycle. Reads
 * of one group, writes of one group, and a read and a write of one bank (other
 * than the same block) each take a cycle. Requires has_bank_model(level). */
uint64_t bank_conflict_cycles(const MemoryLevel &level, const BankAccess *ops, int nops, int64_t row, int64_t i0,
                              int64_t i1);

} // namespace tessel

#endif
