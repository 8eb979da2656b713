// Encoder and decoder of 32-byte instruction words. The layout of each op is
// derived from its operand list in the instruction table (InstrTable.cpp).
#include "npu_target/common/Error.h"
#include "npu_target/isa/InstrTable.h"

#include <cstring>

namespace tessel::isa {

namespace {

int elements(Field f) { return (f == Field::Stride || f == Field::RowStride) ? 3 : 1; }

bool is_signed(Field f) { return f == Field::Imm || f == Field::Stride || f == Field::RowStride; }

int64_t get_field(const Instr &i, Field f, int e) {
    switch (f) {
    case Field::DType: return static_cast<int64_t>(i.dtype);
    case Field::DType2: return static_cast<int64_t>(i.dtype2);
    case Field::Rd: return i.rd;
    case Field::Ra: return i.ra;
    case Field::Rb: return i.rb;
    case Field::Rc: return i.rc;
    case Field::Imm:
    case Field::Target: return i.imm;
    case Field::Level: return i.level;
    case Field::Engine: return i.engine;
    case Field::DstLevel: return i.dst_level;
    case Field::SrcLevel: return i.src_level;
    case Field::Desc: return i.desc;
    case Field::SrcPipe: return i.src_pipe;
    case Field::DstPipe: return i.dst_pipe;
    case Field::Event: return i.event;
    case Field::Rows: return i.rows;
    case Field::Stride: return i.stride[e];
    case Field::RowStride: return i.row_stride[e];
    case Field::M: return i.m;
    case Field::K: return i.k;
    case Field::N: return i.n;
    case Field::Aux:
    case Field::Cmp: return i.aux;
    case Field::NUM_FIELDS: break;
    }
    return 0;
}

void set_field(Instr &i, Field f, int e, int64_t v) {
    switch (f) {
    case Field::DType: i.dtype = static_cast<DType>(v); break;
    case Field::DType2: i.dtype2 = static_cast<DType>(v); break;
    case Field::Rd: i.rd = static_cast<uint8_t>(v); break;
    case Field::Ra: i.ra = static_cast<uint8_t>(v); break;
    case Field::Rb: i.rb = static_cast<uint8_t>(v); break;
    case Field::Rc: i.rc = static_cast<uint8_t>(v); break;
    case Field::Imm:
    case Field::Target: i.imm = v; break;
    case Field::Level: i.level = static_cast<uint8_t>(v); break;
    case Field::Engine: i.engine = static_cast<uint8_t>(v); break;
    case Field::DstLevel: i.dst_level = static_cast<uint8_t>(v); break;
    case Field::SrcLevel: i.src_level = static_cast<uint8_t>(v); break;
    case Field::Desc: i.desc = static_cast<uint16_t>(v); break;
    case Field::SrcPipe: i.src_pipe = static_cast<uint8_t>(v); break;
    case Field::DstPipe: i.dst_pipe = static_cast<uint8_t>(v); break;
    case Field::Event: i.event = static_cast<uint8_t>(v); break;
    case Field::Rows: i.rows = static_cast<uint16_t>(v); break;
    case Field::Stride: i.stride[e] = static_cast<int32_t>(v); break;
    case Field::RowStride: i.row_stride[e] = static_cast<int32_t>(v); break;
    case Field::M: i.m = static_cast<uint16_t>(v); break;
    case Field::K: i.k = static_cast<uint16_t>(v); break;
    case Field::N: i.n = static_cast<uint16_t>(v); break;
    case Field::Aux:
    case Field::Cmp: i.aux = static_cast<uint32_t>(v); break;
    case Field::NUM_FIELDS: break;
    }
}

std::string field_label(Field f, int e) {
    std::string s = field_name(f);
    if (elements(f) > 1) {
        s += "[" + std::to_string(e) + "]";
    }
    return s;
}

} // namespace

bool operand_fits(const Operand &o, int64_t v) {
    int bits = 8 * o.bytes;
    if (is_signed(o.field)) {
        return bits >= 64 || (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1)));
    }
    return v >= 0 && (bits >= 64 || v < (int64_t(1) << bits));
}

Instr normalized(const Instr &i) {
    Instr out;
    out.op = i.op;
    out.prov = i.prov;
    for (const auto &o : op_info(i.op).operands) {
        for (int e = 0; e < elements(o.field); e++) {
            set_field(out, o.field, e, get_field(i, o.field, e));
        }
    }
    return out;
}

