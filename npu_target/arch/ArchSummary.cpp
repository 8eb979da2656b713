// Derived figures and the `tessel arch show` text (ArchSummary.h).
#include "npu_target/arch/ArchSummary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tessel {

namespace {

std::string bytes_text(uint64_t b) {
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = double(b);
    while (v >= 1024 && u < 4 && std::fmod(v, 1024) == 0) {
        v /= 1024;
        u++;
    }
    std::ostringstream os;
    os << v << " " << units[u];
    return os.str();
}

std::string num(double v, int decimals = 1) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

/** "B/cyc (x GB/s)" */
std::string rate(double bpc, double clock) { return num(bpc, bpc == int64_t(bpc) ? 0 : 1) + " B/cyc (" + num(bpc * clock / 1e9) + " GB/s)"; }

std::string ops_unit(DType t) { return dtype_is_float(t) ? "TFLOPS" : "TOPS"; }

} // namespace

double peak_ops_per_core(const ArchSpec &a, DType t) {
    return 2.0 * double(a.matrix.macs_per_cycle(t)) * a.clock_hz;
}

double peak_ops_per_chip(const ArchSpec &a, DType t) { return peak_ops_per_core(a, t) * a.chip.cores; }

double gm_bytes_per_second(const ArchSpec &a) {
    return std::min(a.chip.gm_bytes_per_cycle * a.chip.cores, a.chip.gm_aggregate_bytes_per_cycle) * a.clock_hz;
}

double ridge_mac_per_byte(const ArchSpec &a, DType t, double bytes_per_cycle) {
    return bytes_per_cycle > 0 ? double(a.matrix.macs_per_cycle(t)) / bytes_per_cycle : 0;
}

