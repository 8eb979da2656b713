// ring_panels: a single-copy panel reloaded per band goes through a ring of
// piece slots so the next band's panel loads during this one. The result
// equals Halide's CPU result on fresh random inputs, the run is faster than
// without the pass (same schedule, --skip-pass ring_panels), both walk
// directions (the reader moving along the panel's rows or across them) are
// handled, and check_hazards proves the ring's flags: dropping any one of
// them, or moving a wait after the read it guards, fails the compile.
#include "dsl/HalidePipeline.h"
#include "dsl/NpuCompile.h"
#include "npu_target/common/Error.h"
#include "npu_target/passes/AllocateBuffers.h"
#include "npu_target/passes/CheckHazards.h"
#include "tests/backend/HazardMessage.h"
#include "tests/backend/NpuHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

using namespace tessel;
using namespace tessel::test;
using namespace Halide;
using namespace Halide::Internal;

namespace {

// K = 1024: the A panel (128 x 1024 fp16) is 8 pieces of 32 KiB and only 6
// more fit in L1, so both the spread loads and the loads at release run.
const tessel::ParamMap kGemm{{"M", "384"}, {"N", "512"}, {"K", "1024"}, {"dtype", "fp16"}};

// B as the panel (K x 128 columns per band of C's columns), A streamed in
// 128 x 256 chunks: the reader walks the panel along its outermost dimension.
const char *kColumnPanel = R"({"version": 1, "directives": [
  {"id": "tile_C", "kind": "tile", "func": "C", "x": "j", "y": "i", "xo": "jo", "yo": "io", "xi": "ji", "yi": "ii", "fx": 128, "fy": 128},
  {"id": "bands", "kind": "reorder", "func": "C", "vars": ["ji", "ii", "io", "jo"]},
  {"id": "acc_at", "kind": "compute_at", "func": "acc", "at": {"func": "C", "loop": "io"}},
  {"id": "k_l1", "kind": "split", "func": "acc", "stage": 0, "var": "k", "outer": "ko", "inner": "ki", "factor": 256},
  {"id": "k_l0", "kind": "split", "func": "acc", "stage": 0, "var": "ki", "outer": "kio", "inner": "kii", "factor": 128},
  {"id": "k_outer", "kind": "reorder", "func": "acc", "stage": 0, "vars": ["j", "i", "kii", "kio", "ko"]},
  {"id": "B_panel", "kind": "stage", "func": "B", "level": "L1", "at": {"func": "C", "loop": "jo"}},
  {"id": "stage_A", "kind": "stage", "func": "A", "level": "L1", "at": {"func": "acc", "loop": "ko"}, "buffers": 2},
  {"id": "stage_A0", "kind": "stage", "func": "A", "level": "L0A", "at": {"func": "acc", "loop": "kio"}, "buffers": 2},
  {"id": "stage_B0", "kind": "stage", "func": "B", "level": "L0B", "at": {"func": "acc", "loop": "kio"}, "buffers": 2},
  {"id": "acc_L0C", "kind": "accumulate_in", "func": "acc", "level": "L0C", "buffers": 2},
  {"id": "mmad", "kind": "tensorize", "func": "acc", "update": 0, "unit": "matrix"}]})";

const nir::BufferInfo *ring_panel(const nir::NpuModule &m) {
    for (const auto &[name, b] : m.buffers) {
        if (b.pieces.count > 1) {
            return &b;
        }
    }
    return nullptr;
}

bool noted(const std::vector<BackendDiagnostic> &d) {
    for (const auto &x : d) {
        if (x.message.find("is reloaded through a ring of") != std::string::npos) {
            return true;
        }
    }
    return false;
}

// The A-panel GEMM (ascend_panel.json), compiled up to insert_sync.
nir::NpuModule synced_panel_gemm() {
    static ArchSpec keep = load_arch("ascend-like"); // the module points at its arch
    HalidePipeline p = build_halide_pipeline("gemm", kGemm);
    PassOptions opt;
    opt.stop_after = "insert_sync";
    return build_npu(p, sample_schedule("gemm/schedules/ascend_panel.json"), keep, opt).backend.module;
}

