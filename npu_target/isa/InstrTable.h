#ifndef TESSEL_NPU_TARGET_ISA_INSTRTABLE_H
#define TESSEL_NPU_TARGET_ISA_INSTRTABLE_H

// The instruction table: one row per isa::Op, the only place where mnemonics,
// opcode bytes, operand fields (their order in assembly and in the encoded
// word), pipes, cost rules and semantics texts are written. The encoder,
// decoder, assembler, disassembler, docs/isa.md and the simulator's dispatch
// (keyed by Op) all read it.
//
// Encoding: every instruction is one 32-byte little-endian word. Byte 0 is the
// opcode; the op's operand fields follow in table order, each `bytes` wide
// (stride/row_stride are three values of `bytes` each); every byte after the
// last field is reserved and must be 0. Prov ids are not in the word (the
// binary keeps them in its PROV section).

#include "npu_target/isa/Program.h"

#include <string>
#include <vector>

namespace tessel {
struct ArchSpec;
}

namespace tessel::isa {

constexpr int kInstrBytes = 32;

/** The Instr fields an operand can name. */
enum class Field : uint8_t {
    DType,     // mnemonic suffix .fp16 (Instr::dtype)
    DType2,    // second suffix (Instr::dtype2)
    Rd, Ra, Rb, Rc, // registers, written rN
    Imm,       // signed integer (Instr::imm)
    Target,    // Instr::imm as an absolute instruction index; a label in assembly
    Level,     // Instr::level: a memory level name, STACK or CONST
    Engine,    // Instr::engine: an engine name
    DstLevel, SrcLevel, // Instr::dst_level / src_level: memory level names
    Desc,      // Instr::desc, written dN
    SrcPipe, DstPipe,   // pipe names (S, V, M, MTE1, MTE2, MTE3, FIX, ALL)
    Event,     // Instr::event
    Rows,      // Instr::rows (>= 1)
    Stride,    // Instr::stride[0..2], written a/b/c
    RowStride, // Instr::row_stride[0..2], written a/b/c
    M, K, N,   // Instr::m/k/n
    Aux,       // Instr::aux as an unsigned integer
    Cmp,       // Instr::aux as a compare code: lt le eq ne gt ge
    NUM_FIELDS
};

struct Operand {
    Field field;
    int bytes;        // encoded width (per element for Stride/RowStride)
    const char *role; // what it means for this op, e.g. "dst address"
};

enum class Unit : uint8_t { Scalar, Dma, Vector, Matrix, Sync };

/** Where an instruction queues. */
enum class PipeRule : uint8_t {
    Fixed,   // OpInfo::pipe
    Engine,  // the pipe of ArchSpec::engines[instr.engine]
    SrcPipe, // instr.src_pipe (SET_FLAG)
    DstPipe, // instr.dst_pipe (WAIT_FLAG)
};

struct OpInfo {
    Op op;
    const char *mnemonic; // lower case, without dtype suffixes
    uint8_t opcode;       // byte 0 of the encoded word, unique, never 0
    Unit unit;
    PipeRule pipe_rule;
    Pipe pipe;            // for PipeRule::Fixed
    std::vector<Operand> operands; // assembly order = encoding order
    const char *cost;      // cost rule (what the timing simulator charges)
    const char *semantics; // what it does
    const char *cost_key;  // vector ops: key in ArchSpec::vector.cycles_per_repeat; else ""

    bool uses(Field f) const;
    int encoded_bytes() const; // 1 + sum of operand widths (<= kInstrBytes)
    bool is_branch() const { return uses(Field::Target); }
    std::string syntax() const; // e.g. "vadd.<dtype> rD, rA, rB, rN, rows, s0/s1/s2, r0/r1/r2"
};

const OpInfo &op_info(Op op);
/** Whether a vector op reads its destination's elements too (d = d + a * b,
 * d = d * a + b): sync, hazard checks and the simulator treat d as a source. */
bool reads_destination(Op op);
/** Every row, in Op order. */
const std::vector<OpInfo> &all_ops();
/** The row with this opcode byte, or nullptr. */
const OpInfo *op_by_opcode(uint8_t opcode);
/** The row with this mnemonic (lower case), or nullptr. */
const OpInfo *op_by_mnemonic(const std::string &m);

const char *field_name(Field f);
/** Parses a pipe name (S, V, M, MTE1, MTE2, MTE3, FIX, ALL). */
bool parse_pipe(const std::string &s, Pipe &out);
/** Compare codes used by VCMPSEL (aux): 0 lt, 1 le, 2 eq, 3 ne, 4 gt, 5 ge. */
const std::vector<std::string> &cmp_names();

/** DMA transforms: DmaDesc::transform is an index into this list ([0] = "none").
 * ArchSpec engines list the names they support. */
const std::vector<std::string> &dma_transform_names();
/** Keys accepted by ArchSpec::vector.cycles_per_repeat: "default" and each
 * vector op's cost_key. */
const std::vector<std::string> &vector_cost_keys();

/** The row-scalar vector forms (VADDRS, VSUBRS, VMULRS, VDIVRS, VMAXRS, VMINRS:
 * d = a op b[row], b fetched once per row) -> their element-wise op (VADD ...),
 * which computes the same with b at element stride 0; NUM_OPS for any other op. */
Op row_scalar_base(Op op);

/** The pipe an instruction queues on (resolving engine/flag pipes). Throws
 * UserError for an engine index the arch does not have. */
Pipe instr_pipe(const Instr &i, const ArchSpec &arch);

/** Instr with every field its op does not use reset to the default (what
 * decode(encode(i)) gives back; prov is kept). */
Instr normalized(const Instr &i);

/** Whether v fits the operand's encoded width (signed for imm and strides). */
bool operand_fits(const Operand &o, int64_t v);

/** Encodes one instruction into 32 bytes. `index` is used in messages. Throws
 * UserError when a value does not fit its field. */
void encode_instr(const Instr &i, uint8_t *out, size_t index = 0);
/** Decodes 32 bytes. Throws UserError naming `byte_offset` (of the word in its
 * file/section) and what is wrong: unknown opcode, non-zero reserved byte,
 * out-of-range dtype/pipe/compare code, rows 0. prov is left 0. */
Instr decode_instr(const uint8_t *word, size_t byte_offset = 0);

std::vector<uint8_t> encode_code(const std::vector<Instr> &code);
std::vector<Instr> decode_code(const std::vector<uint8_t> &bytes, size_t base_offset = 0);

/** docs/isa.md's generated part: the instruction table as Markdown. */
std::string isa_markdown_table();

} // namespace tessel::isa

#endif
