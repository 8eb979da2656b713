#ifndef TESSEL_NPU_TARGET_ISA_BINARY_H
#define TESSEL_NPU_TARGET_ISA_BINARY_H

// The binary program format (.tsl). Little-endian throughout:
//
//   offset 0   "TSSL"                      magic
//          4   u16 version (kBinaryVersion), u16 flags (0)
//          8   u32 file size in bytes (including the checksum)
//         12   str arch name, str arch hash, str kernel name   (str = u16 length + bytes)
//              u16 cores
//              u16 argument count; per argument: str name, u8 dtype, u8 is_output, u8 rank, i64 shape[rank]
//              four sections, in this order, each: char tag[4], u32 payload length, payload
//                CODE  n * 32-byte instruction words (InstrTable.h)
//                DESC  u32 count; per descriptor: u8 dims, u32 elem_bytes, u32 count[4],
//                      i64 src_stride[4], i64 dst_stride[4], u8 transform   (86 bytes)
//                CNST  the constant bytes
//                PROV  u32 count; per entry: str directive_id, str func, str loop;
//                      then u32 per instruction: its provenance id
//   end - 4    u32 CRC-32 (IEEE) of every byte before it
//
// The loader checks, in order: size, magic, version, declared size (truncation),
// checksum, then every field, then the program's internal references (desc
// indexes, branch targets, provenance ids). Level, engine and register indexes
// depend on the arch: check_program_against_arch checks them.

#include "npu_target/isa/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {
struct ArchSpec;
}

namespace tessel::isa {

constexpr uint16_t kBinaryVersion = 1;

std::vector<uint8_t> write_program(const Program &p);
/** Throws UserError "<origin>: <what is wrong> (at byte offset N)". */
Program read_program(const std::vector<uint8_t> &bytes, const std::string &origin);
Program read_program_file(const std::string &path);
void write_program_file(const Program &p, const std::string &path);

/** Checks the references inside a program (desc indexes, branch targets, prov
 * ids, descriptor fields, flag pipes). Throws UserError naming the instruction. */
void verify_program(const Program &p, const std::string &origin);

/** Rejects a program compiled for another arch (hash differs) or using level,
 * engine, edge, register, event, dtype or descriptor features `arch` lacks. */
void check_program_against_arch(const Program &p, const ArchSpec &arch);

/** The resource checks of check_program_against_arch, also made by the assembler when it
 * has the arch: argument shapes against GM capacity (before anything is allocated for
 * them), vector repeat rows against vector.max_repeat, DMA descriptor bytes against the
 * on-chip level they use. Throws UserError naming the argument or instruction. */
void check_program_resources(const Program &p, const ArchSpec &arch);

uint32_t crc32(const uint8_t *data, size_t n);

} // namespace tessel::isa

#endif