std::string arch_summary(const ArchSpec &a) {
    std::ostringstream os;
    os << a.name << " (hash " << a.hash() << ")\n";
    if (!a.description.empty()) {
        os << "  " << a.description << "\n";
    }
    os << "  clock " << num(a.clock_hz / 1e9, 2) << " GHz, " << a.chip.cores << " core(s)\n\n";

    os << "memory levels (per core):\n";
    for (const auto &m : a.memories) {
        char line[160];
        snprintf(line, sizeof line, "  %-5s %10s  %-8s rd %6s  wr %6s B/cyc  latency %4d  align %4d", m.name.c_str(),
                 bytes_text(m.size_bytes).c_str(), m.off_chip ? "off-chip" : "on-chip", num(m.rd_bytes_per_cycle, 0).c_str(),
                 num(m.wr_bytes_per_cycle, 0).c_str(), m.latency, m.alignment);
        os << line;
        if (m.bank_groups) {
            os << "  banks " << m.bank_groups << "x" << m.banks_per_group << "x" << m.bank_row_bytes << " B";
        }
        if (!m.layouts.empty()) {
            os << "  layouts";
            for (const auto &l : m.layouts) os << " " << l;
        }
        os << "\n";
    }

    os << "\ntransfer engines:\n";
    for (const auto &e : a.engines) {
        os << "  " << e.name << " (pipe " << e.pipe << "): setup " << e.setup_cycles << " cyc, latency " << e.latency
           << " cyc, " << e.max_outstanding << " outstanding, " << e.max_dims << "-D descriptors (count <= "
           << e.max_count << "), burst " << e.burst_bytes << " B, align " << e.align_bytes << " B";
        if (e.misalign_factor < 1) {
            os << " (misaligned x" << e.misalign_factor << ")";
        }
        if (!e.transforms.empty()) {
            os << ", transforms";
            for (const auto &t : e.transforms) os << " " << t;
        }
        os << "\n";
        for (const auto &d : e.edges) {
            os << "    " << d.src << " -> " << d.dst << "  " << rate(d.bytes_per_cycle, a.clock_hz) << "\n";
        }
    }

    os << "\nmatrix unit (pipe " << a.matrix.pipe << "; A in " << a.matrix.a_level << ", B in " << a.matrix.b_level
       << ", C in " << a.matrix.c_level << "; latency " << a.matrix.latency << ", fill/drain "
       << a.matrix.fill_drain_cycles << " cyc):\n";
    for (const auto &kv : a.matrix.shapes) {
        DType t = kv.first;
        char line[200];
        snprintf(line, sizeof line, "  %-5s %3dx%3dx%-3d (m0 x k0 x n0)  %6lld MAC/cyc  acc %-5s  %7s %s/core  %8s %s/chip",
                 dtype_name(t), kv.second.m0, kv.second.k0, kv.second.n0,
                 static_cast<long long>(a.matrix.macs_per_cycle(t)), dtype_name(a.matrix.accumulators.at(t)),
                 num(peak_ops_per_core(a, t) / 1e12, 2).c_str(), ops_unit(t).c_str(),
                 num(peak_ops_per_chip(a, t) / 1e12, 1).c_str(), ops_unit(t).c_str());
        os << line << "\n";
    }

    os << "\nvector unit (pipe " << a.vector.pipe << ", operands in " << a.vector.level << "): "
       << a.vector.bytes_per_repeat << " B/repeat (" << a.vector.bytes_per_repeat / a.vector.block_bytes
       << " blocks of " << a.vector.block_bytes << " B), max repeat " << a.vector.max_repeat << "\n  lanes:";
    for (auto t : a.vector.dtypes) {
        os << " " << dtype_name(t) << " " << a.vector.bytes_per_repeat / dtype_bytes(t);
    }
    os << "\n  cycles/repeat:";
    for (const auto &kv : a.vector.cycles_per_repeat) {
        os << " " << kv.first << " " << kv.second;
    }
    os << "\n\nscalar unit (pipe " << a.scalar.pipe << "): issue " << a.scalar.issue_cycles << " cyc, "
       << a.scalar.registers << " registers, stack " << bytes_text(a.scalar.stack_bytes) << "\n";
    os << "pipes (queue depth):";
    for (const auto &kv : a.pipes) {
        os << " " << kv.first << " " << kv.second;
    }
    os << "\nsync: " << a.sync.event_ids_per_pair << " event ids per pipe pair"
       << (a.sync.barrier ? ", barriers" : "") << "\n\n";

    os << "chip:\n";
    if (a.chip.l2_bytes) {
        os << "  L2 " << bytes_text(a.chip.l2_bytes) << " shared, line " << a.chip.l2_line_bytes << " B, rd "
           << rate(a.chip.l2_rd_bytes_per_cycle, a.clock_hz) << ", wr " << rate(a.chip.l2_wr_bytes_per_cycle, a.clock_hz)
           << " per core, latency " << a.chip.l2_latency << "\n";
    } else {
        os << "  no L2\n";
    }
    os << "  GM " << rate(a.chip.gm_bytes_per_cycle, a.clock_hz) << " per core, aggregate "
       << rate(a.chip.gm_aggregate_bytes_per_cycle, a.clock_hz) << ", latency " << a.chip.gm_latency
       << (a.chip.gm_shared_rw_port ? ", reads and writes share one port" : ", separate read/write ports") << "\n";
    os << "  chip GM bandwidth " << num(gm_bytes_per_second(a) / 1e9) << " GB/s\n\n";

    os << "ridge points (MAC per byte at which compute time = transfer time, one core):\n";
    for (const auto &kv : a.matrix.shapes) {
        DType t = kv.first;
        os << "  " << dtype_name(t) << ": GM " << num(ridge_mac_per_byte(a, t, a.chip.gm_bytes_per_cycle));
        if (a.chip.l2_bytes) {
            os << ", L2 " << num(ridge_mac_per_byte(a, t, a.chip.l2_rd_bytes_per_cycle));
        }
        for (const auto &e : a.engines) {
            for (const auto &d : e.edges) {
                if (d.dst == a.matrix.a_level || d.dst == a.matrix.b_level) {
                    os << ", " << d.src << "->" << d.dst << " " << num(ridge_mac_per_byte(a, t, d.bytes_per_cycle));
                }
            }
        }
        os << "\n";
    }
    return os.str();
}

} // namespace tessel
