// The hazard checker: it passes the IR insert_sync produced, and fails the
// compile, naming the pipes and the buffer, when an ordering is removed.
#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "npu_target/common/Error.h"
#include "npu_target/passes/CheckHazards.h"
#include "samples/gemm/GemmSchedules.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace Halide;
using namespace Halide::Internal;

namespace {

// Removes the first wait_flag from `src` to `dst`.
class DropWait : public IRMutator {
public:
    DropWait(isa::Pipe src, isa::Pipe dst) : src_(src), dst_(dst) {}
    bool dropped = false;

private:
    isa::Pipe src_, dst_;
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        auto s = nir::as_sync(op);
        if (!dropped && s && s->op == isa::Op::WAIT_FLAG && s->src == src_ && s->dst == dst_ && s->event == 0) {
            dropped = true;
            return Evaluate::make(0);
        }
        return op;
    }
};

nir::NpuModule synced_gemm() {
    ArchSpec arch = load_arch("ascend-like");
    static ArchSpec keep; // the module points at its arch
    keep = arch;
    HalidePipeline p = build_halide_pipeline("gemm", {{"M", "32"}, {"N", "32"}, {"K", "32"}, {"dtype", "int8"}});
    PassOptions opt;
    opt.stop_after = "insert_sync";
    NpuBuild b = build_npu(p, gemm_ascend_tensorized(16, 16, 16, 1), keep, opt);
    return b.backend.module;
}

} // namespace

TEST(HazardCheck, AcceptsWhatInsertSyncProduced) {
    nir::NpuModule m = synced_gemm();
    EXPECT_NO_THROW(check_hazards(m));
}

TEST(HazardCheck, RejectsAMissingOrdering) {
    nir::NpuModule m = synced_gemm();
    DropWait drop(isa::Pipe::MTE1, isa::Pipe::M);
    m.body = drop.mutate(m.body);
    ASSERT_TRUE(drop.dropped);
    try {
        check_hazards(m);
        ADD_FAILURE() << "the missing MTE1 -> M ordering was not found";
    } catch (const tessel::InternalError &e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("hazard check of kernel gemm"), std::string::npos) << msg;
        EXPECT_NE(msg.find("M reads A_im"), std::string::npos) << msg;
        EXPECT_NE(msg.find("write of it on MTE1 is not ordered before it"), std::string::npos) << msg;
    }
}
