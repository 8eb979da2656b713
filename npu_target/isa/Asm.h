#ifndef TESSEL_NPU_TARGET_ISA_ASM_H
#define TESSEL_NPU_TARGET_ISA_ASM_H

// Assembly text for NPU programs (syntax in docs/isa.md). One instruction per
// line, operands in the instruction table's order; directives .kernel, .arch,
// .cores, .arg, .desc, .const, .prov; labels `name:` for branch targets;
// comments from ';' to the end of the line.
//
// Levels and engines print as names when an ArchSpec is given, as #N otherwise;
// the assembler accepts both (names need the arch: the one given, or the preset
// named by .arch).

#include "npu_target/isa/Program.h"

#include <string>

namespace tessel {
struct ArchSpec;
}

namespace tessel::isa {

std::string disassemble(const Program &p, const ArchSpec *arch = nullptr);
/** One instruction as text (no labels: branch targets print as numbers). */
std::string disassemble_instr(const Instr &i, const ArchSpec *arch = nullptr);
/** Throws UserError "<origin>:<line>:<column>: <problem>". The result passes
 * verify_program. */
Program assemble(const std::string &text, const std::string &origin, const ArchSpec *arch = nullptr);

} // namespace tessel::isa

#endif
