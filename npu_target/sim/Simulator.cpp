// The discrete-event core of the simulator: the scalar front end issuing into
// per-pipe in-order queues, pipes starting their head instruction when its
// flags, the engine's outstanding limit and the in-order rule allow, and the
// deadlock report. Functional effects happen when an instruction starts, in
// global time order, so a missing flag really produces a race (or wrong data
// with check_races off). Formulas: docs/simulator.md.

#include "npu_target/sim/Machine.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tessel::sim {

using isa::Op;
using namespace detail;

namespace {

const char *const kEnumPipeNames[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL"};

std::string enum_pipe_name(uint8_t p) {
    return p < 8 ? kEnumPipeNames[p] : "pipe#" + std::to_string(p);
}

class Runner {
public:
    Runner(Machine &m) : m_(m), P_(static_cast<int>(m.pipe_names.size())), E_(m.events) {}

    void run() {
        for (;;) {
            uint64_t best = kNever;
            int bc = -1, bp = -1;
            bool all_done = true;
            for (auto &c : m_.cores) {
                if (!c.ended) {
                    all_done = false;
                    uint64_t t = fe_ready(c);
                    if (t < best) {
                        best = t, bc = c.id, bp = 0;
                    }
                }
                for (int p = 1; p < P_; ++p) {
                    if (c.pipes[p].q.empty()) {
                        continue;
                    }
                    all_done = false;
                    uint64_t t = pipe_ready(c, p);
                    if (t < best) {
                        best = t, bc = c.id, bp = p;
                    }
                }
            }
            if (all_done) {
                return;
            }
            if (best == kNever) {
                deadlock();
            }
            if (m_.opt.max_cycles && best > m_.opt.max_cycles) {
                Core &c = m_.cores[bc];
                uint32_t pc = bp == 0 ? c.pc : c.pipes[bp].q.front().pc;
                m_.budget_exceeded(Budget::Cycles, c, pc, best);
            }
            if (bp == 0) {
                step_fe(m_.cores[bc], best);
            } else {
                step_pipe(m_.cores[bc], bp, best);
            }
        }
    }

private:
    Machine &m_;
    const int P_, E_;

    size_t flag_index(const isa::Instr &in, uint32_t pc) const {
        int s = in.src_pipe < m_.enum_pipe.size() ? m_.enum_pipe[in.src_pipe] : -1;
        int d = in.dst_pipe < m_.enum_pipe.size() ? m_.enum_pipe[in.dst_pipe] : -1;
        if (s < 0 || d < 0 || in.src_pipe >= 7 || in.dst_pipe >= 7) {
            throw SimError(instr_tag(pc, in) + ": flag between " + enum_pipe_name(in.src_pipe) + " and " +
                           enum_pipe_name(in.dst_pipe) + ": arch '" + m_.arch.name + "' has no such pipe");
        }
        if (in.event >= E_) {
            throw SimError(instr_tag(pc, in) + ": event id " + std::to_string(in.event) + " >= event_ids_per_pair " +
                           std::to_string(E_));
        }
        return (static_cast<size_t>(s) * P_ + static_cast<size_t>(d)) * E_ + in.event;
    }

    /** When the pipes a BARRIER/END waits for have drained (kNever while one has work queued). */
    uint64_t drained_at(Core &c, const isa::Instr &in) const {
        const bool all = in.op == Op::END || in.src_pipe == static_cast<uint8_t>(isa::Pipe::ALL);
        const int one = !all && in.src_pipe < m_.enum_pipe.size() ? m_.enum_pipe[in.src_pipe] : -1;
        uint64_t t = 0;
        for (int p = 1; p < P_; ++p) {
            if (!all && p != one) {
                continue;
            }
            if (!c.pipes[p].q.empty()) {
                return kNever;
            }
            t = std::max(t, c.pipes[p].last_complete);
        }
        return t;
    }

    uint64_t fe_ready(Core &c) {
        if (c.pc >= m_.prog.code.size()) {
            return c.fe_time;
        }
        const isa::Instr &in = m_.prog.code[c.pc];
        if (in.op == Op::BARRIER || in.op == Op::END) {
            uint64_t t = drained_at(c, in);
            return t == kNever ? kNever : std::max(t, c.fe_time);
        }
        int p = pipe_of_instr(m_, in, c.pc);
        if (in.op == Op::WAIT_FLAG && p == 0) {
            auto &f = c.flags[flag_index(in, c.pc)];
            return f.empty() ? kNever : std::max(c.fe_time, f.front());
        }
        if (p == 0) {
            return c.fe_time;
        }
        PipeState &ps = c.pipes[p];
        if (ps.q.size() >= ps.depth) {
            return kNever;
        }
        return std::max(c.fe_time, ps.last_pop);
    }

    uint64_t pipe_ready(Core &c, int p) {
        PipeState &ps = c.pipes[p];
        const Queued &h = ps.q.front();
        const isa::Instr &in = m_.prog.code[h.pc];
        uint64_t t = std::max(ps.next_start, h.enq);
        if (in.op == Op::WAIT_FLAG) {
            auto &f = c.flags[flag_index(in, h.pc)];
            return f.empty() ? kNever : std::max(t, f.front());
        }
        if (in.op == Op::DMA && in.engine < m_.arch.engines.size()) {
            size_t mo = static_cast<size_t>(std::max(1, m_.arch.engines[in.engine].max_outstanding));
            while (!ps.inflight.empty() && ps.inflight.front() <= t) {
                ps.inflight.pop_front();
            }
            if (ps.inflight.size() >= mo) {
                t = std::max(t, ps.inflight[ps.inflight.size() - mo]);
            }
        }
        return t;
    }

    void trace(Core &c, int p, uint64_t s, uint64_t e, uint32_t pc, const isa::Instr &in, int64_t bytes, Name src,
               Name dst, Name stall, const Range *ranges = nullptr, int nr = 0) {
        if (!m_.opt.trace && !m_.opt.trace_sink) {
            return;
        }
        SimReport &r = m_.report;
        r.trace_events++;
        if (m_.opt.max_trace_events && r.trace_recorded >= m_.opt.max_trace_events) {
            if (!r.trace_truncated) {
                r.trace_truncated = true;
                r.trace_cut_cycle = s;
            }
            return;
        }
        r.trace_recorded++;
        TraceEvent ev;
        ev.core = static_cast<uint16_t>(c.id);
        ev.pipe = m_.pipe_ids[p];
        ev.start = s;
        ev.end = e;
        ev.pc = pc;
        ev.op = in.op;
        ev.bytes = bytes;
        ev.src = src;
        ev.dst = dst;
        ev.prov = in.prov;
        ev.stall = stall;
        if (m_.opt.trace_sink) {
            m_.opt.trace_sink->event(ev);
        }
        if (!m_.opt.trace) {
            return;
        }
        ev.first_access = static_cast<uint32_t>(r.trace_accesses.size());
        ev.num_accesses = static_cast<uint8_t>(nr);
        for (int i = 0; i < nr; i++) {
            r.trace_accesses.emplace_back(ranges[i].level, ranges[i].lo, ranges[i].hi, ranges[i].write);
        }
        r.trace.push_back(ev);
    }

    void step_fe(Core &c, uint64_t t) {
        PipeState &S = c.pipes[0];
        const uint64_t issue = static_cast<uint64_t>(std::max(1, m_.arch.scalar.issue_cycles));
        if (c.pc >= m_.prog.code.size()) {
            throw SimError("core " + std::to_string(c.id) + ": pc " + std::to_string(c.pc) +
                           " is past the end of the program (" + std::to_string(m_.prog.code.size()) +
                           " instructions); missing END?");
        }
        const uint32_t pc = c.pc;
        const isa::Instr &in = m_.prog.code[pc];
        Name why;
        if (t > c.fe_time) {
            S.stall += t - c.fe_time;
            why = in.op == Op::WAIT_FLAG ? m_.stall.wait_flag
                  : (in.op == Op::BARRIER || in.op == Op::END) ? m_.stall.barrier : m_.stall.queue_full;
        }
        if (++m_.issued_total > m_.opt.max_instructions && m_.opt.max_instructions) {
            m_.budget_exceeded(Budget::Instructions, c, pc, t);
        }
        if ((m_.issued_total & 4095) == 0 && m_.opt.control) {
            m_.opt.control->issued.store(m_.issued_total, std::memory_order_relaxed);
            if (m_.opt.control->cancel.load(std::memory_order_relaxed)) {
                throw SimCancelled("the run was cancelled at cycle " + std::to_string(t) + " after " +
                                   std::to_string(m_.issued_total) + " instructions");
            }
        }
        const uint64_t waited_from = c.fe_time;
        c.fe_time = t;
        S.busy += issue;
        if (in.op == Op::END) {
            c.ended = true;
            S.instructions++;
            S.last_complete = std::max(S.last_complete, t);
            trace(c, 0, waited_from, t, pc, in, 0, Name(), Name(), why);
            return;
        }
        if (in.op == Op::BARRIER) {
            S.instructions++;
            c.pc++;
            c.fe_time = t + issue;
            trace(c, 0, waited_from, c.fe_time, pc, in, 0, Name(), Name(), why);
            return;
        }
        int p = pipe_of_instr(m_, in, c.pc);
        if (p == 0) {
            S.instructions++;
            if (in.op == Op::WAIT_FLAG) {
                c.flags[flag_index(in, pc)].pop_front();
                c.pc++;
            } else if (in.op == Op::SET_FLAG) {
                c.flags[flag_index(in, pc)].push_back(t);
                c.pc++;
            } else {
                bool branched = false;
                c.cur_seq = ++c.issued;
                uint64_t lat = m_.exec_scalar(c, in, pc, t, branched);
                m_.scalar_by_prov[in.prov < m_.scalar_by_prov.size() ? in.prov : 0]++;
                if (in.op == Op::BLT && c.id == 0 && in.imm >= 0 && static_cast<uint64_t>(in.imm) <= pc) {
                    m_.note_loop(pc, in, c.regs[in.ra], c.regs[in.rb]);
                }
                if (!branched) {
                    c.pc++;
                }
                c.fe_time = t + issue + lat;
                S.last_complete = std::max(S.last_complete, c.fe_time);
                trace(c, 0, t, c.fe_time, pc, in, 0, Name(), Name(), why);
                return;
            }
            c.fe_time = t + issue;
            trace(c, 0, waited_from, c.fe_time, pc, in, 0, Name(), Name(), why);
            return;
        }
        const size_t nregs = c.regs.size();
        for (uint8_t r : {in.ra, in.rb, in.rc, in.rd}) {
            if (r >= nregs) {
                throw SimError("core " + std::to_string(c.id) + " " + instr_tag(pc, in) + ": register r" +
                               std::to_string(r) + " does not exist (" + std::to_string(nregs) + " registers)");
            }
        }
        auto rv = [&](uint8_t r) { return r == 0 ? int64_t{0} : c.regs[r]; };
        c.pipes[p].q.push_back(Queued{pc, t, rv(in.ra), rv(in.rb), rv(in.rc), rv(in.rd), ++c.issued});
        c.pc++;
        c.fe_time = t + issue;
    }

    void step_pipe(Core &c, int p, uint64_t t) {
        PipeState &ps = c.pipes[p];
        const Queued h = ps.q.front();
        ps.q.pop_front();
        ps.last_pop = t;
        const isa::Instr &in = m_.prog.code[h.pc];
        const uint64_t t0 = std::max(ps.next_start, h.enq);
        Name why;
        if (t > t0) {
            ps.stall += t - t0;
            why = in.op == Op::WAIT_FLAG ? m_.stall.wait_flag : in.op == Op::DMA ? m_.stall.dma_outstanding : Name();
        }
        ps.instructions++;
        if (in.op == Op::WAIT_FLAG) {
            c.flags[flag_index(in, h.pc)].pop_front();
            ps.next_start = t;
            trace(c, p, t0, t, h.pc, in, 0, Name(), Name(), why);
            return;
        }
        if (in.op == Op::SET_FLAG) {
            uint64_t fire = std::max(t, ps.last_complete);
            c.flags[flag_index(in, h.pc)].push_back(fire);
            ps.next_start = t + 1; // one cycle on the source pipe
            ps.busy += 1;
            trace(c, p, t, t + 1, h.pc, in, 0, Name(), Name(), why);
            return;
        }
        Range ranges[4];
        int nr = 0;
        uint64_t end = t, visible = t;
        int64_t bytes = 0;
        Name src, dst;
        m_.now = t;
        if (in.op == Op::DMA) {
            DmaCost dc = m_.exec_dma(c, in, h, ranges, nr);
            const DmaEngine &e = m_.arch.engines[in.engine];
            const double xfer_start = static_cast<double>(t + static_cast<uint64_t>(std::max(0, e.setup_cycles)));
            double fin = xfer_start + static_cast<double>(dc.transfer);
            if (dc.gm_bytes > 0 && m_.arch.chip.gm_aggregate_bytes_per_cycle > 0) {
                m_.gm_channel_free = std::max(m_.gm_channel_free, xfer_start) + dc.gm_bytes / m_.arch.chip.gm_aggregate_bytes_per_cycle;
                fin = std::max(fin, m_.gm_channel_free);
            }
            if (dc.gm_bytes > 0 && m_.arch.chip.gm_shared_rw_port && m_.arch.chip.gm_bytes_per_cycle > 0) {
                c.gm_port_free = std::max(c.gm_port_free, xfer_start) + dc.gm_bytes / m_.arch.chip.gm_bytes_per_cycle;
                fin = std::max(fin, c.gm_port_free);
            }
            end = static_cast<uint64_t>(std::ceil(fin - 1e-9));
            uint64_t lat = static_cast<uint64_t>(std::max(0, e.latency));
            if (dc.all_l2_hits && m_.arch.chip.l2_latency > 0) {
                lat = std::min(lat, static_cast<uint64_t>(m_.arch.chip.l2_latency));
            }
            visible = end + lat;
            auto pos = std::upper_bound(ps.inflight.begin(), ps.inflight.end(), visible);
            ps.inflight.insert(pos, visible);
            EdgeStats &es = m_.edge_stats[m_.edge_base[in.engine] + static_cast<size_t>(dc.edge)];
            es.bytes += dc.bytes;
            es.busy_cycles += end - t;
            es.descriptors++;
            bytes = dc.bytes;
            src = m_.level_id(in.src_level);
            dst = m_.level_id(in.dst_level);
        } else if (in.op == Op::FIXPARAM) {
            end = t + m_.exec_fixparam(c, in, h, ranges, nr);
            visible = end;
        } else if (in.op == Op::MMAD) {
            uint64_t frac = m_.exec_mmad(c, in, h, ranges, nr, bytes);
            bool chained = ps.last_op == Op::MMAD && ps.last_end == t;
            if (!chained) {
                why = m_.stall.fill_drain;
            }
            end = t + frac + (chained ? 0 : static_cast<uint64_t>(std::max(0, m_.arch.matrix.fill_drain_cycles)));
            visible = end + static_cast<uint64_t>(std::max(0, m_.arch.matrix.latency));
            src = m_.level_id(m_.a_level);
            dst = m_.level_id(m_.c_level);
        } else {
            uint64_t conflicts = 0;
            uint64_t dur = m_.exec_vector(c, in, h, ranges, nr, conflicts, bytes);
            end = t + dur;
            visible = end;
            if (conflicts && why.empty()) {
                why = m_.stall.bank_conflict;
            }
            src = dst = m_.level_id(m_.vec_level);
        }
        c.cur_seq = h.seq;
        m_.check_and_record(c, p, h.pc, t, ranges, nr, end, visible);
        ps.busy += end - t;
        ps.next_start = end;
        ps.last_complete = std::max(ps.last_complete, visible);
        ps.last_op = in.op;
        ps.last_end = end;
        trace(c, p, t, end, h.pc, in, bytes, src, dst, why, ranges, nr);
    }

    [[noreturn]] void deadlock() {
        std::ostringstream os;
        uint64_t now = 0;
        for (auto &c : m_.cores) {
            now = std::max(now, c.fe_time);
        }
        os << "deadlock at cycle " << now << ": no pipe can make progress";
        for (auto &c : m_.cores) {
            os << "\n  core " << c.id << " S: ";
            if (c.ended) {
                os << "ended";
            } else if (c.pc < m_.prog.code.size()) {
                const isa::Instr &in = m_.prog.code[c.pc];
                os << "at " << instr_tag(c.pc, in);
                if (in.op == Op::BARRIER || in.op == Op::END) {
                    os << ", waiting for the pipes to drain";
                } else if (in.op == Op::WAIT_FLAG) {
                    os << ", waiting for flag " << enum_pipe_name(in.src_pipe) << "->" << enum_pipe_name(in.dst_pipe)
                       << " #" << int(in.event) << " (never set)";
                } else {
                    os << ", issue blocked: queue of " << m_.pipe_names[pipe_of_instr(m_, in, c.pc)] << " is full";
                }
            }
            for (int p = 1; p < P_; ++p) {
                const PipeState &ps = c.pipes[p];
                os << "\n  core " << c.id << " " << ps.name << ": queue " << ps.q.size() << "/" << ps.depth;
                if (ps.q.empty()) {
                    os << ", idle";
                    continue;
                }
                const isa::Instr &in = m_.prog.code[ps.q.front().pc];
                os << ", head " << instr_tag(ps.q.front().pc, in);
                if (in.op == Op::WAIT_FLAG) {
                    os << " waits for flag " << enum_pipe_name(in.src_pipe) << "->" << enum_pipe_name(in.dst_pipe)
                       << " #" << int(in.event) << ", which nothing will set";
                }
            }
        }
        throw SimError(os.str());
    }
};

} // namespace

namespace detail {

bool is_scalar_op(Op op) {
    return op < Op::DMA;
}

int pipe_of_instr(const Machine &m, const isa::Instr &in, uint32_t pc) {
    const Op op = in.op;
    if (is_scalar_op(op) || op == Op::BARRIER || op == Op::END) {
        return 0;
    }
    if (op == Op::DMA || op == Op::FIXPARAM) {
        if (in.engine >= m.engine_pipe.size()) {
            throw SimError(instr_tag(pc, in) + ": engine " + std::to_string(in.engine) + " does not exist in arch '" +
                           m.arch.name + "'");
        }
        return m.engine_pipe[in.engine];
    }
    if (op == Op::MMAD) {
        return m.mat_pipe;
    }
    if (op == Op::SET_FLAG || op == Op::WAIT_FLAG) {
        uint8_t e = op == Op::SET_FLAG ? in.src_pipe : in.dst_pipe;
        int p = e < m.enum_pipe.size() ? m.enum_pipe[e] : -1;
        if (p < 0) {
            throw SimError(instr_tag(pc, in) + " names pipe " + enum_pipe_name(e) + ", which arch '" +
                           m.arch.name + "' does not have");
        }
        return p;
    }
    return m.vec_pipe;
}

std::string instr_tag(uint32_t pc, const isa::Instr &in) {
    return "pc " + std::to_string(pc) + " (" + op_mnemonic(in.op) + ")";
}

} // namespace detail

SimReport simulate(const isa::Program &prog, const ArchSpec &arch, std::vector<Tensor> &args, const SimOptions &opt) {
    Machine m(prog, arch, opt);
    auto add_pipe = [&](const std::string &n) {
        auto it = std::find(m.pipe_names.begin(), m.pipe_names.end(), n);
        if (it != m.pipe_names.end()) {
            return static_cast<int>(it - m.pipe_names.begin());
        }
        m.pipe_names.push_back(n);
        return static_cast<int>(m.pipe_names.size() - 1);
    };
    add_pipe(arch.scalar.pipe.empty() ? "S" : arch.scalar.pipe);
    m.vec_pipe = add_pipe(arch.vector.pipe);
    m.mat_pipe = add_pipe(arch.matrix.pipe);
    for (const auto &e : arch.engines) {
        m.engine_pipe.push_back(add_pipe(e.pipe));
    }
    for (const auto &kv : arch.pipes) {
        add_pipe(kv.first);
    }
    for (const auto &n : m.pipe_names) {
        m.pipe_ids.emplace_back(n);
    }
    m.scalar_by_prov.assign(prog.provenance.size() + 1, 0);
    m.started = std::chrono::steady_clock::now();
    m.enum_pipe.assign(8, -1);
    for (int i = 0; i < 7; ++i) {
        auto it = std::find(m.pipe_names.begin(), m.pipe_names.end(), kEnumPipeNames[i]);
        if (it != m.pipe_names.end()) {
            m.enum_pipe[i] = static_cast<int>(it - m.pipe_names.begin());
        }
    }
    m.enum_pipe[0] = 0;
    auto lvl = [&](const std::string &n) {
        for (size_t i = 0; i < arch.memories.size(); ++i) {
            if (arch.memories[i].name == n) {
                return static_cast<int>(i);
            }
        }
        return -1;
    };
    m.vec_level = lvl(arch.vector.level);
    m.a_level = lvl(arch.matrix.a_level);
    m.b_level = lvl(arch.matrix.b_level);
    m.c_level = lvl(arch.matrix.c_level);
    m.events = std::max(1, arch.sync.event_ids_per_pair);
    for (size_t e = 0; e < arch.engines.size(); ++e) {
        m.edge_base.push_back(m.edge_stats.size());
        for (const auto &ed : arch.engines[e].edges) {
            EdgeStats es;
            es.engine = arch.engines[e].name;
            es.src = ed.src;
            es.dst = ed.dst;
            m.edge_stats.push_back(es);
        }
    }
    const int ncores = std::max(1, prog.cores);
    if (ncores > std::max(1, arch.chip.cores)) {
        throw SimError("program '" + prog.kernel_name + "' runs on " + std::to_string(ncores) + " cores; arch '" +
                       arch.name + "' has " + std::to_string(arch.chip.cores));
    }
    const size_t P = m.pipe_names.size();
    m.cores.resize(static_cast<size_t>(ncores));
    for (int i = 0; i < ncores; ++i) {
        Core &c = m.cores[static_cast<size_t>(i)];
        c.id = i;
        c.pipes.resize(P);
        for (size_t p = 0; p < P; ++p) {
            c.pipes[p].name = m.pipe_names[p];
            auto it = arch.pipes.find(m.pipe_names[p]);
            c.pipes[p].depth = static_cast<size_t>(std::max(1, it == arch.pipes.end() ? 32 : it->second));
        }
        c.flags.resize(P * P * static_cast<size_t>(m.events));
    }
    m.setup_memory(args);

    Runner(m).run();

    SimReport &r = m.report;
    r.cores = ncores;
    uint64_t cycles = 0;
    for (auto &c : m.cores) {
        cycles = std::max(cycles, c.fe_time);
        for (auto &ps : c.pipes) {
            cycles = std::max({cycles, ps.last_complete, ps.next_start});
        }
    }
    // The write-back L2 absorbs GM writes at its own rate, but HBM must still
    // take them: the run lasts at least as long as that drain.
    for (const auto &L : m.arch.memories) {
        if (L.off_chip && L.wr_bytes_per_cycle > 0 && m.arch.chip.l2_bytes > 0 && r.gm_write_bytes > 0) {
            double rate = L.wr_bytes_per_cycle * ncores;
            if (m.arch.chip.gm_aggregate_bytes_per_cycle > 0) {
                rate = std::min(rate, m.arch.chip.gm_aggregate_bytes_per_cycle);
            }
            r.gm_write_drain_cycles = static_cast<uint64_t>(std::ceil(static_cast<double>(r.gm_write_bytes) / rate));
            cycles = std::max(cycles, r.gm_write_drain_cycles);
            break;
        }
    }
    r.cycles = cycles;
    for (auto &c : m.cores) {
        for (auto &ps : c.pipes) {
            PipeStats s;
            s.pipe = ps.name;
            s.core = c.id;
            s.busy_cycles = ps.busy;
            s.busy_pct = cycles ? 100.0 * static_cast<double>(ps.busy) / static_cast<double>(cycles) : 0;
            s.instructions = ps.instructions;
            s.stall_cycles = ps.stall;
            r.instructions += ps.instructions;
            r.pipes.push_back(s);
        }
    }
    for (auto &es : m.edge_stats) {
        es.achieved_bytes_per_cycle = es.busy_cycles ? static_cast<double>(es.bytes) / static_cast<double>(es.busy_cycles) : 0;
        r.edges.push_back(es);
    }
    return std::move(m.report);
}

} // namespace tessel::sim
