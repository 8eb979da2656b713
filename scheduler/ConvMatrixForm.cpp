// The automatic scheduler's convolution form (scheduler/AutoScheduleParts.h, docs/autoschedule.md).
//
// A stride-1 convolution in any layout whose output's innermost dimension is a pixel row and
// whose weights hold the reduced channel inside the output channel (ONNX's NCHW with OIHW
// weights: Y[x, y, m, n] += W[kx, ky, c, m] * X[x + kx, y + ky, c, n]) is, for one tap (kx, ky)
// and one output row, the matrix product W_tap (m x c) * X_row (c x x): the matrix unit's
// C[i, j] += A[i, k] * B[k, j] with A, B and C dense row-major once staged. The schedule:
//  - the output in tiles of tm channels x tn pixels of one row (the row and the batch loops
//    outside), the accumulator computed per tile in the matrix unit's output level;
//  - the accumulator's loops: the tile, the channel chunk, then the taps, then the chunks;
//  - the weights through the staging level (ascend-like L1: once for the whole run when they
//    fit in half of it, else per chunk) to the A level, per tap; the input rows a tile row needs
//    (all taps) through the staging level per output row, to the B level per tap; each level
//    double-buffered;
//  - an epilogue (bias, a cast) on the vector unit per tile (scheduler/MatrixEpilogue.cpp).
// Tile sizes minimise a roofline estimate: the matrix time (tiles rounded up to the fractal),
// the bytes fed to the operand levels over the feeding engine's bandwidth, and the setup of
// each product.
#include "scheduler/AutoScheduleParts.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>

