#ifndef TESSEL_NPU_TARGET_ISA_PROGRAM_H
#define TESSEL_NPU_TARGET_ISA_PROGRAM_H

// The NPU program as plain data: what the backend emits, the binary format
// encodes, the assembler/disassembler print and the simulator runs.
//
// Execution model (see docs/isa.md, generated from the instruction table):
//  - One scalar front end runs the program in order. Scalar instructions
//    (pipe S) execute there; every other instruction has its register operands
//    read at issue and is pushed into the in-order queue of its pipe (V, M,
//    MTE1, MTE2, MTE3, FIX, ...; the DMA engine's pipe comes from the ArchSpec).
//    A full queue stalls the front end.
//  - Pipes run concurrently. SET_FLAG(src, dst, id) sits in src's queue and
//    fires when every earlier src instruction has completed; WAIT_FLAG(src, dst,
//    id) sits in dst's queue and blocks it until a matching flag has fired
//    (each fire is consumed by one wait). BARRIER(pipe) blocks the front end
//    until `pipe` has drained (pipe ALL = every pipe). END drains everything.
//  - Addresses are byte addresses within a memory level. GM holds the kernel
//    arguments: at launch register r(1+i) holds the GM address of argument i,
//    and r0 always reads 0. A core's id is read by COREID.

#include "npu_target/common/DType.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::isa {

/** Every opcode. The instruction table (isa/InstrTable.cpp) is the only place
 * their encodings, operand fields, pipes, cost rules and semantics are written. */
enum class Op : uint8_t {
    // ---- scalar unit (pipe S); integer registers are int64 ----
    NOP,
    LI,     // rd = imm
    MOV,    // rd = ra
    ADD, SUB, MUL, DIV, REM, MIN, MAX, AND, OR, XOR, SHL, SHR, // rd = ra op rb (DIV/REM floor, as Halide)
    ADDI, MULI, DIVI, REMI,         // rd = ra op imm (DIVI/REMI floor, as Halide)
    SLT, SLE, SEQ, SNE,             // rd = (ra cmp rb) ? 1 : 0
    SELECT,                         // rd = rc ? ra : rb
    // scalar floating point: registers hold IEEE binary32 bits; computed exactly rounded
    FADD, FSUB, FMUL, FDIV, FMIN, FMAX, FSQRT, FEXP, FLOG, FABS,
    FSLT, FSLE, FSEQ,               // rd = (ra cmp rb) ? 1 : 0 on floats
    ITOF, FTOI,                     // int64 <-> binary32 (FTOI truncates toward zero)
    LD,     // rd = mem[level][ra + imm] as dtype (floats widen to binary32 bits, ints sign/zero-extend)
    ST,     // mem[level][ra + imm] = rb converted to dtype (floats round to nearest even)
    BEQ, BNE, BLT, BGE,             // if (ra cmp rb) pc = imm (absolute instruction index)
    JMP,                            // pc = imm
    COREID,                         // rd = this core's index
    // ---- transfer engines (pipe of the engine) ----
    DMA,    // engine, dst level[ra] <- src level[rb], descriptor index desc
    FIXPARAM, // engine's per-channel requantisation parameters <- src level[ra] (bias), [rb] (scale); n channels
    // ---- vector unit (pipe V); operands in the vector level ----
    VADD, VSUB, VMUL, VDIV, VMAX, VMIN,      // d = a op b
    VADDS, VMULS, VMAXS, VMINS,              // d = a op scalar(rb register, dtype value)
    VSHRS,                                   // d = a >> scalar (integers: floor(a / 2^s))
    VEXP, VLOG, VSQRT, VRSQRT, VRELU, VABS, VMOV, // d = f(a)
    VMULADD,                                 // d = d + a * b
    VMADD,                                   // d = d * a + b
    VCAST,                                   // d (dtype2) = a (dtype), round to nearest even / saturate
    VCMPSEL,                                 // d = (a cmp b) ? a : b ... see table (cmp in aux)
    VDUP,                                    // d = scalar (register rb)
    VREDSUM, VREDMAX,                        // d[0] = reduce(a) over the row (per row for rows > 1)
    VADDRS, VSUBRS, VMULRS, VDIVRS, VMAXRS, VMINRS, // d = a op b[row]: b one element per row, fetched once per row
    VREQUANT,                                // int32 -> int8/uint8: sat(round_half_away((a*mult) >> shift)) + zp
    // ---- matrix unit (pipe M) ----
    MMAD,   // C[m x n] (+)= A[m x k] * B[k x n], row-major tiles in the matrix operand levels
    // ---- synchronisation ----
    SET_FLAG, WAIT_FLAG, BARRIER,
    END,
    NUM_OPS
};

