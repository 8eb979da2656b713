// DMA: the descriptor's strided walk between two levels (functional copy) and
// its transfer time (bursts, alignment, L2 hits and misses). Formulas in
// docs/simulator.md "DMA".

#include "npu_target/sim/Machine.h"
#include "npu_target/sim/Elements.h"
#include "npu_target/isa/InstrTable.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessel::sim::detail {

namespace {

struct Dim {
    int64_t count, ss, ds;
};

const int kQuant = [] {
    const auto &names = isa::dma_transform_names();
    return static_cast<int>(std::find(names.begin(), names.end(), "quant") - names.begin());
}();

std::string transform_name(int t) {
    const auto &names = isa::dma_transform_names();
    return t >= 0 && t < static_cast<int>(names.size()) ? names[static_cast<size_t>(t)] : std::to_string(t);
}

template <typename Tag>
QuantState &quant_state(Core &c, const isa::Instr &in, const DmaEngine &e, const Tag &tag) {
    if (std::find(e.transforms.begin(), e.transforms.end(), "quant") == e.transforms.end()) {
        throw SimError(tag() + ": engine " + e.name + " does not list the transform quant");
    }
    if (c.quant.size() <= in.engine) {
        c.quant.resize(in.engine + 1u);
    }
    return c.quant[in.engine];
}

template <typename Tag>
const DmaEngine &engine_of(const ArchSpec &arch, const isa::Instr &in, const Tag &tag) {
    if (in.engine >= arch.engines.size()) {
        throw SimError(tag() + ": engine " + std::to_string(in.engine) + " does not exist in arch '" + arch.name + "'");
    }
    return arch.engines[in.engine];
}

int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

} // namespace

int32_t fix_requantize(int32_t acc, int32_t bias, int32_t scale, int shift, bool relu, DType out) {
    int32_t v = wrap32(int64_t{acc} + bias);
    if (relu && v < 0) {
        v = 0;
    }
    const int64_t round = shift > 0 ? int64_t{1} << (shift - 1) : 0;
    const int32_t x = wrap32(wrap32(int64_t{v} * scale) + round);
    const int64_t r = x >> shift; // arithmetic: floor(x / 2^shift)
    const int64_t lo = out == DType::UInt8 ? 0 : out == DType::Int16 ? -32768 : -128;
    const int64_t hi = out == DType::UInt8 ? 255 : out == DType::Int16 ? 32767 : 127;
    return static_cast<int32_t>(std::min(hi, std::max(lo, r)));
}

uint64_t Machine::exec_fixparam(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr) {
    const uint32_t pc = q.pc;
    auto tag = [&]() { return "core " + std::to_string(c.id) + " " + instr_tag(pc, in); };
    const DmaEngine &e = engine_of(arch, in, tag);
    QuantState &qs = quant_state(c, in, e, tag);
    if (in.n < 1 || in.n > e.quant_channels) {
        throw SimError(tag() + ": " + std::to_string(in.n) + " channels; engine " + e.name +
                       "'s parameter table holds 1.." + std::to_string(e.quant_channels));
    }
    const int lvl = in.src_level;
    if (lvl >= static_cast<int>(arch.memories.size()) || is_gm(lvl)) {
        throw SimError(tag() + ": the parameters must come from an on-chip level (got " + level_name(lvl) + ")");
    }
    if (in.dtype == DType::FP16 || in.dtype == DType::BF16 || in.dtype == DType::FP32) {
        throw SimError(tag() + ": the scale must be an integer type (got " + dtype_name(in.dtype) + ")");
    }
    if (in.dtype2 != DType::Int8 && in.dtype2 != DType::UInt8 && in.dtype2 != DType::Int16) {
        throw SimError(tag() + ": the result type must be int8, uint8 or int16 (got " + dtype_name(in.dtype2) + ")");
    }
    const int sb = dtype_bytes(in.dtype);
    const int shift = static_cast<int>(in.aux & 31u);
    const uint64_t n = in.n;
    const uint8_t *bp = ptr(c, lvl, static_cast<uint64_t>(q.ra), n * 4, pc);
    const uint8_t *sp = ptr(c, lvl, static_cast<uint64_t>(q.rb), n * static_cast<uint64_t>(sb), pc);
    qs.bias.assign(n, 0);
    qs.scale.assign(n, 0);
    for (uint64_t i = 0; i < n; ++i) {
        std::memcpy(&qs.bias[i], bp + 4 * i, 4);
        int64_t v = 0;
        dispatch_dtype(in.dtype, [&](auto tv) {
            v = static_cast<int64_t>(load<decltype(tv)::value>(sp + static_cast<uint64_t>(sb) * i));
        });
        qs.scale[i] = static_cast<int32_t>(v);
    }
    qs.shift = shift;
    qs.relu = (in.aux >> 5) & 1u;
    qs.out = in.dtype2;
    nr = 0;
    ranges[nr++] = Range{lvl, static_cast<uint64_t>(q.ra), static_cast<uint64_t>(q.ra) + n * 4, false};
    ranges[nr++] = Range{lvl, static_cast<uint64_t>(q.rb), static_cast<uint64_t>(q.rb) + n * static_cast<uint64_t>(sb), false};
    double widest = 1;
    for (const auto &ed : e.edges) {
        widest = std::max(widest, ed.bytes_per_cycle);
    }
    return static_cast<uint64_t>(std::max(0, e.setup_cycles)) +
           static_cast<uint64_t>(std::ceil(static_cast<double>(n * (4 + static_cast<uint64_t>(sb))) / widest - 1e-9));
}