void encode_instr(const Instr &ins, uint8_t *out, size_t index) {
    if (static_cast<size_t>(ins.op) >= static_cast<size_t>(Op::NUM_OPS)) {
        user_error("instruction ", index, ": invalid op ", static_cast<int>(ins.op));
    }
    const OpInfo &info = op_info(ins.op);
    std::memset(out, 0, kInstrBytes);
    out[0] = info.opcode;
    int pos = 1;
    for (const auto &o : info.operands) {
        for (int e = 0; e < elements(o.field); e++) {
            int64_t v = get_field(ins, o.field, e);
            int bits = 8 * o.bytes;
            if (!operand_fits(o, v)) {
                user_error("instruction ", index, " (", info.mnemonic, "): ", field_label(o.field, e), " = ", v,
                           " does not fit in ", bits, (is_signed(o.field) ? " signed" : " unsigned"), " bits");
            }
            uint64_t u = static_cast<uint64_t>(v);
            for (int b = 0; b < o.bytes; b++) {
                out[pos++] = static_cast<uint8_t>(u >> (8 * b));
            }
        }
    }
}

Instr decode_instr(const uint8_t *w, size_t off) {
    const OpInfo *info = op_by_opcode(w[0]);
    char hex[8];
    if (!info) {
        snprintf(hex, sizeof hex, "0x%02x", w[0]);
        user_error("byte offset ", off, ": unknown opcode ", hex);
    }
    Instr ins;
    ins.op = info->op;
    int pos = 1;
    for (const auto &o : info->operands) {
        for (int e = 0; e < elements(o.field); e++) {
            size_t at = off + pos;
            uint64_t u = 0;
            for (int b = 0; b < o.bytes; b++) {
                u |= uint64_t(w[pos++]) << (8 * b);
            }
            int bits = 8 * o.bytes;
            int64_t v = static_cast<int64_t>(u);
            if (is_signed(o.field) && bits < 64 && (u >> (bits - 1)) & 1) {
                v = static_cast<int64_t>(u | (~uint64_t(0) << bits));
            }
            auto bad = [&](const std::string &what) {
                user_error("byte offset ", at, ": ", info->mnemonic, " ", field_label(o.field, e), " ", what);
            };
            switch (o.field) {
            case Field::DType:
            case Field::DType2:
                if (v >= kNumDTypes) {
                    bad("is " + std::to_string(v) + ", not a dtype (0.." + std::to_string(kNumDTypes - 1) + ")");
                }
                break;
            case Field::SrcPipe:
            case Field::DstPipe:
                if (v >= static_cast<int64_t>(Pipe::NUM_PIPES)) {
                    bad("is " + std::to_string(v) + ", not a pipe");
                }
                break;
            case Field::Cmp:
                if (v >= static_cast<int64_t>(cmp_names().size())) {
                    bad("is " + std::to_string(v) + ", not a compare code (0..5)");
                }
                break;
            case Field::Rows:
                if (v == 0) {
                    bad("is 0 (must be >= 1)");
                }
                break;
            default: break;
            }
            set_field(ins, o.field, e, v);
        }
    }
    for (int b = pos; b < kInstrBytes; b++) {
        if (w[b] != 0) {
            snprintf(hex, sizeof hex, "0x%02x", w[b]);
            user_error("byte offset ", off + b, ": reserved byte ", b, " of a ", info->mnemonic, " word is ", hex,
                       " (must be 0)");
        }
    }
    return ins;
}

std::vector<uint8_t> encode_code(const std::vector<Instr> &code) {
    std::vector<uint8_t> out(code.size() * kInstrBytes);
    for (size_t i = 0; i < code.size(); i++) {
        encode_instr(code[i], out.data() + i * kInstrBytes, i);
    }
    return out;
}

std::vector<Instr> decode_code(const std::vector<uint8_t> &bytes, size_t base_offset) {
    if (bytes.size() % kInstrBytes != 0) {
        user_error("byte offset ", base_offset, ": code is ", bytes.size(), " bytes, not a multiple of ",
                   kInstrBytes);
    }
    std::vector<Instr> code(bytes.size() / kInstrBytes);
    for (size_t i = 0; i < code.size(); i++) {
        code[i] = decode_instr(bytes.data() + i * kInstrBytes, base_offset + i * kInstrBytes);
    }
    return code;
}

int64_t DmaDesc::bytes() const {
    int64_t n = elem_bytes;
    for (int d = 0; d < dims && d < 4; d++) {
        n *= count[d];
    }
    return n;
}

} // namespace tessel::isa
