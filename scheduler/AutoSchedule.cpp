// The automatic NPU scheduler (scheduler/AutoSchedule.h): a schedule from the
// pipeline's structure and the ArchSpec, no measurement.
#include "scheduler/AutoSchedule.h"
#include "scheduler/AutoScheduleParts.h"

#include "dsl/Compile.h"
#include "npu_target/common/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace tessel {

namespace autosched {

int64_t floor_pow2(int64_t v) {
    int64_t p = 1;
    while (p * 2 <= v) {
        p *= 2;
    }
    return v < 1 ? 0 : p;
}

int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t i = from; i < to && i < v.size(); i++) {
        n *= std::max<int64_t>(v[i], 1);
    }
    return n;
}

bool has_edge(const ArchSpec &a, const std::string &src, const std::string &dst) {
    return a.engine_for(src, dst) != nullptr;
}

uint64_t level_size(const ArchSpec &a, const std::string &n) {
    const MemoryLevel *l = a.find_level(n);
    return l ? l->size_bytes : 0;
}

std::string gm_name(const ArchSpec &a) {
    for (const auto &m : a.memories) {
        if (m.off_chip) {
            return m.name;
        }
    }
    return "GM";
}

// The levels a tensor passes through from GM to `to` (not GM itself, `to` last), by the
// engines' edges. `via_staging`: prefer a two-hop path through a level at least four times
// the size of `to` (L1 before L0A: a chunk is loaded from GM once and fed to the operand
// level from there), as the hand schedules do; otherwise the direct edge, else the shortest.
std::vector<std::string> path_from_gm(const ArchSpec &a, const std::string &to, bool via_staging) {
    const std::string gm = gm_name(a);
    if (via_staging) {
        std::string best;
        for (const auto &m : a.memories) {
            if (m.name != gm && m.name != to && has_edge(a, gm, m.name) &&
                has_edge(a, m.name, to) && m.size_bytes >= 4 * level_size(a, to) &&
                (best.empty() || m.size_bytes > level_size(a, best))) {
                best = m.name;
            }
        }
        if (!best.empty()) {
            return {best, to};
        }
    }
    if (has_edge(a, gm, to)) {
        return {to};
    }
    // Breadth-first over the edges.
    std::vector<std::pair<std::string, std::vector<std::string>>> frontier{{gm, {}}};
    std::vector<std::string> seen{gm};
    while (!frontier.empty()) {
        std::vector<std::pair<std::string, std::vector<std::string>>> next;
        for (const auto &[at, path] : frontier) {
            for (const auto &e : a.engines) {
                for (const auto &edge : e.edges) {
                    if (edge.src != at || std::count(seen.begin(), seen.end(), edge.dst)) {
                        continue;
                    }
                    auto p = path;
                    p.push_back(edge.dst);
                    if (edge.dst == to) {
                        return p;
                    }
                    seen.push_back(edge.dst);
                    next.emplace_back(edge.dst, p);
                }
            }
        }
        frontier = std::move(next);
    }
    return {};
}

Directive make(const std::string &id, DirectiveKind kind, const std::string &func) {
    Directive d;
    d.id = id;
    d.kind = kind;
    d.func = func;
    return d;
}

Directive stage_dir(const std::string &id, const std::string &func, const std::string &level,
                    const std::string &at_func, const std::string &at_loop, int buffers) {
    Directive d = make(id, DirectiveKind::Stage, func);
    d.level = level;
    d.at_func = at_func;
    d.at_loop = at_loop;
    d.buffers = buffers;
    return d;
}

// The output's pure definition is a plain copy of one Func (offsets 0): the stage the
// schedule computes on chip, with the output a DMA back to GM.
const LoadInfo *copy_source(const FuncInfo &out) {
    if (out.pure.loads.size() != 1 || !out.updates.empty()) {
        return nullptr;
    }
    const LoadInfo &l = out.pure.loads[0];
    if (l.callee_is_input || l.index_var.size() != out.vars.size()) {
        return nullptr;
    }
    for (size_t i = 0; i < l.index_var.size(); i++) {
        if (l.index_var[i] != out.vars[i] || l.min_offset[i] != 0 || l.max_offset[i] != 0) {
            return nullptr;
        }
    }
    return &l;
}

std::vector<int64_t> tile_sizes(int64_t unit, int64_t extent) {
    std::vector<int64_t> v;
    for (int64_t s = std::max<int64_t>(unit, 1); s <= extent && s <= 4096; s *= 2) {
        if (extent % s == 0) {
            v.push_back(s);
        }
    }
    if (v.empty()) {
        v.push_back(extent);
    }
    return v;
}

bool matrix_levels(const ArchSpec &arch, DType dtype, const std::string &acc, MatrixLevels &ml,
                   std::string &why) {
    ml.sh = arch.matrix.shapes.at(dtype);
    ml.in_b = dtype_bytes(dtype);
    ml.acc_b = dtype_bytes(arch.matrix.accumulators.count(dtype) ? arch.matrix.accumulators.at(dtype)
                                                                 : DType::FP32);
    ml.la = arch.matrix.a_level;
    ml.lb = arch.matrix.b_level;
    ml.lc = arch.matrix.c_level;
    ml.pa = path_from_gm(arch, ml.la, true);
    ml.pb = path_from_gm(arch, ml.lb, true);
    if (ml.pa.empty() || ml.pb.empty()) {
        why = "Func " + acc + ": no DMA path from GM to the matrix operand levels " + ml.la + "/" +
              ml.lb;
        return false;
    }
    return true;
}

