// Every SimError the simulator gives for a wrong program, with its message text.

#include "SimTestUtil.h"

using namespace tessel;
using namespace tessel::test;

namespace {

const ArchSpec &ascend() {
    static const ArchSpec a = load_arch("ascend-like");
    return a;
}

std::string error_of(const isa::Program &p, std::vector<Tensor> args, sim::SimOptions opt = {}) {
    try {
        sim::simulate(p, ascend(), args, opt);
    } catch (const sim::SimError &e) {
        return e.what();
    }
    ADD_FAILURE() << "no SimError";
    return "";
}

} // namespace

TEST(SimErrors, DmaOutsideEveryArgumentBuffer) {
    ProgramBuilder b(ascend());
    b.arg("in", DType::UInt8, {1024});
    b.li(10, 0);
    b.addi(11, 1, 512); // 512 + 1024 > 1024
    b.dma("MTE2", "UB", "GM", 10, 11, b.desc_contig(1024));
    b.end();
    std::string msg = error_of(b.p, {Tensor("in", DType::UInt8, {1024})});
    EXPECT_NE(msg.find("memory protection: core 0 pc 2 (dma) accesses GM [0x10200, 0x10600) (1024 bytes): "
                       "outside every argument buffer"),
              std::string::npos)
        << msg;
}

TEST(SimErrors, VectorAccessOutsideItsLevel) {
    ProgramBuilder b(ascend());
    b.li(2, 196608 - 128);
    b.li(5, 128);
    b.vec(Op::VDUP, DType::FP16, 2, 0, 0, 5);
    b.end();
    std::string msg = error_of(b.p, {});
    EXPECT_NE(msg.find("memory protection: core 0 pc 2 (vdup) accesses UB [0x2ff80, 0x30080) (256 bytes): UB has "
                       "196608 bytes"),
              std::string::npos)
        << msg;
}

TEST(SimErrors, MissingFlagIsReportedAsARace) {
    ProgramBuilder b(ascend());
    b.arg("in", DType::FP16, {128});
    b.li(10, 0);
    b.li(11, 4096);
    b.li(20, 128);
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(256));
    // missing: set_flag/wait_flag MTE2 -> V
    b.vec(Op::VADD, DType::FP16, 11, 10, 10, 20);
    b.end();
    std::string msg = error_of(b.p, {Tensor("in", DType::FP16, {128})});
    EXPECT_NE(msg.find("race on core 0 at cycle 4: pc 4 (vadd) on pipe V reads UB [0x0, 0x100) while pc 3 (dma) on "
                       "pipe MTE2 is still writing it (until cycle 575); add set_flag/wait_flag between MTE2 and V"),
              std::string::npos)
        << msg;
    // With the race check off the program runs (on whatever the UB held).
    sim::SimOptions off;
    off.check_races = false;
    std::vector<Tensor> args{Tensor("in", DType::FP16, {128})};
    EXPECT_NO_THROW(sim::simulate(b.p, ascend(), args, off));
}