DmaCost Machine::exec_dma(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr) {
    const uint32_t pc = q.pc;
    auto tag = [&]() { return "core " + std::to_string(c.id) + " " + instr_tag(pc, in); };
    const DmaEngine &e = engine_of(arch, in, tag);
    const int src = in.src_level, dst = in.dst_level;
    const int nlevels = static_cast<int>(arch.memories.size());
    if (src >= nlevels || dst >= nlevels) {
        throw SimError(tag() + ": memory level index " + std::to_string(std::max(src, dst)) + " does not exist in arch '" +
                       arch.name + "'");
    }
    int edge = -1;
    for (size_t i = 0; i < e.edges.size(); ++i) {
        if (e.edges[i].src == arch.memories[src].name && e.edges[i].dst == arch.memories[dst].name) {
            edge = static_cast<int>(i);
        }
    }
    if (edge < 0) {
        throw SimError(tag() + ": engine " + e.name + " has no edge " + arch.memories[src].name + "->" +
                       arch.memories[dst].name);
    }
    if (in.desc >= prog.descs.size()) {
        throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " does not exist (" +
                       std::to_string(prog.descs.size()) + " descriptors)");
    }
    const isa::DmaDesc &d = prog.descs[in.desc];
    if (d.dims < 1 || d.dims > 4 || d.dims > e.max_dims) {
        throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " has " + std::to_string(d.dims) +
                       " dimensions; engine " + e.name + " takes 1.." + std::to_string(e.max_dims));
    }
    const bool quant = d.transform == kQuant;
    if (d.transform != 0 && !quant) {
        throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " asks for transform " +
                       transform_name(d.transform) + "; the simulator implements plain copies and quant only");
    }
    const QuantState *qs = nullptr;
    if (quant) {
        qs = &quant_state(c, in, e, tag);
        if (qs->bias.empty()) {
            throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " asks for transform quant, but no " +
                           "fixparam has loaded engine " + e.name + "'s requantisation parameters");
        }
        if (static_cast<int>(d.elem_bytes) != dtype_bytes(qs->out)) {
            throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " has elem_bytes " +
                           std::to_string(d.elem_bytes) + " but the loaded requantisation writes " +
                           dtype_name(qs->out) + " (" + std::to_string(dtype_bytes(qs->out)) + " bytes)");
        }
    }
    if (d.elem_bytes == 0) {
        throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " has elem_bytes 0");
    }
    std::vector<Dim> dims;
    for (int i = 0; i < d.dims; ++i) {
        const int64_t limit = e.count_limit(i, d.elem_bytes, isa::contiguous_run(d));
        if (d.count[i] > static_cast<uint64_t>(limit)) {
            throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " count[" + std::to_string(i) + "] = " +
                           std::to_string(d.count[i]) + " exceeds engine " + e.name + "'s limit of " +
                           std::to_string(limit) + " (max_count " + std::to_string(e.max_count) + ")");
        }
        dims.push_back(Dim{static_cast<int64_t>(d.count[i]), d.src_stride[i], d.dst_stride[i]});
    }
    const int64_t eb = d.elem_bytes;
    const int64_t seb = quant ? 4 : eb; // a quant DMA reads int32 accumulators
    int64_t total = eb;
    for (const Dim &x : dims) {
        total *= x.count;
    }
    // Hulls of both walks, for protection and the race check.
    auto hull = [&](bool source, int64_t &lo, int64_t &hi) {
        lo = 0;
        hi = 0;
        for (const Dim &x : dims) {
            int64_t st = source ? x.ss : x.ds;
            int64_t span = (x.count - 1) * st;
            lo += std::min<int64_t>(0, span);
            hi += std::max<int64_t>(0, span);
        }
        hi += source ? seb : eb;
    };
    DmaCost cost;
    cost.edge = edge;
    cost.bytes = total;
    nr = 0;
    if (total == 0) {
        return cost;
    }
    int64_t slo, shi, dlo, dhi;
    hull(true, slo, shi);
    hull(false, dlo, dhi);
    const int64_t sfirst = q.rb + slo, dfirst = q.ra + dlo;
    uint8_t *sp = ptr(c, src, static_cast<uint64_t>(sfirst), static_cast<uint64_t>(shi - slo), pc) - slo;
    uint8_t *dp = ptr(c, dst, static_cast<uint64_t>(dfirst), static_cast<uint64_t>(dhi - dlo), pc) - dlo;
    ranges[nr++] = Range{src, static_cast<uint64_t>(sfirst), static_cast<uint64_t>(q.rb + shi), false};
    ranges[nr++] = Range{dst, static_cast<uint64_t>(dfirst), static_cast<uint64_t>(q.ra + dhi), true};

    // Contiguous runs: merge the innermost dimensions while both sides stay dense.
    int64_t run = eb;
    size_t first_outer = 0;
    while (first_outer < dims.size() && dims[first_outer].ss == run && dims[first_outer].ds == run) {
        run *= dims[first_outer].count;
        ++first_outer;
    }
    std::vector<Dim> outer(dims.begin() + static_cast<long>(first_outer), dims.end());

    // Rates (bytes per cycle).
    const DmaEdge &ed = e.edges[edge];
    const bool src_gm = is_gm(src), dst_gm = is_gm(dst);
    const double edge_bw = ed.bytes_per_cycle > 0 ? ed.bytes_per_cycle : 1;
    double miss_rate = edge_bw, hit_rate = edge_bw, write_rate = edge_bw;
    if (src_gm) {
        if (arch.chip.gm_bytes_per_cycle > 0) {
            miss_rate = std::min(miss_rate, arch.chip.gm_bytes_per_cycle);
        }
        hit_rate = arch.chip.l2_rd_bytes_per_cycle > 0 && l2.enabled() ? arch.chip.l2_rd_bytes_per_cycle : miss_rate;
    }
    if (dst_gm) {
        // With an L2, GM writes land in the write-back L2 at its write rate; the
        // HBM write-back is bounded at the end of the run (Simulator.cpp). Without
        // one, they go to GM at its write rate.
        double w = l2.enabled() && arch.chip.l2_wr_bytes_per_cycle > 0 ? arch.chip.l2_wr_bytes_per_cycle
                                                                       : arch.memories[dst].wr_bytes_per_cycle;
        if (w > 0) {
            write_rate = std::min(write_rate, w);
        }
    }
    const int64_t burst = std::max(1, e.burst_bytes);
    const uint64_t align = static_cast<uint64_t>(std::max(1, e.align_bytes));
    const double misalign = e.misalign_factor > 0 ? e.misalign_factor : 1.0;
    double cycles = 0, gm_bytes = 0, gm_read = 0;
    int64_t hits = 0, misses = 0;

    auto charge = [&](uint64_t saddr, uint64_t daddr, int64_t len) {
        const double charged = static_cast<double>((len + burst - 1) / burst * burst);
        const double scale = charged / static_cast<double>(len);
        if (src_gm) {
            const double mis = (saddr % align) ? misalign : 1.0;
            const L2Read got = l2.read(saddr, static_cast<uint64_t>(len));
            hits += got.hit;
            misses += got.miss;
            // A miss brings whole sectors from GM (at least the burst-rounded bytes read).
            const double from_gm = std::max(static_cast<double>(got.fetched), scale * static_cast<double>(got.miss));
            cycles += scale * static_cast<double>(got.hit) / (hit_rate * mis) + from_gm / (miss_rate * mis);
            gm_bytes += from_gm;
            gm_read += from_gm;
        } else if (dst_gm) {
            const double mis = (daddr % align) ? misalign : 1.0;
            l2.write(daddr, static_cast<uint64_t>(len)); // write-allocate: later reads of written data hit
            cycles += charged / (write_rate * mis);
            gm_bytes += charged;
            report.gm_write_bytes += static_cast<int64_t>(charged);
        } else {
            cycles += charged / edge_bw;
        }
    };

    if (quant) {
        // Element by element: int32 in, the result type out; channel = index in dimension 0 mod n.
        const int64_t nch = static_cast<int64_t>(qs->bias.size());
        std::array<int64_t, 4> ix{};
        const size_t nd = dims.size();
        const bool dense = dims[0].ds == eb;
        for (;;) {
            int64_t so = 0, dof = 0;
            for (size_t i = 1; i < nd; ++i) {
                so += ix[i] * dims[i].ss;
                dof += ix[i] * dims[i].ds;
            }
            for (int64_t i0 = 0; i0 < dims[0].count; ++i0) {
                int32_t a;
                std::memcpy(&a, sp + so + i0 * dims[0].ss, 4);
                const int64_t ch = i0 % nch;
                const int32_t v = fix_requantize(a, qs->bias[ch], qs->scale[ch], qs->shift, qs->relu, qs->out);
                uint8_t *o = dp + dof + i0 * dims[0].ds;
                if (eb == 1) {
                    *o = static_cast<uint8_t>(v);
                } else {
                    const int16_t h = static_cast<int16_t>(v);
                    std::memcpy(o, &h, 2);
                }
                if (!dense) {
                    charge(0, static_cast<uint64_t>(q.ra + dof + i0 * dims[0].ds), eb);
                }
            }
            if (dense) {
                charge(0, static_cast<uint64_t>(q.ra + dof), dims[0].count * eb);
            }
            size_t i = 1;
            for (; i < nd; ++i) {
                if (++ix[i] < dims[i].count) {
                    break;
                }
                ix[i] = 0;
            }
            if (i >= nd) {
                break;
            }
        }
        cost.transfer = static_cast<uint64_t>(std::ceil(cycles - 1e-9));
        cost.gm_bytes = gm_bytes;
        return cost;
    }

    // Walk: outer dimensions (up to 4) around a contiguous run.
    std::array<int64_t, 4> idx{};
    const size_t no = outer.size();
    for (;;) {
        int64_t so = 0, dof = 0;
        for (size_t i = 0; i < no; ++i) {
            so += idx[i] * outer[i].ss;
            dof += idx[i] * outer[i].ds;
        }
        std::memmove(dp + dof, sp + so, static_cast<size_t>(run));
        charge(static_cast<uint64_t>(q.rb + so), static_cast<uint64_t>(q.ra + dof), run);
        size_t i = 0;
        for (; i < no; ++i) {
            if (++idx[i] < outer[i].count) {
                break;
            }
            idx[i] = 0;
        }
        if (i == no) {
            break;
        }
    }
    cost.transfer = static_cast<uint64_t>(std::ceil(cycles - 1e-9));
    cost.gm_bytes = gm_bytes;
    cost.all_l2_hits = src_gm && misses == 0 && hits > 0;
    report.l2_hit_bytes += hits;
    report.l2_miss_bytes += misses;
    report.gm_read_bytes += static_cast<int64_t>(std::llround(gm_read));
    return cost;
}

} // namespace tessel::sim::detail
