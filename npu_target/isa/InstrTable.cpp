// The instruction table (see InstrTable.h) and the queries derived from it.
#include "npu_target/isa/InstrTable.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"

#include <algorithm>
#include <array>
#include <memory>
#include <sstream>

namespace tessel::isa {

namespace {

// Operand constructors: the encoded width is part of the table row.
Operand reg(Field f, const char *role) { return {f, 1, role}; }
Operand imm(int bytes, const char *role) { return {Field::Imm, bytes, role}; }
Operand fld(Field f, int bytes, const char *role) { return {f, bytes, role}; }

const Operand kDt{Field::DType, 1, "element type"};
const Operand kDt2{Field::DType2, 1, "result element type"};
const Operand kRows{Field::Rows, 2, "rows (repeat rows, >= 1)"};
const Operand kStride{Field::Stride, 2, "element strides of d/a/b within a row (signed 16-bit)"};
const Operand kRowStride{Field::RowStride, 4, "element strides of d/a/b between rows"};
const Operand kCount{Field::Rd, 1, "register: elements per row"};

const char *kScalarCost = "scalar.issue_cycles on the front end";
const char *kVecCost = "rows * ceil(count * dtype bytes / vector.bytes_per_repeat) repeats, each "
                       "vector.cycles_per_repeat[key] cycles, plus bank-conflict cycles on the vector level";

std::vector<Operand> rrr() {
    return {reg(Field::Rd, "result"), reg(Field::Ra, "left"), reg(Field::Rb, "right")};
}
std::vector<Operand> rr() { return {reg(Field::Rd, "result"), reg(Field::Ra, "operand")}; }

std::vector<Operand> vec_binary() {
    return {kDt, reg(Field::Ra, "d address"), reg(Field::Rb, "a address"), reg(Field::Rc, "b address"),
            kCount, kRows, kStride, kRowStride};
}
std::vector<Operand> vec_scalar() {
    return {kDt, reg(Field::Ra, "d address"), reg(Field::Rc, "a address"), reg(Field::Rb, "scalar register"),
            kCount, kRows, kStride, kRowStride};
}
std::vector<Operand> vec_unary() {
    return {kDt, reg(Field::Ra, "d address"), reg(Field::Rb, "a address"), kCount, kRows, kStride, kRowStride};
}
std::vector<Operand> with(std::vector<Operand> v, std::initializer_list<Operand> more) {
    v.insert(v.end(), more);
    return v;
}

OpInfo scalar(Op op, const char *m, uint8_t code, std::vector<Operand> ops, const char *sem) {
    return {op, m, code, Unit::Scalar, PipeRule::Fixed, Pipe::S, std::move(ops), kScalarCost, sem, ""};
}
OpInfo vec(Op op, const char *m, uint8_t code, std::vector<Operand> ops, const char *key, const char *sem) {
    return {op, m, code, Unit::Vector, PipeRule::Fixed, Pipe::V, std::move(ops), kVecCost, sem, key};
}

// The semantics text of a row-scalar op (VADDRS ...): strings live as long as the table.
const char *kRowScalar(const char *what) {
    static std::vector<std::unique_ptr<std::string>> texts;
    texts.push_back(std::make_unique<std::string>(
        std::string(what) + " with b[row] = the element at rc + row * rs2 (one per row; s2 must be 0), read by "
                            "the unit once per row, in the row's first repeat"));
    return texts.back()->c_str();
}

std::vector<OpInfo> build_table() {
    const char *branch_cost = "scalar.issue_cycles; a taken branch adds 1 cycle";
    std::vector<Operand> br = {reg(Field::Ra, "left"), reg(Field::Rb, "right"), fld(Field::Target, 4, "target")};
    std::vector<OpInfo> t = {
        scalar(Op::NOP, "nop", 0x01, {}, "does nothing"),
        scalar(Op::LI, "li", 0x02, {reg(Field::Rd, "result"), imm(8, "value")}, "rd = imm"),
        scalar(Op::MOV, "mov", 0x03, rr(), "rd = ra"),
        scalar(Op::ADD, "add", 0x04, rrr(), "rd = ra + rb (int64, wrapping)"),
        scalar(Op::SUB, "sub", 0x05, rrr(), "rd = ra - rb"),
        scalar(Op::MUL, "mul", 0x06, rrr(), "rd = ra * rb"),
        scalar(Op::DIV, "div", 0x07, rrr(), "rd = floor(ra / rb) (Halide division; rb = 0 gives 0)"),
        scalar(Op::REM, "rem", 0x08, rrr(), "rd = ra - rb * floor(ra / rb) (Halide modulo; rb = 0 gives 0)"),
        scalar(Op::MIN, "min", 0x09, rrr(), "rd = min(ra, rb)"),
        scalar(Op::MAX, "max", 0x0a, rrr(), "rd = max(ra, rb)"),
        scalar(Op::AND, "and", 0x0b, rrr(), "rd = ra & rb"),
        scalar(Op::OR, "or", 0x0c, rrr(), "rd = ra | rb"),
        scalar(Op::XOR, "xor", 0x0d, rrr(), "rd = ra ^ rb"),
        scalar(Op::SHL, "shl", 0x0e, rrr(), "rd = ra << (rb & 63)"),
        scalar(Op::SHR, "shr", 0x0f, rrr(), "rd = ra >> (rb & 63) (arithmetic)"),
        scalar(Op::ADDI, "addi", 0x10, {reg(Field::Rd, "result"), reg(Field::Ra, "left"), imm(8, "value")},
               "rd = ra + imm"),
        scalar(Op::MULI, "muli", 0x11, {reg(Field::Rd, "result"), reg(Field::Ra, "left"), imm(8, "value")},
               "rd = ra * imm"),
        scalar(Op::DIVI, "divi", 0x17, {reg(Field::Rd, "result"), reg(Field::Ra, "left"), imm(8, "value")},
               "rd = floor(ra / imm) (Halide division; imm = 0 gives 0)"),
        scalar(Op::REMI, "remi", 0x18, {reg(Field::Rd, "result"), reg(Field::Ra, "left"), imm(8, "value")},
               "rd = ra - imm * floor(ra / imm) (Halide modulo; imm = 0 gives 0)"),
        scalar(Op::SLT, "slt", 0x12, rrr(), "rd = ra < rb ? 1 : 0"),
        scalar(Op::SLE, "sle", 0x13, rrr(), "rd = ra <= rb ? 1 : 0"),
        scalar(Op::SEQ, "seq", 0x14, rrr(), "rd = ra == rb ? 1 : 0"),
        scalar(Op::SNE, "sne", 0x15, rrr(), "rd = ra != rb ? 1 : 0"),
        scalar(Op::SELECT, "select", 0x16,
               {reg(Field::Rd, "result"), reg(Field::Rc, "condition"), reg(Field::Ra, "if true"),
                reg(Field::Rb, "if false")},
               "rd = rc != 0 ? ra : rb"),
        scalar(Op::FADD, "fadd", 0x20, rrr(), "rd = ra + rb (binary32 bits in the low 32 bits)"),
        scalar(Op::FSUB, "fsub", 0x21, rrr(), "rd = ra - rb (binary32)"),
        scalar(Op::FMUL, "fmul", 0x22, rrr(), "rd = ra * rb (binary32)"),
        scalar(Op::FDIV, "fdiv", 0x23, rrr(), "rd = ra / rb (binary32)"),
        scalar(Op::FMIN, "fmin", 0x24, rrr(), "rd = min(ra, rb) (binary32)"),
        scalar(Op::FMAX, "fmax", 0x25, rrr(), "rd = max(ra, rb) (binary32)"),
        scalar(Op::FSQRT, "fsqrt", 0x26, rr(), "rd = sqrt(ra) (binary32, exactly rounded)"),
        scalar(Op::FEXP, "fexp", 0x27, rr(), "rd = exp(ra) (binary32)"),
        scalar(Op::FLOG, "flog", 0x28, rr(), "rd = log(ra) (binary32)"),
        scalar(Op::FABS, "fabs", 0x29, rr(), "rd = |ra| (binary32)"),
        scalar(Op::FSLT, "fslt", 0x2a, rrr(), "rd = ra < rb ? 1 : 0 (binary32)"),
        scalar(Op::FSLE, "fsle", 0x2b, rrr(), "rd = ra <= rb ? 1 : 0 (binary32)"),
        scalar(Op::FSEQ, "fseq", 0x2c, rrr(), "rd = ra == rb ? 1 : 0 (binary32)"),
        scalar(Op::ITOF, "itof", 0x2d, rr(), "rd = binary32(ra) (round to nearest even)"),
        scalar(Op::FTOI, "ftoi", 0x2e, rr(), "rd = int64(ra) (truncate toward zero)"),
        scalar(Op::LD, "ld", 0x30,
               {kDt, reg(Field::Rd, "result"), fld(Field::Level, 1, "level (or STACK, CONST)"),
                reg(Field::Ra, "base address"), imm(8, "offset")},
               "rd = mem[level][ra + imm] as dtype (floats widen to binary32 bits, ints sign/zero-extend)"),
        scalar(Op::ST, "st", 0x31,
               {kDt, reg(Field::Rb, "value"), fld(Field::Level, 1, "level (or STACK)"),
                reg(Field::Ra, "base address"), imm(8, "offset")},
               "mem[level][ra + imm] = rb converted to dtype (floats round to nearest even, ints wrap)"),
        {Op::BEQ, "beq", 0x38, Unit::Scalar, PipeRule::Fixed, Pipe::S, br, branch_cost, "if ra == rb: pc = target", ""},
        {Op::BNE, "bne", 0x39, Unit::Scalar, PipeRule::Fixed, Pipe::S, br, branch_cost, "if ra != rb: pc = target", ""},
        {Op::BLT, "blt", 0x3a, Unit::Scalar, PipeRule::Fixed, Pipe::S, br, branch_cost, "if ra < rb: pc = target", ""},
        {Op::BGE, "bge", 0x3b, Unit::Scalar, PipeRule::Fixed, Pipe::S, br, branch_cost, "if ra >= rb: pc = target", ""},
        {Op::JMP, "jmp", 0x3c, Unit::Scalar, PipeRule::Fixed, Pipe::S, {fld(Field::Target, 4, "target")},
         branch_cost, "pc = target", ""},
        scalar(Op::COREID, "coreid", 0x3d, {reg(Field::Rd, "result")}, "rd = this core's index (0 .. cores-1)"),
        {Op::DMA, "dma", 0x40, Unit::Dma, PipeRule::Engine, Pipe::MTE2,
         {fld(Field::Engine, 1, "engine"), fld(Field::DstLevel, 1, "dst level"), reg(Field::Ra, "dst address"),
          fld(Field::SrcLevel, 1, "src level"), reg(Field::Rb, "src address"), fld(Field::Desc, 2, "descriptor")},
         "engine busy setup_cycles + bursts(bytes) / edge bytes_per_cycle (/ misalign_factor when a GM address is "
         "not align_bytes-aligned); data visible `latency` cycles after; at most max_outstanding in flight; GM "
         "traffic goes through the chip's L2 and GM bandwidth caps",
         "copies descs[desc] from src_level[rb] to dst_level[ra] through engine, applying the descriptor's transform",
         ""},
        {Op::FIXPARAM, "fixparam", 0x41, Unit::Dma, PipeRule::Engine, Pipe::FIX,
         {fld(Field::DType, 1, "scale element type"), fld(Field::DType2, 1, "result element type (int8, uint8, int16)"),
          fld(Field::Engine, 1, "engine (must list the transform quant)"), fld(Field::SrcLevel, 1, "on-chip level"),
          reg(Field::Ra, "bias address (int32 per channel)"), reg(Field::Rb, "scale address (dtype per channel)"),
          fld(Field::N, 2, "channels (1 .. engine quant_channels)"),
          fld(Field::Aux, 1, "bits 0-4: shift (0..31), bit 5: relu")},
         "engine busy setup_cycles + ceil(n * (4 + scale bytes) / the engine's widest edge bytes_per_cycle); in "
         "order with the engine's DMAs",
         "loads the engine's requantisation state: bias[c], scale[c] for c < n, shift, relu, result type. A later "
         "`quant` DMA on the engine reads int32 accumulators a (4 bytes each at the source strides) and writes, for "
         "the element at index i of dimension 0, with c = i mod n: v = wrap32(a + bias[c]); v = relu ? max(v, 0) : "
         "v; x = wrap32(v * scale[c] + (shift ? 2^(shift-1) : 0)); d = sat(x >> shift) (arithmetic shift: round "
         "half up) to the result type (elem bytes)",
         ""},
        vec(Op::VADD, "vadd", 0x50, vec_binary(), "add", "d = a + b"),
        vec(Op::VSUB, "vsub", 0x51, vec_binary(), "sub", "d = a - b"),
        vec(Op::VMUL, "vmul", 0x52, vec_binary(), "mul", "d = a * b"),
        vec(Op::VDIV, "vdiv", 0x53, vec_binary(), "div", "d = a / b (integers: Halide floor division, /0 gives 0)"),
        vec(Op::VMAX, "vmax", 0x54, vec_binary(), "max", "d = max(a, b)"),
        vec(Op::VMIN, "vmin", 0x55, vec_binary(), "min", "d = min(a, b)"),
        vec(Op::VADDS, "vadds", 0x56, vec_scalar(), "adds", "d = a + s (s = register rb as a dtype value)"),
        vec(Op::VMULS, "vmuls", 0x57, vec_scalar(), "muls", "d = a * s"),
        vec(Op::VMAXS, "vmaxs", 0x58, vec_scalar(), "maxs", "d = max(a, s)"),
        vec(Op::VMINS, "vmins", 0x59, vec_scalar(), "mins", "d = min(a, s)"),
        vec(Op::VSHRS, "vshrs", 0x68, vec_scalar(), "shrs",
            "d = a >> s (integers only: arithmetic shift for signed, logical for unsigned, i.e. floor(a / 2^s); "
            "s in 0 .. bits-1)"),
        vec(Op::VEXP, "vexp", 0x5a, vec_unary(), "exp", "d = exp(a) (computed in fp32, rounded to dtype)"),
        vec(Op::VLOG, "vlog", 0x5b, vec_unary(), "log", "d = log(a)"),
        vec(Op::VSQRT, "vsqrt", 0x5c, vec_unary(), "sqrt", "d = sqrt(a)"),
        vec(Op::VRSQRT, "vrsqrt", 0x5d, vec_unary(), "rsqrt", "d = 1 / sqrt(a)"),
        vec(Op::VRELU, "vrelu", 0x5e, vec_unary(), "relu", "d = max(a, 0)"),
        vec(Op::VABS, "vabs", 0x5f, vec_unary(), "abs", "d = |a|"),
        vec(Op::VMOV, "vmov", 0x60, vec_unary(), "mov", "d = a"),
        vec(Op::VMULADD, "vmuladd", 0x61, vec_binary(), "muladd", "d = d + a * b (one rounding per operation)"),
        // d = d * a + b (Ascend C's FusedMulAdd, vmadd): the product of a
        // value already in d, e.g. LayerNorm's (x - mean) / std, and a second
        // operand, plus a third, in one pass instead of a multiply and an add.
        vec(Op::VMADD, "vmadd", 0x6f, vec_binary(), "muladd", "d = d * a + b (one rounding per operation)"),
        vec(Op::VCAST, "vcast", 0x62,
            {kDt, kDt2, reg(Field::Ra, "d address"), reg(Field::Rb, "a address"), kCount, kRows, kStride,
             kRowStride},
            "cast", "d (dtype2) = a (dtype): floats round to nearest even, integers saturate"),
        vec(Op::VCMPSEL, "vcmpsel", 0x63, with(vec_binary(), {fld(Field::Cmp, 1, "compare")}), "cmpsel",
            "d = (a cmp b) ? a : b"),
        vec(Op::VDUP, "vdup", 0x64,
            {kDt, reg(Field::Ra, "d address"), reg(Field::Rb, "scalar register"), kCount, kRows, kStride,
             kRowStride},
            "dup", "d = s (register rb as a dtype value)"),
        vec(Op::VREDSUM, "vredsum", 0x65, vec_unary(), "redsum",
            "d[row] = sum of a over the row's count elements (floats: sequential fp32 accumulation)"),
        vec(Op::VREDMAX, "vredmax", 0x66, vec_unary(), "redmax", "d[row] = max of a over the row"),
        // Row-scalar forms: b is one element per row (a per-row mean, maximum,
        // 1/std...), fetched by the vector unit once, in the row's first repeat,
        // and held for the row's repeats (as a reduction holds its sum), where
        // VADD/VSUB/... with b at element stride 0 read its block in every repeat.
        vec(Op::VADDRS, "vaddrs", 0x69, vec_binary(), "add", kRowScalar("d = a + b[row]")),
        vec(Op::VSUBRS, "vsubrs", 0x6a, vec_binary(), "sub", kRowScalar("d = a - b[row]")),
        vec(Op::VMULRS, "vmulrs", 0x6b, vec_binary(), "mul", kRowScalar("d = a * b[row]")),
        vec(Op::VDIVRS, "vdivrs", 0x6c, vec_binary(), "div", kRowScalar("d = a / b[row] (integers: as vdiv)")),
        vec(Op::VMAXRS, "vmaxrs", 0x6d, vec_binary(), "max", kRowScalar("d = max(a, b[row])")),
        vec(Op::VMINRS, "vminrs", 0x6e, vec_binary(), "min", kRowScalar("d = min(a, b[row])")),
        vec(Op::VREQUANT, "vrequant", 0x67,
            {kDt, kDt2, reg(Field::Ra, "d address"), reg(Field::Rb, "a address"), kCount, kRows, kStride,
             kRowStride, fld(Field::Aux, 1, "shift (0..31)"), imm(4, "multiplier | zero point << 16")},
            "requant",
            "d (dtype2 int8/uint8) = sat(round_half_away_from_zero(a * mult / 2^shift) + zp), a int32, mult = "
            "int16(imm & 0xffff), zp = int16(imm >> 16)"),
        {Op::MMAD, "mmad", 0x80, Unit::Matrix, PipeRule::Fixed, Pipe::M,
         {kDt, reg(Field::Ra, "C address"), reg(Field::Rb, "A address"), reg(Field::Rc, "B address"),
          fld(Field::M, 2, "m"), fld(Field::K, 2, "k"), fld(Field::N, 2, "n"), fld(Field::Aux, 1, "bit 0: init")},
         "ceil(m/m0) * ceil(k/k0) * ceil(n/n0) cycles, plus fill_drain_cycles unless it follows another MMAD "
         "back-to-back; C visible `latency` cycles after",
         "C[m x n] (accumulator dtype) = (init ? 0 : C) + A[m x k] * B[k x n]; row-major tiles in matrix.a/b/c_level",
         ""},
        {Op::SET_FLAG, "set_flag", 0xf0, Unit::Sync, PipeRule::SrcPipe, Pipe::S,
         {fld(Field::SrcPipe, 1, "source pipe"), fld(Field::DstPipe, 1, "destination pipe"),
          fld(Field::Event, 1, "event id")},
         "1 cycle on src; fires when every earlier src instruction has completed",
         "fires flag (src, dst, event) once", ""},
        {Op::WAIT_FLAG, "wait_flag", 0xf1, Unit::Sync, PipeRule::DstPipe, Pipe::S,
         {fld(Field::SrcPipe, 1, "source pipe"), fld(Field::DstPipe, 1, "destination pipe"),
          fld(Field::Event, 1, "event id")},
         "blocks dst until a matching fire, then 1 cycle", "consumes one fire of flag (src, dst, event)", ""},
        {Op::BARRIER, "barrier", 0xf2, Unit::Sync, PipeRule::Fixed, Pipe::S, {fld(Field::SrcPipe, 1, "pipe")},
         "front end stalls until the pipe (ALL: every pipe) has drained", "waits for the pipe to drain", ""},
        {Op::END, "end", 0xff, Unit::Sync, PipeRule::Fixed, Pipe::S, {}, "drains every pipe",
         "ends the kernel on this core after every pipe has drained", ""},
    };
    return t;
}

struct Tables {
    std::vector<OpInfo> ops;
    std::array<const OpInfo *, 256> by_opcode{};
    Tables() : ops(build_table()) {
        TESSEL_INTERNAL_ASSERT(ops.size() == static_cast<size_t>(Op::NUM_OPS), "instruction table incomplete");
        for (size_t i = 0; i < ops.size(); i++) {
            TESSEL_INTERNAL_ASSERT(ops[i].op == static_cast<Op>(i), "instruction table out of Op order at ",
                                   ops[i].mnemonic);
            TESSEL_INTERNAL_ASSERT(ops[i].opcode != 0 && !by_opcode[ops[i].opcode], "opcode reused by ",
                                   ops[i].mnemonic);
            TESSEL_INTERNAL_ASSERT(ops[i].encoded_bytes() <= kInstrBytes, ops[i].mnemonic, " does not fit");
            by_opcode[ops[i].opcode] = &ops[i];
        }
    }
};

const Tables &tables() {
    static const Tables t;
    return t;
}

} // namespace

bool reads_destination(Op op) { return op == Op::VMULADD || op == Op::VMADD; }

bool OpInfo::uses(Field f) const {
    for (const auto &o : operands) {
        if (o.field == f) {
            return true;
        }
    }
    return false;
}

int OpInfo::encoded_bytes() const {
    int n = 1;
    for (const auto &o : operands) {
        n += (o.field == Field::Stride || o.field == Field::RowStride) ? 3 * o.bytes : o.bytes;
    }
    return n;
}

std::string OpInfo::syntax() const {
    std::string s = mnemonic;
    std::string args;
    for (const auto &o : operands) {
        std::string a;
        switch (o.field) {
        case Field::DType: s += ".<dtype>"; continue;
        case Field::DType2: s += ".<dtype2>"; continue;
        case Field::Rd: a = "rd"; break;
        case Field::Ra: a = "ra"; break;
        case Field::Rb: a = "rb"; break;
        case Field::Rc: a = "rc"; break;
        case Field::Stride: a = "s0/s1/s2"; break;
        case Field::RowStride: a = "rs0/rs1/rs2"; break;
        case Field::Target: a = "label"; break;
        default: a = field_name(o.field); break;
        }
        args += (args.empty() ? " " : ", ") + a;
    }
    return s + args;
}

const OpInfo &op_info(Op op) {
    size_t i = static_cast<size_t>(op);
    TESSEL_INTERNAL_ASSERT(i < tables().ops.size(), "bad Op ", i);
    return tables().ops[i];
}

const std::vector<OpInfo> &all_ops() { return tables().ops; }

const OpInfo *op_by_opcode(uint8_t opcode) { return tables().by_opcode[opcode]; }

const OpInfo *op_by_mnemonic(const std::string &m) {
    for (const auto &o : tables().ops) {
        if (m == o.mnemonic) {
            return &o;
        }
    }
    return nullptr;
}

const char *field_name(Field f) {
    static const char *names[] = {"dtype",  "dtype2", "rd",       "ra",       "rb",      "rc",
                                  "imm",    "target", "level",    "engine",   "dst_level", "src_level",
                                  "desc",   "src_pipe", "dst_pipe", "event",  "rows",    "stride",
                                  "row_stride", "m",  "k",        "n",        "aux",     "cmp"};
    static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(Field::NUM_FIELDS));
    return names[static_cast<size_t>(f)];
}

