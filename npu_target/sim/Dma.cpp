// DMA: the descriptor's strided walk between two levels (functional copy) and
// its transfer time (bursts, alignment, L2 hits and misses). Formulas in
// docs/simulator.md "DMA".

#include "npu_target/sim/Machine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessel::sim::detail {

namespace {

struct Dim {
    int64_t count, ss, ds;
};

} // namespace

DmaCost Machine::exec_dma(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr) {
    const uint32_t pc = q.pc;
    auto tag = [&]() { return "core " + std::to_string(c.id) + " " + instr_tag(pc, in); };
    if (in.engine >= arch.engines.size()) {
        throw SimError(tag() + ": engine " + std::to_string(in.engine) + " does not exist in arch '" + arch.name + "'");
    }
    const DmaEngine &e = arch.engines[in.engine];
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
    if (d.transform != 0) {
        throw SimError(tag() + ": descriptor d" + std::to_string(in.desc) + " asks for transform " +
                       std::to_string(d.transform) + "; the simulator implements plain copies only");
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
        hi += eb;
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
    const uint64_t line = l2.line_bytes();
    double cycles = 0, gm_bytes = 0;
    int64_t hits = 0, misses = 0;

    auto charge = [&](uint64_t saddr, uint64_t daddr, int64_t len) {
        const double charged = static_cast<double>((len + burst - 1) / burst * burst);
        const double scale = charged / static_cast<double>(len);
        if (src_gm) {
            const double mis = (saddr % align) ? misalign : 1.0;
            int64_t h = 0, m = 0;
            if (l2.enabled()) {
                for (uint64_t a = saddr; a < saddr + static_cast<uint64_t>(len);) {
                    uint64_t end = std::min(saddr + static_cast<uint64_t>(len), (a / line + 1) * line);
                    (l2.touch(a / line) ? h : m) += static_cast<int64_t>(end - a);
                    a = end;
                }
            } else {
                m = len;
            }
            hits += h;
            misses += m;
            cycles += scale * (static_cast<double>(h) / (hit_rate * mis) + static_cast<double>(m) / (miss_rate * mis));
            gm_bytes += scale * static_cast<double>(m);
        } else if (dst_gm) {
            const double mis = (daddr % align) ? misalign : 1.0;
            if (l2.enabled()) { // write-allocate: later reads of written lines hit
                for (uint64_t a = daddr / line; a <= (daddr + static_cast<uint64_t>(len) - 1) / line; ++a) {
                    l2.touch(a);
                }
            }
            cycles += charged / (write_rate * mis);
            gm_bytes += charged;
            report.gm_write_bytes += static_cast<int64_t>(charged);
        } else {
            cycles += charged / edge_bw;
        }
    };

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
    return cost;
}

} // namespace tessel::sim::detail
