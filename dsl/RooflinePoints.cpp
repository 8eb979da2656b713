#include "dsl/RooflinePoints.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/sim/Simulator.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace tessel {

namespace {

bool is_gm_term(const std::string &resource) {
    return resource.rfind("GM ", 0) == 0;
}

// A memory roof moving `bytes` at `peak` bytes per cycle, for `work` ops over `cycles`.
RooflineRoof memory_roof(std::string name, double peak, int64_t bytes, int64_t compulsory,
                         double work, uint64_t cycles) {
    RooflineRoof r;
    r.name = std::move(name);
    r.memory = true;
    r.peak = peak;
    r.bytes = bytes;
    r.compulsory_bytes = compulsory;
    if (bytes > 0 && peak > 0) {
        r.intensity = work / static_cast<double>(bytes);
        r.bound = peak * r.intensity;
        r.utilisation = static_cast<double>(bytes) / (peak * static_cast<double>(cycles));
    }
    return r;
}

} // namespace

RooflinePoints roofline_points(const Roofline &rf, const sim::SimReport &sim,
                               const ArchSpec &arch) {
    RooflinePoints p;
    p.cycles = sim.cycles;
    if (rf.macs > 0) {
        p.work_unit = "ops (2 x MAC)";
        p.work = 2.0 * static_cast<double>(rf.macs);
    } else {
        p.work_unit = "vector element ops";
        p.work = static_cast<double>(rf.vector_elements);
    }
    if (p.work <= 0) {
        p.why_not =
            "the operator does no arithmetic (pure data movement): a roofline has no work to place";
        return p;
    }
    if (sim.cycles == 0) {
        p.why_not = "the run took no cycles";
        return p;
    }
    if (rf.gm_read_bytes + rf.gm_write_bytes <= 0) {
        p.why_not = "the operator moves no GM bytes";
        return p;
    }
    const double cycles = static_cast<double>(sim.cycles);
    p.achieved = p.work / cycles;
    p.limit_ops_per_cycle = rf.t_phys_cycles > 0 ? p.work / rf.t_phys_cycles : 0;
    const int64_t compulsory_traffic =
        rf.gm_shared_rw_port ? rf.gm_read_bytes + rf.gm_write_bytes : rf.gm_read_bytes;
    p.limit_intensity =
        compulsory_traffic > 0 ? p.work / static_cast<double>(compulsory_traffic) : 0;

    // Compute roofs: the resource's minimum time for this operator's work.
    for (const auto &t : rf.terms) {
        if (is_gm_term(t.resource) || t.cycles <= 0) {
            continue;
        }
        RooflineRoof r;
        r.name = t.resource;
        r.peak = p.work / t.cycles;
        r.bound = r.peak;
        r.utilisation = t.cycles / cycles;
        p.roofs.push_back(r);
    }

    // Memory roofs. The GM level and what the run moved to and from it.
    std::string gm_name;
    for (const auto &L : arch.memories) {
        if (L.off_chip) {
            gm_name = L.name;
            break;
        }
    }
    const bool l2 = arch.chip.l2_bytes > 0;
    int64_t from_gm = 0, to_gm = 0;
    for (const auto &e : sim.edges) {
        from_gm += e.src == gm_name ? e.bytes : 0;
        to_gm += e.dst == gm_name ? e.bytes : 0;
    }
    const int64_t hbm_read =
        sim.gm_read_bytes > 0 ? sim.gm_read_bytes : from_gm; // what HBM delivered
    const int64_t hbm_write = sim.gm_write_bytes > 0 ? sim.gm_write_bytes : to_gm;
    if (rf.gm_shared_rw_port) {
        p.roofs.push_back(memory_roof("GM read+write", rf.gm_read_bytes_per_cycle,
                                      hbm_read + hbm_write, rf.gm_read_bytes + rf.gm_write_bytes,
                                      p.work, sim.cycles));
    } else {
        p.roofs.push_back(memory_roof("GM read", rf.gm_read_bytes_per_cycle, hbm_read,
                                      rf.gm_read_bytes, p.work, sim.cycles));
        p.roofs.push_back(memory_roof("GM write", rf.gm_write_bytes_per_cycle, hbm_write,
                                      rf.gm_write_bytes, p.work, sim.cycles));
    }
    const double cores = std::max(1, sim.cores);
    if (l2 && arch.chip.l2_rd_bytes_per_cycle > 0 && from_gm > 0) {
        p.roofs.push_back(memory_roof("L2 read", arch.chip.l2_rd_bytes_per_cycle * cores, from_gm,
                                      0, p.work, sim.cycles));
    }
    if (l2 && arch.chip.l2_wr_bytes_per_cycle > 0 && to_gm > 0) {
        p.roofs.push_back(memory_roof("L2 write", arch.chip.l2_wr_bytes_per_cycle * cores, to_gm, 0,
                                      p.work, sim.cycles));
    }
    // Every engine edge that moved bytes, at the rate the simulator charges it on every core:
    // its own bandwidth, capped by HBM for a read from GM without an L2 and by the L2's (else
    // HBM's) write rate for a write to GM. With an L2, a read from GM runs at the L2's rate
    // where it hits and at min(edge, HBM) where it misses: the edge's roof is that mix, the
    // run's hits and misses shared among the GM-reading edges by their bytes.
    const MemoryLevel *gm = arch.find_level(gm_name);
    const double hit_share =
        from_gm > 0
            ? static_cast<double>(sim.l2_hit_bytes) /
                  static_cast<double>(std::max<int64_t>(1, sim.l2_hit_bytes + sim.l2_miss_bytes))
            : 0;
    for (const auto &e : sim.edges) {
        const DmaEdge *edge = nullptr;
        if (e.bytes <= 0 || !arch.engine_for(e.src, e.dst, &edge) || !edge ||
            edge->bytes_per_cycle <= 0) {
            continue;
        }
        double rate = edge->bytes_per_cycle;
        if (e.src == gm_name) {
            const double miss = arch.chip.gm_bytes_per_cycle > 0
                                    ? std::min(rate, arch.chip.gm_bytes_per_cycle)
                                    : rate;
            const double hit =
                l2 && arch.chip.l2_rd_bytes_per_cycle > 0 ? arch.chip.l2_rd_bytes_per_cycle : miss;
            rate = 1.0 / (hit_share / hit + (1 - hit_share) / miss);
        } else if (e.dst == gm_name) {
            const double w = l2 && arch.chip.l2_wr_bytes_per_cycle > 0
                                 ? arch.chip.l2_wr_bytes_per_cycle
                                 : (gm ? gm->wr_bytes_per_cycle : 0);
            rate = w > 0 ? std::min(rate, w) : rate;
        }
        RooflineRoof r = memory_roof(e.src + "->" + e.dst + " (" + e.engine + ")", rate * cores,
                                     e.bytes, 0, p.work, sim.cycles);
        r.engine = e.engine;
        r.engine_busy_cycles = e.busy_cycles;
        p.roofs.push_back(r);
    }

    double most = -1;
    for (const auto &r : p.roofs) {
        if (r.utilisation > most) {
            most = r.utilisation;
            p.binding = r.name;
        }
    }
    const RooflineRoof *bind = nullptr;
    for (const auto &r : p.roofs) {
        bind = r.name == p.binding ? &r : bind;
    }
    // The busiest transfer engine, against the time its bytes need at its roofs: the rest of
    // its busy time is per-descriptor setup, misalignment and latency the schedule causes.
    std::string busiest;
    double busy = 0, transfer = 0;
    int64_t descriptors = 0;
    for (const auto &e : sim.edges) {
        double b = 0, t = 0;
        int64_t d = 0;
        for (const auto &f : sim.edges) {
            if (f.engine != e.engine) {
                continue;
            }
            b += static_cast<double>(f.busy_cycles);
            d += static_cast<int64_t>(f.descriptors);
        }
        for (const auto &r : p.roofs) {
            t += r.engine == e.engine ? static_cast<double>(r.bytes) / r.peak : 0;
        }
        if (b > busy) {
            busy = b, transfer = t, busiest = e.engine, descriptors = d;
        }
    }
    busy /= cores; // per core, as bytes / peak (the peaks are over every core)
    char buf[400];
    if (bind && bind->memory && bind->compulsory_bytes > 0 &&
        static_cast<double>(bind->bytes) > 1.1 * static_cast<double>(bind->compulsory_bytes)) {
        std::snprintf(
            buf, sizeof buf,
            "%s binds and moves %.2fx the compulsory %lld bytes: keep operands on chip longer "
            "(larger tiles, stage an operand once, reorder so a tile is reused)",
            bind->name.c_str(),
            static_cast<double>(bind->bytes) / static_cast<double>(bind->compulsory_bytes),
            static_cast<long long>(bind->compulsory_bytes));
        p.hint = buf;
    } else if (!busiest.empty() && busy >= 0.5 * cycles && busy > 1.2 * transfer &&
               busy > cycles * (bind ? bind->utilisation : 0)) {
        std::snprintf(buf, sizeof buf,
                      "%s is busy %.0f%% of the run but its bytes need %.0f%% at its roofs: "
                      "per-descriptor setup, "
                      "latency and misalignment take the rest (%lld descriptors); fewer, larger, "
                      "aligned transfers",
                      busiest.c_str(), 100 * busy / cycles, 100 * transfer / cycles,
                      static_cast<long long>(descriptors));
        p.hint = buf;
    } else if (bind && bind->utilisation < 0.7) {
        std::snprintf(buf, sizeof buf,
                      "%s binds but is needed %.0f%% of the run: the pipes wait on each other; "
                      "overlap transfers "
                      "with compute (double buffering, more tiles in flight)",
                      bind->name.c_str(), 100 * bind->utilisation);
        p.hint = buf;
    }
    p.valid = true;
    return p;
}

