#include "npu_target/passes/BankPlacement.h"

#include "npu_target/arch/BankModel.h"
#include "npu_target/isa/InstrTable.h"
#include "npu_target/passes/AllocateBuffers.h"

#include <algorithm>
#include <optional>
#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// One operand of a vector operation in the bank model's terms, its address
// relative to its buffer's start (the index evaluated for one iteration).
struct OperandAt {
    std::string buffer;
    std::string level;
    int64_t offset = 0; // bytes from the buffer's start
    BankAccess access;  // addr filled in per candidate placement
};

// A vector operation as the placement weighs it: its operands for the first
// iterations of its loops (one sample each; those whose indices could not be
// evaluated are left out), its repeats and how often it runs.
struct VectorUse {
    std::vector<std::vector<OperandAt>> samples;
    int64_t n = 0, per_repeat = 1, reps = 1;
    int rows = 1;
    double trips = 1;
};

// Collects every vector operation with its operand addresses evaluated once,
// for the first four iterations of the loops around it (each loop at min + t,
// clamped to its last iteration).
class CollectVectorUses : public IRVisitor {
public:
    explicit CollectVectorUses(const nir::NpuModule &m) : m_(m) {}
    std::vector<VectorUse> uses;
    std::map<std::string, std::vector<size_t>> by_buffer;

private:
    static constexpr int kSamples = 4;
    const nir::NpuModule &m_;
    std::vector<const For *> loops_;
    using IRVisitor::visit;
    void visit(const For *op) override {
        loops_.push_back(op);
        IRVisitor::visit(op);
        loops_.pop_back();
    }
    void visit(const Evaluate *op) override {
        if (auto v = nir::as_vec(Stmt(op))) {
            add(*v);
        }
        IRVisitor::visit(op);
    }
    void add(const nir::VecOp &v) {
        VectorUse u;
        const bool reduce = v.op == isa::Op::VREDSUM || v.op == isa::Op::VREDMAX;
        const int esz_d = static_cast<int>(dtype_bytes(v.op == isa::Op::VCAST ? v.dtype2 : v.dtype));
        const int esz_a = static_cast<int>(dtype_bytes(v.dtype));
        u.n = v.n;
        u.rows = v.rows;
        u.per_repeat = std::max<int64_t>(1, m_.arch->vector.bytes_per_repeat / std::max(esz_d, esz_a));
        u.reps = (v.n + u.per_repeat - 1) / u.per_repeat;
        for (const For *f : loops_) {
            const int64_t *e = as_const_int(f->extent);
            u.trips *= e ? static_cast<double>(std::max<int64_t>(1, *e)) : 1.0;
        }
        const nir::BufRef *refs[3] = {&v.dst, &v.a, &v.b};
        for (int t = 0; t < kSamples; ++t) {
            std::map<std::string, int64_t> env;
            bool ok = true;
            for (const For *f : loops_) {
                auto lo = nir::eval_int(f->min, env), ext = nir::eval_int(f->extent, env);
                ok = ok && lo && ext && *ext > 0;
                if (!ok) {
                    break;
                }
                env[f->name] = *lo + std::min<int64_t>(t, *ext - 1);
            }
            std::vector<OperandAt> sample;
            for (int i = 0; i < 3 && ok; ++i) {
                const nir::BufRef &r = *refs[i];
                auto bit = r.buffer.empty() ? m_.buffers.end() : m_.buffers.find(r.buffer);
                if (bit == m_.buffers.end()) {
                    continue;
                }
                auto idx = r.index.defined() ? nir::eval_int(r.index, env) : std::optional<int64_t>(0);
                ok = idx.has_value();
                if (ok) {
                    OperandAt o;
                    o.buffer = r.buffer;
                    o.level = bit->second.level;
                    o.offset = *idx * bit->second.type.bytes();
                    o.access.stride = (i == 0 && reduce) ? 0 : v.stride[i];
                    o.access.row_result_at = (i == 0 && reduce) ? v.n - 1 : -1;
                    if (i == 2 && isa::row_scalar_base(v.op) != isa::Op::NUM_OPS) {
                        o.access.row_result_at = 0; // a row-scalar op's b: read once per row
                    }
                    o.access.row_stride = v.row_stride[i];
                    o.access.esz = i == 0 ? esz_d : esz_a;
                    o.access.write = i == 0;
                    sample.push_back(o);
                }
            }
            if (ok) {
                u.samples.push_back(std::move(sample));
            }
        }
        for (const nir::BufRef *r : refs) {
            if (!r->buffer.empty()) {
                auto &list = by_buffer[r->buffer];
                if (list.empty() || list.back() != uses.size()) {
                    list.push_back(uses.size());
                }
            }
        }
        uses.push_back(std::move(u));
    }
};