int MatrixLevels::operand_buffers(const ArchSpec &arch, int64_t tm, int64_t tn, int64_t tk) const {
    const uint64_t a_bytes = 2 * uint64_t(tm * tk * in_b), b_bytes = 2 * uint64_t(tk * tn * in_b);
    const bool fits = la == lb ? a_bytes + b_bytes <= level_size(arch, la)
                               : a_bytes <= level_size(arch, la) && b_bytes <= level_size(arch, lb);
    const uint64_t c = uint64_t(tm * tn * acc_b);
    return !fits ? 0 : 2 * c <= level_size(arch, lc) ? 2 : c <= level_size(arch, lc) ? 1 : 0;
}

void accumulate_and_tensorize(const std::string &acc, const std::string &level, int buffers,
                              AutoSchedule &r) {
    Directive ai = make(acc + "_" + level, DirectiveKind::AccumulateIn, acc);
    ai.level = level;
    ai.buffers = buffers;
    r.spec.directives.push_back(ai);
    Directive tz = make("mmad", DirectiveKind::Tensorize, acc);
    tz.stage = 0;
    tz.unit = "matrix";
    r.spec.directives.push_back(tz);
}

std::string TileChoice::no_fit(const std::string &acc, const MatrixShape &sh) {
    return "Func " + acc + ": no tile of the " + std::to_string(sh.m0) + "x" + std::to_string(sh.k0) +
           "x" + std::to_string(sh.n0) + " fractal fits the operand levels double-buffered";
}

} // namespace autosched