const char *pipe_name(Pipe p) {
    switch (p) {
    case Pipe::S: return "S";
    case Pipe::V: return "V";
    case Pipe::M: return "M";
    case Pipe::MTE1: return "MTE1";
    case Pipe::MTE2: return "MTE2";
    case Pipe::MTE3: return "MTE3";
    case Pipe::FIX: return "FIX";
    case Pipe::ALL: return "ALL";
    default: return "?";
    }
}

bool parse_pipe(const std::string &s, Pipe &out) {
    for (int p = 0; p < static_cast<int>(Pipe::NUM_PIPES); p++) {
        if (s == pipe_name(static_cast<Pipe>(p))) {
            out = static_cast<Pipe>(p);
            return true;
        }
    }
    return false;
}

const std::vector<std::string> &cmp_names() {
    static const std::vector<std::string> v = {"lt", "le", "eq", "ne", "gt", "ge"};
    return v;
}

const std::vector<std::string> &dma_transform_names() {
    static const std::vector<std::string> v = {"none", "nd2nz", "nz2nd", "pad",   "transpose",
                                               "quant", "relu", "load2d", "im2col"};
    return v;
}

Op row_scalar_base(Op op) {
    switch (op) {
    case Op::VADDRS: return Op::VADD;
    case Op::VSUBRS: return Op::VSUB;
    case Op::VMULRS: return Op::VMUL;
    case Op::VDIVRS: return Op::VDIV;
    case Op::VMAXRS: return Op::VMAX;
    case Op::VMINRS: return Op::VMIN;
    default: return Op::NUM_OPS;
    }
}