bool ring_flag(const nir::SyncOp &s, const nir::BufferInfo &b) {
    const auto &p = b.pieces;
    return (s.src == p.writer && s.dst == p.reader && s.event == p.raw_event) ||
           (s.src == p.reader && s.dst == p.writer && s.event == p.war_event);
}

// Replaces the `nth` (0-based) ring flag operation with a no-op.
class DropRingFlag : public IRMutator {
public:
    DropRingFlag(const nir::BufferInfo &b, int nth) : b_(b), nth_(nth) {}
    bool dropped = false;

private:
    const nir::BufferInfo &b_;
    int nth_;
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        auto s = nir::as_sync(op);
        if (!dropped && s && ring_flag(*s, b_) && nth_-- == 0) {
            dropped = true;
            return Evaluate::make(0);
        }
        return op;
    }
};

// Moves the reader's first-read wait (`if (...) wait_flag(W, R, raw)`) after the read it guards.
class WaitAfterRead : public IRMutator {
public:
    explicit WaitAfterRead(const nir::BufferInfo &b) : b_(b) {}
    bool moved = false;

private:
    const nir::BufferInfo &b_;
    using IRMutator::visit;
    Stmt visit(const Block *op) override {
        const IfThenElse *guard = op->first.as<IfThenElse>();
        auto wait = guard ? nir::as_sync(guard->then_case) : std::nullopt;
        const Block *rest = op->rest.as<Block>();
        auto read = rest ? nir::as_dma(rest->first) : std::nullopt;
        if (!moved && wait && wait->op == isa::Op::WAIT_FLAG && ring_flag(*wait, b_) && read &&
            read->src.buffer == b_.name) {
            moved = true;
            return Block::make({rest->first, op->first, rest->rest});
        }
        return IRMutator::visit(op);
    }
};

} // namespace

// With the L2 filled in sectors (every cold byte paid at the GM rate), the ring gains on a
// matrix-bound shape (512x512x1024, K chunks of 256: 122904 against 124948 cycles); on the
// GM-bound 384x512x1024 of ascend_panel.json it no longer does (101722 against 99924).
TEST(RingPanels, PanelReloadOverlapsAndVerifies) {
    const ScheduleSpec spec = sample_schedule("gemm/schedules/ascend_panel_k256.json");
    const tessel::ParamMap shape{{"M", "512"}, {"N", "512"}, {"K", "1024"}, {"dtype", "fp16"}};
    const uint64_t seed = fresh_seed();
    NpuRun ring = run_npu("gemm", shape, spec, "ascend-like", seed, 1e-4, 1e-4);
    PassOptions skip;
    skip.skip = {"ring_panels"};
    NpuRun plain = run_npu("gemm", shape, spec, "ascend-like", seed, 1e-4, 1e-4, skip);
    EXPECT_EQ(ring.cmp.mismatches, 0) << failure(ring);
    EXPECT_EQ(plain.cmp.mismatches, 0) << failure(plain);
    const nir::BufferInfo *b = ring_panel(ring.backend.module);
    ASSERT_NE(b, nullptr) << "the A panel is not reloaded through a ring";
    EXPECT_GT(b->pieces.slots, b->pieces.count);
    EXPECT_LT(b->pieces.slots, 2 * b->pieces.count);
    EXPECT_TRUE(noted(ring.backend.diagnostics));
    EXPECT_EQ(ring_panel(plain.backend.module), nullptr);
    EXPECT_LT(ring.report.cycles, plain.report.cycles)
        << "ring " << ring.report.cycles << " cycles, without it " << plain.report.cycles;
}