namespace {

using namespace autosched;

struct MatrixMatch {
    const FuncInfo *acc = nullptr;
    const FuncInfo *out = nullptr;
    MatrixOutput mo; // the output, and the epilogue between (if any)
    std::string a, b, k; // the operand inputs (a indexed by the output's rows) and the reduction
    DType dtype = DType::FP16;
};

// A Func whose one update is self + a * b over one reduction variable, a and b inputs, read
// by an output: the matrix form's pattern (GEMM, a 1x1 convolution in matrix layout).
std::optional<MatrixMatch> match_matrix(const PipelineInfo &p, const ArchSpec &arch,
                                        std::vector<std::string> &why) {
    for (const auto &f : p.funcs) {
        if (f.updates.size() != 1 || !f.updates[0].sum_of_products) {
            continue;
        }
        const DefInfo &u = f.updates[0];
        if (u.rvars.size() > 1) {
            continue; // the convolution form's (scheduler/ConvMatrixForm.cpp), which said why
        }
        if (f.vars.size() < 2) {
            why.push_back("Func " + f.name + ": a sum of products over " +
                          std::to_string(u.rvars.size()) + " reduction variables and " +
                          std::to_string(f.vars.size()) +
                          " dimensions; the matrix form takes one reduction variable and 2 "
                          "dimensions (and batch "
                          "dimensions outside them)");
            continue;
        }
        const TensorInfo *ta = p.find_input(u.mul_a), *tb = p.find_input(u.mul_b);
        if (!ta || !tb) {
            why.push_back(
                "Func " + f.name + ": its product reads " + u.mul_a + " and " + u.mul_b +
                "; the matrix form stages two inputs (a computed operand is not mapped yet)");
            continue;
        }
        if (ta->dtype != tb->dtype || !arch.matrix.shapes.count(ta->dtype)) {
            why.push_back("Func " + f.name + ": the matrix unit of " + arch.name +
                          " does not take " + std::string(dtype_name(ta->dtype)) +
                          (ta->dtype != tb->dtype ? std::string(" x ") + dtype_name(tb->dtype)
                                                  : std::string()) +
                          " operands");
            continue;
        }
        MatrixMatch m;
        m.acc = &f;
        m.k = u.rvars[0];
        // The operand indexed by the accumulator's row variable (vars[1]) is the matrix unit's A.
        auto reads_row = [&](const std::string &in) {
            for (const auto &l : u.loads) {
                if (l.callee == in &&
                    std::count(l.index_var.begin(), l.index_var.end(), f.vars[1])) {
                    return true;
                }
            }
            return false;
        };
        m.a = reads_row(u.mul_a) ? u.mul_a : u.mul_b;
        m.b = m.a == u.mul_a ? u.mul_b : u.mul_a;
        m.dtype = ta->dtype;
        std::string no;
        m.mo = find_matrix_output(p, f, no);
        m.out = m.mo.out;
        if (!m.out) {
            why.push_back(no);
            continue;
        }
        if (m.mo.epi && !epilogue_possible(arch, no)) {
            why.push_back("Func " + f.name + ": " + no);
            continue;
        }
        return m;
    }
    return std::nullopt;
}

bool matrix_form(const PipelineInfo &p, const ArchSpec &arch, const MatrixMatch &m,
                 AutoSchedule &r) {
    const FuncInfo &acc = *m.acc, &out = *m.out;
    const TensorInfo *oshape = nullptr;
    for (const auto &o : p.outputs) {
        if (o.name == out.name) {
            oshape = &o;
        }
    }
    const int64_t N = oshape ? oshape->shape.at(0) : 0, M = oshape ? oshape->shape.at(1) : 0;
    const int64_t K = acc.updates[0].rvar_extents[0];
    // Batch dimensions (a batched MatMul's, attention's heads) are loops outside the tiles:
    // each step one M x N x K product.
    const int64_t batch = oshape ? product(oshape->shape, 2, oshape->shape.size()) : 0;
    if (N <= 0 || M <= 0 || K <= 0) {
        r.warnings.push_back("Func " + acc.name + ": the product's extents are not all constant (" +
                             out.name + " " + std::to_string(N) + " x " + std::to_string(M) + ", " +
                             m.k + " " + std::to_string(K) + "); not mapped");
        return false;
    }
    MatrixLevels ml;
    std::string no;
    if (!matrix_levels(arch, m.dtype, acc.name, ml, no)) {
        r.warnings.push_back(no);
        return false;
    }
    const MatrixShape sh = ml.sh;
    const int in_b = ml.in_b;
    const std::string la = ml.la, lb = ml.lb, lc = ml.lc;
    const auto &pa = ml.pa, &pb = ml.pb;
    // Candidates: multiples of the fractal by powers of two that divide the extent.
    const auto sizes = tile_sizes;
    const DmaEngine *in_engine = arch.engine_for(gm_name(arch), pa.front());
    const double setup = in_engine ? in_engine->setup_cycles : 0;
    const MemoryLevel *gm = arch.find_level(gm_name(arch));
    const double gm_bw = arch.chip.gm_bytes_per_cycle > 0 ? arch.chip.gm_bytes_per_cycle
                                                          : (gm ? gm->rd_bytes_per_cycle : 1);
    const double gm_wr_bw = gm && gm->wr_bytes_per_cycle > 0 ? gm->wr_bytes_per_cycle : gm_bw;
    const double macs = std::max<int64_t>(arch.matrix.macs_per_cycle(m.dtype), 1);
    const int out_b = dtype_bytes(oshape->dtype);
    // With a staging level before the operand levels (L1 before L0A/L0B) the reduction is split
    // twice: chunks of tk1 come from GM into the staging level, chunks of tk0 (a divisor) go from
    // there to the operand levels, so that each GM transfer is large while the operand levels
    // stay within their size.
    const bool staged = pa.size() > 1 || pb.size() > 1;
    const std::string sl = pa.size() > 1 ? pa[0] : pb.size() > 1 ? pb[0] : "";
    const DmaEngine *feed = staged ? arch.engine_for(sl, pa.back()) : nullptr;
    const double setup0 = feed ? feed->setup_cycles : 0;
    TileChoice tc;
    for (int64_t tm : sizes(sh.m0, M)) {
        for (int64_t tn : sizes(sh.n0, N)) {
            for (int64_t tk : sizes(sh.k0, K)) {
                const int cbufs = ml.operand_buffers(arch, tm, tn, tk);
                if (cbufs == 0 || !epilogue_fits(arch, m.mo, tm, tn, ml.acc_b)) {
                    continue;
                }
                for (int64_t tk1 = tk; tk1 <= K; tk1 *= 2) {
                    if (K % tk1 != 0 || (!staged && tk1 != tk)) {
                        continue;
                    }
                    const uint64_t a1 = 2 * uint64_t(tm * tk1 * in_b),
                                   b1 = 2 * uint64_t(tk1 * tn * in_b);
                    if (staged &&
                        (pa.size() > 1 ? a1 : 0) + (pb.size() > 1 && pb[0] == sl ? b1 : 0) >
                            level_size(arch, sl)) {
                        break;
                    }
                    const double traffic =
                        double(batch) *
                        (double(in_b) * (double(M) * K * (N / tn) + double(K) * N * (M / tm)) +
                         double(out_b) * M * N);
                    const double tiles = double(batch) * (M / tm) * (N / tn);
                    // One accumulator buffer: a tile's write-back cannot overlap the next tile's
                    // products, so it is paid in full.
                    const double drain =
                        cbufs == 1 ? tiles * double(tm * tn * out_b) / gm_wr_bw : 0;
                    const double t =
                        std::max(traffic / gm_bw, double(batch) * M * N * K / macs) + drain +
                        tiles * (K / tk1) * 2 * setup +
                        tiles * (K / tk) * (2 * setup0 + arch.matrix.fill_drain_cycles);
                    tc.consider(t, tm, tn, tk, tk1, cbufs);
                }
            }
        }
    }
    if (!tc.m) {
        r.warnings.push_back(TileChoice::no_fit(acc.name, sh));
        return false;
    }
    const double best = tc.best;
    const int64_t bm = tc.m, bn = tc.n, bk = tc.k, bk1 = tc.k1;
    const int bc = tc.cbufs;
    const std::string x = out.vars[0], y = out.vars[1];
    Directive tile = make("tile_" + out.name, DirectiveKind::Tile, out.name);
    tile.vars = {x, y, x + "o", y + "o", x + "i", y + "i"};
    tile.factors = {bn, bm};
    r.spec.directives.push_back(tile);
    Directive at = make(acc.name + "_at", DirectiveKind::ComputeAt, acc.name);
    at.at_func = out.name;
    at.at_loop = x + "o";
    r.spec.directives.push_back(at);
    const bool two = staged && bk1 > bk;
    Directive ks = make("k_chunks", DirectiveKind::Split, acc.name);
    ks.stage = 0;
    ks.vars = {m.k, m.k + "o", m.k + "i"};
    ks.factors = {two ? bk1 : bk};
    r.spec.directives.push_back(ks);
    const std::string inner_loop =
        two ? m.k + "io" : m.k + "o"; // where the operand levels are filled
    Directive ro = make("k_outer", DirectiveKind::Reorder, acc.name);
    ro.stage = 0;
    ro.vars = {acc.vars[0], acc.vars[1]}; // the batch variables go outermost, after the reduction
    if (two) {
        Directive ks0 = make("k_operand_chunks", DirectiveKind::Split, acc.name);
        ks0.stage = 0;
        ks0.vars = {m.k + "i", m.k + "io", m.k + "ii"};
        ks0.factors = {bk};
        r.spec.directives.push_back(ks0);
        ro.vars.push_back(m.k + "ii");
        ro.vars.push_back(m.k + "io");
    } else {
        ro.vars.push_back(m.k + "i");
    }
    ro.vars.push_back(m.k + "o");
    ro.vars.insert(ro.vars.end(), acc.vars.begin() + 2, acc.vars.end());
    r.spec.directives.push_back(ro);
    for (const auto &[in, path] : {std::pair{m.a, pa}, std::pair{m.b, pb}}) {
        for (const auto &lvl : path) {
            const bool operand = lvl == path.back();
            r.spec.directives.push_back(stage_dir("stage_" + in + "_" + lvl, in, lvl, acc.name,
                                                  operand ? inner_loop : m.k + "o", 2));
        }
    }
    accumulate_and_tensorize(acc.name, lc, bc, r);
    std::ostringstream os;
    os << "matrix form: " << acc.name << " = " << m.a << " x " << m.b << " (" << dtype_name(m.dtype)
       << ", " << (batch > 1 ? std::to_string(batch) + " x " : std::string()) << M << "x" << N
       << "x" << K << ") on the matrix unit; tiles " << bm << "x" << bn << " of " << out.name
       << ", " << m.k << " in chunks of "
       << (two ? std::to_string(bk1) + " (from GM) and " : std::string()) << bk
       << (two ? " (to the operand levels)" : "") << "; " << m.a << " staged GM";
    for (const auto &l : pa) {
        os << " -> " << l;
    }
    os << ", " << m.b << " GM";
    for (const auto &l : pb) {
        os << " -> " << l;
    }
    os << " (2 buffers each), the accumulator in " << lc << " (" << bc << " buffer"
       << (bc > 1 ? "s" : "") << "); estimate " << static_cast<int64_t>(best) << " cycles";
    r.notes.push_back(os.str());
    if (m.mo.epi) {
        epilogue_directives(p, arch, acc, m.mo, x + "o", bn, r);
    }
    for (const auto &f : p.funcs) {
        if (&f != &acc && &f != &out && &f != m.mo.epi) {
            r.warnings.push_back("Func " + f.name +
                                 ": not part of the matrix form; left to the default placement");
        }
    }
    r.form = "matrix";
    return true;
}

// One output's band loop: `out` with its shape, `mine` the Funcs computed for it (the
// output first). `suffix` keeps the stage directives of several outputs apart.
// max_band / max_lanes: caps from a previous attempt whose buffers did not fit (0 = none);
// band / lanes: what this attempt chose (the split factor, the largest vectorize factor).
bool vector_form_output(const PipelineInfo &p, const ArchSpec &arch, AutoSchedule &r,
                        const FuncInfo *out, const TensorInfo &oshape,
                        const std::vector<const FuncInfo *> &mine, const std::string &suffix,
                        const std::set<std::string> &unstaged, int64_t max_band, int64_t max_lanes,
                        int64_t &band, int64_t &lanes, size_t below, bool &step_too_big) {
    step_too_big = false;
    const std::string vlevel = arch.vector.level;
    const auto path = path_from_gm(arch, vlevel, false);
    if (vlevel.empty() || path.empty()) {
        r.warnings.push_back("Func " + out->name +
                             ": no DMA path from GM to the vector unit's level '" + vlevel + "'");
        return false;
    }
    if (!copy_source(*out)) {
        r.warnings.push_back(
            "Func " + out->name +
            ": the output computes (it is not a plain copy of one stage), so "
            "its arithmetic runs as scalar code; define the output as a copy of the last stage");
    }
    const size_t rank = oshape.shape.size();
    // The band dimension: the outermost one with more than one step (an ONNX tensor's
    // leading batch of 1 would give one band of everything). bd == 0: bands of elements.
    size_t bd = rank ? rank - 1 : 0;
    while (bd > 0 && oshape.shape[bd] <= 1) {
        bd--;
    }
    // `below` > 0: one step of that dimension did not fit; band a dimension inside it (the
    // ones outside become plain loops around the bands: a channel's rows of a large image).
    for (size_t k = 0; k < below && bd > 0; k++) {
        bd--;
        while (bd > 0 && oshape.shape[bd] <= 1) {
            bd--;
        }
    }
    if (rank == 0 || out->vars.size() != rank) {
        r.warnings.push_back("Func " + out->name +
                             ": the output's variables do not match its dimensions; not mapped");
        return false;
    }
    const bool flat = bd == 0;
    const std::string outer = out->vars[bd];
    const int64_t H = oshape.shape[bd];
    const int64_t row = product(oshape.shape, 0, bd); // elements of one step of the band dimension
    // Inputs: double-buffered per band; an input of the output's rank is read per band
    // (with its halo: the rows beyond the output's; an input with a whole multiple of the
    // output's rows, a stride-2 pooling's, reads that many rows a step), any other one whole.
    // An input read at a clamped row (a padded convolution's, a pooling's edge) has no
    // constant footprint per band: it is staged whole, once, before the band loop.
    struct BandInput {
        const TensorInfo *t;
        int64_t halo;    // rows beyond the output's (-1: the whole input per band)
        int64_t step;    // its rows per output row
        bool once;       // staged whole at the root, one buffer
        int64_t per_row; // its elements per row of the band dimension
    };
    std::vector<BandInput> ins;
    std::vector<std::string> read;
    for (const FuncInfo *fp : mine) {
        for (const DefInfo *d : fp->definitions()) {
            for (const auto &l : d->loads) {
                if (l.callee_is_input && !std::count(read.begin(), read.end(), l.callee)) {
                    read.push_back(l.callee);
                }
            }
        }
    }
    int64_t halo = 0;
    for (const auto &name : read) {
        const TensorInfo *t = p.find_input(name);
        if (!t || unstaged.count(name)) {
            continue;
        }
        // The input's dimension the band variable indexes (by name: generators name the same
        // Var alike across Funcs), else, for an input of the output's rank, its band dimension;
        // a clamped index there means no constant footprint per band.
        int64_t band_dim = -1;
        int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
        bool clamped_rows = false;
        for (const FuncInfo *fp : mine) {
            for (const DefInfo *d : fp->definitions()) {
                for (const auto &l : d->loads) {
                    if (l.callee != name || flat) {
                        continue;
                    }
                    for (size_t k = 0; k < l.index_var.size(); k++) {
                        if (l.index_var[k] == outer && (band_dim < 0 || band_dim == int64_t(k))) {
                            band_dim = static_cast<int64_t>(k);
                            lo = std::min(lo, l.min_offset[k]);
                            hi = std::max(hi, l.max_offset[k]);
                        }
                    }
                    clamped_rows = clamped_rows ||
                                   (t->shape.size() == rank && bd < l.index_var.size() &&
                                    l.index_var[bd].empty() &&
                                    (bd >= l.index_clamped.size() || l.index_clamped[bd]));
                }
            }
        }
        clamped_rows = clamped_rows && band_dim < 0;
        // Read at the band variable plus constants: one row a step, the offsets' span beyond
        // (a stencil's halo, a slice's offset costs nothing).
        const bool by_name = band_dim >= 0;
        if (band_dim < 0 && t->shape.size() == rank && !flat && !clamped_rows) {
            band_dim = static_cast<int64_t>(bd);
        }
        const bool banded = band_dim >= 0;
        const int64_t in_rows = banded ? t->shape[band_dim] : 0;
        const int64_t step = banded && !by_name && in_rows >= 2 * H ? in_rows / H : 1;
        const int64_t h = !banded   ? -1
                          : by_name ? std::max<int64_t>(0, hi - lo)
                                    : std::max<int64_t>(0, in_rows - H * step);
        // Elements of one row of the band dimension: the dimensions inside it, and for an
        // input of another rank the ones outside it too (they are read whole).
        const int64_t per_row =
            !banded ? 0
            : t->shape.size() == rank && band_dim == int64_t(bd)
                ? product(t->shape, 0, bd)
                : product(t->shape, 0, t->shape.size()) / std::max<int64_t>(in_rows, 1);
        ins.push_back(BandInput{t, h, step, clamped_rows, per_row});
        halo = std::max(halo, h);
    }
    const std::vector<const FuncInfo *> inter(mine.begin() + 1, mine.end());
    const uint64_t cap = level_size(arch, vlevel) * 9 / 10;
    const MemoryLevel *vl = arch.find_level(vlevel);
    const uint64_t align = vl ? std::max(vl->alignment, 1) : 32;
    // The extent of a Func's pure variable within one band of `band` steps, by its name: the
    // output's outer variable is the band; another output variable has the output's extent
    // (generators name the same Var alike across Funcs); -1 when unknown.
    auto extent_in_band = [&](const std::string &v, int64_t band) -> int64_t {
        if (v == outer) {
            return band;
        }
        for (size_t i = 0; i < out->vars.size() && i < rank; i++) {
            if (out->vars[i] == v) {
                return oshape.shape[i];
            }
        }
        return -1;
    };
    auto footprint = [&](int64_t R) {
        uint64_t bytes = 0;
        for (const BandInput &in : ins) {
            const TensorInfo *t = in.t;
            const uint64_t n = flat          ? uint64_t(R)
                               : in.halo < 0 ? uint64_t(product(t->shape, 0, t->shape.size()))
                                             : uint64_t((R * in.step + in.halo) * in.per_row);
            bytes += (in.once ? 1 : 2) * (n * dtype_bytes(t->dtype) + align);
        }
        for (const FuncInfo *f : inter) {
            uint64_t n = flat ? uint64_t(R) : uint64_t((R + halo) * (row + 2 * halo));
            // A Func of other variables than the band's, all of known extent (a padding mask of
            // two loop variables), is as large as those extents make it.
            uint64_t own = std::count(f->vars.begin(), f->vars.end(), outer) ? 0 : 1;
            for (const auto &v : f->vars) {
                const int64_t e = extent_in_band(v, R);
                own = e > 0 ? own * uint64_t(e) : 0;
            }
            if (!flat && own && !f->vars.empty()) {
                n = std::min(n, own);
            }
            bytes += n * std::max(f->bytes, 1) + align;
        }
        return bytes;
    };
    int64_t R = floor_pow2(H >= 4 ? H / 4 : H);
    if (flat) {
        R = std::min<int64_t>(R, 16384);
    }
    if (max_band > 0) {
        R = std::min(R, max_band);
    }
    while (R > 1 && footprint(R) > cap) {
        R /= 2;
    }
    if (R < 1 || footprint(R) > cap) {
        step_too_big = !flat;
        r.warnings.push_back(
            "Func " + out->name + ": one step of its outermost dimension (" + outer + ", " +
            std::to_string(footprint(1)) + " bytes with its inputs double-buffered) does not fit " +
            vlevel + " (" + std::to_string(level_size(arch, vlevel)) + " bytes); not mapped");
        return false;
    }
    Directive split = make("band_" + out->name, DirectiveKind::Split, out->name);
    split.vars = {outer, outer + "o", outer + "i"};
    split.factors = {R};
    r.spec.directives.push_back(split);
    band = R;
    lanes = 0;
    for (const BandInput &in : ins) {
        const TensorInfo *t = in.t;
        for (const auto &lvl : path) {
            r.spec.directives.push_back(
                stage_dir("stage_" + t->name + (path.size() > 1 ? "_" + lvl : "") + suffix, t->name,
                          lvl, out->name, in.once ? "root" : outer + "o", in.once ? 1 : 2));
        }
    }
    std::ostringstream vec;
    for (const FuncInfo *f : inter) {
        Directive at = make(f->name + "_at", DirectiveKind::ComputeAt, f->name);
        at.at_func = out->name;
        at.at_loop = outer + "o";
        r.spec.directives.push_back(at);
    }
    auto extent_of = [&](const std::string &v) { return extent_in_band(v, R); };
    // The largest power of two that divides `extent` within `cap` (a factor that divides
    // its loop needs no tail: no guard for Halide to vectorise).
    auto dividing_lanes = [](int64_t extent, int64_t cap) {
        int64_t F = 1;
        while (F * 2 <= cap && extent % (F * 2) == 0) {
            F *= 2;
        }
        return F;
    };
    auto vectorize_dir = [&](const std::string &id, const FuncInfo &f, int stage,
                             const std::string &var, int64_t F) {
        Directive v = make(id, DirectiveKind::Vectorize, f.name);
        v.stage = stage;
        v.vars = {var};
        v.factors = {F};
        lanes = std::max(lanes, F);
        r.spec.directives.push_back(v);
    };
    for (const FuncInfo *f : inter) {
        const int64_t lanes_cap =
            std::min<int64_t>(floor_pow2(int64_t(arch.vector.max_repeat) *
                                         arch.vector.bytes_per_repeat / std::max(f->bytes, 1)),
                              kMaxVectorizeFactor);
        const int64_t cap = max_lanes > 0 ? std::min(lanes_cap, max_lanes) : lanes_cap;
        const int64_t pure_extent = f->vars.empty() ? -1 : extent_of(f->vars[0]);
        if (!f->vars.empty()) {
            // A constant fill (no loads): the whole row at once, whatever its length.
            const bool fill = f->pure.loads.empty() && pure_extent >= 2 && pure_extent <= cap;
            const int64_t F = fill               ? pure_extent
                              : pure_extent > 0 ? dividing_lanes(pure_extent, cap)
                                  : std::min<int64_t>(floor_pow2(flat ? R : oshape.shape[0]), cap);
            if (F >= 2) {
                vectorize_dir(f->name + "_vec", *f, -1, f->vars[0], F);
                vec << (vec.tellp() ? ", " : "") << f->name << " by " << F;
            }
        }
        if (f->updates.empty()) {
            continue;
        }
        // A reduction: its update on the vector unit, one of two ways.
        //  - across the reduction (atomic + vectorize the reduction variable): when its
        //    innermost reduction variable walks the innermost (contiguous) dimension of what
        //    it reads, each step is a vector reduction instruction (VREDSUM/VREDMAX) over a
        //    dense row, as the ascend-like hand schedules of softmax and LayerNorm do;
        //  - across a pure variable (vectorize the update's pure variable): lanes are
        //    independent rows, each accumulating its own result, with strided loads.
        const DefInfo &u = f->updates.front();
        bool mapped = false;
        // Not a reduction but a copy into a region (a constant Pad's interior): each step of
        // the innermost reduction variable writes its own element; vectorised along it.
        bool reads_self = false;
        for (const auto &l : u.loads) {
            reads_self = reads_self || l.callee == f->name;
        }
        if (f->updates.size() == 1 && !reads_self && !u.rvars.empty() && !u.lhs_var.empty() &&
            u.lhs_var[0] == u.rvars[0] && u.rvar_extents[0] > 1) {
            const int64_t F = dividing_lanes(u.rvar_extents[0], cap);
            if (F >= 2) {
                vectorize_dir(f->name + "_copy_vec", *f, 0, u.rvars[0], F);
                vec << (vec.tellp() ? ", " : "") << f->name << ".update(0) (a copy) along "
                    << u.rvars[0] << " by " << F;
                mapped = true;
            }
        }
        if (!mapped && f->updates.size() == 1 && u.rvars.size() == 1 && u.rvar_extents[0] > 1) {
            bool walks_contiguous = false, only_innermost = true;
            for (const auto &l : u.loads) {
                if (l.callee == f->name) {
                    continue;
                }
                for (size_t d = 0; d < l.index_var.size(); d++) {
                    if (l.index_var[d] == u.rvars[0]) {
                        if (d == 0) {
                            walks_contiguous = true;
                        } else {
                            only_innermost = false;
                        }
                    }
                }
            }
            const int64_t F = dividing_lanes(u.rvar_extents[0], cap);
            if (walks_contiguous && only_innermost && F >= 2) {
                Directive a = make(f->name + "_atomic", DirectiveKind::Atomic, f->name);
                a.stage = 0;
                r.spec.directives.push_back(a);
                vectorize_dir(f->name + "_red", *f, 0, u.rvars[0], F);
                vec << (vec.tellp() ? ", " : "") << f->name << ".update(0) across " << u.rvars[0]
                    << " by " << F;
                mapped = true;
            }
        }
        if (!mapped && f->updates.size() == 1 && pure_extent > 0) {
            const int64_t F = dividing_lanes(pure_extent, cap);
            if (F >= 2) {
                vectorize_dir(f->name + "_upd_vec", *f, 0, f->vars[0], F);
                vec << (vec.tellp() ? ", " : "") << f->name << ".update(0) across " << f->vars[0]
                    << " by " << F;
                mapped = true;
            }
        }
        if (!mapped) {
            r.warnings.push_back("Func " + f->name +
                                 ": a reduction whose update the vector form cannot vectorise (" +
                                 (f->updates.size() == 1
                                      ? "no reduction over a dense row and no pure variable of "
                                        "known extent to spread lanes over"
                                      : "more than one update") +
                                 "); it runs as scalar code");
        }
    }
    std::ostringstream os;
    os << "vector form: bands of " << R << (bd == 0 ? " elements" : " steps") << " of " << out->name
       << "." << outer << " (of " << H << "); ";
    for (size_t i = 0; i < ins.size(); i++) {
        os << (i ? ", " : "inputs ") << ins[i].t->name
           << (ins[i].once ? " (whole, once: not read at the band's rows)" : "");
    }
    if (ins.empty()) {
        os << "no input staged";
    } else {
        os << " staged GM";
        for (const auto &l : path) {
            os << " -> " << l;
        }
        os << " per band (2 buffers)";
    }
    os << "; " << inter.size() << " intermediate Func"
       << (inter.size() == 1 ? "" : "s") << " computed per band";
    if (vec.tellp()) {
        os << ", vectorised: " << vec.str();
    }
    os << "; footprint " << footprint(R) << " of " << level_size(arch, vlevel) << " bytes of "
       << vlevel;
    r.notes.push_back(os.str());
    r.form = "vector";
    return true;
}

// The vector form for every output: each has its own band loop, with the Funcs only it
// reads computed per band; a Func several outputs read is left to the default placement
// (named). One output is the common case (its Funcs are all the others).
bool vector_form(const PipelineInfo &p, const ArchSpec &arch, AutoSchedule &r, int64_t max_band,
                 int64_t max_lanes, int64_t &band, int64_t &lanes) {
    std::vector<const FuncInfo *> outs;
    for (const auto &f : p.funcs) {
        if (f.is_output) {
            outs.push_back(&f);
        }
    }
    if (outs.empty() || p.outputs.empty()) {
        r.warnings.push_back("the pipeline has no output Func");
        return false;
    }
    // Which outputs read each Func (through its consumers), producers before consumers in
    // p.funcs, so walk it backwards.
    std::map<std::string, std::set<std::string>> owners;
    for (auto it = p.funcs.rbegin(); it != p.funcs.rend(); ++it) {
        std::set<std::string> &o = owners[it->name];
        if (it->is_output) {
            o.insert(it->name);
        }
        for (const auto &c : it->consumers) {
            if (owners.count(c)) {
                o.insert(owners[c].begin(), owners[c].end());
            }
        }
    }
    // An input several outputs read is not staged: Halide's wrapper of it would be computed
    // in one output's band loop only (the backend's DMA inference reads it from GM instead).
    std::set<std::string> shared_inputs;
    std::map<std::string, std::set<std::string>> readers;
    for (const auto &f : p.funcs) {
        for (const DefInfo *d : f.definitions()) {
            for (const auto &l : d->loads) {
                if (l.callee_is_input) {
                    for (const auto &o : owners[f.name]) {
                        readers[l.callee].insert(o);
                    }
                }
            }
        }
    }
    for (const auto &[in, os] : readers) {
        if (os.size() > 1) {
            shared_inputs.insert(in);
            r.notes.push_back("input " + in + " is read by " + std::to_string(os.size()) +
                              " outputs' band loops: not staged, read by DMA where it is used");
        }
    }
    band = 0;
    lanes = 0;
    for (size_t k = 0; k < outs.size(); k++) {
        const FuncInfo *out = outs[k];
        const TensorInfo *shape = nullptr;
        for (const auto &t : p.outputs) {
            shape = t.name == out->name ? &t : shape;
        }
        std::vector<const FuncInfo *> mine = {out};
        for (const auto &f : p.funcs) {
            const std::set<std::string> &o = owners[f.name];
            if (f.is_output) {
                continue;
            }
            if ((o.size() == 1 && *o.begin() == out->name) || (o.empty() && k == 0)) {
                mine.push_back(&f);
            } else if (o.size() > 1 && k == 0) {
                r.warnings.push_back(
                    "Func " + f.name + ": read by " + std::to_string(o.size()) +
                    " outputs, each with its own band loop; left to the default placement");
            }
        }
        int64_t b = 0, l = 0;
        if (!shape) {
            return false;
        }
        // The outermost dimension first; while one step of it does not fit, the next inside.
        for (size_t below = 0;; below++) {
            const AutoSchedule before = r;
            bool too_big = false;
            if (vector_form_output(p, arch, r, out, *shape, mine,
                                   outs.size() > 1 ? "_" + out->name : "", shared_inputs,
                                   max_band, max_lanes, b, l, below, too_big)) {
                break;
            }
            if (!too_big || below + 1 >= shape->shape.size()) {
                return false;
            }
            const std::string why = r.warnings.back();
            r = before;
            r.notes.push_back(why.substr(0, why.find("; not mapped")) +
                              ": banding a dimension inside it");
        }
        band = std::max(band, b);
        lanes = std::max(lanes, l);
    }
    return true;
}

} // namespace