/** Pipes. Engines name their pipe in the ArchSpec; the sim maps names to these. */
enum class Pipe : uint8_t { S, V, M, MTE1, MTE2, MTE3, FIX, ALL, NUM_PIPES };
const char *pipe_name(Pipe p);

/** Where an instruction came from: the schedule directive (stable id), Func and
 * loop. Index into Program::provenance; 0 is "unknown". */
using ProvenanceId = uint32_t;

struct Provenance {
    std::string directive_id; // e.g. "d3" (ScheduleSpec directive id), "" if none
    std::string func;         // Halide Func name
    std::string loop;         // loop variable, e.g. "C.s1.j.jo"
};

/** One decoded instruction. Unused fields are 0. Fields by class:
 *  scalar:  rd, ra, rb, rc, imm (LD/ST: level, dtype)
 *  DMA:     engine, dst_level, src_level, ra = dst address reg, rb = src address reg, desc
 *  FIXPARAM: engine, src_level, ra = bias (int32) address reg, rb = scale address reg, n = channels,
 *           dtype = scale type, dtype2 = result type, aux = shift (bits 0-4) | relu (bit 5)
 *  vector:  dtype (dtype2 for VCAST), ra = dst addr reg, rb = src0 addr reg (or scalar reg for *S/VDUP;
 *           *S ops then read a from rc),
 *           rc = src1 addr reg, rd = element-count register (elements per row; the last
 *           repeat of a row is masked), rows = repeat rows (>= 1), stride[0..2] = element strides of
 *           d, a, b within a row (0 = broadcast), row_stride[0..2] = element strides between rows,
 *           aux = compare code (VCMPSEL) or shift (VREQUANT), imm = multiplier/zero point packed (VREQUANT)
 *  MMAD:    dtype (of A and B), ra = C addr, rb = A addr, rc = B addr, m, k, n, aux bit0 = init (C = A*B)
 *  SET_FLAG/WAIT_FLAG: src_pipe, dst_pipe, event;  BARRIER: src_pipe
 */
struct Instr {
    Op op = Op::NOP;
    DType dtype = DType::Int32;
    DType dtype2 = DType::Int32;
    uint8_t rd = 0, ra = 0, rb = 0, rc = 0;
    uint8_t level = 0;      // LD/ST level index into ArchSpec::memories (255 = scalar stack)
    uint8_t engine = 0, dst_level = 0, src_level = 0;
    uint16_t desc = 0;      // DMA descriptor index
    uint8_t src_pipe = 0, dst_pipe = 0, event = 0;
    uint16_t rows = 1;
    std::array<int32_t, 3> stride{};
    std::array<int32_t, 3> row_stride{};
    uint16_t m = 0, k = 0, n = 0;
    uint32_t aux = 0;
    int64_t imm = 0;
    ProvenanceId prov = 0;  // not part of the semantics
};

constexpr uint8_t kStackLevel = 255; // LD/ST level: the scalar stack (ArchSpec::scalar.stack_bytes)
constexpr uint8_t kConstLevel = 254; // LD level: Program::constants (read-only)

/** A DMA descriptor: up to 4 dimensions (dim 0 innermost) of `count` elements
 * of `elem_bytes`, with byte strides on each side. Static; base addresses come
 * from registers. */
struct DmaDesc {
    uint8_t dims = 1;
    uint32_t elem_bytes = 1;
    std::array<uint32_t, 4> count{1, 1, 1, 1};
    std::array<int64_t, 4> src_stride{};
    std::array<int64_t, 4> dst_stride{};
    uint8_t transform = 0; // 0 none; others per ArchSpec engine transforms (see table)
    int64_t bytes() const;
};

/** Whether dimension 0 of the descriptor is a contiguous run on both sides
 * (strides of one element), which an engine counts in bursts
 * (DmaEngine::count_limit). */
inline bool contiguous_run(const DmaDesc &d) {
    return d.dims >= 1 && d.src_stride[0] == static_cast<int64_t>(d.elem_bytes) &&
           d.dst_stride[0] == static_cast<int64_t>(d.elem_bytes);
}

/** A kernel argument (a GM buffer). Shape innermost first, dense. */
struct ArgDesc {
    std::string name;
    DType dtype = DType::FP32;
    std::vector<int64_t> shape;
    bool is_output = false;
};

struct Program {
    std::string kernel_name;
    std::string arch_name;
    std::string arch_hash;    // ArchSpec::hash() it was compiled for
    int cores = 1;            // cores the kernel runs on (same code, COREID differs)
    std::vector<ArgDesc> args;
    std::vector<Instr> code;
    std::vector<DmaDesc> descs;
    std::vector<uint8_t> constants;      // read-only data (tables), addressed as level "CONST" by LD
    std::vector<Provenance> provenance;  // [0] is the empty provenance
};

} // namespace tessel::isa

#endif