// The pieces of the next band's panel that find no free slot load in its first
// tile, next to that tile's own operands, cold from GM. ring_panels reads them
// ahead into a one-piece scratch buffer in UB (MTE2 reaches it; nothing reads the
// copy) in the tiles before the last of every band but the first (whose operands
// are all cold) and the last, so those loads hit in the L2. The same kernel on a
// copy of ascend-like whose MTE2 cannot write UB has no scratch level and no
// read-ahead. (B panel 1024 x 128 fp16: 8 pieces of 32 KiB; with A's three 64 KiB
// L1 buffers, 10 slots, 6 late.)
TEST(RingPanels, LatePiecesAreReadAheadIntoTheL2) {
    const ScheduleSpec spec = sample_schedule("gemm/schedules/ascend_bpanel_k256.json");
    const tessel::ParamMap shape{{"M", "1024"}, {"N", "512"}, {"K", "1024"}, {"dtype", "fp16"}};
    ArchSpec no_ub = load_arch("ascend-like");
    for (auto &e : no_ub.engines) {
        if (e.name == "MTE2") {
            e.edges.erase(std::remove_if(e.edges.begin(), e.edges.end(), [](const DmaEdge &d) { return d.dst == "UB"; }),
                          e.edges.end());
        }
    }
    const std::string path = ::testing::TempDir() + "ascend_like_no_mte2_ub.json";
    std::ofstream(path) << no_ub.to_json();
    const uint64_t seed = fresh_seed();
    NpuRun ahead = run_npu("gemm", shape, spec, "ascend-like", seed, 1e-4, 1e-4);
    NpuRun plain = run_npu("gemm", shape, spec, path, seed, 1e-4, 1e-4);
    EXPECT_EQ(ahead.cmp.mismatches, 0) << failure(ahead);
    EXPECT_EQ(plain.cmp.mismatches, 0) << failure(plain);
    const nir::BufferInfo *b = ring_panel(ahead.backend.module);
    ASSERT_NE(b, nullptr) << "the B panel is not reloaded through a ring";
    ASSERT_LT(b->pieces.slots, 2 * b->pieces.count) << "no late pieces at this shape";
    auto w = ahead.backend.module.buffers.find(b->name + ".warm");
    ASSERT_NE(w, ahead.backend.module.buffers.end()) << "the late pieces are not read ahead";
    EXPECT_EQ(w->second.level, "UB");
    EXPECT_EQ(plain.backend.module.buffers.count(b->name + ".warm"), 0u);
    // Bands 1 and 2 read the next band's late pieces (those without a free slot:
    // 2 x pieces - slots) ahead: that many 32 KiB pieces more L2 hits, twice.
    const int64_t late = 2 * b->pieces.count - b->pieces.slots;
    EXPECT_EQ(ahead.report.l2_hit_bytes - plain.report.l2_hit_bytes, 2 * late * 32 * 1024);
    EXPECT_LT(ahead.report.cycles, plain.report.cycles)
        << "read ahead " << ahead.report.cycles << " cycles, without " << plain.report.cycles;
}

TEST(RingPanels, ColumnPanelVerifies) {
    const ScheduleSpec spec = parse_schedule(kColumnPanel, "column panel");
    NpuRun r = run_npu("gemm", {{"M", "256"}, {"N", "512"}, {"K", "512"}, {"dtype", "fp16"}}, spec, "ascend-like",
                       fresh_seed(), 1e-4, 1e-4);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    const nir::BufferInfo *b = ring_panel(r.backend.module);
    ASSERT_NE(b, nullptr) << "the B panel is not reloaded through a ring";
    EXPECT_NE(b->pieces.loop.find(".jo"), std::string::npos) << "reloaded per " << b->pieces.loop;
}