class BankCost {
public:
    explicit BankCost(const nir::NpuModule &m)
        : vec_(m), bytes_per_repeat_(std::max(1, m.arch->vector.bytes_per_repeat)) {
        m.body.accept(&vec_);
    }

    // Estimated bank-conflict cycles of the vector operations that use `name`
    // if it starts at byte `at`, counting only operands in the banked level
    // already placed and live (those placed later adapt to it): each sample's
    // repeats over one bank period, scaled to the operation's repeats and trips.
    double cost(const std::string &name, int64_t at, const MemoryLevel &L,
                const std::map<std::string, int64_t> &live) const {
        auto it = vec_.by_buffer.find(name);
        if (it == vec_.by_buffer.end()) {
            return 0;
        }
        const int64_t span_repeats = std::max<int64_t>(1, bank_period_bytes(L) / bytes_per_repeat_);
        double cost = 0;
        for (size_t ui : it->second) {
            const VectorUse &u = vec_.uses[ui];
            const int64_t span = std::min(u.reps, span_repeats);
            double sum = 0;
            int counted = 0;
            for (const std::vector<OperandAt> &sample : u.samples) {
                BankAccess ops[3];
                int nops = 0;
                for (const OperandAt &o : sample) {
                    const bool placed = o.buffer == name || live.count(o.buffer);
                    if (o.level != L.name || !placed) {
                        continue;
                    }
                    ops[nops] = o.access;
                    ops[nops++].addr = static_cast<uint64_t>((o.buffer == name ? at : live.at(o.buffer)) + o.offset);
                }
                if (nops < 2) {
                    continue;
                }
                for (int64_t row = 0; row < std::min(u.rows, 2); ++row) {
                    for (int64_t j = 0; j < span; ++j) {
                        sum += static_cast<double>(bank_conflict_cycles(L, ops, nops, row, j * u.per_repeat,
                                                                        std::min(u.n, (j + 1) * u.per_repeat)));
                        counted++;
                    }
                }
            }
            if (counted > 0) {
                cost += sum / counted * static_cast<double>(u.reps) * u.rows * u.trips;
            }
        }
        return cost;
    }
    // The start of a buffer of `total` bytes at or after `at` in a banked
    // level: the first one (in alignment steps within one bank period) with the
    // fewest estimated conflicts that still fits; `at` when nothing is better.
    int64_t start(const std::string &name, int64_t at, int64_t total, const MemoryLevel &L, int64_t align,
                  const std::map<std::string, int64_t> &live) const {
        if (!has_bank_model(L) || !vec_.by_buffer.count(name)) {
            return at;
        }
        const int64_t period = bank_period_bytes(L);
        int64_t best = at;
        double best_cost = cost(name, at, L, live);
        for (int64_t c = at + align; best_cost > 0 && c < at + period; c += align) {
            if (static_cast<uint64_t>(c + total) > L.size_bytes) {
                break;
            }
            double c_cost = cost(name, c, L, live);
            if (c_cost < best_cost - 1e-9) {
                best = c;
                best_cost = c_cost;
            }
        }
        return best;
    }

private:
    CollectVectorUses vec_;
    int64_t bytes_per_repeat_;
};

// A cast between a 2-byte and a 4-byte type (VCAST fp16 <-> fp32) reads 4
// blocks and writes 8 per repeat, or the reverse: the narrow side walks the
// banks at half the wide side's pace, so whatever the two buffers' starts,
// their blocks meet in one bank (a read and a write of different rows) in 2 of
// every 12 repeats. A narrow buffer that only such casts and dense DMAs touch
// is laid out with each repeat's run (64 elements, 128 bytes) at a pitch of
// twice its length: both sides then advance 8 blocks per repeat, their distance
// on the banks is constant, and the placement below keeps them apart. The casts
// become one repeat per row (row stride 128 on the narrow side, 64 on the wide
// one), the DMAs two dimensions (runs of 64 elements, 128 apart in UB); the
// buffer takes twice its space, so it is padded only where that still fits,
// and only if it has two or more rotating copies (see narrow_cast_candidates).

