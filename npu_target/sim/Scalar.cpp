// The scalar unit: integer and binary32 register arithmetic, branches, LD/ST.

#include "npu_target/sim/Elements.h"
#include "npu_target/sim/Machine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessel::sim::detail {

using isa::Op;

uint64_t Machine::exec_scalar(Core &c, const isa::Instr &in, uint32_t pc, uint64_t t, bool &branched) {
    auto &R = c.regs;
    const size_t nregs = R.size();
    auto reg = [&](uint8_t r) -> int64_t {
        if (r >= nregs) {
            throw SimError("core " + std::to_string(c.id) + " " + instr_tag(pc, in) + ": register r" +
                           std::to_string(r) + " does not exist (" + std::to_string(nregs) + " registers)");
        }
        return r == 0 ? 0 : R[r];
    };
    auto set = [&](int64_t v) {
        if (in.rd >= nregs) {
            reg(in.rd);
        }
        if (in.rd != 0) {
            R[in.rd] = v;
        }
    };
    auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    auto s = [](uint64_t v) { return static_cast<int64_t>(v); };
    auto fa = [&]() { return bits_to_float(reg(in.ra)); };
    auto fb = [&]() { return bits_to_float(reg(in.rb)); };
    branched = false;
    auto branch = [&](bool cond) {
        if (cond) {
            if (in.imm < 0 || in.imm > static_cast<int64_t>(prog.code.size())) {
                throw SimError("core " + std::to_string(c.id) + " " + instr_tag(pc, in) + ": branch target " +
                               std::to_string(in.imm) + " is outside the program (" +
                               std::to_string(prog.code.size()) + " instructions)");
            }
            c.pc = static_cast<uint32_t>(in.imm);
            branched = true;
        }
    };
    switch (in.op) {
    case Op::NOP: break;
    case Op::LI: set(in.imm); break;
    case Op::MOV: set(reg(in.ra)); break;
    case Op::ADD: set(s(u(reg(in.ra)) + u(reg(in.rb)))); break;
    case Op::SUB: set(s(u(reg(in.ra)) - u(reg(in.rb)))); break;
    case Op::MUL: set(s(u(reg(in.ra)) * u(reg(in.rb)))); break;
    case Op::DIV: set(floor_div(reg(in.ra), reg(in.rb))); break;
    case Op::REM: set(floor_mod(reg(in.ra), reg(in.rb))); break;
    case Op::MIN: set(std::min(reg(in.ra), reg(in.rb))); break;
    case Op::MAX: set(std::max(reg(in.ra), reg(in.rb))); break;
    case Op::AND: set(reg(in.ra) & reg(in.rb)); break;
    case Op::OR: set(reg(in.ra) | reg(in.rb)); break;
    case Op::XOR: set(reg(in.ra) ^ reg(in.rb)); break;
    case Op::SHL: set(s(u(reg(in.ra)) << (reg(in.rb) & 63))); break;
    case Op::SHR: set(reg(in.ra) >> (reg(in.rb) & 63)); break;
    case Op::ADDI: set(s(u(reg(in.ra)) + u(in.imm))); break;
    case Op::MULI: set(s(u(reg(in.ra)) * u(in.imm))); break;
    case Op::DIVI: set(floor_div(reg(in.ra), in.imm)); break;
    case Op::REMI: set(floor_mod(reg(in.ra), in.imm)); break;
    case Op::SLT: set(reg(in.ra) < reg(in.rb)); break;
    case Op::SLE: set(reg(in.ra) <= reg(in.rb)); break;
    case Op::SEQ: set(reg(in.ra) == reg(in.rb)); break;
    case Op::SNE: set(reg(in.ra) != reg(in.rb)); break;
    case Op::SELECT: set(reg(in.rc) ? reg(in.ra) : reg(in.rb)); break;
    case Op::FADD: set(float_to_bits(fa() + fb())); break;
    case Op::FSUB: set(float_to_bits(fa() - fb())); break;
    case Op::FMUL: set(float_to_bits(fa() * fb())); break;
    case Op::FDIV: set(float_to_bits(fa() / fb())); break;
    case Op::FMIN: set(float_to_bits(fa() < fb() ? fa() : fb())); break;
    case Op::FMAX: set(float_to_bits(fa() > fb() ? fa() : fb())); break;
    case Op::FSQRT: set(float_to_bits(std::sqrt(fa()))); break;
    case Op::FEXP: set(float_to_bits(std::exp(fa()))); break;
    case Op::FLOG: set(float_to_bits(std::log(fa()))); break;
    case Op::FABS: set(float_to_bits(std::fabs(fa()))); break;
    case Op::FSLT: set(fa() < fb()); break;
    case Op::FSLE: set(fa() <= fb()); break;
    case Op::FSEQ: set(fa() == fb()); break;
    case Op::ITOF: set(float_to_bits(static_cast<float>(reg(in.ra)))); break;
    case Op::FTOI: set(trunc_to_int64(fa())); break;
    case Op::LD:
    case Op::ST: {
        const int sz = dtype_bytes(in.dtype);
        const uint64_t addr = u(reg(in.ra)) + u(in.imm);
        if (in.op == Op::ST && in.level == kConstLevel) {
            throw SimError("core " + std::to_string(c.id) + " " + instr_tag(pc, in) + ": CONST is read-only");
        }
        uint8_t *p = ptr(c, in.level, addr, static_cast<uint64_t>(sz), pc);
        Range r{in.level, addr, addr + static_cast<uint64_t>(sz), in.op == Op::ST};
        uint64_t lat = (in.level < arch.memories.size()) ? static_cast<uint64_t>(arch.memories[in.level].latency) : 0;
        check_and_record(c, 0, pc, t, &r, 1, t + 1 + lat, t + 1 + lat);
        if (in.op == Op::LD) {
            dispatch_dtype(in.dtype, [&](auto tc) {
                constexpr DType T = decltype(tc)::value;
                if constexpr (fdt(T)) {
                    set(float_to_bits(load<T>(p)));
                } else {
                    set(load<T>(p));
                }
            });
        } else {
            int64_t v = reg(in.rb);
            dispatch_dtype(in.dtype, [&](auto tc) {
                constexpr DType T = decltype(tc)::value;
                if constexpr (fdt(T)) {
                    store<T>(p, bits_to_float(v));
                } else {
                    store<T>(p, v);
                }
            });
        }
        return lat;
    }
    case Op::BEQ: branch(reg(in.ra) == reg(in.rb)); break;
    case Op::BNE: branch(reg(in.ra) != reg(in.rb)); break;
    case Op::BLT: branch(reg(in.ra) < reg(in.rb)); break;
    case Op::BGE: branch(reg(in.ra) >= reg(in.rb)); break;
    case Op::JMP: branch(true); break;
    case Op::COREID: set(c.id); break;
    default:
        throw SimError("core " + std::to_string(c.id) + " " + instr_tag(pc, in) + ": not a scalar instruction");
    }
    return 0;
}

} // namespace tessel::sim::detail