// Split over two cores (parallel io): each core reloads its own bands' panels
// through its own ring, the reload loop's range per core; the check replays
// each core.
TEST(RingPanels, OnEachCoreOfASplit) {
    ScheduleSpec spec = sample_schedule("gemm/schedules/ascend_panel_k256.json");
    Directive split;
    split.id = "cores";
    split.kind = DirectiveKind::Parallel;
    split.func = "C";
    split.vars = {"io"};
    split.cores = 2;
    spec.directives.insert(spec.directives.begin() + 1, split);
    NpuRun r = run_npu("gemm", {{"M", "512"}, {"N", "512"}, {"K", "1024"}, {"dtype", "fp16"}}, spec, "ascend-like",
                       fresh_seed(), 1e-4, 1e-4);
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    EXPECT_EQ(r.backend.module.cores, 2);
    EXPECT_NE(ring_panel(r.backend.module), nullptr) << "no ring on the split loop";
}

// Drops each ring flag operation of `ok`'s panel in turn and expects
// check_hazards to name the panel every time; returns how many were dropped.
int drop_each_ring_flag(const nir::NpuModule &ok) {
    EXPECT_EQ(hazard_message(ok), "");
    const nir::BufferInfo *b = ring_panel(ok);
    if (!b) {
        ADD_FAILURE() << "no panel in pieces";
        return 0;
    }
    int checked = 0;
    for (int nth = 0;; nth++) {
        nir::NpuModule m = ok;
        DropRingFlag drop(*b, nth);
        m.body = drop.mutate(m.body);
        if (!drop.dropped) {
            break;
        }
        std::string msg = hazard_message(m);
        EXPECT_NE(msg.find("ring panel " + b->name), std::string::npos)
            << "dropping ring flag #" << nth << " was not caught: " << msg;
        checked++;
    }
    return checked;
}

TEST(RingPanels, EveryRingFlagIsChecked) {
    const nir::NpuModule ok = synced_panel_gemm();
    const nir::BufferInfo *b = ring_panel(ok);
    ASSERT_NE(b, nullptr);
    EXPECT_GT(drop_each_ring_flag(ok), 2 * b->pieces.slots);
}

TEST(RingPanels, WaitAfterTheReadIsARace) {
    nir::NpuModule m = synced_panel_gemm();
    const nir::BufferInfo *b = ring_panel(m);
    ASSERT_NE(b, nullptr);
    WaitAfterRead move(*b);
    m.body = move.mutate(m.body);
    ASSERT_TRUE(move.moved);
    std::string msg = hazard_message(m);
    EXPECT_NE(msg.find("(RAW)"), std::string::npos) << msg;
}

// Loaded once: the 3x3 conv's weights (all 9 taps, 288 KiB in L1, no loop
// around them) are loaded in pieces of one tap and the first band's reads of
// each tap wait for its piece only. Verifies, is faster than the whole load,
// and every one of the raw flags is proved by check_hazards.
const tessel::ParamMap kConv{{"H", "8"}, {"W", "32"}, {"CI", "128"}, {"CO", "128"}, {"K", "3"}, {"dtype", "fp16"}};

nir::NpuModule synced_conv() {
    static ArchSpec keep = load_arch("ascend-like");
    HalidePipeline p = build_halide_pipeline("conv2d", kConv);
    PassOptions opt;
    opt.stop_after = "insert_sync";
    return build_npu(p, sample_schedule("conv2d/schedules/ops_ascend_3x3.json"), keep, opt).backend.module;
}

TEST(RingPanels, LoadedOnceInPiecesVerifiesAndStartsEarlier) {
    const ScheduleSpec spec = sample_schedule("conv2d/schedules/ops_ascend_3x3.json");
    const uint64_t seed = fresh_seed();
    NpuRun pieces = run_npu("conv2d", kConv, spec, "ascend-like", seed, 1e-4, 1e-4);
    PassOptions skip;
    skip.skip = {"ring_panels"};
    NpuRun whole = run_npu("conv2d", kConv, spec, "ascend-like", seed, 1e-4, 1e-4, skip);
    EXPECT_EQ(pieces.cmp.mismatches, 0) << failure(pieces);
    EXPECT_EQ(whole.cmp.mismatches, 0) << failure(whole);
    const nir::BufferInfo *b = ring_panel(pieces.backend.module);
    ASSERT_NE(b, nullptr) << "the weights are not loaded in pieces";
    EXPECT_EQ(b->pieces.count, 9);
    EXPECT_EQ(b->pieces.slots, 9);
    EXPECT_EQ(b->pieces.loop, "");
    EXPECT_LT(pieces.report.cycles, whole.report.cycles)
        << "in pieces " << pieces.report.cycles << " cycles, whole " << whole.report.cycles;
}