namespace tessel::autosched {

namespace {

struct ConvMatch {
    const FuncInfo *acc = nullptr;
    MatrixOutput mo;
    std::string a, b;    // the weights-like operand (no pixel index) and the window operand
    std::string i, j, k; // output channel, pixel (innermost), reduced channel
    std::vector<std::string> taps;  // the other reduction variables, innermost first
    std::vector<std::string> outer; // the accumulator's other pure variables, innermost first
    DType dtype = DType::FP32;
    int64_t M = 0, N = 0, K = 0, taps_n = 1, outer_n = 1;
    int64_t window_elems = 0; // what one output row reads of the window operand (every tap)
};

const LoadInfo *load_of(const DefInfo &u, const std::string &callee) {
    for (const auto &l : u.loads) {
        if (l.callee == callee) {
            return &l;
        }
    }
    return nullptr;
}

bool reads(const LoadInfo &l, const std::string &v) {
    for (const auto &s : l.index_sum) {
        if (std::count(s.begin(), s.end(), v)) {
            return true;
        }
    }
    return false;
}

int dim_alone(const LoadInfo &l, const std::string &v) {
    for (size_t d = 0; d < l.index_sum.size(); d++) {
        if (l.index_sum[d] == std::vector<std::string>{v}) {
            return static_cast<int>(d);
        }
    }
    return -1;
}

// Why `f` is not a convolution the form takes, or "" when `m` holds the match.
std::string match_one(const PipelineInfo &p, const ArchSpec &arch, const FuncInfo &f,
                      ConvMatch &m) {
    const DefInfo &u = f.updates[0];
    const std::string head = "Func " + f.name + ": ";
    const TensorInfo *ta = p.find_input(u.mul_a), *tb = p.find_input(u.mul_b);
    if (!ta || !tb) {
        return head + "its product reads " + u.mul_a + " and " + u.mul_b +
               "; the convolution form stages two inputs (a computed operand, such as a "
               "padded input, is not mapped yet)";
    }
    if (ta->dtype != tb->dtype || !arch.matrix.shapes.count(ta->dtype)) {
        return head + "the matrix unit of " + arch.name + " does not take " +
               dtype_name(ta->dtype) + " operands";
    }
    const LoadInfo *l1 = load_of(u, u.mul_a), *l2 = load_of(u, u.mul_b);
    if (!l1 || !l2 || l1->index_sum.empty() || l2->index_sum.empty()) {
        return head + "its operands' indices are not known";
    }
    m.acc = &f;
    m.j = f.vars[0];
    // The window operand reads the pixel along its innermost dimension.
    const LoadInfo *la = l1, *lb = l2;
    if (!std::count(lb->index_sum[0].begin(), lb->index_sum[0].end(), m.j)) {
        std::swap(la, lb);
    }
    if (!std::count(lb->index_sum[0].begin(), lb->index_sum[0].end(), m.j) || reads(*la, m.j)) {
        return head + "no operand reads " + m.j +
               " along its innermost dimension with stride 1 (a strided or dilated window, or "
               "another layout)";
    }
    m.a = la->callee;
    m.b = lb->callee;
    for (size_t r = 0; r < u.rvars.size(); r++) {
        const std::string &rv = u.rvars[r];
        if (u.rvar_extents[r] <= 0) {
            return head + "reduction variable " + rv + " has no constant extent";
        }
        const int da = dim_alone(*la, rv), db = dim_alone(*lb, rv);
        if (m.k.empty() && da >= 0 && db > 0) {
            m.k = rv;
            m.K = u.rvar_extents[r];
        } else if (da >= 0 && reads(*lb, rv)) {
            m.taps.push_back(rv);
            m.taps_n *= u.rvar_extents[r];
        } else {
            return head + "reduction variable " + rv +
                   " is neither a channel both operands read alone nor a tap of the window";
        }
    }
    if (m.k.empty() || m.taps.empty()) {
        return head + "no reduced channel both operands read alone";
    }
    for (size_t v = 1; v < f.vars.size(); v++) {
        const std::string &pv = f.vars[v];
        if (m.i.empty() && dim_alone(*la, pv) >= 0 && !reads(*lb, pv)) {
            m.i = pv;
        } else if (reads(*la, pv)) {
            return head + m.a + " reads " + pv + " besides the output channel";
        } else {
            m.outer.push_back(pv);
        }
    }
    if (m.i.empty()) {
        return head + m.a + " has no output-channel dimension the window operand lacks";
    }
    // A dense (i x k) tile of A needs k inside i; every other dimension of A is one tap.
    const int ka = dim_alone(*la, m.k), ia = dim_alone(*la, m.i);
    if (ka > ia) {
        return head + m.a + " holds " + m.i + " inside " + m.k +
               " (the matrix unit's A tile would be transposed)";
    }
    for (size_t d = 0; d < la->index_sum.size(); d++) {
        const auto &s = la->index_sum[d];
        if (s.size() != 1) {
            return head + m.a + " dimension " + std::to_string(d) + " is not one variable";
        }
    }
    const int kb = dim_alone(*lb, m.k);
    for (size_t d = 1; d < lb->index_sum.size(); d++) {
        if (static_cast<int>(d) == kb) {
            continue;
        }
        for (const auto &v : lb->index_sum[d]) {
            if (v == m.i || v == m.k || v == m.j) {
                return head + m.b + " dimension " + std::to_string(d) + " reads " + v;
            }
        }
        if (lb->index_sum[d].empty()) {
            return head + m.b + " dimension " + std::to_string(d) +
                   " is not a sum of variables (a strided or dilated window)";
        }
    }
    if (lb->index_sum[0].size() > 2) {
        return head + m.b + "'s innermost index is not a pixel plus one tap";
    }
    std::string reason;
    m.mo = find_matrix_output(p, f, reason);
    if (!m.mo.out) {
        return reason;
    }
    if (m.mo.epi && !epilogue_possible(arch, reason)) {
        return head + reason;
    }
    const TensorInfo *os = nullptr;
    for (const auto &o : p.outputs) {
        if (o.name == m.mo.out->name) {
            os = &o;
        }
    }
    if (!os || os->shape.size() != f.vars.size()) {
        return head + "the output's shape is not known";
    }
    for (size_t v = 0; v < f.vars.size(); v++) {
        const int64_t e = os->shape[v];
        if (e <= 0) {
            return head + "the output's extents are not all constant";
        }
        if (f.vars[v] == m.j) {
            m.N = e;
        } else if (f.vars[v] == m.i) {
            m.M = e;
        } else {
            m.outer_n *= e;
        }
    }
    m.dtype = ta->dtype;
    // One output row's window: the row plus the taps' halo along the pixel, every tap along the
    // dimensions a tap moves (the row loop fixes their pure variable), all channels.
    auto tap_extent = [&](const std::vector<std::string> &vars) {
        for (size_t r = 0; r < u.rvars.size(); r++) {
            if (u.rvars[r] != m.k && std::count(vars.begin(), vars.end(), u.rvars[r])) {
                return u.rvar_extents[r];
            }
        }
        return int64_t(1);
    };
    m.window_elems = m.N + tap_extent(lb->index_sum[0]) - 1;
    for (size_t d = 1; d < lb->index_sum.size(); d++) {
        m.window_elems *= static_cast<int>(d) == kb ? m.K : tap_extent(lb->index_sum[d]);
    }
    return "";
}

double edge_bw(const ArchSpec &a, const std::string &src, const std::string &dst) {
    const DmaEngine *e = a.engine_for(src, dst);
    if (e) {
        for (const auto &edge : e->edges) {
            if (edge.src == src && edge.dst == dst && edge.bytes_per_cycle > 0) {
                return edge.bytes_per_cycle;
            }
        }
    }
    return 1;
}

int64_t round_up(int64_t v, int64_t unit) {
    return unit > 0 ? (v + unit - 1) / unit * unit : v;
}

} // namespace

bool conv_matrix_form(const PipelineInfo &p, const ArchSpec &arch, AutoSchedule &r,
                      std::vector<std::string> &why, std::string &acc_name) {
    std::optional<ConvMatch> found;
    for (const auto &f : p.funcs) {
        if (f.updates.size() != 1 || !f.updates[0].sum_of_products ||
            f.updates[0].rvars.size() < 2 || f.vars.size() < 2) {
            continue;
        }
        ConvMatch m;
        const std::string no = match_one(p, arch, f, m);
        if (no.empty()) {
            found = m;
            break;
        }
        why.push_back(no);
    }
    if (!found) {
        return false;
    }
    const ConvMatch &m = *found;
    const FuncInfo &acc = *m.acc, &out = *m.mo.out;
    acc_name = acc.name;
    MatrixLevels ml;
    std::string no;
    if (!matrix_levels(arch, m.dtype, acc.name, ml, no)) {
        why.push_back(no);
        return false;
    }
    const MatrixShape sh = ml.sh;
    const int in_b = ml.in_b, acc_b = ml.acc_b;
    const std::string la = ml.la, lb = ml.lb, lc = ml.lc;
    const auto &pa = ml.pa, &pb = ml.pb;
    const double feed_bw = std::min(edge_bw(arch, pa.size() > 1 ? pa[0] : gm_name(arch), la),
                                    edge_bw(arch, pb.size() > 1 ? pb[0] : gm_name(arch), lb));
    const DmaEngine *feed = arch.engine_for(pa.size() > 1 ? pa[0] : gm_name(arch), pa.back());
    const double setup = feed ? feed->setup_cycles : 0;
    const double macs = std::max<int64_t>(arch.matrix.macs_per_cycle(m.dtype), 1);
    // The staging level (ascend-like L1) holds the window's rows (2 buffers) and the weights:
    // all of them once when they fit beside the rows in half of it, else a chunk per tile.
    const TensorInfo *ta = p.find_input(m.a);
    const uint64_t a_total = uint64_t(product(ta->shape, 0, ta->shape.size())) * in_b;
    const std::string sl = pa.size() > 1 ? pa[0] : "";
    const uint64_t sl_size = sl.empty() ? 0 : level_size(arch, sl);
    const uint64_t b_rows = pb.size() > 1 && pb[0] == sl ? 2 * uint64_t(m.window_elems) * in_b : 0;
    const bool a_root = !sl.empty() && 2 * a_total <= sl_size && a_total + b_rows <= sl_size;
    TileChoice tc;
    for (int64_t tm : tile_sizes(sh.m0, m.M)) {
        for (int64_t tn : tile_sizes(sh.n0, m.N)) {
            for (int64_t tk : tile_sizes(sh.k0, m.K)) {
                const int cbufs = ml.operand_buffers(arch, tm, tn, tk);
                bool fits = cbufs > 0;
                fits = fits && epilogue_fits(arch, m.mo, tm, tn, acc_b);
                const uint64_t a_chunk = 2 * uint64_t(tm * tk * m.taps_n) * in_b;
                fits = fits && (sl.empty() || a_root || a_chunk + b_rows <= sl_size);
                if (!fits) {
                    continue;
                }
                const double tiles = double(m.outer_n) * (m.M / tm) * (m.N / tn);
                const double products = tiles * m.taps_n * (m.K / tk);
                const double compute = tiles * m.taps_n * double(round_up(tm, sh.m0)) *
                                       round_up(tn, sh.n0) * round_up(m.K, sh.k0) / macs;
                const double fed = tiles * m.taps_n * double(m.K) * (tm + tn) * in_b;
                const double t = std::max(compute, fed / feed_bw) +
                                 products * (2 * setup + arch.matrix.fill_drain_cycles);
                tc.consider(t, tm, tn, tk, tk, cbufs);
            }
        }
    }
    if (!tc.m) {
        why.push_back(TileChoice::no_fit(acc.name, sh));
        return false;
    }
    const double best = tc.best;
    const int64_t bm = tc.m, bn = tc.n, bk = tc.k;
    const int bc = tc.cbufs;
    const std::string &x = m.j, &y = m.i;
    Directive tile = make("tile_" + out.name, DirectiveKind::Tile, out.name);
    tile.vars = {x, y, x + "o", y + "o", x + "i", y + "i"};
    tile.factors = {bn, bm};
    r.spec.directives.push_back(tile);
    // The tile's two loops innermost, then the tiles, then the rows and the batch.
    Directive oo = make("tiles_inside", DirectiveKind::Reorder, out.name);
    oo.vars = {x + "i", y + "i", x + "o", y + "o"};
    oo.vars.insert(oo.vars.end(), m.outer.begin(), m.outer.end());
    r.spec.directives.push_back(oo);
    const std::string tile_loop = x + "o";
    Directive at = make(acc.name + "_at", DirectiveKind::ComputeAt, acc.name);
    at.at_func = out.name;
    at.at_loop = tile_loop;
    r.spec.directives.push_back(at);
    const bool chunks = bk < m.K;
    Directive ro = make("taps_outer", DirectiveKind::Reorder, acc.name);
    ro.stage = 0;
    ro.vars = {m.j, m.i};
    if (chunks) {
        Directive ks = make("k_chunks", DirectiveKind::Split, acc.name);
        ks.stage = 0;
        ks.vars = {m.k, m.k + "o", m.k + "i"};
        ks.factors = {bk};
        r.spec.directives.push_back(ks);
        ro.vars.push_back(m.k + "i");
    } else {
        ro.vars.push_back(m.k);
    }
    ro.vars.insert(ro.vars.end(), m.taps.begin(), m.taps.end());
    if (chunks) {
        ro.vars.push_back(m.k + "o");
    }
    ro.vars.insert(ro.vars.end(), m.outer.begin(), m.outer.end());
    r.spec.directives.push_back(ro);
    // The weights: through the staging level once when they fit in half of it, else per chunk
    // (per tile without chunks); the window: per output row (the accumulator's first outer
    // loop), every tap's rows at once.
    std::string a_where = "per tap";
    if (pa.size() > 1) {
        const bool root = a_root;
        a_where = root ? "once" : chunks ? "per chunk" : "per tile";
        r.spec.directives.push_back(
            root     ? stage_dir("stage_" + m.a + "_" + pa[0], m.a, pa[0], out.name, "root", 1)
            : chunks ? stage_dir("stage_" + m.a + "_" + pa[0], m.a, pa[0], acc.name, m.k + "o", 2)
                     : stage_dir("stage_" + m.a + "_" + pa[0], m.a, pa[0], out.name, tile_loop, 2));
    }
    const std::string row_loop = m.outer.empty() ? "root" : m.outer[0];
    if (pb.size() > 1) {
        r.spec.directives.push_back(stage_dir("stage_" + m.b + "_" + pb[0], m.b, pb[0], out.name,
                                              row_loop, row_loop == "root" ? 1 : 2));
    }
    r.spec.directives.push_back(
        stage_dir("stage_" + m.a + "_" + la, m.a, la, acc.name, m.taps[0], 2));
    r.spec.directives.push_back(
        stage_dir("stage_" + m.b + "_" + lb, m.b, lb, acc.name, m.taps[0], 2));
    accumulate_and_tensorize(acc.name, lc, bc, r);
    std::ostringstream os;
    os << "convolution form: " << acc.name << " = " << m.a << " x " << m.b << " window ("
       << dtype_name(m.dtype) << "; " << m.taps_n << " taps, each a " << m.M << "x" << m.N << "x"
       << m.K << " product, " << m.outer_n << " rows) on the matrix unit; tiles " << bm << "x" << bn
       << " of " << out.name << " (" << m.i << " x " << m.j << ")";
    if (chunks) {
        os << ", " << m.k << " in chunks of " << bk;
    }
    os << "; " << m.a << " staged " << a_where << " GM";
    for (const auto &l : pa) {
        os << " -> " << l;
    }
    os << ", " << m.b << " per " << (row_loop == "root" ? std::string("run") : row_loop) << " GM";
    for (const auto &l : pb) {
        os << " -> " << l;
    }
    os << ", the accumulator in " << lc << " (" << bc << " buffer" << (bc > 1 ? "s" : "")
       << "); estimate " << static_cast<int64_t>(best) << " cycles";
    r.notes.push_back(os.str());
    if (m.mo.epi) {
        epilogue_directives(p, arch, acc, m.mo, tile_loop, bn, r);
    }
    for (const auto &f : p.funcs) {
        if (&f != &acc && &f != &out && f.name != (m.mo.epi ? m.mo.epi->name : "")) {
            r.warnings.push_back(
                "Func " + f.name +
                ": not part of the convolution form; left to the default placement");
        }
    }
    r.form = "matrix";
    return true;
}

} // namespace tessel::autosched