namespace {

// What compiling `spec` (no simulation) refused: the first error saying a buffer does
// not fit, else the first other error that names a directive.
struct Refusal {
    std::string fit;          // "" = every buffer fits
    std::string directive_id; // a directive the backend or Halide refused ("" = none)
    std::string message;
    std::string other; // the first error of any kind ("" = it compiles)
};

Refusal check_compile(const PipelineInfo &p, const std::string &arch_ref,
                      const ScheduleSpec &spec) {
    CompileRequest req;
    req.generator = p.generator;
    req.params = p.params;
    req.arch = arch_ref;
    req.schedule = spec;
    CompileResult c = compile(req);
    Refusal r;
    for (const auto &d : c.diagnostics) {
        if (d.severity != Diagnostic::Error) {
            continue;
        }
        if (r.other.empty()) {
            r.other = d.message;
        }
        // "does not fit" (the backend's allocator) or a stage's "needs 512 KiB with buffers=2;
        // UB has 192 KiB" (the schedule check): either way the band is too large.
        const bool too_big = d.message.find("does not fit") != std::string::npos ||
                             (d.message.find(" needs ") != std::string::npos &&
                              d.message.find(" with buffers=") != std::string::npos);
        if (too_big) {
            r.fit = d.message;
            return r;
        }
        if (r.directive_id.empty() && !d.directive_id.empty()) {
            r.directive_id = d.directive_id;
            r.message = d.message;
        }
        // The backend names the Func, not the directive, of a vectorised reduction it
        // cannot run: that is this scheduler's `<func>_red`.
        const std::string red = ": its vectorized reduction";
        const size_t at = d.message.find(red);
        if (r.directive_id.empty() && d.message.rfind("Func ", 0) == 0 && at != std::string::npos) {
            r.directive_id = d.message.substr(5, at - 5) + "_red";
            r.message = d.message;
        }
    }
    return r;
}

} // namespace