TEST(RingPanels, LoadedOnceEveryFlagIsChecked) {
    const nir::NpuModule ok = synced_conv();
    const nir::BufferInfo *b = ring_panel(ok);
    ASSERT_NE(b, nullptr);
    // The reader loads each piece as it starts on it (its first tile): the
    // set after that (guarded) load and the wait for it.
    EXPECT_EQ(drop_each_ring_flag(ok), 2);
}

// Loaded once, the last piece split: conv2d_q8's int8 weights (147 KiB, 16
// KiB per tap, ascend_fix.json reads them tap by tap) load as 48 + 48 + 32 +
// 16 KiB instead of three 48 KiB pieces (one per tap row), so what the matrix
// unit still has to do after the weights' last byte arrives is the last tap's
// 4 MMADs, not the last tap row's 12 (with three 48 KiB pieces). One band of 4 rows (H = 4), so the run
// is the first band. Bit-exact, and check_hazards proves each of the raw
// flags (the set after each of the three loads the reader issues, the wait
// after it).
const tessel::ParamMap kConvQ8{{"H", "4"}, {"W", "32"}, {"CI", "128"}, {"CO", "128"}, {"K", "3"}, {"stride", "1"},
                               {"shift", "14"}};

TEST(RingPanels, LoadedOnceLastPieceSplitLeavesOneTapAfterTheLastLoad) {
    const ScheduleSpec spec = sample_schedule("conv2d_q8/schedules/ascend_fix.json");
    NpuRun r = run_npu("conv2d_q8", kConvQ8, spec, "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    const nir::BufferInfo *b = ring_panel(r.backend.module);
    ASSERT_NE(b, nullptr) << "the weights are not loaded in pieces";
    EXPECT_EQ(b->pieces.loop, "");
    EXPECT_EQ(b->pieces.count, 4); // 48, 48, 32, 16 KiB
    EXPECT_EQ(b->pieces.slots, 9); // RingCheck's units: the 16 KiB chunks
    // The weights' loads are the GM reads of whole 16 KiB chunks (the input
    // rows are 17 KiB, bias and scale smaller).
    uint64_t weights_done = 0;
    int weight_loads = 0;
    for (const auto &e : r.report.trace) {
        if (e.op == isa::Op::DMA && e.src == "GM" && e.bytes % 16384 == 0) {
            weights_done = std::max(weights_done, e.end);
            weight_loads++;
        }
    }
    EXPECT_EQ(weight_loads, 4);
    // Its bytes are in L1 500 cycles (GM's latency on ascend-like) after it ends.
    int mmads_after = 0;
    for (const auto &e : r.report.trace) {
        mmads_after += e.op == isa::Op::MMAD && e.start >= weights_done + 500;
    }
    EXPECT_EQ(mmads_after, 4) << "the weights' last load ends at cycle " << weights_done;

    static ArchSpec keep = load_arch("ascend-like");
    PassOptions opt;
    opt.stop_after = "insert_sync";
    HalidePipeline p = build_halide_pipeline("conv2d_q8", kConvQ8);
    const nir::NpuModule synced = build_npu(p, spec, keep, opt).backend.module;
    EXPECT_EQ(drop_each_ring_flag(synced), 6);
}

// The first panel of a reloaded ring (gemm_q8's B panel, 4 pieces of 32 KiB,
// ascend_fix.json) is loaded piece by piece, each piece as the first tile's
// reader starts on it. So the first product needs piece 0, the first A tile,
// bias and scale, and MTE2's queue does not hold the panel's other pieces in
// front of A: the first MMAD starts after those four loads (before this, after eight: the whole panel, bias,
// scale, A and the next panel's first piece, at cycle 6319 at 512^3). The ring's flags are proved by check_hazards
// (the run compiles) and the simulator's race check (it runs).
TEST(RingPanels, FirstPanelLoadsPieceByPiece) {
    NpuRun r = run_npu("gemm_q8", {{"M", "512"}, {"N", "512"}, {"K", "512"}, {"shift", "12"}},
                       sample_schedule("gemm_q8/schedules/ascend_fix.json"), "ascend-like", fresh_seed());
    EXPECT_EQ(r.cmp.mismatches, 0) << failure(r);
    const nir::BufferInfo *b = ring_panel(r.backend.module);
    ASSERT_NE(b, nullptr) << "B is not reloaded through a ring";
    EXPECT_EQ(b->pieces.count, 4);
    EXPECT_EQ(b->pieces.loop.empty(), false);
    uint64_t first_mmad = UINT64_MAX;
    for (const auto &e : r.report.trace) {
        if (e.op == isa::Op::MMAD) {
            first_mmad = std::min(first_mmad, e.start);
        }
    }
    ASSERT_NE(first_mmad, UINT64_MAX);
    int loads_before = 0;
    for (const auto &e : r.report.trace) {
        loads_before += e.op == isa::Op::DMA && e.src == "GM" && e.end <= first_mmad;
    }
    EXPECT_EQ(loads_before, 4) << "first MMAD at cycle " << first_mmad;
}

// Only optimisation passes can be left out: skipping one the program needs is
// refused, naming the pass and the ones that may be skipped.
TEST(RingPanels, SkippingARequiredPassIsRefused) {
    static ArchSpec keep = load_arch("ascend-like");
    HalidePipeline p = build_halide_pipeline("gemm", kGemm);
    PassOptions opt;
    opt.skip = {"insert_sync"};
    try {
        build_npu(p, sample_schedule("gemm/schedules/ascend_panel.json"), keep, opt);
        ADD_FAILURE() << "skipping insert_sync was accepted";
    } catch (const tessel::UserError &e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("--skip-pass=insert_sync: only optimisation passes can be skipped; they are: ", 0), 0u) << msg;
        for (const char *optional : {"ring_panels", "bank_placement"}) {
            EXPECT_NE(msg.find(optional), std::string::npos) << msg;
        }
        EXPECT_EQ(msg.find("insert_sync", 20), std::string::npos) << msg;
    }
}

