#include "scheduler/CostModel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace tessel::sched {

namespace {

// Calibrated once against the simulator (docs/tuner.md): the vector-path GEMM
// issues about 42 scalar instructions per (tile row, k) pair plus 2.6 per
// vector row (tile_n / vector of them), and keeps the vector unit about 3.4
// cycles busy per vector multiply-accumulate row; the scalar fallback
// issues about 27 instructions per MAC besides its two GM loads.
constexpr double kVectorPathScalarPerPair = 42.0;  // per (row of the tile, k) pair
constexpr double kVectorPathScalarPerRow = 2.6;    // per vector row within a pair
constexpr double kVectorPathVectorPerRow = 3.4;
constexpr double kNaiveInstrPerMac = 27.0;
// Scalar instructions around each DMA / matrix / vector instruction (flags, loop control).
constexpr double kIssuePerOp = 3.0;
// On the matrix path (read off the simulator's counts: a gemmini-like 3x3 conv
// issues 51 scalar instructions per tap with single-buffered operands, 95 with
// double-buffered ones; an ascend-like GEMM 88 per k chunk of 4 DMAs + 1 MMAD).
constexpr double kMatrixIssuePerOp = 17.0;
constexpr double kRotateIssue = 22.0; // per multi-buffered conv2d copy per tap
// conv2d with resident weights: per (tap, row) the input row's copy and the
// MMAD; per band the input band's and the write-back's DMAs and the loop around.
constexpr double kConvResidentIssuePerStep = 34.0;
constexpr double kConvResidentIssuePerBand = 210.0;
// Softmax (read off the compiled code): each row of a band runs about 42
// scalar instructions for expd and as many for norm (addresses, the row
// statistic's load and broadcast), a band about 90 more; a band copied in by
// scalar code (no engine into the vector level) costs a GM load (its latency)
// and a store per element, plus loop control.
constexpr double kSoftmaxScalarPerRow = 84.0;
constexpr double kSoftmaxScalarPerBand = 90.0;
constexpr double kScalarCopyInstrPerElement = 18.0; // auto-int8: 72,781 instructions for 4,096 elements
constexpr double kScalarCopyRotateInstr = 6.0;      // per element, per double-buffered side of the copy
// With the row reductions along the row (row_reduce) about 40 per row (the
// chunks' loops fold into repeats).
constexpr double kRowReduceScalarPerRow = 40.0;

struct Stage {
    std::string name, pipe;
    double t = 0;      // cycles per iteration
    double lat = 0;    // visible this long after the end
    int buffers = 2;   // copies of the buffer it hands to the next stage
    int release = 1;   // the stage that frees a copy: the next one (1), or a later reader (2, ...)
};

struct PipeResult {
    double total = 0, period = 0, fill = 0;
    std::string bound;
    std::vector<PredictedBar> bars;
};

// Iteration t of stage s starts after stage s-1's iteration t is visible, after
// its own iteration t-1, and after the stage that frees the copy it overwrites
// (s+1, or a later reader: Stage::release) completed iteration t - buffers (a
// DMA releases its source when complete, latency included, as the simulator's
// flags fire). Simulated for a window, extrapolated linearly.
PipeResult run_pipeline(const std::vector<Stage> &st, int64_t iters, int bar_iters) {
    PipeResult r;
    if (st.empty() || iters <= 0) {
        return r;
    }
    const int64_t window = std::min<int64_t>(iters, 64);
    const size_t n = st.size();
    std::vector<std::vector<double>> end(n, std::vector<double>(window, 0));
    for (int64_t t = 0; t < window; t++) {
        for (size_t s = 0; s < n; s++) {
            double start = t > 0 ? end[s][t - 1] : 0;
            if (s > 0) {
                start = std::max(start, end[s - 1][t] + st[s - 1].lat);
            }
            const size_t freer = std::min(n - 1, s + static_cast<size_t>(std::max(1, st[s].release)));
            if (freer > s && t - st[s].buffers >= 0) {
                start = std::max(start, end[freer][t - st[s].buffers] + st[freer].lat);
            }
            end[s][t] = start + st[s].t;
            if (t < bar_iters) {
                r.bars.push_back({st[s].pipe, st[s].name, t, start, end[s][t]});
            }
        }
    }
    const double last = end[n - 1][window - 1] + st[n - 1].lat;
    if (window >= 4) {
        const int64_t half = window / 2;
        r.period = (end[n - 1][window - 1] - end[n - 1][half - 1]) / static_cast<double>(window - half);
    } else {
        r.period = (end[n - 1][window - 1]) / static_cast<double>(window);
    }
    r.total = last + static_cast<double>(iters - window) * r.period;
    r.fill = std::max(0.0, r.total - r.period * static_cast<double>(iters));
    size_t arg = 0;
    for (size_t s = 1; s < n; s++) {
        if (st[s].t > st[arg].t) {
            arg = s;
        }
    }
    r.bound = st[arg].name;
    // Stages on one pipe share its in-order queue: the recurrence above lets
    // them overlap, so the pipe's total work bounds the time (softmax's three
    // vector stages, once advance_head no longer keeps them apart).
    std::map<std::string, double> per_pipe;
    for (const Stage &s : st) {
        per_pipe[s.pipe] += s.t * static_cast<double>(iters);
    }
    for (const auto &[pipe, busy] : per_pipe) {
        if (busy > r.total) {
            r.total = busy;
            r.period = std::max(r.period, busy / static_cast<double>(iters));
            r.fill = std::max(0.0, r.total - r.period * static_cast<double>(iters));
            r.bound = pipe + " (every stage on it)";
        }
    }
    return r;
}

// One DMA of `rows` runs of `run` bytes, `stride` bytes apart on the GM side.
// `reread` is the fraction of the GM bytes that were read before (L2 hits).
double dma_cycles(const ArchSpec &a, const std::string &src, const std::string &dst, int64_t rows, int64_t run,
                  int64_t stride, double reread, int cores) {
    const DmaEdge *edge = nullptr;
    const DmaEngine *e = a.engine_for(src, dst, &edge);
    if (!e || !edge || rows <= 0 || run <= 0) {
        return 0;
    }
    const MemoryLevel *ls = a.find_level(src), *ld = a.find_level(dst);
    const bool gm_src = ls && ls->off_chip, gm_dst = ld && ld->off_chip;
    // Runs dense on both sides merge into one.
    const bool merged = stride == run;
    const int64_t runs = merged ? 1 : rows;
    const int64_t run_bytes = merged ? rows * run : run;
    const int64_t burst = std::max(1, e->burst_bytes);
    const double bytes = static_cast<double>(runs * ((run_bytes + burst - 1) / burst * burst));
    const double per_core_gm = a.chip.gm_bytes_per_cycle > 0 ? a.chip.gm_bytes_per_cycle : edge->bytes_per_cycle;
    const double gm = std::min(per_core_gm, a.chip.gm_aggregate_bytes_per_cycle > 0
                                                ? a.chip.gm_aggregate_bytes_per_cycle / std::max(1, cores)
                                                : per_core_gm);
    double cycles = 0;
    if (gm_src) {
        const double first = std::min(edge->bytes_per_cycle, gm);
        const bool l2 = a.chip.l2_bytes > 0 && a.chip.l2_rd_bytes_per_cycle > 0;
        const double hit = l2 ? a.chip.l2_rd_bytes_per_cycle : first;
        // The L2 fills sectors (the simulator's L2Cache): every first-touch byte comes
        // from GM, in whole sectors, so a run shorter than a sector fetches all of it.
        const double miss = 1 - reread;
        double fetched = 1;
        if (l2 && a.chip.l2_sector_bytes > 0) {
            const int64_t sector = a.chip.l2_sector_bytes;
            fetched = std::max(1.0, static_cast<double>((run_bytes + sector - 1) / sector * sector) /
                                        static_cast<double>((run_bytes + burst - 1) / burst * burst));
        }
        cycles = bytes * (miss * fetched / first + (1 - miss) / hit);
    } else if (gm_dst) {
        const double w = a.chip.l2_bytes > 0 && a.chip.l2_wr_bytes_per_cycle > 0 ? a.chip.l2_wr_bytes_per_cycle
                                                                                 : ld->wr_bytes_per_cycle;
        cycles = bytes / std::min(edge->bytes_per_cycle, w > 0 ? w : edge->bytes_per_cycle);
    } else {
        cycles = bytes / edge->bytes_per_cycle;
    }
    if ((gm_src || gm_dst) && e->misalign_factor < 1.0 && e->align_bytes > 0) {
        // The simulator slows a run whose GM address is not aligned. Runs start
        // at multiples of the run length (the chunk's offset in its row) plus
        // multiples of the row stride: the aligned fraction of the start
        // addresses is gcd(run, stride, align) / align (buffers are aligned).
        const int64_t al = e->align_bytes;
        const int64_t g = std::gcd(std::gcd(run_bytes, al), merged ? al : std::gcd(stride, al));
        const double aligned = static_cast<double>(g) / static_cast<double>(al);
        cycles *= aligned + (1 - aligned) / e->misalign_factor;
    }
    const int64_t descriptors = (runs + std::max<int64_t>(1, e->max_count) - 1) / std::max<int64_t>(1, e->max_count);
    return cycles + static_cast<double>(e->setup_cycles * std::max<int64_t>(1, descriptors));
}

// Data is visible `latency` after a DMA, or the L2 latency when every byte read
// was an L2 hit: a chunk read before (fraction `reread`) is all hits.
double dma_latency(const ArchSpec &a, const std::string &src, const std::string &dst, double reread = 0) {
    const DmaEngine *e = a.engine_for(src, dst);
    if (!e) {
        return 0;
    }
    const MemoryLevel *ls = a.find_level(src);
    if (ls && ls->off_chip && a.chip.l2_bytes > 0 && a.chip.l2_latency > 0 && a.chip.l2_latency < e->latency) {
        return reread * a.chip.l2_latency + (1 - reread) * e->latency;
    }
    return e->latency;
}

std::string dma_pipe(const ArchSpec &a, const std::string &src, const std::string &dst) {
    const DmaEngine *e = a.engine_for(src, dst);
    return e ? e->pipe : "?";
}

StageTime stage_time(const Stage &s, const std::string &loop, int64_t iters) {
    return {s.name, s.pipe, loop, s.t, iters, s.t * static_cast<double>(iters)};
}

Prediction predict_elementwise(const SearchSpace &space, const Candidate &c, int bar_iters) {
    const Problem &p = space.problem();
    const ArchSpec &a = p.arch;
    const std::string &ub = a.vector.level;
    const int s = dtype_bytes(p.in_t);
    const int64_t tiles = p.length / c.tile_n / c.cores;
    Stage load{"load inputs (GM->" + ub + ")", dma_pipe(a, "GM", ub), 0, dma_latency(a, "GM", ub), c.op_buffers};
    load.t = p.inputs * dma_cycles(a, "GM", ub, 1, c.tile_n * s, c.tile_n * s, 0.0, c.cores);
    // Vector work: rows of `vector` lanes, each row a whole number of repeats.
    const int esz = p.chain ? 4 : s;
    const double rows = static_cast<double>(c.tile_n) / c.vector;
    const double repeats_per_row = std::ceil(static_cast<double>(c.vector) * esz / a.vector.bytes_per_repeat);
    double op_cycles = a.vector.cycles_for("add");
    if (p.chain) { // casts of a, b, c; add; max; mul; exp; cast back
        op_cycles = 3 * a.vector.cycles_for("cast") + a.vector.cycles_for("add") + a.vector.cycles_for("max") +
                    a.vector.cycles_for("mul") + a.vector.cycles_for("exp") + a.vector.cycles_for("cast");
    }
    Stage vec{"vector ops (" + ub + ")", a.vector.pipe, rows * repeats_per_row * op_cycles, 0, 1};
    Stage store{"store out (" + ub + "->GM)", dma_pipe(a, ub, "GM"), 0, dma_latency(a, ub, "GM"), 1};
    store.t = dma_cycles(a, ub, "GM", 1, c.tile_n * s, c.tile_n * s, 0.0, c.cores);
    PipeResult pr = run_pipeline({load, vec, store}, tiles, bar_iters);
    Prediction out;
    out.cycles = pr.total;
    out.bound = pr.bound;
    out.timeline = pr.bars;
    for (const Stage &st : {load, vec, store}) {
        out.stages.push_back(stage_time(st, "tile", tiles));
    }
    const double ops = p.chain ? 8 : 1;
    const double issue = a.scalar.issue_cycles * static_cast<double>(tiles) *
                         (kIssuePerOp * (p.inputs + 1) + ops * std::ceil(rows / a.vector.max_repeat) * kIssuePerOp);
    out.stages.push_back({"scalar issue", a.scalar.pipe, "tile", issue / std::max<int64_t>(1, tiles), tiles, issue});
    if (issue > out.cycles) {
        out.cycles = issue, out.bound = "scalar issue";
    }
    return out;
}

// Extra cycles of one vector repeat whose operand takes `lanes` elements
// `stride` bytes apart in `level` (the simulator's bank model: a group serves
// one block per cycle); 0 without a bank model.
double strided_conflict(const MemoryLevel *level, int64_t lanes, int64_t stride) {
    if (!level || level->bank_groups <= 0 || level->banks_per_group <= 0 || level->bank_row_bytes <= 0) {
        return 0;
    }
    const int64_t banks = static_cast<int64_t>(level->bank_groups) * level->banks_per_group;
    std::map<int64_t, std::set<int64_t>> blocks_of_group;
    for (int64_t i = 0; i < lanes; i++) {
        const int64_t block = i * stride / level->bank_row_bytes;
        blocks_of_group[(block % banks) % level->bank_groups].insert(block);
    }
    size_t worst = 1;
    for (const auto &kv : blocks_of_group) {
        worst = std::max(worst, kv.second.size());
    }
    return static_cast<double>(worst - 1);
}

// Softmax per band of R rows (C columns): the band is loaded (DMA, or scalar
// code without an engine into the vector level), the four Funcs run on the
// vector unit (the row reductions folded into one instruction of C repeats of
// R lanes reading the band down its columns, so with bank conflicts; expd and
// norm one instruction per row and op), the band leaves by DMA.
Prediction predict_softmax(const SearchSpace &space, const Candidate &c, int bar_iters) {
    const Problem &p = space.problem();
    const ArchSpec &a = p.arch;
    Prediction out;
    const std::string &vl = a.vector.level;
    const MemoryLevel *gm = a.find_level("GM");
    if (c.path == Path::Naive) {
        // Halide's default recomputes each row statistic per element: the row is read C times per element.
        const double per = 2.0 * (gm ? gm->latency : 0) + kNaiveInstrPerMac * a.scalar.issue_cycles;
        const double elems = static_cast<double>(p.rows) * p.length * p.length;
        out.cycles = elems * per;
        out.bound = "scalar issue";
        out.stages.push_back({"scalar code", a.scalar.pipe, "element", per, static_cast<int64_t>(elems), out.cycles});
        return out;
    }
    const int s = dtype_bytes(p.in_t);
    const bool cast = p.in_t != DType::FP32;
    const double R = static_cast<double>(c.tile_m), C = static_cast<double>(p.length);
    const int64_t bands = p.rows / c.tile_m / c.cores;
    const int64_t band_bytes = c.tile_m * p.length * s;
    const MemoryLevel *lv = a.find_level(vl);
    std::vector<Stage> stages;
    Stage load{"load band (GM->" + vl + ")", dma_pipe(a, "GM", vl), 0, dma_latency(a, "GM", vl), c.op_buffers};
    if (a.engine_for("GM", vl)) {
        load.t = dma_cycles(a, "GM", vl, 1, band_bytes, band_bytes, 0.0, c.cores);
    } else {
        // Copied in by scalar code, element by element: a load from GM, or from
        // the level the band was staged into by DMA first (via_level).
        const MemoryLevel *from = gm;
        if (c.via_level > 0) {
            const std::string &mid = space.softmax_mid_levels().at(c.via_level - 1);
            from = a.find_level(mid);
            stages.push_back({"load band (GM->" + mid + ")", dma_pipe(a, "GM", mid),
                              dma_cycles(a, "GM", mid, 1, band_bytes, band_bytes, 0.0, c.cores),
                              dma_latency(a, "GM", mid), c.mid_buffers});
        }
        load.name = "copy band in (scalar code)";
        load.pipe = a.scalar.pipe;
        load.lat = 0;
        // A double-buffered source or destination costs address arithmetic per element.
        const int rotating = (c.op_buffers > 1 ? 1 : 0) + (c.via_level > 0 && c.mid_buffers > 1 ? 1 : 0);
        load.t = R * C * ((from ? from->latency : 0) + (lv ? lv->latency : 0) +
                          (kScalarCopyInstrPerElement + kScalarCopyRotateInstr * rotating) * a.scalar.issue_cycles);
    }
    load.release = 2; // expd, in the second vector stage, reads the band last
    stages.push_back(load);
    auto reps = [&](double lanes) { return std::ceil(lanes * 4 / a.vector.bytes_per_repeat); };
    // One repeat of an op: its cost plus the bank conflicts of what it reads:
    // `dense` operands of `lanes` fp32 lanes, and optionally one operand of
    // R lanes `stride` bytes apart (a band's column). With one bank group
    // (gemmini-like's ACC) every block read serialises; with many, only the
    // column's blocks that share a group do.
    const bool one_group = lv && lv->bank_groups == 1 && lv->bank_row_bytes > 0;
    auto op = [&](const char *key, int dense, double lanes, int64_t stride) {
        double extra = 0;
        if (one_group) {
            const double per = std::ceil(std::min(lanes, a.vector.bytes_per_repeat / 4.0) * 4 / lv->bank_row_bytes);
            const double blocks = dense * per + (stride > 0 ? strided_conflict(lv, c.tile_m, stride) + 1 : 0);
            extra = std::max(0.0, blocks - 1);
        } else if (stride > 0) {
            extra = strided_conflict(lv, c.tile_m, stride);
        }
        return static_cast<double>(a.vector.cycles_for(key)) + extra;
    };
    const double row_reps = (C / c.vector) * reps(c.vector); // a row in vectors of c.vector lanes
    const double w = c.vector;
    // The vector work in stages, as the simulator overlaps them: rowmax, which
    // may run while the previous band's store is in flight; expd, the band's
    // last read (advance_head issues the next band's load right after it, so
    // the load overlaps the rest: the load's Stage::release is expd); rowsum
    // and norm, which wait for the previous store (norm's buffer is single).
    double v1 = 0, v2 = 0, v2e = 0;
    if (c.row_reduce) {
        // Per row and chunk of w: (the cast and) a VREDMAX of the chunk, then a
        // one-element max into rowmax; a VREDSUM of expd's chunk and a one-element add.
        const double chunks = C / w;
        v1 += R * (row_reps * ((cast ? op("cast", 1, w, 0) : 0) + op("max", 1, w, 0)) + chunks * op("max", 2, 1, 0));
        v2 += R * (row_reps * op("add", 1, w, 0) + chunks * op("add", 2, 1, 0));
    } else {
        const double col_reps = reps(R); // one column of the band (R lanes of fp32)
        v1 += col_reps * op("default", 0, R, 0);                                        // rowmax = lowest
        if (cast) {
            v1 += C * col_reps * (op("cast", 0, R, p.length * s) + op("max", 2, R, 0)); // cast down the columns, max
        } else {
            v1 += C * col_reps * op("max", 1, R, p.length * 4);
        }
        v2 += col_reps * op("default", 0, R, 0) + C * col_reps * op("add", 1, R, p.length * 4); // rowsum
    }
    v2e += R * row_reps * ((cast ? op("cast", 1, w, 0) : 0) + op("default", 0, w, 0) + op("sub", 2, w, 0) +
                           op("exp", 1, w, 0)); // expd
    v2 += R * row_reps * (op("default", 0, w, 0) + op("div", 2, w, 0) + (cast ? op("cast", 1, w, 0) : 0)); // norm
    const double issue = (R * (c.row_reduce ? kRowReduceScalarPerRow : kSoftmaxScalarPerRow) + kSoftmaxScalarPerBand) *
                         a.scalar.issue_cycles;
    // The scalar unit issues both stages' instructions (shared in proportion).
    auto vstage = [&](const std::string &what, double v, double issue_share) {
        Stage st{what + " (" + vl + ")", a.vector.pipe, std::max(v, issue_share), 0, 1};
        if (issue_share > v) {
            st.name = what + ": scalar issue";
            st.pipe = a.scalar.pipe;
        }
        return st;
    };
    Stage store{"store band (" + vl + "->GM)", dma_pipe(a, vl, "GM"),
                dma_cycles(a, vl, "GM", 1, band_bytes, band_bytes, 0.0, c.cores), dma_latency(a, vl, "GM"), 1};
    const double vall = v1 + v2e + v2;
    stages.push_back(vstage("rowmax", v1, issue * v1 / vall));
    stages.push_back(vstage("expd", v2e, issue * v2e / vall));
    stages.push_back(vstage("rowsum, norm", v2, issue * v2 / vall));
    stages.push_back(store);
    PipeResult pr = run_pipeline(stages, bands, bar_iters);
    out.cycles = pr.total;
    out.bound = pr.bound;
    out.timeline = pr.bars;
    for (const Stage &st : stages) {
        out.stages.push_back(stage_time(st, "band", bands));
    }
    return out;
}

// A chunk's copies run ahead of their consumer by at most the buffers, and by
// no more chunks than the engine keeps descriptors in flight (auto-int8's
// CDMA: 2, one chunk's A and B), `dmas` copies per chunk.
int dma_ahead(const ArchSpec &a, const std::string &src, const std::string &dst, int buffers, int dmas) {
    const DmaEngine *e = a.engine_for(src, dst);
    return e && e->max_outstanding > 0 ? std::max(1, std::min(buffers, e->max_outstanding / dmas)) : buffers;
}

// One m x k x n product on the matrix unit: a cycle per fractal, plus the fill
// and drain when single-buffered operands keep the MMADs from running back to back.
Stage mmad_stage(const ArchSpec &a, DType t, int64_t m, int64_t k, int64_t n, int op_buffers) {
    const MatrixUnit &mu = a.matrix;
    const MatrixShape &f = mu.shapes.at(t);
    const double fractals = std::ceil(static_cast<double>(m) / f.m0) * std::ceil(static_cast<double>(k) / f.k0) *
                            std::ceil(static_cast<double>(n) / f.n0);
    return {"mmad " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n), mu.pipe,
            fractals + (op_buffers == 1 ? mu.fill_drain_cycles : 0), static_cast<double>(mu.latency), 1};
}