TEST(SimErrors, WaitWithoutSetIsADeadlock) {
    ProgramBuilder b(ascend());
    b.li(2, 0);
    b.li(5, 16);
    b.flag(Op::WAIT_FLAG, Pipe::MTE2, Pipe::V, 3);
    b.vec(Op::VDUP, DType::FP32, 2, 0, 0, 5);
    b.end();
    std::string msg = error_of(b.p, {});
    EXPECT_NE(msg.find("deadlock at cycle 4: no pipe can make progress"), std::string::npos) << msg;
    EXPECT_NE(msg.find("core 0 S: at pc 4 (end), waiting for the pipes to drain"), std::string::npos) << msg;
    EXPECT_NE(msg.find("core 0 V: queue 2/32, head pc 2 (wait_flag) waits for flag MTE2->V #3, which nothing will "
                       "set"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("core 0 MTE2: queue 0/32, idle"), std::string::npos) << msg;
}

TEST(SimErrors, CycleOfWaitsIsADeadlock) {
    ProgramBuilder b(ascend());
    b.flag(Op::WAIT_FLAG, Pipe::MTE2, Pipe::V, 0);
    b.flag(Op::SET_FLAG, Pipe::V, Pipe::MTE2, 0);
    b.flag(Op::WAIT_FLAG, Pipe::V, Pipe::MTE2, 0);
    b.flag(Op::SET_FLAG, Pipe::MTE2, Pipe::V, 0);
    b.end();
    std::string msg = error_of(b.p, {});
    EXPECT_NE(msg.find("head pc 0 (wait_flag) waits for flag MTE2->V #0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("head pc 2 (wait_flag) waits for flag V->MTE2 #0"), std::string::npos) << msg;
}

TEST(SimErrors, EdgeTheEngineDoesNotHave) {
    ProgramBuilder b(ascend());
    b.li(10, 0);
    b.dma("MTE2", "L0A", "UB", 10, 10, b.desc_contig(64));
    b.end();
    EXPECT_NE(error_of(b.p, {}).find("core 0 pc 1 (dma): engine MTE2 has no edge UB->L0A"), std::string::npos);
}

TEST(SimErrors, MaxCyclesStopsARunawayLoop) {
    ProgramBuilder b(ascend());
    Instr j;
    j.op = Op::JMP;
    j.imm = 0;
    b.emit(j);
    sim::SimOptions opt;
    opt.max_cycles = 1000;
    EXPECT_NE(error_of(b.p, {}, opt).find("simulation exceeded max_cycles = 1000 on core 0 at pc 0 (jmp)"),
              std::string::npos);
}

TEST(SimErrors, WrongArguments) {
    ProgramBuilder b(ascend());
    b.arg("in", DType::FP16, {16});
    b.end();
    EXPECT_NE(error_of(b.p, {}).find("takes 1 arguments, 0 were given"), std::string::npos);
    EXPECT_NE(error_of(b.p, {Tensor("in", DType::FP32, {16})})
                  .find("argument 0 ('in') must be fp16 of 32 bytes; got fp32 of 64 bytes"),
              std::string::npos);
}

TEST(SimErrors, ScalarLoadOutsideArguments) {
    ProgramBuilder b(ascend());
    b.arg("in", DType::Int32, {4});
    Instr ld;
    ld.op = Op::LD;
    ld.dtype = DType::Int32;
    ld.rd = 5;
    ld.level = b.level("GM");
    ld.ra = 1;
    ld.imm = 16; // one past the end
    b.emit(ld);
    b.end();
    EXPECT_NE(error_of(b.p, {Tensor("in", DType::Int32, {4})})
                  .find("memory protection: core 0 pc 0 (ld) accesses GM [0x10010, 0x10014) (4 bytes): outside every "
                        "argument buffer"),
              std::string::npos);
}

// Write-after-read: the DMA overwrites a UB buffer the vector unit is still reading.
TEST(SimErrors, OverwritingDataStillBeingReadIsARace) {
    ProgramBuilder b(ascend());
    b.arg("in", DType::FP16, {16384});
    b.li(10, 0);
    b.li(11, 65536);
    b.li(20, 16384);
    b.vec(Op::VEXP, DType::FP16, 11, 10, 0, 20); // reads UB [0, 32 KiB) for 256 cycles
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(32768));
    b.end();
    std::string msg = error_of(b.p, {Tensor("in", DType::FP16, {16384})});
    EXPECT_NE(msg.find("pc 4 (dma) on pipe MTE2 writes UB [0x0, 0x8000) while pc 3 (vexp) on pipe V is still reading "
                       "it (until cycle 259); add set_flag/wait_flag between V and MTE2"),
              std::string::npos)
        << msg;
}

// Program order, not only time: a scalar load that runs before an earlier-issued
// DMA (held in its queue by a flag) writes the bytes it reads has read stale data
// even though the two never overlap in time.
TEST(SimErrors, ReadingAheadOfAnEarlierWriteIsARace) {
    ProgramBuilder b(ascend());
    b.arg("in", DType::Int32, {64});
    b.li(10, 0);
    b.li(11, 4096);
    b.li(20, 16384);
    b.vec(Op::VEXP, DType::FP16, 11, 11, 0, 20); // pc 3: V busy for 256 cycles
    Instr set;
    set.op = Op::SET_FLAG;
    set.src_pipe = static_cast<uint8_t>(isa::Pipe::V);
    set.dst_pipe = static_cast<uint8_t>(isa::Pipe::MTE2);
    b.emit(set); // pc 4: fires when the vexp is done
    Instr wait = set;
    wait.op = Op::WAIT_FLAG;
    b.emit(wait);                                            // pc 5: MTE2 waits for it
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(256));    // pc 6: then writes UB [0, 256)
    Instr ld;
    ld.op = Op::LD;
    ld.dtype = DType::Int32;
    ld.rd = 5;
    ld.level = b.level("UB");
    ld.ra = 10;
    b.emit(ld); // pc 7: the scalar unit reads UB[0] at once, before the DMA has run
    b.end();
    std::string msg = error_of(b.p, {Tensor("in", DType::Int32, {64})});
    EXPECT_NE(msg.find("pc 6 (dma) on pipe MTE2 writes UB [0x0, 0x4), which pc 7 (ld) on pipe S, later in the "
                       "program, read before it"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("add set_flag/wait_flag (or a barrier) between MTE2 and S"), std::string::npos) << msg;
}
