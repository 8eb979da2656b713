// The analytical cost model: it ranks clearly better schedules above clearly
// worse ones, its overlap rule follows the buffer counts, its predicted
// timeline is consistent, and on the hand schedule it is close to the simulator.
#include "dsl/Compile.h"
#include "dsl/Roofline.h"
#include "scheduler/CostModel.h"
#include "scheduler/Tuner.h"
#include "tests/scheduler/SchedTestUtil.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <map>

using namespace tessel;
using namespace tessel::sched;

namespace {

Candidate matrix(int64_t tm, int64_t tn, int64_t tk, int buffers) {
    Candidate c;
    c.tile_m = tm, c.tile_n = tn, c.k_chunk = tk, c.via_mid = true;
    c.mid_buffers = c.op_buffers = c.acc_buffers = buffers;
    return c;
}

} // namespace

TEST(CostModel, RanksDoubleBufferedTensorizedAboveVectorAboveScalar) {
    SearchSpace space = test::space_for("gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, "ascend-like");
    Candidate vec; // the widest double-buffered vector-path candidate
    for (const Candidate &c : space.enumerate()) {
        if (c.path == Path::Vector && c.op_buffers == 2 && c.cores == 1 && c.tile_n * c.tile_m >= vec.tile_n * vec.tile_m) {
            vec = c;
        }
    }
    ASSERT_EQ(vec.path, Path::Vector);
    const double good = predict(space, matrix(128, 128, 64, 2)).cycles;
    const double single = predict(space, matrix(128, 128, 64, 1)).cycles;
    const double small = predict(space, matrix(16, 16, 16, 1)).cycles;
    const double vector = predict(space, vec).cycles;
    const double naive = predict(space, space.naive()).cycles;
    EXPECT_LT(good, single);
    EXPECT_LT(single, small);
    EXPECT_LT(small, vector);
    EXPECT_LT(vector, naive);
    // At least the physical limit: 256^3 MACs at 4096 per cycle.
    EXPECT_GE(good, 256.0 * 256 * 256 / 4096);
}

TEST(CostModel, OverlapFollowsBufferCounts) {
    // Elementwise add: load (MTE2), vector add (V), store (MTE3) per tile.
    SearchSpace space = test::space_for("elementwise", {{"N", "262144"}, {"op", "add"}}, "ascend-like");
    Candidate c;
    c.path = Path::Vector, c.tile_n = 16384, c.vector = 128;
    c.op_buffers = 2;
    Prediction two = predict(space, c);
    c.op_buffers = 1;
    Prediction one = predict(space, c);
    ASSERT_GE(two.stages.size(), 3u);
    double sum = 0, mx = 0;
    for (size_t i = 0; i < 3; i++) {
        sum += two.stages[i].total;
        mx = std::max(mx, two.stages[i].total);
        EXPECT_EQ(two.stages[i].iters, 262144 / 16384);
    }
    EXPECT_EQ(two.stages[0].pipe, "MTE2");
    EXPECT_EQ(two.stages[1].pipe, "V");
    EXPECT_EQ(two.stages[2].pipe, "MTE3");
    EXPECT_GE(two.cycles, mx);
    EXPECT_LT(two.cycles, one.cycles);
    EXPECT_LE(two.cycles, sum);
    EXPECT_GE(one.cycles, two.stages[0].total + two.stages[1].total)
        << "one buffer: a load waits for the vector unit to finish the previous tile";
    EXPECT_EQ(two.bound, two.stages[0].name) << "the add is GM-read bound";
}

TEST(CostModel, PredictedTimelineIsConsistent) {
    SearchSpace space = test::space_for("gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, "ascend-like");
    Prediction p = predict(space, matrix(128, 128, 64, 2), 6);
    ASSERT_EQ(p.timeline.size(), 6u * 3); // MTE2, MTE1, M per chunk
    std::map<std::string, double> last_end;
    for (const PredictedBar &b : p.timeline) {
        EXPECT_LT(b.start, b.end) << b.name;
        EXPECT_GE(b.start, last_end[b.pipe]) << "bars of one pipe overlap: " << b.name << " #" << b.iteration;
        last_end[b.pipe] = b.end;
    }
    EXPECT_EQ(p.timeline[0].pipe, "MTE2");
    EXPECT_EQ(p.timeline[2].pipe, "M");
}

TEST(CostModel, FastAndCloseToTheSimulatorOnTheHandSchedule) {
    SearchSpace space = test::space_for("gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, "ascend-like");
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<Candidate> all = space.enumerate();
    for (const Candidate &c : all) {
        predict(space, c);
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(us / static_cast<double>(all.size()), 500.0) << "per prediction";
    std::cout << all.size() << " candidates predicted in " << us / 1000 << " ms ("
              << us / static_cast<double>(all.size()) << " us each)\n";

    const Candidate hand = matrix(128, 128, 64, 2);
    const Candidate worse = matrix(32, 32, 16, 1);
    CompileRequest req;
    req.generator = "gemm";
    req.params = space.problem().params;
    req.schedule = space.to_spec(hand);
    RunReport a = run(req, 1);
    req.schedule = space.to_spec(worse);
    RunReport b = run(req, 1);
    ASSERT_TRUE(a.verified && b.verified);
    const double pa = predict(space, hand).cycles, pb = predict(space, worse).cycles;
    EXPECT_NEAR(pa, static_cast<double>(*a.cycles), 0.35 * static_cast<double>(*a.cycles));
    EXPECT_LT(*a.cycles, *b.cycles);
    EXPECT_LT(pa, pb);
}

TEST(CostModel, SoftmaxFollowsBandsBankConflictsAndTheSimulator) {
    // ascend-like fp16: a band's row reductions read the band down its columns
    // (512 B apart: one bank group), so wider bands cost more per repeat but
    // need fewer instructions; the hand schedule is predicted within 15 %.
    SearchSpace space = test::space_for("softmax", {{"ROWS", "64"}, {"COLS", "256"}, {"dtype", "fp16"}}, "ascend-like");
    Candidate hand;
    hand.path = Path::Vector, hand.tile_m = 8, hand.vector = 64;
    Candidate narrow = hand;
    narrow.tile_m = 2, narrow.vector = 16;
    std::map<std::string, double> sim;
    for (const Candidate *c : {&hand, &narrow}) {
        RunReport r = run(request_for(space, *c, "ascend-like"), 1);
        ASSERT_TRUE(r.verified && r.cycles) << c->describe() << " " << r.comparison;
        sim[c->describe()] = static_cast<double>(*r.cycles);
    }
    const Prediction ph = predict(space, hand), pn = predict(space, narrow);
    EXPECT_NEAR(ph.cycles, sim[hand.describe()], 0.15 * sim[hand.describe()]);
    EXPECT_NEAR(pn.cycles, sim[narrow.describe()], 0.15 * sim[narrow.describe()]);
    EXPECT_LT(sim[hand.describe()], sim[narrow.describe()]);
    EXPECT_LT(ph.cycles, pn.cycles);
    ASSERT_EQ(ph.stages.size(), 5u); // load, rowmax, expd, (rowsum, norm), store
    EXPECT_EQ(ph.stages[1].pipe, "V");
    EXPECT_EQ(ph.stages[2].pipe, "V");
    EXPECT_EQ(ph.stages[2].iters, 64 / 8);
    EXPECT_EQ(ph.bound, "V (every stage on it)") << "softmax is vector bound";
}

namespace {

// Simulated cycles of `c` (compiled, simulated and verified), or a test failure.
double simulated(const SearchSpace &space, const Candidate &c, const std::string &arch) {
    RunReport r = run(request_for(space, c, arch), 1);
    EXPECT_TRUE(r.verified && r.cycles) << c.describe() << " " << r.comparison;
    return static_cast<double>(r.cycles.value_or(0));
}

// The candidate the model predicts fastest among those `keep` accepts.
Candidate model_best(const SearchSpace &space, const std::function<bool(const Candidate &)> &keep) {
    Candidate best;
    double best_cycles = 1e300;
    for (const Candidate &c : space.enumerate()) {
        const double p = keep(c) ? predict(space, c).cycles : 1e300;
        if (p < best_cycles) {
            best = c, best_cycles = p;
        }
    }
    return best;
}

} // namespace

TEST(CostModel, ResidentWeightsBeatPerTapStagingWhereTheyFit) {
    // 3x3 conv, 16x32 pixels, 64 -> 128 channels on ascend-like: per tap the
    // per-tap form copies a row and the tap's weights (two DMAs, 500 cycles of
    // GM latency) for 64 matrix cycles; with the weights resident in L1 only
    // L1 -> L0 copies remain per tap. The model says so and the simulator agrees.
    SearchSpace space = test::space_for("conv2d", {{"H", "16"}, {"W", "32"}, {"CI", "64"}, {"CO", "128"}, {"dtype", "fp16"}},
                                        "ascend-like");
    const Candidate resident = model_best(space, [](const Candidate &c) { return c.band > 0; });
    const Candidate per_tap = model_best(space, [](const Candidate &c) { return c.band == 0 && c.path == Path::Matrix; });
    ASSERT_GT(resident.band, 0);
    EXPECT_EQ(resident.op_buffers, 2) << resident.describe();
    const double pr = predict(space, resident).cycles, pt = predict(space, per_tap).cycles;
    const double sr = simulated(space, resident, "ascend-like"), st = simulated(space, per_tap, "ascend-like");
    EXPECT_LT(pr, pt);
    EXPECT_LT(sr, st) << resident.describe() << " vs " << per_tap.describe();
    EXPECT_NEAR(pr, sr, 0.25 * sr) << resident.describe();
    const Prediction p = predict(space, resident);
    EXPECT_EQ(p.stages.front().iters, 1) << "the weights are loaded once";
}

TEST(CostModel, RowReductionsAlongTheRowBeatReductionsAcrossRows) {
    // softmax 16x512 fp16 on ascend-like: across the band's rows the row max
    // reads the band down its columns (one bank group per column); along the
    // row it is one VREDMAX per chunk of dense lanes.
    SearchSpace space = test::space_for("softmax", {{"ROWS", "16"}, {"COLS", "512"}, {"dtype", "fp16"}}, "ascend-like");
    auto one_core = [](bool along) {
        return [along](const Candidate &c) { return c.path == Path::Vector && c.cores == 1 && c.row_reduce == along; };
    };
    const Candidate along = model_best(space, one_core(true)), across = model_best(space, one_core(false));
    ASSERT_TRUE(along.row_reduce);
    const double pa = predict(space, along).cycles, pc = predict(space, across).cycles;
    const double sa = simulated(space, along, "ascend-like"), sc = simulated(space, across, "ascend-like");
    EXPECT_LT(pa, pc);
    EXPECT_LT(sa, sc) << along.describe() << " vs " << across.describe();
    EXPECT_NEAR(pa, sa, 0.25 * sa) << along.describe();
}

TEST(Roofline, CountsEachFuncOnce) {
    // Halide's default schedule recomputes softmax's row max and sum for every
    // element; the physical limit counts the algorithm's work: linear in COLS.
    const ArchSpec arch = load_arch("ascend-like");
    auto t_phys = [&](const std::string &cols) {
        ParamMap p = resolve_params(find_generator("softmax"), {{"ROWS", "64"}, {"COLS", cols}, {"dtype", "fp32"}});
        return compute_roofline("softmax", p, arch);
    };
    const Roofline a = t_phys("256"), b = t_phys("1024");
    EXPECT_NEAR(b.t_phys_cycles / a.t_phys_cycles, 4.0, 0.2);
    // rowmax and rowsum (init + COLS updates per row), expd and norm (one per element)
    EXPECT_EQ(a.vector_elements, 2 * 64 * (1 + 256) + 2 * 64 * 256);
    EXPECT_EQ(a.binding_resource, "vector");
}

TEST(Roofline, OperationsAtTheirWidthOverTheLoopsTheyDependOn) {
    const ArchSpec arch = load_arch("ascend-like");
    auto limit = [&](const std::string &gen, ParamMap given) {
        return compute_roofline(gen, resolve_params(find_generator(gen), given), arch);
    };
    // softmax's division is fp32 whatever the input type (its result is cast
    // to fp16 afterwards): the same bytes of division for fp16 and fp32 data,
    // and the fp16 kernel has the casts on top.
    const Roofline h = limit("softmax", {{"ROWS", "64"}, {"COLS", "256"}, {"dtype", "fp16"}});
    const Roofline f = limit("softmax", {{"ROWS", "64"}, {"COLS", "256"}, {"dtype", "fp32"}});
    EXPECT_EQ(h.vector_op_bytes.at("div"), 64.0 * 256 * 4);
    EXPECT_EQ(f.vector_op_bytes.at("div"), 64.0 * 256 * 4);
    EXPECT_GT(h.t_phys_cycles, f.t_phys_cycles);
    // LayerNorm's 1/sqrt(var/n + eps) is written inside the per-element
    // expression but depends on the row only: once per row.
    const Roofline ln = limit("layernorm", {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}});
    EXPECT_EQ(ln.vector_op_bytes.at("sqrt"), 64.0 * 4);
}

// softmax's row maximum is max(m, fp32(x)) over fp16 x: the maximum of an
// exact widening is the widening of the maximum, so the machine compares the
// fp16 elements (the vector unit's VREDMAX on fp16, 8 repeats per 1024-element
// row, not 16 on fp32 after a cast); the limit counts the comparison at 2 bytes
// and the widening of x once, where exp uses it. Before, it counted both at
// 4 bytes and the fp16 kernel ran above its limit (efficiency 1.005).
TEST(Roofline, MaximumOfAWideningInTheNarrowType) {
    const ArchSpec arch = load_arch("ascend-like");
    auto limit = [&](const std::string &dtype) {
        return compute_roofline("softmax",
                                resolve_params(find_generator("softmax"), {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", dtype}}),
                                arch);
    };
    const Roofline h = limit("fp16"), f = limit("fp32");
    EXPECT_EQ(h.vector_op_bytes.at("max"), 64.0 * 1024 * 2) << "the row maximum of fp16 data at 2 bytes";
    EXPECT_EQ(f.vector_op_bytes.at("max"), 64.0 * 1024 * 4);
    EXPECT_EQ(h.vector_op_bytes.at("cast"), 2 * 64.0 * 1024 * 4) << "x widened once (exp) and the result narrowed once";
}

// LayerNorm casts x to fp32 in two Funcs, mean's sum and centered = x - mean / n:
// the machine widens each element once and both read the widened copy (the
// kernel's one VCAST per band). The limit counted the widening in each Func, 16
// repeats per 1024-element row above what any schedule needs, so it was not a
// lower bound: 8232 -> 7208 cycles at 64 x 1024 (x once, gamma and beta once,
// the result narrowed once).
TEST(Roofline, AnInputWidenedInSeveralFuncsIsWidenedOnce) {
    const ArchSpec arch = load_arch("ascend-like");
    const Roofline ln = compute_roofline(
        "layernorm", resolve_params(find_generator("layernorm"), {{"ROWS", "64"}, {"COLS", "1024"}, {"dtype", "fp16"}}),
        arch);
    EXPECT_EQ(ln.vector_op_bytes.at("cast"), 2 * 64.0 * 1024 * 4 + 2 * 1024.0 * 4);
    EXPECT_EQ(ln.t_phys_cycles, 7208);
    EXPECT_EQ(ln.binding_resource, "vector");
}

// The compulsory GM reads are the input elements the algorithm reads, not the
// input tensors: a 1x1 convolution of stride 2 reads every other pixel of every
// other row, a quarter of its (2H - 1) x (2W - 1) input. Counted whole, the
// limit was above what the kernel ran in (56x32x128->128 fp16, ops_ascend_1x1_s2:
// 53570 cycles against 56968, "efficiency" 1.06). A 3x3 of stride 2 reads every
// pixel: counted whole.
TEST(Roofline, CompulsoryReadsAreTheElementsTheAlgorithmReads) {
    const ArchSpec arch = load_arch("ascend-like");
    auto conv = [&](int K) {
        return compute_roofline("conv2d",
                                resolve_params(find_generator("conv2d"), {{"H", "8"}, {"W", "16"}, {"CI", "32"},
                                                                          {"CO", "64"}, {"K", std::to_string(K)},
                                                                          {"stride", "2"}, {"dtype", "fp16"}}),
                                arch);
    };
    const int64_t weights1 = 64 * 32 * 2, weights3 = 9 * weights1;
    EXPECT_EQ(conv(1).gm_read_bytes, 8 * 16 * 32 * 2 + weights1);
    EXPECT_EQ(conv(3).gm_read_bytes, 17 * 33 * 32 * 2 + weights3);
    // A dense read is the whole tensor, as before: GEMM's A and B.
    const Roofline g = compute_roofline(
        "gemm", resolve_params(find_generator("gemm"), {{"M", "64"}, {"N", "128"}, {"K", "32"}}), arch);
    EXPECT_EQ(g.gm_read_bytes, (64 * 32 + 32 * 128) * 2);
}

// An integer division by 2^k (gemm_q8's `>> shift`, which Halide simplifies
// into a division) is one shift per element (VSHRS, 1 cycle per repeat), not a
// division (4): the limit counts what the machine needs.
TEST(Roofline, IntegerDivisionByAPowerOfTwoIsAShift) {
    // ascend-like without FIX's parameter table: the epilogue is vector work (below: with it, FIX's)
    ArchSpec arch = load_arch("ascend-like");
    for (auto &e : arch.engines) {
        e.quant_channels = 0;
    }
    const Roofline r = compute_roofline(
        "gemm_q8", resolve_params(find_generator("gemm_q8"), {{"M", "64"}, {"N", "128"}, {"K", "64"}}), arch);
    EXPECT_EQ(r.vector_op_bytes.at("shrs"), 64.0 * 128 * 4);
    EXPECT_EQ(r.vector_op_bytes.count("div"), 0u);
    EXPECT_EQ(arch.vector.cycles_for("shrs"), 1);
    EXPECT_EQ(arch.vector.cycles_for("div"), 4);
}

// On a machine whose FIX engine requantises on the way out of L0C (ascend-like: transform
// quant with a 256-channel parameter table), gemm_q8's and conv2d_q8's epilogues are not
// vector work: no schedule needs the vector unit for them, so the limit counts the epilogue's
// output bytes on FIX's fastest L0C edge instead, and the binding resource becomes the matrix
// unit or the GM. Where FIX cannot (gemmini-like), the epilogue stays vector work.
TEST(Roofline, RequantOfAMatrixAccumulatorIsFixWorkWhereFixRequantises) {
    const ArchSpec ascend = load_arch("ascend-like");
    const ParamMap p = resolve_params(find_generator("gemm_q8"), {{"M", "512"}, {"N", "512"}, {"K", "512"}});
    const Roofline r = compute_roofline("gemm_q8", p, ascend);
    EXPECT_EQ(r.vector_op_bytes.count("shrs"), 0u);
    EXPECT_EQ(r.vector_op_bytes.count("mul"), 0u);
    double fix = -1, vec = -1;
    for (const auto &t : r.terms) {
        if (t.resource == "FIX (requantise)") {
            fix = t.cycles;
        }
        if (t.resource == "vector") {
            vec = t.cycles;
        }
    }
    EXPECT_EQ(fix, 512.0 * 512 / 256); // int8 out at L0C->UB's 256 B/cycle, the fastest FIX edge
    EXPECT_EQ(vec, -1.0);
    EXPECT_EQ(r.t_phys_cycles, 16464); // GM read of A, B, bias, scale at 32 B/cycle
    EXPECT_EQ(r.binding_resource, "GM read");
    const Roofline big = compute_roofline(
        "gemm_q8", resolve_params(find_generator("gemm_q8"), {{"M", "1024"}, {"N", "1024"}, {"K", "512"}}), ascend);
    EXPECT_EQ(big.t_phys_cycles, 65536); // 1024 * 1024 * 512 / 8192 int8 MACs per cycle
    EXPECT_EQ(big.binding_resource, "matrix (int8)");
    // conv2d_q8 with ReLU: the same
    const Roofline conv = compute_roofline(
        "conv2d_q8",
        resolve_params(find_generator("conv2d_q8"),
                       {{"H", "56"}, {"W", "32"}, {"CI", "128"}, {"CO", "128"}, {"K", "3"}, {"shift", "14"}}),
        ascend);
    EXPECT_EQ(conv.vector_op_bytes.count("shrs"), 0u);
    EXPECT_EQ(conv.binding_resource, "matrix (int8)");
    EXPECT_EQ(conv.t_phys_cycles, 32256);
    // gemmini-like's store engine lists quant but has no parameter table: vector work as before
    const Roofline g = compute_roofline("gemm_q8", p, load_arch("gemmini-like"));
    EXPECT_GT(g.vector_op_bytes.count("shrs") + g.vector_op_bytes.count("div"), 0u);
}