// allocate_buffers keeps one offset per buffer name: a pass that copies an
// allocation without renaming it (defer_tail's first version did) would get
// both copies one placement, whatever else is live at each; it is refused.
TEST(AllocateBuffers, ASecondAllocationOfANameIsRefused) {
    static ArchSpec keep = load_arch("ascend-like");
    HalidePipeline p = build_halide_pipeline("gemm", kGemm);
    PassOptions opt;
    opt.stop_after = "ring_panels";
    nir::NpuModule m = build_npu(p, sample_schedule("gemm/schedules/ascend_panel.json"), keep, opt).backend.module;
    EXPECT_TRUE(allocate_buffers(m).overflow_message.empty());
    struct FirstAllocate : public IRVisitor {
        Stmt found;
        using IRVisitor::visit;
        void visit(const Allocate *op) override {
            if (!found.defined()) {
                found = op;
            }
        }
    } first;
    m.body.accept(&first);
    ASSERT_TRUE(first.found.defined());
    const std::string name = first.found.as<Allocate>()->name;
    m.body = Block::make(m.body, first.found);
    try {
        allocate_buffers(m);
        ADD_FAILURE() << "a second allocation of " << name << " was accepted";
    } catch (const tessel::InternalError &e) {
        EXPECT_NE(std::string(e.what()).find("buffer " + name + " is allocated twice"), std::string::npos) << e.what();
    }
}