std::string roofline_points_text(const RooflinePoints &p) {
    std::ostringstream os;
    if (!p.valid) {
        os << "roofline: " << p.why_not << "\n";
        return os.str();
    }
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "roofline: work %.0f %s, %llu cycles, achieved %.4g ops/cycle; physical limit "
                  "%.4g ops/cycle "
                  "at %.4g ops per compulsory GM byte\n",
                  p.work, p.work_unit.c_str(), static_cast<unsigned long long>(p.cycles),
                  p.achieved, p.limit_ops_per_cycle, p.limit_intensity);
    os << buf;
    std::snprintf(buf, sizeof buf, "  %-28s %12s %14s %12s %12s %8s\n", "roof", "peak", "bytes",
                  "ops/byte", "bound", "used");
    os << buf;
    for (const auto &r : p.roofs) {
        if (r.memory) {
            std::snprintf(buf, sizeof buf, "  %-28s %10.4g B/c %14lld %12.4g %12.4g %7.1f%%\n",
                          r.name.c_str(), r.peak, static_cast<long long>(r.bytes), r.intensity,
                          r.bound, 100 * r.utilisation);
        } else {
            std::snprintf(buf, sizeof buf, "  %-28s %8.4g ops/c %14s %12s %12.4g %7.1f%%\n",
                          r.name.c_str(), r.peak, "-", "-", r.bound, 100 * r.utilisation);
        }
        os << buf;
    }
    os << "  binds: " << p.binding << "\n";
    if (!p.hint.empty()) {
        os << "  hint: " << p.hint << "\n";
    }
    return os.str();
}

} // namespace tessel
