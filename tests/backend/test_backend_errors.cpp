// User-facing errors of the backend, one test per message, asserting the text.
#include "dsl/Compile.h"
#include "samples/gemm/GemmSchedules.h"
#include "tests/dsl/DslTestUtil.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/sim/Simulator.h"

#include <gtest/gtest.h>

using namespace tessel;
using tessel::test::first_error;

namespace {

CompileResult compile_gemm(const ScheduleSpec &s, const ParamMap &params, const std::string &arch = "ascend-like") {
    CompileRequest r;
    r.generator = "gemm";
    r.params = params;
    r.schedule = s;
    r.arch = arch;
    return compile(r);
}


} // namespace

TEST(BackendErrors, DefaultPlacementOverflowNamesBufferLevelAndBytes) {
    // The accumulator computed at root, with no accumulate_in, is placed in the
    // vector unit's level (UB, 192 KiB): 256 x 256 fp32 is 256 KiB.
    Schedule s;
    s.func("acc").compute_root();
    CompileResult r = compile_gemm(s.spec(), {{"M", "256"}, {"N", "256"}, {"K", "16"}, {"dtype", "fp16"}});
    EXPECT_FALSE(r.ok);
    std::string msg = first_error(r);
    EXPECT_EQ(msg.rfind("buffer acc", 0), 0u) << msg;
    EXPECT_NE(msg.find("(65536 x float32 = 256 KiB) does not fit in UB: needs 256 KiB with the buffers live here; "
                       "UB has 192 KiB"),
              std::string::npos)
        << msg;
    // The lifetimes still come back, the overflowing buffer marked (drawn in red).
    bool marked = false;
    for (const auto &l : r.lifetimes) {
        marked = marked || (l.overflow && l.level == "UB");
    }
    EXPECT_TRUE(marked);
}

TEST(BackendErrors, TensorizeOperandInTheWrongLevel) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", 32, 32);
    s.func("acc").compute_at("C", "jo").id("acc_at");
    s.stage("A", "L1").at("C", "jo").id("stage_A");
    s.stage("B", "L0B").at("C", "jo").id("stage_B");
    s.func("acc").accumulate_in("L0C").id("acc_L0C");
    s.func("acc").update(0).tensorize().id("mmad");
    CompileResult r = compile_gemm(s.spec(), {{"M", "64"}, {"N", "64"}, {"K", "32"}, {"dtype", "fp16"}});
    EXPECT_FALSE(r.ok);
    std::string msg = first_error(r);
    EXPECT_NE(msg.find("directive mmad (tensorize acc.update(0)): operand A ("), std::string::npos) << msg;
    EXPECT_NE(msg.find(") is in L1; the matrix unit reads A from L0A (stage it there at the tensorized loop)"),
              std::string::npos)
        << msg;
    ASSERT_FALSE(r.diagnostics.empty());
    EXPECT_EQ(r.diagnostics.back().directive_id, "mmad");
    EXPECT_EQ(r.diagnostics.back().directive_index, 5);
}

TEST(BackendErrors, ScalarFallbackIsAWarningNamingTheFunc) {
    CompileResult r = compile_gemm(Schedule().spec(), {{"M", "16"}, {"N", "16"}, {"K", "16"}, {"dtype", "int8"}});
    ASSERT_TRUE(r.ok) << first_error(r);
    bool warned = false;
    for (const auto &d : r.diagnostics) {
        warned = warned || (d.severity == Diagnostic::Warning &&
                            d.message.find("runs as scalar code on the NPU (no vector or matrix mapping applied)") !=
                                std::string::npos &&
                            d.message.rfind("Func acc", 0) == 0);
    }
    EXPECT_TRUE(warned);
}

// The synchronisation the backend inserts is what keeps the result right: drop
// the wait of the matrix unit for the L1 -> L0A/L0B copies from a compiled
// tensorised GEMM and the simulator's race check stops the run, naming the two
// unordered instructions.
TEST(BackendErrors, DroppingAWaitFlagIsCaughtAsARace) {
    CompileRequest req;
    req.generator = "gemm";
    req.params = {{"M", "32"}, {"N", "32"}, {"K", "32"}, {"dtype", "int8"}};
    req.schedule = gemm_ascend_tensorized(16, 16, 16, 1);
    CompileResult r = compile(req);
    ASSERT_TRUE(r.ok) << first_error(r);
    ArchSpec arch = load_arch("ascend-like");
    std::vector<Tensor> args;
    for (const auto &a : r.program.args) {
        args.emplace_back(a.name, a.dtype, a.shape);
    }
    std::vector<Tensor> ok_args = args;
    EXPECT_NO_THROW(sim::simulate(r.program, arch, ok_args));
    isa::Program broken = r.program;
    int dropped = 0;
    for (auto &i : broken.code) {
        if (i.op == isa::Op::WAIT_FLAG && i.dst_pipe == static_cast<uint8_t>(isa::Pipe::M) &&
            i.src_pipe == static_cast<uint8_t>(isa::Pipe::MTE1)) {
            i.op = isa::Op::NOP;
            dropped++;
        }
    }
    ASSERT_GT(dropped, 0);
    try {
        sim::simulate(broken, arch, args);
        ADD_FAILURE() << "the race was not detected";
    } catch (const sim::SimError &e) {
        std::string m = e.what();
        EXPECT_NE(m.find("race on core 0"), std::string::npos) << m;
        EXPECT_NE(m.find("mmad"), std::string::npos) << m;
        EXPECT_NE(m.find("add set_flag/wait_flag"), std::string::npos) << m;
    }
}
