#ifndef TESSEL_TESTS_NPU_TARGET_ISATESTPROGRAMS_H
#define TESSEL_TESTS_NPU_TARGET_ISATESTPROGRAMS_H

// Programs for the ISA and binary-format tests: one instruction of every op
// with every used field set to a non-trivial value.
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/InstrTable.h"

#include <functional>
#include <string>

namespace tessel::test {

/** The UserError message `f` throws, "" if it returns. */
inline std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "";
}

inline isa::DmaDesc make_desc(int dims, uint32_t elem, std::array<uint32_t, 4> count, std::array<int64_t, 4> src,
                              std::array<int64_t, 4> dst, uint8_t transform) {
    isa::DmaDesc d;
    d.dims = static_cast<uint8_t>(dims);
    d.elem_bytes = elem;
    d.count = count;
    d.src_stride = src;
    d.dst_stride = dst;
    d.transform = transform;
    return d;
}

/** An instruction of `op` whose used fields all differ from their defaults;
 * `seed` varies the values. Valid against the ascend-like preset. */
inline isa::Instr sample_instr(isa::Op op, int seed) {
    using isa::Field;
    isa::Instr i;
    i.op = op;
    for (const auto &o : isa::op_info(op).operands) {
        switch (o.field) {
        case Field::DType: i.dtype = (op == isa::Op::VREQUANT) ? DType::Int32 : DType::FP16; break;
        case Field::DType2: i.dtype2 = (op == isa::Op::VREQUANT) ? DType::Int8 : DType::BF16; break;
        case Field::Rd: i.rd = uint8_t(1 + seed % 30); break;
        case Field::Ra: i.ra = uint8_t(2 + seed % 29); break;
        case Field::Rb: i.rb = uint8_t(3 + seed % 28); break;
        case Field::Rc: i.rc = uint8_t(4 + seed % 27); break;
        case Field::Imm: i.imm = o.bytes == 8 ? -123456789012345ll - seed : -1234567 - seed; break;
        case Field::Target: i.imm = seed % 3; break;
        case Field::Level: i.level = uint8_t(op == isa::Op::LD ? (seed % 2 ? isa::kConstLevel : 5) : 5); break;
        case Field::Engine: i.engine = 0; break;
        case Field::DstLevel: i.dst_level = 5; break; // UB
        case Field::SrcLevel: i.src_level = 0; break; // GM
        case Field::Desc: i.desc = uint16_t(seed % 2); break;
        case Field::SrcPipe: i.src_pipe = uint8_t(isa::Pipe::MTE2); break;
        case Field::DstPipe: i.dst_pipe = uint8_t(isa::Pipe::V); break;
        case Field::Event: i.event = uint8_t(1 + seed % 7); break;
        case Field::Rows: i.rows = uint16_t(3 + seed); break;
        case Field::Stride: i.stride = {1, -2, 300 + seed}; break;
        case Field::RowStride: i.row_stride = {128, -70000, 1 << 20}; break;
        case Field::M: i.m = 16; break;
        case Field::K: i.k = 48; break;
        case Field::N: i.n = uint16_t(32 + seed); break;
        case Field::Aux: i.aux = uint32_t(1 + seed % 7); break;
        case Field::Cmp: i.aux = uint32_t(seed % 6); break;
        case Field::NUM_FIELDS: break;
        }
    }
    if (op == isa::Op::BARRIER) {
        i.src_pipe = uint8_t(isa::Pipe::ALL);
    }
    if (op == isa::Op::FIXPARAM) { // ascend-like's FIX (engine 3) from L1: uint8 scales, int8 results
        i.engine = 3;
        i.src_level = 1;
        i.dtype = DType::UInt8;
        i.dtype2 = DType::Int8;
    }
    i.prov = uint32_t(seed % 3);
    return i;
}

/** A program holding sample_instr of every op (twice, with different seeds). */
inline isa::Program sample_program(const ArchSpec &arch) {
    isa::Program p;
    p.kernel_name = "sample \"kernel\"";
    p.arch_name = arch.name;
    p.arch_hash = arch.hash();
    p.cores = 2;
    p.args = {{"A", DType::FP16, {256, 64}, false}, {"C", DType::FP32, {64, 256}, true}, {"s", DType::Int32, {}, false}};
    isa::DmaDesc d0 = make_desc(2, 2, {256, 16, 1, 1}, {2, 512, 0, 0}, {2, 512, 0, 0}, 0);
    isa::DmaDesc d1 = make_desc(1, 4, {1024, 1, 1, 1}, {4, 0, 0, 0}, {4, 0, 0, 0}, 1); // nd2nz
    p.descs = {d0, d1};
    p.constants = {1, 2, 3, 0xff, 0x80};
    p.provenance = {{}, {"d3", "C", "C.s1.j.jo"}, {"d7", "A_in_UB", "C.s0.x"}};
    for (int seed = 0; seed < 2; seed++) {
        for (const auto &o : isa::all_ops()) {
            p.code.push_back(sample_instr(o.op, seed));
        }
    }
    return p;
}

} // namespace tessel::test

#endif