const std::vector<std::string> &vector_cost_keys() {
    static const std::vector<std::string> v = [] {
        std::vector<std::string> k = {"default"};
        for (const auto &o : all_ops()) {
            if (o.unit == Unit::Vector && std::find(k.begin(), k.end(), o.cost_key) == k.end()) {
                k.push_back(o.cost_key);
            }
        }
        return k;
    }();
    return v;
}

Pipe instr_pipe(const Instr &i, const ArchSpec &arch) {
    const OpInfo &info = op_info(i.op);
    switch (info.pipe_rule) {
    case PipeRule::Fixed: return info.pipe;
    case PipeRule::SrcPipe: return static_cast<Pipe>(i.src_pipe);
    case PipeRule::DstPipe: return static_cast<Pipe>(i.dst_pipe);
    case PipeRule::Engine: break;
    }
    if (i.engine >= arch.engines.size()) {
        user_error("dma: engine index ", int(i.engine), " does not exist in ", arch.name, " (",
                   arch.engines.size(), " engines)");
    }
    Pipe p = Pipe::S;
    if (!parse_pipe(arch.engines[i.engine].pipe, p)) {
        user_error("engine ", arch.engines[i.engine].name, ": unknown pipe ", arch.engines[i.engine].pipe);
    }
    return p;
}