// The candidates: every use of the buffer is a cast as above (unit element
// strides, rows contiguous, n and the start multiples of the run) or a dense
// one-dimensional DMA of a multiple of the run, never a scalar load or store.
class FindNarrowCastBuffers : public IRVisitor {
public:
    explicit FindNarrowCastBuffers(const nir::NpuModule &m) : m_(m) {}
    std::map<std::string, bool> ok;       // buffer -> every use so far qualifies
    std::map<std::string, double> weight; // buffer -> its casts' repeats over the kernel
    int64_t run = 0;                      // elements per repeat of the casts (one value for all)

private:
    const nir::NpuModule &m_;
    double trips_ = 1;
    using IRVisitor::visit;
    void bad(const std::string &b) { ok[b] = false; }
    void good(const std::string &b) { ok.emplace(b, true); }
    static bool multiple(const Expr &e, int64_t c) {
        return e.defined() && can_prove(simplify(e % make_const(e.type(), c) == 0));
    }
    void visit(const For *op) override {
        const int64_t *e = as_const_int(op->extent);
        const double t = trips_;
        trips_ *= e ? static_cast<double>(std::max<int64_t>(1, *e)) : 1.0;
        IRVisitor::visit(op);
        trips_ = t;
    }
    void visit(const Load *op) override {
        bad(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        bad(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Evaluate *op) override {
        const Stmt s(op);
        if (auto v = nir::as_vec(s)) {
            const int da = static_cast<int>(dtype_bytes(v->dtype)), dd = static_cast<int>(dtype_bytes(v->dtype2));
            const int64_t c = m_.arch->vector.bytes_per_repeat / std::max(da, dd);
            const nir::BufRef *refs[3] = {&v->dst, &v->a, &v->b};
            for (int i = 0; i < 3; ++i) {
                const nir::BufRef &r = *refs[i];
                if (r.buffer.empty()) {
                    continue;
                }
                const int mine = i == 0 ? dd : da, other = i == 0 ? da : dd;
                const bool q = v->op == isa::Op::VCAST && i < 2 && mine == 2 && other == 4 && c > 0 &&
                               v->stride[0] == 1 && v->stride[1] == 1 && v->n % c == 0 &&
                               (v->rows == 1 || (v->row_stride[0] == v->n && v->row_stride[1] == v->n)) &&
                               v->rows * (v->n / c) <= 65535 && 2 * c <= INT32_MAX &&
                               multiple(r.index, c) && (run == 0 || run == c);
                if (q) {
                    run = c;
                    good(r.buffer);
                    weight[r.buffer] += trips_ * v->rows * static_cast<double>(v->n / c);
                } else {
                    bad(r.buffer);
                }
            }
            return;
        }
        if (auto d = nir::as_dma(s)) {
            for (const nir::BufRef *r : {&d->dst, &d->src}) {
                if (r->buffer.empty()) {
                    continue;
                }
                const bool fits = d->engine >= 0 && d->engine < static_cast<int>(m_.arch->engines.size()) &&
                                  m_.arch->engines[d->engine].max_dims >= 2 && run > 0 &&
                                  d->dims[0].count / run <= m_.arch->engines[d->engine].max_count;
                const bool q = d->dims.size() == 1 && d->dims[0].dst_stride == 1 && d->dims[0].src_stride == 1 &&
                               d->transform == 0 && !d->is_quant() && d->elem_bytes == 2 && fits &&
                               d->dims[0].count % run == 0 && multiple(r->index, run);
                if (q) {
                    good(r->buffer);
                } else {
                    bad(r->buffer);
                }
            }
            return;
        }
        IRVisitor::visit(op);
    }
};

// Lays the buffers in `pads` out with runs of `run` elements at a pitch of
// 2 * run: an index that is a multiple of the run (every use's start, checked
// above) doubles; the casts take one repeat per row, the DMAs two dimensions.
class PadNarrowCastBuffers : public IRMutator {
public:
    PadNarrowCastBuffers(const std::set<std::string> &pads, int64_t run) : pads_(pads), run_(run) {}

private:
    const std::set<std::string> &pads_;
    int64_t run_;
    using IRMutator::visit;
    static Expr twice(const Expr &e) { return simplify(e * make_const(e.type(), 2)); }
    Stmt visit(const Evaluate *op) override {
        const Stmt s(op);
        if (auto v = nir::as_vec(s)) {
            const bool pd = pads_.count(v->dst.buffer), pa = pads_.count(v->a.buffer);
            if (v->op != isa::Op::VCAST || (!pd && !pa)) {
                return s;
            }
            nir::VecOp w = *v;
            w.rows = static_cast<int>(v->rows * (v->n / run_));
            w.n = run_;
            w.row_stride[0] = static_cast<int32_t>(pd ? 2 * run_ : run_);
            w.row_stride[1] = static_cast<int32_t>(pa ? 2 * run_ : run_);
            if (pd) {
                w.dst.index = twice(v->dst.index);
            }
            if (pa) {
                w.a.index = twice(v->a.index);
            }
            return w.make();
        }
        if (auto d = nir::as_dma(s)) {
            const bool pd = pads_.count(d->dst.buffer), ps = pads_.count(d->src.buffer);
            if (!pd && !ps) {
                return s;
            }
            nir::DmaOp w = *d;
            const int64_t count = d->dims[0].count;
            w.dims = {nir::Dim{run_, 1, 1}, nir::Dim{count / run_, pd ? 2 * run_ : run_, ps ? 2 * run_ : run_}};
            if (pd) {
                w.dst.index = twice(d->dst.index);
            }
            if (ps) {
                w.src.index = twice(d->src.index);
            }
            return w.make();
        }
        return s;
    }
    Stmt visit(const Allocate *op) override {
        Stmt body = mutate(op->body);
        std::vector<Expr> extents = op->extents;
        if (pads_.count(op->name) && !extents.empty()) {
            extents[0] = simplify(extents[0] * 2);
        } else if (body.same_as(op->body)) {
            return op;
        }
        return Allocate::make(op->name, op->type, op->memory_type, extents, op->condition, body, op->new_expr,
                              op->free_function);
    }
};

// The candidates in a banked level, the most cast repeats first.
std::vector<std::string> narrow_cast_candidates(const nir::NpuModule &m, int64_t *run) {
    FindNarrowCastBuffers f(m);
    m.body.accept(&f);
    std::vector<std::string> out;
    if (f.run == 0) {
        return out;
    }
    // Again, now that the run is known: DMAs before the first cast were judged without it.
    const int64_t c = f.run;
    f.ok.clear();
    f.weight.clear();
    m.body.accept(&f);
    if (f.run != c) {
        return out;
    }
    *run = c;
    std::vector<std::pair<double, std::string>> by_weight;
    for (const auto &[name, q] : f.ok) {
        auto it = m.buffers.find(name);
        // Multi-buffered only: the padded DMA (runs of 128 bytes instead of one,
        // each charged the GM misalignment factor when not on a 512-byte line)
        // then overlaps the vector work on the other copy; a single copy's DMA
        // waits for (or holds up) the casts, and padding one made attention's
        // prob and result slower (341655 -> 347572 cycles).
        if (!q || it == m.buffers.end() || it->second.is_arg || it->second.buffers < 2) {
            continue;
        }
        const MemoryLevel *L = m.arch->find_level(it->second.level);
        if (L && has_bank_model(*L)) {
            by_weight.push_back({-f.weight[name], name});
        }
    }
    std::sort(by_weight.begin(), by_weight.end());
    for (const auto &p : by_weight) {
        out.push_back(p.second);
    }
    return out;
}

nir::NpuModule pad_narrow_cast_buffers(const nir::NpuModule &m, const std::set<std::string> &pads, int64_t run) {
    nir::NpuModule r = m;
    r.body = PadNarrowCastBuffers(pads, run).mutate(m.body);
    for (const std::string &n : pads) {
        r.buffers[n].elems *= 2;
    }
    return r;
}

nir::NpuModule place(const nir::NpuModule &m) {
    BankCost banks(m);
    return allocate_buffers(m, [&](const std::string &name, int64_t at, int64_t total, const MemoryLevel &level,
                                   int64_t align, const std::map<std::string, int64_t> &live) {
        return banks.start(name, at, total, level, align, live);
    });
}
} // namespace

nir::NpuModule bank_placement(const nir::NpuModule &m) {
    // Each padding candidate, the most cast repeats first, is kept if the
    // buffers still fit with it (and those kept before it).
    int64_t run = 0;
    const std::vector<std::string> cands = narrow_cast_candidates(m, &run);
    std::set<std::string> pads;
    std::optional<nir::NpuModule> best;
    for (const std::string &c : cands) {
        std::set<std::string> with = pads;
        with.insert(c);
        nir::NpuModule r = place(pad_narrow_cast_buffers(m, with, run));
        if (r.overflow_message.empty()) {
            pads = std::move(with);
            best = std::move(r);
        }
    }
    return best ? *best : place(m);
}

} // namespace tessel
