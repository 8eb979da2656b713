#ifndef TESSEL_TESTS_NPU_TARGET_SIMTESTUTIL_H
#define TESSEL_TESTS_NPU_TARGET_SIMTESTUTIL_H

// Hand-built NPU programs for the simulator tests: a tiny builder over
// isa::Program so that each test reads like the assembly it stands for.

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/isa/Program.h"
#include "npu_target/sim/Simulator.h"

#include <gtest/gtest.h>

#include <string>

namespace tessel::test {

using isa::Instr;
using isa::Op;
using isa::Pipe;

struct ProgramBuilder {
    const ArchSpec &arch;
    isa::Program p;

    explicit ProgramBuilder(const ArchSpec &a, std::string name = "test") : arch(a) {
        p.kernel_name = std::move(name);
        p.arch_name = a.name;
        p.provenance.push_back({});
    }

    uint8_t level(const std::string &n) const {
        for (size_t i = 0; i < arch.memories.size(); ++i) {
            if (arch.memories[i].name == n) {
                return static_cast<uint8_t>(i);
            }
        }
        ADD_FAILURE() << "no level " << n;
        return 0;
    }
    uint8_t engine(const std::string &n) const {
        for (size_t i = 0; i < arch.engines.size(); ++i) {
            if (arch.engines[i].name == n) {
                return static_cast<uint8_t>(i);
            }
        }
        ADD_FAILURE() << "no engine " << n;
        return 0;
    }
    void arg(const std::string &n, DType t, std::vector<int64_t> shape, bool out = false) {
        p.args.push_back(isa::ArgDesc{n, t, std::move(shape), out});
    }
    uint32_t pc() const { return static_cast<uint32_t>(p.code.size()); }
    Instr &emit(const Instr &i) {
        p.code.push_back(i);
        return p.code.back();
    }
    void li(uint8_t rd, int64_t v) {
        Instr i;
        i.op = Op::LI;
        i.rd = rd;
        i.imm = v;
        emit(i);
    }
    void addi(uint8_t rd, uint8_t ra, int64_t v) {
        Instr i;
        i.op = Op::ADDI;
        i.rd = rd;
        i.ra = ra;
        i.imm = v;
        emit(i);
    }
    /** A contiguous copy of `bytes` (32 B elements when possible). */
    uint16_t desc_contig(int64_t bytes) {
        isa::DmaDesc d;
        d.dims = 1;
        d.elem_bytes = bytes % 32 == 0 ? 32 : 1;
        d.count[0] = static_cast<uint32_t>(bytes / d.elem_bytes);
        d.src_stride[0] = d.dst_stride[0] = d.elem_bytes;
        p.descs.push_back(d);
        return static_cast<uint16_t>(p.descs.size() - 1);
    }
    void dma(const std::string &eng, const std::string &dst, const std::string &src, uint8_t rdst, uint8_t rsrc,
             uint16_t desc) {
        Instr i;
        i.op = Op::DMA;
        i.engine = engine(eng);
        i.dst_level = level(dst);
        i.src_level = level(src);
        i.ra = rdst;
        i.rb = rsrc;
        i.desc = desc;
        emit(i);
    }
    Instr &vec(Op op, DType t, uint8_t d, uint8_t a, uint8_t b, uint8_t count_reg, uint16_t rows = 1) {
        Instr i;
        i.op = op;
        i.dtype = t;
        i.ra = d;
        i.rb = a;
        i.rc = b;
        i.rd = count_reg;
        i.rows = rows;
        i.stride = {1, 1, 1};
        return emit(i);
    }
    void mmad(DType t, uint8_t c, uint8_t a, uint8_t b, uint16_t m, uint16_t k, uint16_t n, bool init) {
        Instr i;
        i.op = Op::MMAD;
        i.dtype = t;
        i.ra = c;
        i.rb = a;
        i.rc = b;
        i.m = m;
        i.k = k;
        i.n = n;
        i.aux = init ? 1 : 0;
        emit(i);
    }
    void flag(Op op, Pipe src, Pipe dst, uint8_t ev = 0) {
        Instr i;
        i.op = op;
        i.src_pipe = static_cast<uint8_t>(src);
        i.dst_pipe = static_cast<uint8_t>(dst);
        i.event = ev;
        emit(i);
    }
    void sync(Pipe src, Pipe dst, uint8_t ev = 0) {
        flag(Op::SET_FLAG, src, dst, ev);
        flag(Op::WAIT_FLAG, src, dst, ev);
    }
    void barrier(Pipe pp) {
        Instr i;
        i.op = Op::BARRIER;
        i.src_pipe = static_cast<uint8_t>(pp);
        emit(i);
    }
    void end() {
        Instr i;
        i.op = Op::END;
        emit(i);
    }
};

/** The busy interval of the first traced instruction with this op. */
/** The ascend-like preset, loaded once. */
inline const ArchSpec &ascend_like() {
    static const ArchSpec a = load_arch("ascend-like");
    return a;
}

inline uint64_t traced_cycles(const sim::SimReport &r, Op op) {
    for (const auto &e : r.trace) {
        if (e.op == op) {
            return e.end - e.start;
        }
    }
    ADD_FAILURE() << "no traced instruction with op " << sim::op_mnemonic(op);
    return 0;
}

inline const sim::EdgeStats &edge(const sim::SimReport &r, const std::string &src, const std::string &dst) {
    for (const auto &e : r.edges) {
        if (e.src == src && e.dst == dst) {
            return e;
        }
    }
    throw std::runtime_error("no edge " + src + "->" + dst);
}

} // namespace tessel::test

#endif