// conv2d with resident weights (Candidate::band): all weights GM -> mid level
// once, in pieces of one tap, the first band starting after the first; per band
// of B output rows the input band (B + 2 rows) GM -> mid, then per tap the
// band's input rows mid -> a level, per tap and row the
// product (W pixels x CI) * (CI x CO), per tap the weights mid -> b level
// (shared by the band's rows), and the band's accumulator back to GM.
Prediction predict_conv_resident(const SearchSpace &space, const Candidate &c, int bar_iters) {
    const Problem &p = space.problem();
    const ArchSpec &a = p.arch;
    const MatrixUnit &mu = a.matrix;
    const std::string &mid = space.mid_level();
    const int sa = dtype_bytes(p.in_t), sacc = dtype_bytes(p.acc_t);
    const int64_t bands = p.rows / c.band * p.batch;
    const int64_t steps = bands * p.taps * c.band; // (tap, row) pairs
    const int64_t w_bytes = p.taps * p.K * p.N * sa;
    // The weights load in pieces of one tap (ring_panels' load-once form): the
    // first band starts after the first tap, the rest arrive while it computes.
    const double w_all = dma_cycles(a, "GM", mid, 1, w_bytes, w_bytes, 0, 1);
    const double w_tap = dma_cycles(a, "GM", mid, 1, w_bytes / p.taps, w_bytes / p.taps, 0, 1);
    const int64_t row_bytes = p.M * p.K * sa, tap_w = p.K * p.N * sa;
    Stage l0{"load input row, tap weights (" + mid + "->" + mu.a_level + "," + mu.b_level + ")",
             dma_pipe(a, mid, mu.a_level), 0, dma_latency(a, mid, mu.a_level),
             dma_ahead(a, mid, mu.a_level, c.op_buffers, 1)}; // the tap weights: one copy per band rows
    l0.t = dma_cycles(a, mid, mu.a_level, 1, row_bytes, row_bytes, 0, 1) +
           dma_cycles(a, mid, mu.b_level, 1, tap_w, tap_w, 0, 1) / static_cast<double>(c.band);
    const std::vector<Stage> inner = {l0, mmad_stage(a, p.in_t, p.M, p.K, p.N, c.op_buffers)};
    PipeResult stream = run_pipeline(inner, steps, bar_iters);
    const int64_t in_row = (p.M + 2) * p.K * sa;
    const double reread = 2.0 / static_cast<double>(c.band + 2); // the rows shared with the band before
    Stage load{"load input band (GM->" + mid + ")", dma_pipe(a, "GM", mid),
               dma_cycles(a, "GM", mid, c.band + 2, in_row, in_row, reread, 1), dma_latency(a, "GM", mid, reread),
               c.mid_buffers};
    Stage compute{"tap and row loop", mu.pipe, stream.period * static_cast<double>(p.taps * c.band), 0,
                  c.acc_buffers};
    const int64_t out_bytes = c.band * p.M * p.N * sacc;
    Stage wb{"write back band (" + mu.c_level + "->GM)", dma_pipe(a, mu.c_level, "GM"),
             dma_cycles(a, mu.c_level, "GM", 1, out_bytes, out_bytes, 0, 1), dma_latency(a, mu.c_level, "GM"), 1};
    PipeResult outer = run_pipeline({load, compute, wb}, bands, 0);
    const double preload = w_tap + dma_latency(a, "GM", mid) + std::max(0.0, w_all - w_tap - compute.t);
    // Scalar issue (read off the simulator's counts): about 34 instructions per
    // (tap, row) (the input row's copy and the MMAD), 210 per band, 20 more per
    // multi-buffered copy (the copy index from the loops around it), 6 and 5
    // more per (tap, row) with a double-buffered input band or accumulator.
    const double copies = static_cast<double>(steps + bands * p.taps);
    const double issue =
        a.scalar.issue_cycles * (static_cast<double>(steps) * (kConvResidentIssuePerStep + (c.mid_buffers > 1 ? 6 : 0) +
                                                               (c.acc_buffers > 1 ? 5 : 0)) +
                                 static_cast<double>(bands) * kConvResidentIssuePerBand +
                                 (c.op_buffers > 1 ? kRotateIssue * copies : 0));
    Prediction out;
    out.cycles = preload + std::max({outer.total + stream.fill, stream.total, issue});
    out.bound = issue >= std::max(outer.total + stream.fill, stream.total) ? "scalar issue" : outer.bound;
    out.stages.push_back({"load weights (GM->" + mid + ")", dma_pipe(a, "GM", mid), "kernel", preload, 1, preload});
    out.stages.push_back(stage_time(load, "band", bands));
    for (const Stage &st : inner) {
        out.stages.push_back(stage_time(st, "tap x row", steps));
    }
    out.stages.push_back(stage_time(wb, "band", bands));
    out.stages.push_back({"scalar issue", a.scalar.pipe, "tap x row", issue / static_cast<double>(steps), steps, issue});
    out.timeline = stream.bars;
    return out;
}

