// The hazard checker: it passes the IR insert_sync produced, and fails the
// compile, naming the pipes and the buffer, when an ordering is removed.
#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "npu_target/common/Error.h"
#include "npu_target/passes/CheckHazards.h"
#include "tests/backend/HazardMessage.h"
#include "samples/gemm/GemmSchedules.h"

#include <gtest/gtest.h>

#include <optional>

using namespace tessel;
using tessel::test::hazard_message;
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

// Removes the `nth` sync operation (0-based) matching op/event >= 1 (a credit flag).
class DropCredit : public IRMutator {
public:
    DropCredit(isa::Op op, int nth) : op_(op), nth_(nth) {}
    bool dropped = false;

private:
    isa::Op op_;
    int nth_;
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        auto s = nir::as_sync(op);
        if (!dropped && s && s->op == op_ && s->event >= 1 && nth_-- == 0) {
            dropped = true;
            return Evaluate::make(0);
        }
        return op;
    }
};

nir::NpuModule synced_gemm_buffers(int buffers) {
    static ArchSpec keep = load_arch("ascend-like"); // the module points at its arch
    HalidePipeline p = build_halide_pipeline("gemm", {{"M", "32"}, {"N", "32"}, {"K", "64"}, {"dtype", "int8"}});
    PassOptions opt;
    opt.stop_after = "insert_sync";
    NpuBuild b = build_npu(p, gemm_ascend_tensorized(16, 16, 16, buffers), keep, opt);
    return b.backend.module;
}

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

// The credit protocol of the double-buffered copies is checked, not trusted:
// every credit flag insert_buffer_credits placed is needed. Removing any one
// of them (an initial set, a wait in the loop body, a set after the last
// read, a final wait) fails the check, naming the buffer and the rule.
TEST(HazardCheck, CreditProtocolIsChecked) {
    nir::NpuModule ok = synced_gemm_buffers(2);
    EXPECT_EQ(hazard_message(ok), "");
    int credit_flags = 0;
    struct Count : public IRVisitor {
        int *n;
        using IRVisitor::visit;
        void visit(const Evaluate *op) override {
            auto s = nir::as_sync(op);
            *n += s && s->event >= 1;
        }
    } count;
    count.n = &credit_flags;
    ok.body.accept(&count);
    ASSERT_GT(credit_flags, 8) << "the schedule should double-buffer several copies";
    int checked = 0;
    for (isa::Op op : {isa::Op::SET_FLAG, isa::Op::WAIT_FLAG}) {
        for (int nth = 0;; nth++) {
            nir::NpuModule m = synced_gemm_buffers(2);
            DropCredit drop(op, nth);
            m.body = drop.mutate(m.body);
            if (!drop.dropped) {
                break;
            }
            std::string msg = hazard_message(m);
            EXPECT_NE(msg.find("credits of "), std::string::npos)
                << "dropping credit " << (op == isa::Op::SET_FLAG ? "set" : "wait") << " #" << nth
                << " was not caught: " << msg;
            checked++;
        }
    }
    EXPECT_EQ(checked, credit_flags);
}

// A credit flag shared with another buffer's protocol is refused: the FIFO
// pairing of sets and waits would no longer be the copy's.
TEST(HazardCheck, CreditFlagUsedTwiceIsRefused) {
    nir::NpuModule m = synced_gemm_buffers(2);
    std::optional<nir::SyncOp> first;
    struct Find : public IRVisitor {
        std::optional<nir::SyncOp> *f;
        using IRVisitor::visit;
        void visit(const Evaluate *op) override {
            auto s = nir::as_sync(op);
            if (!*f && s && s->event >= 1 && s->op == isa::Op::SET_FLAG) {
                *f = s;
            }
        }
    } find;
    find.f = &first;
    m.body.accept(&find);
    ASSERT_TRUE(first.has_value());
    nir::SyncOp wait = *first;
    wait.op = isa::Op::WAIT_FLAG;
    m.body = Block::make({first->make(), wait.make(), m.body}); // an extra, balanced use of the same flag
    std::string msg = hazard_message(m);
    EXPECT_NE(msg.find("is used elsewhere too"), std::string::npos) << msg;
}
