#include "npu_target/passes/BankPlacement.h"

#include "npu_target/arch/BankModel.h"
#include "npu_target/isa/InstrTable.h"
#include "npu_target/passes/AllocateBuffers.h"

#include <algorithm>

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

} // namespace

nir::NpuModule bank_placement(const nir::NpuModule &m) {
    BankCost banks(m);
    return allocate_buffers(m, [&](const std::string &name, int64_t at, int64_t total, const MemoryLevel &level,
                                   int64_t align, const std::map<std::string, int64_t> &live) {
        return banks.start(name, at, total, level, align, live);
    });
}

} // namespace tessel