Prediction predict_gemm(const SearchSpace &space, const Candidate &c, int bar_iters) {
    const Problem &p = space.problem();
    const ArchSpec &a = p.arch;
    Prediction out;
    const double macs = static_cast<double>(p.M) * p.N * p.K * p.rows * p.batch * p.taps; // gemm: rows = batch = taps = 1
    if (c.path == Path::Naive) {
        const MemoryLevel *gm = a.find_level("GM");
        const double per_mac = 2.0 * (gm ? gm->latency : 0) + kNaiveInstrPerMac * a.scalar.issue_cycles;
        out.cycles = macs * per_mac;
        out.bound = "scalar issue";
        out.stages.push_back({"scalar code", a.scalar.pipe, "mac", per_mac, static_cast<int64_t>(macs), out.cycles});
        return out;
    }
    const int sa = dtype_bytes(p.in_t), sacc = dtype_bytes(p.acc_t);
    // A conv2d is GEMM-shaped per output row (pixels x CI x CO), one chunk per tap;
    // a row of input pixels is read by every channel tile and every tap, the
    // weights by every pixel tile of every row.
    const bool conv = p.op == OpKind::Conv2d;
    const int64_t images = conv ? p.rows * p.batch : 1;
    const int64_t tiles = (p.M / c.tile_m) * (p.N / c.tile_n) * images / c.cores;
    const int64_t chunks = conv ? p.taps : p.K / c.k_chunk;
    const double a_reread = conv ? 1.0 - static_cast<double>(c.tile_n) / (p.N * p.taps)
                                 : 1.0 - static_cast<double>(c.tile_n) / p.N;
    const double b_reread = 1.0 - static_cast<double>(c.tile_m) / (p.M * images);
    std::vector<Stage> inner;
    std::string wb_src;
    if (c.path == Path::Vector) {
        const std::string &ub = a.vector.level;
        Stage load{"load A,B chunks (GM->" + ub + ")", dma_pipe(a, "GM", ub), 0,
                   dma_latency(a, "GM", ub, std::min(a_reread, b_reread)), c.op_buffers};
        load.t = dma_cycles(a, "GM", ub, c.tile_m, c.k_chunk * sa, p.K * sa, a_reread, c.cores) +
                 dma_cycles(a, "GM", ub, c.k_chunk, c.tile_n * sa, p.N * sa, b_reread, c.cores);
        const double rows = static_cast<double>(c.tile_m) * c.k_chunk * (c.tile_n / c.vector);
        const double reps = std::ceil(static_cast<double>(c.vector) * sacc / a.vector.bytes_per_repeat);
        Stage vec{"vector multiply-add", a.vector.pipe, rows * reps * kVectorPathVectorPerRow, 0, 1};
        const double pairs = static_cast<double>(c.tile_m) * c.k_chunk;
        Stage issue{"scalar issue", a.scalar.pipe,
                    (pairs * kVectorPathScalarPerPair + rows * kVectorPathScalarPerRow) * a.scalar.issue_cycles, 0, 1};
        inner = {load, issue.t > vec.t ? issue : vec};
        wb_src = ub;
    } else {
        const MatrixUnit &mu = a.matrix;
        const std::string first_a = c.via_mid ? space.mid_level() : mu.a_level;
        const std::string first_b = c.via_mid ? space.mid_level() : mu.b_level;
        auto ahead = [&](const std::string &src, const std::string &dst, int buffers, int dmas) {
            return dma_ahead(a, src, dst, buffers, dmas);
        };
        Stage load{"load " + std::string(c.a_panel ? "B" : "A,B") + " chunk (GM->" + first_b + ")",
                   dma_pipe(a, "GM", first_b), 0,
                   dma_latency(a, "GM", first_b, c.a_panel ? b_reread : std::min(a_reread, b_reread)),
                   ahead("GM", first_b, c.via_mid ? c.mid_buffers : c.op_buffers, c.a_panel ? 1 : 2)};
        load.t = dma_cycles(a, "GM", first_b, c.k_chunk, c.tile_n * sa, p.N * sa, b_reread, c.cores);
        if (!c.a_panel) {
            load.t += dma_cycles(a, "GM", first_a, c.tile_m, c.k_chunk * sa, p.K * sa, a_reread, c.cores);
        }
        inner.push_back(load);
        if (c.via_mid) {
            const std::string &mid = space.mid_level();
            Stage l0{"load A,B fractals (" + mid + "->" + mu.a_level + "," + mu.b_level + ")",
                     dma_pipe(a, mid, mu.a_level), 0, dma_latency(a, mid, mu.a_level),
                     ahead(mid, mu.a_level, c.op_buffers, 2)};
            // A tile in the mid level is tile_m rows of k_chunk (a panel: rows of K).
            const int64_t a_stride = (c.a_panel ? p.K : c.k_chunk) * sa;
            l0.t = dma_cycles(a, mid, mu.a_level, c.tile_m, c.k_chunk * sa, a_stride, 0, c.cores) +
                   dma_cycles(a, mid, mu.b_level, c.k_chunk, c.tile_n * sa, c.tile_n * sa, 0, c.cores);
            inner.push_back(l0);
        }
        inner.push_back(mmad_stage(a, p.in_t, c.tile_m, c.k_chunk, c.tile_n, c.op_buffers));
        wb_src = mu.c_level;
    }
    PipeResult stream = run_pipeline(inner, tiles * chunks, bar_iters);
    // The tile loop: the chunk loop, then the write-back of the tile; with two
    // accumulators the write-back overlaps the next tile.
    Stage compute{"chunk loop", inner.back().pipe, stream.period * static_cast<double>(chunks), 0,
                  c.path == Path::Matrix ? c.acc_buffers : 1};
    Stage wb{"write back C (" + wb_src + "->GM)", dma_pipe(a, wb_src, "GM"),
             dma_cycles(a, wb_src, "GM", c.tile_m, c.tile_n * sacc, p.N * sacc, 0, c.cores),
             dma_latency(a, wb_src, "GM"), 1};
    PipeResult outer = run_pipeline({compute, wb}, tiles, 0);
    double total = std::max(stream.total, outer.total + stream.fill);
    out.bound = stream.total >= outer.total + stream.fill ? stream.bound : outer.bound;
    for (const Stage &st : inner) {
        out.stages.push_back(stage_time(st, "chunk", tiles * chunks));
    }
    out.stages.push_back(stage_time(wb, "tile", tiles));
    if (c.a_panel) {
        const int64_t rows = p.M / c.tile_m / c.cores;
        const double panel = dma_cycles(a, "GM", space.mid_level(), c.tile_m, p.K * sa, p.K * sa, 0, c.cores) +
                             dma_latency(a, "GM", space.mid_level());
        out.stages.push_back({"load A panel (GM->" + space.mid_level() + ")", dma_pipe(a, "GM", space.mid_level()),
                              "row", panel, rows, panel * rows});
        total += panel * static_cast<double>(rows);
    }
    // The scalar unit issues every instruction; the HBM must absorb every write.
    // The scalar unit issues every instruction of a chunk: about 17 per DMA and
    // MMAD (addresses, flags, loop control); a conv2d's multi-buffered copies
    // also compute which copy to use from the tap and row loops around them.
    const double dmas = (c.via_mid ? 4.0 : 2.0) - (c.a_panel ? 1.0 : 0.0);
    double rotating = 0;
    if (conv) {
        rotating = (c.op_buffers > 1 ? 2.0 : 0.0) + (c.via_mid && c.mid_buffers > 1 ? 2.0 : 0.0);
    }
    const double issue = a.scalar.issue_cycles *
                         (static_cast<double>(tiles * chunks) * (kMatrixIssuePerOp * (dmas + 1) + kRotateIssue * rotating) +
                          static_cast<double>(tiles) * 2 * kIssuePerOp);
    if (c.path == Path::Matrix) {
        out.stages.push_back({"scalar issue", a.scalar.pipe, "chunk", issue / static_cast<double>(tiles * chunks),
                              tiles * chunks, issue});
        if (issue > total) {
            total = issue, out.bound = "scalar issue";
        }
    }
    const MemoryLevel *gm = a.find_level("GM");
    const double drain = gm && gm->wr_bytes_per_cycle > 0
                             ? static_cast<double>(p.M) * p.N * images * sacc / (gm->wr_bytes_per_cycle * c.cores)
                             : 0;
    if (drain > total) {
        total = drain, out.bound = "GM write drain";
    }
    out.cycles = total;
    out.timeline = stream.bars;
    return out;
}

} // namespace

Prediction predict(const SearchSpace &space, const Candidate &c, int timeline_iters) {
    if (space.problem().op == OpKind::Elementwise) {
        return predict_elementwise(space, c, timeline_iters);
    }
    if (space.problem().op == OpKind::Softmax) {
        return predict_softmax(space, c, timeline_iters);
    }
    if (c.band > 0) {
        return predict_conv_resident(space, c, timeline_iters);
    }
    return predict_gemm(space, c, timeline_iters); // gemm and conv2d
}

} // namespace tessel::sched
