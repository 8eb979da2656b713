// early_sets: a flag's set goes right after the operation its wait depends on
// (with its own event id), not next to the wait at the consumer, so the
// consumer does not wait for what the source pipe was given in between.
// Attention: the vector unit's first write of the next tile's probabilities
// must follow MTE3's copy of this tile's last probabilities into L1; the set
// sat behind MTE3's copy of the tile's output to GM. The hazard checker replays
// the moved flags by position, so a set moved before its operation fails the
// compile.
#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "tests/backend/HazardMessage.h"
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::test;
using namespace Halide;
using namespace Halide::Internal;

namespace {

const tessel::ParamMap kAttention{{"S", "256"}, {"L", "512"}, {"D", "64"}, {"BK", "256"}}; // four tiles of two key blocks

int flags(const isa::Program &p, isa::Pipe src, isa::Pipe dst, bool moved) {
    int n = 0;
    for (const isa::Instr &i : p.code) {
        n += i.op == isa::Op::SET_FLAG && i.src_pipe == static_cast<uint8_t>(src) &&
             i.dst_pipe == static_cast<uint8_t>(dst) && (i.event >= 1) == moved;
    }
    return n;
}

nir::NpuModule attention_after_early_sets() {
    return module_after("early_sets", "attention", kAttention, "attention/schedules/ascend_flash_bk256.json");
}

// Moves the first set of a moved flag to the start of the kernel: it then
// fires before the operation its wait depends on.
class HoistFirstMovedSet : public IRMutator {
public:
    explicit HoistFirstMovedSet(const nir::NpuModule &m) : m_(m) {}
    std::optional<nir::SyncOp> moved;

private:
    const nir::NpuModule &m_;
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        auto s = nir::as_sync(op);
        if (!moved && s && s->op == isa::Op::SET_FLAG && m_.early_flags.count({s->src, s->dst, s->event})) {
            moved = s;
            return Evaluate::make(0);
        }
        return op;
    }
};

} // namespace

TEST(EarlySets, AttentionTileWaitsOnlyForTheProbabilitiesCopy) {
    PassPair p = run_with_and_without("early_sets", "attention", kAttention, "attention/schedules/ascend_flash_bk256.json",
                                      1e-3);
    ASSERT_EQ(p.with.cmp.mismatches, 0) << failure(p.with);
    ASSERT_EQ(p.without.cmp.mismatches, 0) << failure(p.without);
    // Without the pass every generic flag is event 0; with it the MTE3 -> V
    // ordering of the probabilities is a flag of its own.
    EXPECT_EQ(flags(p.without.backend.program, isa::Pipe::MTE3, isa::Pipe::V, true), 0);
    EXPECT_GE(flags(p.with.backend.program, isa::Pipe::MTE3, isa::Pipe::V, true), 1);
    EXPECT_LT(p.with.report.cycles, p.without.report.cycles)
        << "with " << p.with.report.cycles << ", without " << p.without.report.cycles;
}

TEST(EarlySets, CheckAcceptsTheMovedSetsAndRejectsOneTooEarly) {
    nir::NpuModule ok = attention_after_early_sets();
    ASSERT_FALSE(ok.early_flags.empty());
    EXPECT_EQ(hazard_message(ok), "");

    nir::NpuModule bad = attention_after_early_sets();
    HoistFirstMovedSet hoist(bad);
    bad.body = hoist.mutate(bad.body);
    ASSERT_TRUE(hoist.moved.has_value());
    bad.body = Block::make(hoist.moved->make(), bad.body);
    const std::string msg = hazard_message(bad);
    EXPECT_NE(msg.find("is not ordered before it"), std::string::npos) << "a set before its operation passed: " << msg;
    EXPECT_NE(msg.find(isa::pipe_name(hoist.moved->src)), std::string::npos) << msg;
}