AutoSchedule auto_schedule(const PipelineInfo &p, const ArchSpec &arch,
                           const std::string &arch_ref) {
    AutoSchedule r;
    r.form = "none";
    std::vector<std::string> why;
    {
        AutoSchedule c = r;
        std::string acc;
        if (conv_matrix_form(p, arch, c, why, acc)) {
            const Refusal refused =
                arch_ref.empty() ? Refusal{} : check_compile(p, arch_ref, c.spec);
            if (refused.other.empty()) {
                return c;
            }
            why.push_back("Func " + acc + ": the convolution form does not compile (" +
                          refused.other.substr(0, 160) + ")");
        }
    }
    if (auto m = match_matrix(p, arch, why)) {
        const AutoSchedule before = r;
        if (matrix_form(p, arch, *m, r)) {
            const Refusal refused =
                arch_ref.empty() ? Refusal{} : check_compile(p, arch_ref, r.spec);
            if (refused.other.empty()) {
                return r;
            }
            // A product the matrix unit's tiles cannot take (a side shorter than the fractal,
            // an extent no multiple of it): the vector form instead.
            why.push_back("Func " + m->acc->name + ": the matrix form does not compile (" +
                          refused.other.substr(0, 160) + ")");
            r = before;
        }
        r.spec.directives.clear();
    }
    for (auto &w : why) {
        r.warnings.push_back(w + "; trying the vector form");
    }
    AutoSchedule base = r;
    int64_t max_band = 0, max_lanes = 0;
    std::vector<std::string> dropped; // directives a compile refused, left out from then on
    for (int attempt = 0;; attempt++) {
        r = base;
        int64_t band = 0, lanes = 0;
        if (!vector_form(p, arch, r, max_band, max_lanes, band, lanes)) {
            r.spec.directives.clear();
            r.form = "none";
            return r;
        }
        auto &ds = r.spec.directives;
        ds.erase(std::remove_if(ds.begin(), ds.end(),
                                [&](const Directive &d) {
                                    return std::count(dropped.begin(), dropped.end(), d.id);
                                }),
                 ds.end());
        if (arch_ref.empty()) {
            return r;
        }
        const Refusal refused = check_compile(p, arch_ref, r.spec);
        if (refused.other.empty()) {
            return r;
        }
        if (refused.fit.empty() && refused.directive_id.empty()) {
            r.warnings.push_back(
                "Func " + p.funcs.back().name + ": the vector form does not compile (" +
                refused.other.substr(0, 160) + "); the pipeline keeps the default placement");
            r.spec.directives.clear();
            r.form = "none";
            return r;
        }
        if (attempt >= 12) {
            r.warnings.push_back(
                "Func " + p.funcs.back().name + ": the vector form still does not compile after " +
                std::to_string(attempt + 1) + " attempts (" +
                (refused.fit.empty() ? refused.message : refused.fit).substr(0, 160) +
                "); the pipeline keeps the default placement");
            r.spec.directives.clear();
            r.form = "none";
            return r;
        }
        if (refused.fit.empty()) {
            // A directive the compile refused (a vectorisation Halide or the backend cannot
            // do here): leave it out, and its atomic() with it, and say so.
            const std::string id = refused.directive_id;
            dropped.push_back(id);
            const size_t red = id.rfind("_red");
            if (red != std::string::npos && red + 4 == id.size()) {
                dropped.push_back(id.substr(0, red) + "_atomic");
            }
            base.warnings.push_back("directive '" + id + "' was refused (" +
                                    refused.message.substr(0, 160) +
                                    "); left out, so what it scheduled runs without it");
            continue;
        }
        // The footprint above counts the Funcs' bands, not the temporaries of the vector
        // code (a chain of fp32 operations keeps several lane-wide values): the backend's
        // allocator has the last word. Halve the band, then the lanes, while it refuses.
        if (band > 1 && (lanes <= 64 || band > lanes)) {
            max_band = band / 2;
        } else if (lanes > 1) {
            max_lanes = lanes / 2;
            max_band = band;
        } else {
            r.warnings.push_back("Func " + p.funcs.back().name +
                                 ": the vector form does not fit even at one step and one lane (" +
                                 refused.fit.substr(0, 160) +
                                 "); the pipeline keeps the default placement");
            r.spec.directives.clear();
            r.form = "none";
            return r;
        }
        base.notes.push_back("the backend refused bands of " + std::to_string(band) + " with " +
                             std::to_string(lanes) + " lanes (" + refused.fit.substr(0, 120) +
                             "); trying smaller");
    }
}

AutoSchedule auto_schedule_for(const std::string &generator, const ParamMap &params,
                               const std::string &arch_ref) {
    return auto_schedule(describe_pipeline(generator, params), load_arch(arch_ref), arch_ref);
}

} // namespace tessel
