// allocate_buffers: a single-copy on-chip buffer that a DMA reads inside a loop
// (a copy-out: UB -> L1, UB -> GM, L0C -> UB) gets bytes of its own for the
// whole loop nest around it, so that no operation of the next iteration waits
// for that copy-out merely because it reuses the bytes (a false cross-pipe
// dependency; attention's probabilities, copied UB -> L1 at the end of a key
// block, shared their bytes with the next block's first vector reduction).
// Checked on the final NPU IR of hand schedules: every buffer such a loop
// touches is disjoint from the DMA source, the results still match Halide's
// CPU result, and the property is not vacuous (each case has such a buffer).
#include "tests/backend/NpuHarness.h"

#include "npu_target/arch/ArchSpec.h"

#include <Halide.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace tessel;
using namespace tessel::test;
using namespace Halide::Internal;

namespace {

// Per outermost loop: the buffers DMAs read in it and every buffer any
// operation touches in it.
class LoopBuffers : public IRVisitor {
public:
    std::map<std::string, std::set<std::string>> dma_read, touched;

private:
    std::vector<std::string> loops_;
    using IRVisitor::visit;
    void visit(const For *op) override {
        loops_.push_back(op->name);
        IRVisitor::visit(op);
        loops_.pop_back();
    }
    void visit(const Evaluate *op) override {
        if (loops_.empty()) {
            return;
        }
        const std::string &loop = loops_.front();
        if (auto d = nir::as_dma(Stmt(op))) {
            dma_read[loop].insert(d->src.buffer);
            touched[loop].insert({d->src.buffer, d->dst.buffer});
        } else if (auto v = nir::as_vec(Stmt(op))) {
            touched[loop].insert({v->dst.buffer, v->a.buffer, v->b.buffer});
        } else if (auto m = nir::as_mmad(Stmt(op))) {
            touched[loop].insert({m->c.buffer, m->a.buffer, m->b.buffer});
        }
    }
};

// Returns how many loop-wide DMA sources the module has; fails the test if one
// shares a byte with another buffer its loop touches.
// (The module's arch pointer does not outlive run_npu: the preset is loaded here.)
int check_dma_sources_own_their_bytes(const nir::NpuModule &m, const ArchSpec &arch) {
    LoopBuffers lb;
    m.body.accept(&lb);
    int sources = 0;
    for (const auto &[loop, srcs] : lb.dma_read) {
        for (const auto &s : srcs) {
            auto sb = m.buffers.find(s);
            if (sb == m.buffers.end() || sb->second.is_arg || sb->second.buffers != 1) {
                continue;
            }
            sources++;
            const nir::BufferInfo &a = sb->second;
            const int64_t a_end = a.offset + a.copy_bytes(arch);
            for (const auto &t : lb.touched.at(loop)) {
                auto tb = m.buffers.find(t);
                if (t == s || t.empty() || tb == m.buffers.end() || tb->second.is_arg || tb->second.level != a.level) {
                    continue;
                }
                const nir::BufferInfo &b = tb->second;
                const int64_t b_end = b.offset + b.copy_bytes(arch) * b.buffers;
                EXPECT_TRUE(a_end <= b.offset || b_end <= a.offset)
                    << "in loop " << loop << ", " << s << " [" << a.offset << ", " << a_end << ") (read by a DMA) and "
                    << t << " [" << b.offset << ", " << b_end << ") share bytes in " << a.level;
            }
        }
    }
    return sources;
}

} // namespace

TEST(AllocateBuffers, AttentionProbabilitiesOwnTheirBytesForTheBlockLoop) {
    const ScheduleSpec spec = sample_schedule("attention/schedules/ascend_flash_bk256.json");
    NpuRun r = run_npu("attention", {{"S", "64"}, {"L", "512"}, {"D", "64"}, {"BK", "256"}}, spec, "ascend-like",
                       fresh_seed(), 1e-3, 1e-3);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_TRUE(r.backend.module.overflow_message.empty()) << r.backend.module.overflow_message;
    EXPECT_GT(check_dma_sources_own_their_bytes(r.backend.module, load_arch("ascend-like")), 0);
}

TEST(AllocateBuffers, SoftmaxAndGemmQ8DmaSourcesOwnTheirBytes) {
    {
        NpuRun r = run_npu("softmax", {{"ROWS", "64"}, {"COLS", "1024"}},
                           sample_schedule("softmax/schedules/ascend_reduce.json"), "ascend-like", fresh_seed(), 1e-3,
                           1e-3);
        EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
        EXPECT_GT(check_dma_sources_own_their_bytes(r.backend.module, load_arch("ascend-like")), 0);
    }
    {
        NpuRun r = run_npu("gemm_q8", {{"M", "64"}, {"N", "256"}, {"K", "256"}, {"shift", "12"}},
                           sample_schedule("gemm_q8/schedules/ascend_fused.json"), "ascend-like", fresh_seed());
        EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
        EXPECT_GT(check_dma_sources_own_their_bytes(r.backend.module, load_arch("ascend-like")), 0);
    }
}
