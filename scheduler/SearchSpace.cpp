#include "scheduler/SearchSpace.h"

#include "npu_target/common/Error.h"

#include <algorithm>
#include <sstream>
#include <tuple>

namespace tessel::sched {

namespace {

int64_t param_int(const ParamMap &p, const std::string &key) {
    auto it = p.find(key);
    if (it == p.end()) {
        throw UserError("tune: parameter '" + key + "' is missing");
    }
    try {
        size_t used = 0;
        int64_t v = std::stoll(it->second, &used);
        if (used == it->second.size() && v > 0) {
            return v;
        }
    } catch (const std::exception &) {
    }
    throw UserError("tune: parameter " + key + "=" + it->second + " is not a positive integer");
}

DType param_dtype(const ParamMap &p) {
    auto it = p.find("dtype");
    std::string name = it == p.end() ? "fp16" : it->second;
    auto t = parse_dtype(name);
    if (!t) {
        throw UserError("tune: dtype=" + name + " is not an element type");
    }
    return *t;
}

int64_t align_up(int64_t bytes, int alignment) {
    const int64_t a = std::max(1, alignment);
    return (bytes + a - 1) / a * a;
}

template <typename T> const T &pick(const std::vector<T> &v, std::mt19937_64 &rng) { return v[rng() % v.size()]; }

// A neighbour of `value` in `opts` (one step up or down), or a random option.
template <typename T> T neighbour(const std::vector<T> &opts, T value, std::mt19937_64 &rng) {
    auto it = std::find(opts.begin(), opts.end(), value);
    if (it == opts.end() || rng() % 4 == 0) {
        return pick(opts, rng);
    }
    size_t i = static_cast<size_t>(it - opts.begin());
    if (rng() % 2 == 0 && i + 1 < opts.size()) {
        return opts[i + 1];
    }
    return i > 0 ? opts[i - 1] : opts[std::min(i + 1, opts.size() - 1)];
}

// A spread of at most `keep` values of a sorted list (always the first and last).
std::vector<int64_t> thin(const std::vector<int64_t> &v, size_t keep) {
    if (v.size() <= keep) {
        return v;
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < keep; i++) {
        out.push_back(v[i * (v.size() - 1) / (keep - 1)]);
    }
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

} // namespace

std::vector<int64_t> divisors_multiple_of(int64_t n, int64_t step, int64_t max_value) {
    std::vector<int64_t> out;
    for (int64_t d = step; d <= std::min(n, max_value); d += step) {
        if (n % d == 0) {
            out.push_back(d);
        }
    }
    return out;
}

const char *path_name(Path p) {
    switch (p) {
    case Path::Naive: return "naive";
    case Path::Vector: return "vector";
    case Path::Matrix: return "matrix";
    }
    return "?";
}

Problem make_problem(const std::string &generator, const ParamMap &given, const ArchSpec &arch) {
    Problem p;
    p.generator = generator;
    p.params = resolve_params(find_generator(generator), given);
    p.arch = arch;
    p.in_t = param_dtype(p.params);
    if (generator == "gemm") {
        p.op = OpKind::Gemm;
        p.M = param_int(p.params, "M");
        p.N = param_int(p.params, "N");
        p.K = param_int(p.params, "K");
        auto acc = arch.matrix.accumulators.find(p.in_t);
        p.acc_t = acc != arch.matrix.accumulators.end() ? acc->second
                                                        : (dtype_is_float(p.in_t) ? DType::FP32 : DType::Int32);
        return p;
    }
    if (generator == "elementwise") {
        p.op = OpKind::Elementwise;
        p.length = param_int(p.params, "N");
        p.chain = p.params.at("op") == "chain";
        p.inputs = p.chain ? 3 : 2;
        p.acc_t = p.in_t;
        return p;
    }
    if (generator == "conv2d") {
        p.op = OpKind::Conv2d;
        const int64_t k = param_int(p.params, "K"), stride = param_int(p.params, "stride");
        if (k != 3 || stride != 1) {
            throw UserError("tune: conv2d is searched for K=3, stride=1 (got K=" + std::to_string(k) +
                            ", stride=" + std::to_string(stride) + ")");
        }
        p.M = param_int(p.params, "W");
        p.N = param_int(p.params, "CO");
        p.K = param_int(p.params, "CI");
        p.rows = param_int(p.params, "H");
        p.batch = param_int(p.params, "N");
        p.taps = k * k;
        auto acc = arch.matrix.accumulators.find(p.in_t);
        p.acc_t = acc != arch.matrix.accumulators.end() ? acc->second
                                                        : (dtype_is_float(p.in_t) ? DType::FP32 : DType::Int32);
        return p;
    }
    if (generator == "softmax") {
        p.op = OpKind::Softmax;
        p.rows = param_int(p.params, "ROWS");
        p.length = param_int(p.params, "COLS");
        p.acc_t = DType::FP32; // the statistics
        return p;
    }
    throw UserError("tune: the search space covers the generators gemm, elementwise, conv2d and softmax, not '" +
                    generator + "'");
}

namespace {
auto choices(const Candidate &c) {
    return std::tie(c.path, c.tile_n, c.tile_m, c.k_chunk, c.via_mid, c.a_panel, c.mid_buffers, c.op_buffers,
                    c.acc_buffers, c.vector, c.cores, c.band, c.row_reduce, c.via_level);
}
} // namespace

bool Candidate::operator==(const Candidate &o) const { return choices(*this) == choices(o); }

bool Candidate::operator<(const Candidate &o) const { return choices(*this) < choices(o); }

std::string Candidate::describe() const {
    std::ostringstream os;
    os << path_name(path);
    if (path == Path::Naive) {
        return os.str();
    }
    if (tile_m > 0 && tile_n == 0) {
        os << " band " << tile_m << " rows" << (row_reduce ? " row-reduce" : ""); // softmax
        if (via_level > 0) {
            os << " via level " << via_level << " x" << mid_buffers;
        }
    } else if (tile_m > 0) {
        os << " " << tile_m << "x" << tile_n << " k" << k_chunk;
    } else {
        os << " tile " << tile_n;
    }
    if (path == Path::Matrix) {
        if (band > 0) {
            os << " weights resident, bands of " << band << " rows";
        }
        if (via_mid) {
            os << (a_panel ? " Apanel" : "") << " mid x" << mid_buffers;
        }
        os << " ops x" << op_buffers << " acc x" << acc_buffers;
    } else {
        os << " in x" << op_buffers << " vec " << vector;
    }
    os << " cores " << cores;
    return os.str();
}

SearchSpace::SearchSpace(Problem p) : p_(std::move(p)) {
    const ArchSpec &a = p_.arch;
    const int max_cores = std::max(1, a.chip.cores);
    for (int c : {1, 2, 4, 8}) {
        if (c <= max_cores) {
            cores_.push_back(c);
        }
    }
    const std::string &vl = a.vector.level;
    const bool vec_dtype = std::find(a.vector.dtypes.begin(), a.vector.dtypes.end(), p_.acc_t) != a.vector.dtypes.end();
    if (p_.op == OpKind::Elementwise) {
        vector_ok_ = a.find_level(vl) && a.engine_for("GM", vl) && a.engine_for(vl, "GM") && vec_dtype;
        len_ = thin(divisors_multiple_of(p_.length, 128, 65536), 10);
        const int lanes = a.vector.bytes_per_repeat / dtype_bytes(p_.in_t);
        for (int w : {lanes / 4, lanes / 2, lanes, lanes * 2}) {
            if (w >= 8) {
                vec_.push_back(w);
            }
        }
        paths_ = {Path::Vector};
        return;
    }
    if (p_.op == OpKind::Softmax) {
        // Bands of rows staged into the vector level, every Func on the vector
        // unit. The unit must take fp32 (the statistics) and the element type
        // (the casts); the band goes back to GM by DMA. A machine with no engine
        // into the vector level (auto-int8: nothing writes ACC) copies the band
        // in with scalar code: legal and slow, the cost model charges it.
        const bool types = std::find(a.vector.dtypes.begin(), a.vector.dtypes.end(), p_.in_t) != a.vector.dtypes.end();
        vector_ok_ = vec_dtype && types && a.find_level(vl) && a.engine_for(vl, "GM");
        std::vector<int64_t> rows = divisors_multiple_of(p_.rows, 1, 128);
        rows.erase(std::remove(rows.begin(), rows.end(), 1), rows.end()); // a one-row band has no row vector
        vtm_ = thin(rows, 7);
        const int lanes = a.vector.bytes_per_repeat / 4;
        for (int w : {lanes / 4, lanes / 2, lanes, lanes * 2}) {
            if (w >= 8 && p_.length % w == 0) {
                vec_.push_back(w);
            }
        }
        // The row_reduce form (atomic + vectorize of the reduction variable: a
        // VREDMAX/VREDSUM per chunk of a row): a band may be one row; chunks
        // are whole repeats of fp32 up to the row.
        rrows_ = thin(divisors_multiple_of(p_.rows, 1, 256), 9);
        for (int64_t w : divisors_multiple_of(p_.length, lanes, 4096)) {
            rvec_.push_back(static_cast<int>(w));
        }
        // No engine into the vector level: the band can first be staged by DMA
        // into a level closer to the scalar unit than GM (auto-int8: SRAM, CBUF).
        if (!a.engine_for("GM", vl)) {
            for (const MemoryLevel &l : a.memories) {
                if (!l.off_chip && l.name != vl && a.engine_for("GM", l.name)) {
                    sm_mids_.push_back(l.name);
                }
            }
        }
        vector_ok_ = vector_ok_ && !vtm_.empty() && !vec_.empty();
        if (vector_ok_) {
            paths_.push_back(Path::Vector);
        }
        paths_.push_back(Path::Naive);
        return;
    }
    // GEMM. The matrix path needs the dtype's fractal, the operand levels and DMA edges into them.
    const MatrixUnit &mu = a.matrix;
    auto shape = mu.shapes.find(p_.in_t);
    matrix_ok_ = shape != mu.shapes.end() && a.find_level(mu.a_level) && a.find_level(mu.b_level) &&
                 a.find_level(mu.c_level) && a.engine_for(mu.c_level, "GM");
    if (matrix_ok_) {
        // A level fed from GM that feeds both operand levels (L1 on ascend-like).
        for (const MemoryLevel &l : a.memories) {
            if (!l.off_chip && l.name != mu.a_level && l.name != mu.b_level && a.engine_for("GM", l.name) &&
                a.engine_for(l.name, mu.a_level) && a.engine_for(l.name, mu.b_level)) {
                mid_ = l.name;
                break;
            }
        }
        // Straight from GM into the operand levels, when engines do that (both
        // routes are searched where both exist: on auto-int8 the direct CDMA
        // copies beat the detour through SRAM).
        direct_ok_ = a.engine_for("GM", mu.a_level) && a.engine_for("GM", mu.b_level);
        if (mid_.empty() && !direct_ok_) {
            matrix_ok_ = false;
        }
    }
    if (matrix_ok_ && p_.op == OpKind::Conv2d) {
        // One tap's (pixels x CI) * (CI x CO tile) product per chunk: CI whole, pixels any divisor of W.
        const MatrixShape &s = shape->second;
        tm_ = thin(divisors_multiple_of(p_.M, 1, 256), 6);
        tm_.erase(std::remove(tm_.begin(), tm_.end(), 1), tm_.end()); // a one-pixel x loop vanishes: no matmul nest
        tn_ = thin(divisors_multiple_of(p_.N, s.n0, 512), 6);
        tk_ = {p_.K};
        if (!mid_.empty()) {
            bands_ = thin(divisors_multiple_of(p_.rows, 1, 64), 5); // the resident-weights form
        }
        cores_ = {1};
        paths_ = {Path::Matrix, Path::Naive};
        return;
    }
    if (p_.op == OpKind::Conv2d) {
        paths_ = {Path::Naive};
        return;
    }
    if (matrix_ok_) {
        const MatrixShape &s = shape->second;
        // Fractal-aligned tiles; the m step is at least 16 so that a tile's rows
        // are a whole number of the accumulator's 512 B fractals.
        tm_ = thin(divisors_multiple_of(p_.M, std::max(s.m0, 16), 512), 7);
        tn_ = thin(divisors_multiple_of(p_.N, s.n0, 512), 7);
        tk_ = thin(divisors_multiple_of(p_.K, s.k0, 512), 7);
        matrix_ok_ = !tm_.empty() && !tn_.empty() && !tk_.empty();
    }
    // The vector path: A and B chunks staged into the vector unit's level (not the accumulator level).
    vector_ok_ = vec_dtype && a.find_level(vl) && vl != mu.c_level && a.engine_for("GM", vl) &&
                 a.engine_for(vl, "GM");
    if (vector_ok_) {
        const int lanes = a.vector.bytes_per_repeat / dtype_bytes(p_.acc_t);
        vtn_ = thin(divisors_multiple_of(p_.N, 8, 256), 5);
        vtm_ = thin(divisors_multiple_of(p_.M, 4, 64), 4);
        vtk_ = thin(divisors_multiple_of(p_.K, 8, 128), 4);
        for (int w : {8, 16, 32, 64}) {
            if (w <= lanes) {
                vec_.push_back(w);
            }
        }
        vector_ok_ = !vtn_.empty() && !vtm_.empty() && !vtk_.empty() && !vec_.empty();
    }
    if (matrix_ok_) {
        paths_.push_back(Path::Matrix);
    }
    if (vector_ok_) {
        paths_.push_back(Path::Vector);
    }
    paths_.push_back(Path::Naive);
}

Candidate SearchSpace::naive() const {
    Candidate c;
    c.path = Path::Naive;
    return c;
}

std::map<std::string, int64_t> SearchSpace::footprint(const Candidate &c) const {
    std::map<std::string, int64_t> f;
    const ArchSpec &a = p_.arch;
    auto add = [&](const std::string &level, int64_t bytes, int buffers) {
        const MemoryLevel *l = a.find_level(level);
        f[level] += align_up(bytes, l ? l->alignment : 32) * buffers;
    };
    const int sa = dtype_bytes(p_.in_t), sacc = dtype_bytes(p_.acc_t);
    if (c.path == Path::Naive) {
        return f;
    }
    if (p_.op == OpKind::Elementwise) {
        const std::string &ub = a.vector.level;
        for (int i = 0; i < p_.inputs; i++) {
            add(ub, c.tile_n * sa, c.op_buffers);
        }
        add(ub, c.tile_n * sa, 1); // ew's tile
        if (p_.chain) {
            // fp32 intermediates of the chain (the casts, sum, relu, product, exp) as
            // scratch buffers of select_vector_ops; counted generously.
            add(ub, c.tile_n * 4, 6);
        }
        return f;
    }
    if (p_.op == OpKind::Softmax) {
        const std::string &vl = a.vector.level;
        const int64_t band = c.tile_m * p_.length;
        if (c.via_level > 0) {
            add(sm_mids_.at(c.via_level - 1), band * sa, c.mid_buffers);
        }
        add(vl, band * sa, c.op_buffers);  // the staged input
        if (p_.in_t != DType::FP32 && !c.row_reduce) {
            add(vl, band * 4, 1);          // the row max's cast of the band (scratch)
        }
        add(vl, band * 4, 1);              // expd
        add(vl, band * sa, 1);             // norm (leaves as out)
        add(vl, c.tile_m * 4, 2);          // rowmax, rowsum
        // a row's scratch (cast, broadcast, difference; row_reduce: the cast row, the chunk's reduction)
        add(vl, std::max<int64_t>(p_.length, c.vector) * 4, c.row_reduce ? 4 : 3);
        return f;
    }
    const int64_t a_chunk = c.tile_m * c.k_chunk * sa, b_chunk = c.k_chunk * c.tile_n * sa;
    if (c.path == Path::Vector) {
        const std::string &ub = a.vector.level;
        add(ub, a_chunk, c.op_buffers);
        add(ub, b_chunk, c.op_buffers);
        add(ub, c.tile_m * c.tile_n * sacc, 1); // the accumulator tile
        // Casts of the operands to the accumulator type and a product tile (scratch).
        add(ub, c.tile_n * sacc, 3);
        return f;
    }
    const MatrixUnit &mu = a.matrix;
    if (c.band > 0) {
        // conv2d, resident weights: all taps' weights and an input band (band + 2
        // rows of W + 2 pixels) in the mid level; per tap the band's input rows in
        // the a level and the weights in the b level; the band's accumulator.
        add(mid_, p_.taps * p_.K * p_.N * sa, 1);
        add(mid_, (c.band + 2) * (p_.M + 2) * p_.K * sa, c.mid_buffers);
        add(mu.a_level, c.band * p_.M * p_.K * sa, c.op_buffers);
        add(mu.b_level, p_.K * p_.N * sa, c.op_buffers);
        add(mu.c_level, c.band * p_.M * p_.N * sacc, c.acc_buffers);
        return f;
    }
    if (c.via_mid) {
        if (c.a_panel) {
            add(mid_, c.tile_m * p_.K * sa, 1);
        } else {
            add(mid_, a_chunk, c.mid_buffers);
        }
        add(mid_, b_chunk, c.mid_buffers);
    }
    add(mu.a_level, a_chunk, c.op_buffers);
    add(mu.b_level, b_chunk, c.op_buffers);
    add(mu.c_level, c.tile_m * c.tile_n * sacc, c.acc_buffers);
    return f;
}

bool SearchSpace::legal(const Candidate &c, std::string *why) const {
    auto fail = [&](const std::string &m) {
        if (why) {
            *why = m;
        }
        return false;
    };
    auto in = [](const auto &v, auto x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    if (!in(paths_, c.path)) {
        return fail(std::string("path ") + path_name(c.path) + " is not available for this problem");
    }
    if (c.path == Path::Naive) {
        return c == naive() ? true : fail("the naive candidate has no other choices");
    }
    if (!in(cores_, c.cores)) {
        return fail("cores " + std::to_string(c.cores) + " is not in the space (chip has " +
                    std::to_string(p_.arch.chip.cores) + ")");
    }
    // Elementwise inputs may take a third copy (chain_staged.json's form: the
    // chain's three inputs, 8 KiB DMAs, a third load in flight).
    const int max_op = p_.op == OpKind::Elementwise ? 3 : 2;
    if (c.op_buffers < 1 || c.op_buffers > max_op || c.mid_buffers < 1 || c.mid_buffers > 2 || c.acc_buffers < 1 ||
        c.acc_buffers > 2) {
        return fail("buffer counts are 1 or 2 (an elementwise input's up to 3)");
    }
    if (p_.op == OpKind::Elementwise) {
        if (!in(len_, c.tile_n) || !in(vec_, c.vector) || c.tile_m != 0 || c.k_chunk != 0 || c.via_mid ||
            c.a_panel || c.mid_buffers != 1 || c.acc_buffers != 1) {
            return fail("not an elementwise choice");
        }
        if (c.vector > c.tile_n || (p_.length / c.tile_n) % c.cores != 0) {
            return fail("vector wider than the tile, or tiles not divisible among cores");
        }
    } else if (p_.op == OpKind::Softmax) {
        if (!in(c.row_reduce ? rrows_ : vtm_, c.tile_m) || !in(c.row_reduce ? rvec_ : vec_, c.vector) ||
            c.tile_n != 0 || c.k_chunk != 0 || c.via_mid || c.a_panel || c.acc_buffers != 1 || c.band != 0) {
            return fail("not a softmax choice");
        }
        if (c.via_level < 0 || c.via_level > static_cast<int>(sm_mids_.size()) ||
            (c.via_level == 0 && c.mid_buffers != 1)) {
            return fail("the band is staged through another level only where no engine copies GM into " +
                        p_.arch.vector.level);
        }
        if ((p_.rows / c.tile_m) % c.cores != 0) {
            return fail("bands not divisible among cores");
        }
    } else if (c.row_reduce || c.via_level != 0) {
        return fail("row_reduce and via_level are softmax choices");
    } else if (c.path == Path::Vector) {
        if (c.band != 0) {
            return fail("bands with resident weights are a conv2d matrix-path choice");
        }
        if (!in(vtn_, c.tile_n) || !in(vtm_, c.tile_m) || !in(vtk_, c.k_chunk) || !in(vec_, c.vector) || c.via_mid ||
            c.a_panel || c.mid_buffers != 1 || c.acc_buffers != 1) {
            return fail("not a vector-path choice");
        }
        if (c.tile_n % c.vector != 0 || (p_.M / c.tile_m) % c.cores != 0) {
            return fail("vector width does not divide the tile, or tile rows not divisible among cores");
        }
    } else if (c.band != 0) {
        if (p_.op != OpKind::Conv2d || !in(bands_, c.band)) {
            return fail("bands with resident weights are a conv2d choice where a mid level holds the weights");
        }
        if (c.tile_m != p_.M || c.tile_n != p_.N || c.k_chunk != p_.K || !c.via_mid || c.a_panel || c.vector != 0) {
            return fail("resident weights go with whole output rows and all channels, through " + mid_);
        }
    } else {
        if (!in(tn_, c.tile_n) || !in(tm_, c.tile_m) || !in(tk_, c.k_chunk) || c.vector != 0) {
            return fail("tile sizes must divide the shape in whole fractals");
        }
        if (c.via_mid && mid_.empty()) {
            return fail("no mid level on this machine");
        }
        if (!c.via_mid && !direct_ok_) {
            return fail("no engine copies GM into " + p_.arch.matrix.a_level + " and " + p_.arch.matrix.b_level +
                        ": operands go through " + mid_ + " first");
        }
        if (!c.via_mid && (c.a_panel || c.mid_buffers != 1)) {
            return fail("panel and mid buffers need a mid level");
        }
        if (p_.op == OpKind::Conv2d && c.a_panel) {
            return fail("conv2d stages the input per tap, not as a panel");
        }
        if (c.a_panel && c.mid_buffers != 2) {
            return fail("an A panel goes with double-buffered B chunks");
        }
        if ((p_.M / c.tile_m) % c.cores != 0) {
            return fail("tile rows not divisible among cores");
        }
    }
    for (const auto &[level, bytes] : footprint(c)) {
        const MemoryLevel *l = p_.arch.find_level(level);
        if (!l || static_cast<uint64_t>(bytes) > l->size_bytes) {
            return fail(level + " needs " + std::to_string(bytes) + " bytes; it has " +
                        std::to_string(l ? l->size_bytes : 0));
        }
    }
    return true;
}

std::vector<Candidate> SearchSpace::enumerate(size_t limit) const {
    std::vector<Candidate> out;
    auto push = [&](const Candidate &c) {
        if (out.size() < limit && legal(c)) {
            out.push_back(c);
        }
    };
    if (p_.op == OpKind::Elementwise || p_.op == OpKind::Softmax) {
        // One size (elementwise: the tile; softmax: the band's rows), input buffers, vector width, cores.
        // Softmax also: the row_reduce form, and the level a band is staged through.
        const bool ew = p_.op == OpKind::Elementwise;
        if (std::find(paths_.begin(), paths_.end(), Path::Vector) != paths_.end()) {
            for (bool rr : ew ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
                for (int via = 0; via <= (ew ? 0 : static_cast<int>(sm_mids_.size())); via++) {
                    for (int mb = 1; mb <= (via > 0 ? 2 : 1); mb++) {
                        for (int64_t size : ew ? len_ : (rr ? rrows_ : vtm_)) {
                            for (int b : ew ? std::vector<int>{1, 2, 3} : std::vector<int>{1, 2}) {
                                for (int w : rr ? rvec_ : vec_) {
                                    for (int cores : cores_) {
                                        Candidate c;
                                        c.path = Path::Vector;
                                        (ew ? c.tile_n : c.tile_m) = size;
                                        c.op_buffers = b, c.vector = w, c.cores = cores;
                                        c.row_reduce = rr, c.via_level = via, c.mid_buffers = mb;
                                        push(c);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if (!ew) {
            push(naive());
        }
        return out;
    }
    for (int64_t band : bands_) { // conv2d: resident weights, whole rows
        for (int mb : {1, 2}) {
            for (int ob : {1, 2}) {
                for (int accb : {1, 2}) {
                    Candidate c;
                    c.path = Path::Matrix;
                    c.tile_m = p_.M, c.tile_n = p_.N, c.k_chunk = p_.K, c.band = band, c.via_mid = true;
                    c.mid_buffers = mb, c.op_buffers = ob, c.acc_buffers = accb;
                    push(c);
                }
            }
        }
    }
    for (Path path : paths_) {
        if (path == Path::Naive) {
            push(naive());
            continue;
        }
        const bool mat = path == Path::Matrix;
        for (int64_t tm : mat ? tm_ : vtm_) {
            for (int64_t tn : mat ? tn_ : vtn_) {
                for (int64_t tk : mat ? tk_ : vtk_) {
                    for (int cores : cores_) {
                        for (int ob : {1, 2}) {
                            Candidate c;
                            c.path = path;
                            c.tile_m = tm, c.tile_n = tn, c.k_chunk = tk, c.cores = cores, c.op_buffers = ob;
                            if (!mat) {
                                for (int w : vec_) {
                                    c.vector = w;
                                    push(c);
                                }
                                continue;
                            }
                            for (int accb : {1, 2}) {
                                c.acc_buffers = accb;
                                if (direct_ok_) {
                                    c.via_mid = false, c.mid_buffers = 1, c.a_panel = false;
                                    push(c);
                                }
                                if (mid_.empty()) {
                                    continue;
                                }
                                c.via_mid = true;
                                for (int mb : {1, 2}) {
                                    for (bool panel : {false, true}) {
                                        c.mid_buffers = mb, c.a_panel = panel;
                                        push(c);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return out;
}

Candidate SearchSpace::random(std::mt19937_64 &rng) const {
    for (int attempt = 0; attempt < 2000; attempt++) {
        Candidate c;
        c.path = pick(paths_, rng);
        if (c.path == Path::Naive) {
            if (paths_.size() > 1 && rng() % 8 != 0) {
                continue; // the naive schedule is one point: draw it rarely
            }
            return naive();
        }
        c.cores = pick(cores_, rng);
        c.op_buffers = 1 + static_cast<int>(rng() % (p_.op == OpKind::Elementwise ? 3 : 2));
        if (p_.op == OpKind::Elementwise) {
            c.tile_n = pick(len_, rng);
            c.vector = pick(vec_, rng);
        } else if (p_.op == OpKind::Softmax) {
            c.row_reduce = !rvec_.empty() && rng() % 2 == 0;
            c.tile_m = pick(c.row_reduce ? rrows_ : vtm_, rng);
            c.vector = pick(c.row_reduce ? rvec_ : vec_, rng);
            c.via_level = static_cast<int>(rng() % (sm_mids_.size() + 1));
            c.mid_buffers = c.via_level > 0 ? 1 + static_cast<int>(rng() % 2) : 1;
        } else if (c.path == Path::Vector) {
            c.tile_m = pick(vtm_, rng), c.tile_n = pick(vtn_, rng), c.k_chunk = pick(vtk_, rng);
            c.vector = pick(vec_, rng);
        } else if (!bands_.empty() && rng() % 2 == 0) { // conv2d, resident weights
            c.tile_m = p_.M, c.tile_n = p_.N, c.k_chunk = p_.K, c.band = pick(bands_, rng), c.via_mid = true;
            c.mid_buffers = 1 + static_cast<int>(rng() % 2);
            c.acc_buffers = 1 + static_cast<int>(rng() % 2);
        } else {
            c.tile_m = pick(tm_, rng), c.tile_n = pick(tn_, rng), c.k_chunk = pick(tk_, rng);
            c.acc_buffers = 1 + static_cast<int>(rng() % 2);
            c.via_mid = !mid_.empty() && (!direct_ok_ || rng() % 2 == 0);
            if (c.via_mid) {
                c.mid_buffers = 1 + static_cast<int>(rng() % 2);
                c.a_panel = c.mid_buffers == 2 && rng() % 3 == 0;
            }
        }
        if (legal(c)) {
            return c;
        }
    }
    return naive();
}

Candidate SearchSpace::mutate(const Candidate &c, std::mt19937_64 &rng) const {
    if (c.path == Path::Naive) {
        return random(rng);
    }
    for (int attempt = 0; attempt < 200; attempt++) {
        Candidate m = c;
        const int changes = 1 + static_cast<int>(rng() % 2);
        for (int i = 0; i < changes; i++) {
            const bool mat = m.path == Path::Matrix;
            const bool sm = p_.op == OpKind::Softmax;
            switch (rng() % 10) {
            case 0: if (!sm) m.tile_n = neighbour(p_.op == OpKind::Elementwise ? len_ : (mat ? tn_ : vtn_), m.tile_n, rng); break;
            case 1:
                if (m.band > 0) {
                    m.band = neighbour(bands_, m.band, rng);
                } else if (p_.op != OpKind::Elementwise) {
                    m.tile_m = neighbour(mat ? tm_ : (m.row_reduce ? rrows_ : vtm_), m.tile_m, rng);
                }
                break;
            case 2: if (p_.op != OpKind::Elementwise && p_.op != OpKind::Softmax) m.k_chunk = neighbour(mat ? tk_ : vtk_, m.k_chunk, rng); break;
            case 3: m.op_buffers = p_.op == OpKind::Elementwise ? 1 + m.op_buffers % 3 : 3 - m.op_buffers; break;
            case 4: if (mat) m.acc_buffers = 3 - m.acc_buffers; break;
            case 5:
                if (mat && m.via_mid && (!direct_ok_ || rng() % 2 == 0)) {
                    m.mid_buffers = 3 - m.mid_buffers;
                } else if (mat && direct_ok_ && !mid_.empty()) { // the other route
                    m.via_mid = !m.via_mid, m.a_panel = false, m.mid_buffers = m.via_mid ? 2 : 1;
                }
                break;
            case 6: if (mat && m.via_mid) m.a_panel = !m.a_panel; else if (!mat) m.vector = neighbour(m.row_reduce ? rvec_ : vec_, m.vector, rng); break;
            case 7: m.cores = neighbour(cores_, m.cores, rng); break;
            case 8: // the other form: softmax's reductions along / across rows; conv2d's resident weights or per tap
                if (sm && !rvec_.empty()) {
                    m.row_reduce = !m.row_reduce;
                    m.tile_m = neighbour(m.row_reduce ? rrows_ : vtm_, m.tile_m, rng);
                    m.vector = neighbour(m.row_reduce ? rvec_ : vec_, m.vector, rng);
                } else if (mat && !bands_.empty() && m.band == 0) {
                    m.band = pick(bands_, rng), m.tile_m = p_.M, m.tile_n = p_.N, m.via_mid = true, m.a_panel = false;
                } else if (mat && m.band > 0) {
                    m.band = 0, m.tile_m = pick(tm_, rng), m.tile_n = pick(tn_, rng);
                }
                break;
            default: // softmax: the level a band is staged through; buffers there
                if (sm && !sm_mids_.empty()) {
                    m.via_level = static_cast<int>(rng() % (sm_mids_.size() + 1));
                    m.mid_buffers = m.via_level > 0 ? 1 + static_cast<int>(rng() % 2) : 1;
                }
                break;
            }
        }
        if (m != c && legal(m)) {
            return m;
        }
    }
    return random(rng);
}

} // namespace tessel::sched