namespace {
std::string md_cell(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == '|') {
            out += '\\';
        }
        out += c;
    }
    return out;
}
} // namespace

std::string isa_markdown_table() {
    std::ostringstream os;
    os << "| mnemonic | opcode | unit | pipe | syntax | semantics | cost |\n";
    os << "| --- | --- | --- | --- | --- | --- | --- |\n";
    static const char *units[] = {"scalar", "dma", "vector", "matrix", "sync"};
    for (const auto &o : all_ops()) {
        std::string pipe;
        switch (o.pipe_rule) {
        case PipeRule::Fixed: pipe = pipe_name(o.pipe); break;
        case PipeRule::Engine: pipe = "engine's"; break;
        case PipeRule::SrcPipe: pipe = "src_pipe"; break;
        case PipeRule::DstPipe: pipe = "dst_pipe"; break;
        }
        char code[8];
        snprintf(code, sizeof code, "0x%02x", o.opcode);
        std::string cost = o.cost;
        if (o.unit == Unit::Vector) {
            cost = std::string("vector: key `") + o.cost_key + "`";
        }
        os << "| `" << o.mnemonic << "` | " << code << " | " << units[static_cast<int>(o.unit)] << " | " << pipe
           << " | `" << o.syntax() << "` | " << md_cell(o.semantics) << " | " << md_cell(cost) << " |\n";
    }
    return os.str();
}

} // namespace tessel::isa
