#include "npu_target/passes/BankPlacement.h"

#include "npu_target/arch/BankModel.h"
#include "npu_target/passes/AllocateBuffers.h"

#include <algorithm>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// A vector operation and the loops around it (outermost first): the data the
// bank-aware placement evaluates its operand addresses with.
struct VectorUse {
    nir::VecOp op;
    std::vector<const For *> loops;
};

class CollectVectorUses : public IRVisitor {
public:
    std::vector<VectorUse> uses;
    std::map<std::string, std::vector<size_t>> by_buffer;

private:
    std::vector<const For *> loops_;
    using IRVisitor::visit;
    void visit(const For *op) override {
        loops_.push_back(op);
        IRVisitor::visit(op);
        loops_.pop_back();
    }
    void visit(const Evaluate *op) override {
        if (auto v = nir::as_vec(Stmt(op))) {
            for (const nir::BufRef *r : {&v->dst, &v->a, &v->b}) {
                if (!r->buffer.empty()) {
                    auto &list = by_buffer[r->buffer];
                    if (list.empty() || list.back() != uses.size()) {
                        list.push_back(uses.size());
                    }
                }
            }
            uses.push_back({*v, loops_});
        }
        IRVisitor::visit(op);
    }
};

class BankCost {
public:
    explicit BankCost(const nir::NpuModule &m) : m_(m) { m.body.accept(&vec_); }

    // Estimated bank-conflict cycles of the vector operations that use `name`
    // if it starts at byte `at`, counting only operands already placed and
    // live (those placed later adapt to it). Each operation is evaluated for
    // the first few iterations of its loops and a period of its repeats.
    double cost(const std::string &name, int64_t at, const MemoryLevel &L,
                const std::map<std::string, int64_t> &live) const {
        auto it = vec_.by_buffer.find(name);
        if (it == vec_.by_buffer.end()) {
            return 0;
        }
        const int64_t period = int64_t(L.bank_row_bytes) * L.bank_groups * L.banks_per_group;
        double cost = 0;
        for (size_t u : it->second) {
            const VectorUse &use = vec_.uses[u];
            const nir::VecOp &v = use.op;
            const bool reduce = v.op == isa::Op::VREDSUM || v.op == isa::Op::VREDMAX;
            const int esz_d = static_cast<int>(dtype_bytes(v.op == isa::Op::VCAST ? v.dtype2 : v.dtype));
            const int esz_a = static_cast<int>(dtype_bytes(v.dtype));
            const int64_t per_repeat = std::max<int64_t>(1, m_.arch->vector.bytes_per_repeat / std::max(esz_d, esz_a));
            const int64_t reps = (v.n + per_repeat - 1) / per_repeat;
            double trips = 1;
            for (const For *f : use.loops) {
                const int64_t *e = as_const_int(f->extent);
                trips *= e ? static_cast<double>(std::max<int64_t>(1, *e)) : 1.0;
            }
            double sum = 0;
            int samples = 0;
            for (int t = 0; t < 4; ++t) {
                std::map<std::string, int64_t> env;
                bool ok = true;
                for (const For *f : use.loops) {
                    auto lo = nir::eval_int(f->min, env), ext = nir::eval_int(f->extent, env);
                    ok = ok && lo && ext && *ext > 0;
                    if (!ok) {
                        break;
                    }
                    env[f->name] = *lo + std::min<int64_t>(t, *ext - 1);
                }
                BankAccess ops[3];
                int nops = 0;
                const nir::BufRef *refs[3] = {&v.dst, &v.a, &v.b};
                for (int i = 0; i < 3 && ok; ++i) {
                    const nir::BufRef &r = *refs[i];
                    if (r.buffer.empty() || (i == 2 && v.b.buffer.empty())) {
                        continue;
                    }
                    auto bit = m_.buffers.find(r.buffer);
                    if (bit == m_.buffers.end() || bit->second.level != L.name) {
                        continue; // not in the banked level
                    }
                    int64_t base;
                    if (r.buffer == name) {
                        base = at;
                    } else if (live.count(r.buffer)) {
                        base = live.at(r.buffer);
                    } else {
                        continue; // placed later
                    }
                    auto idx = r.index.defined() ? nir::eval_int(r.index, env) : std::optional<int64_t>(0);
                    if (!idx) {
                        ok = false;
                        break;
                    }
                    BankAccess &b = ops[nops++];
                    b.addr = static_cast<uint64_t>(base + *idx * bit->second.type.bytes());
                    b.stride = (i == 0 && reduce) ? 0 : v.stride[i];
                    b.row_stride = v.row_stride[i];
                    b.esz = i == 0 ? esz_d : esz_a;
                    b.write = i == 0;
                }
                if (!ok || nops < 2) {
                    continue;
                }
                // The pattern of dense operands repeats within one bank period.
                const int64_t span = std::min<int64_t>(reps, std::max<int64_t>(1, period / m_.arch->vector.bytes_per_repeat));
                for (int64_t row = 0; row < std::min(v.rows, 2); ++row) {
                    for (int64_t j = 0; j < span; ++j) {
                        sum += static_cast<double>(
                            bank_conflict_cycles(L, ops, nops, row, j * per_repeat, std::min(v.n, (j + 1) * per_repeat)));
                        samples++;
                    }
                }
            }
            if (samples > 0) {
                cost += sum / samples * static_cast<double>(reps) * v.rows * trips;
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
        const int64_t period = int64_t(L.bank_row_bytes) * L.bank_groups * L.banks_per_group;
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
    const nir::NpuModule &m_;
    CollectVectorUses vec_;
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
