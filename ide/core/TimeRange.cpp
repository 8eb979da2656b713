#include "ide/core/TimeRange.h"

#include "npu_target/isa/InstrTable.h"

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

namespace tessel::ide {

using tessel::isa::Op;
using tessel::sim::TraceEvent;

TraceMachine TraceMachine::of(const tessel::ArchSpec &arch) {
    TraceMachine m;
    m.scalarPipe = arch.scalar.pipe;
    m.issueCycles = uint64_t(std::max(1, arch.scalar.issue_cycles));
    for (const auto &e : arch.engines) {
        for (const auto &edge : e.edges) {
            m.edges.push_back({e.name, e.pipe, edge.src, edge.dst});
        }
    }
    m.queueDepth = arch.pipes;
    for (const auto &e : arch.engines) {
        m.enginePipe.push_back(e.pipe);
    }
    m.matrixPipe = arch.matrix.pipe;
    m.vectorPipe = arch.vector.pipe;
    for (const auto &e : arch.engines) {
        m.engineLatency[e.name] = uint64_t(std::max(0, e.latency));
    }
    m.l2Latency = uint64_t(std::max(0, arch.chip.l2_latency));
    return m;
}

namespace {
std::string flagPipeName(uint8_t p, const std::string &scalarPipe) {
    if (p == uint8_t(tessel::isa::Pipe::S)) {
        return scalarPipe;
    }
    return tessel::isa::pipe_name(static_cast<tessel::isa::Pipe>(p));
}
} // namespace

std::string TraceMachine::pipeOf(const tessel::isa::Instr &in) const {
    if (in.op < Op::DMA || in.op == Op::BARRIER || in.op == Op::END) {
        return scalarPipe;
    }
    if (in.op == Op::DMA || in.op == Op::FIXPARAM) {
        return in.engine < enginePipe.size() ? enginePipe[in.engine] : std::string();
    }
    if (in.op == Op::MMAD) {
        return matrixPipe;
    }
    if (in.op == Op::SET_FLAG) {
        return flagPipeName(in.src_pipe, scalarPipe);
    }
    if (in.op == Op::WAIT_FLAG) {
        return flagPipeName(in.dst_pipe, scalarPipe);
    }
    return vectorPipe;
}

std::string TraceMachine::engineOf(const std::string &pipe, const std::string &src,
                                   const std::string &dst) const {
    for (const auto &e : edges) {
        if (e.pipe == pipe && e.src == src && e.dst == dst) {
            return e.engine;
        }
    }
    return {};
}

EventParts splitEvent(const TraceEvent &e, uint64_t prevEnd, const TraceMachine &m,
                      uint64_t queued) {
    EventParts p;
    if (e.op == Op::END) {
        p.stall = {e.start, e.end};
        return p;
    }
    const bool scalar = e.pipe == m.scalarPipe;
    if (scalar && (e.op == Op::WAIT_FLAG || e.op == Op::BARRIER || e.op == Op::SET_FLAG)) {
        const uint64_t issue = e.end >= e.start + m.issueCycles ? e.end - m.issueCycles : e.start;
        p.stall = {e.start, issue};
        p.busy = {issue, e.end};
        return p;
    }
    if (scalar && (e.op == Op::LD || e.op == Op::ST) && e.end > e.start + m.issueCycles) {
        // The front end waits out the memory's latency after the issue slot.
        p.busy = {e.start, e.start + m.issueCycles};
        p.stall = {e.start + m.issueCycles, e.end};
        return p;
    }
    if (e.op == Op::WAIT_FLAG) {
        p.stall = {e.start, e.end};
        return p;
    }
    p.busy = {e.start, e.end};
    // Ready at max(previous end, queued) (Simulator.cpp, step_pipe): waiting from there on.
    const uint64_t ready = queued == UINT64_MAX ? prevEnd : std::max(prevEnd, queued);
    if (e.op == Op::DMA && e.stall == "dma_outstanding" && ready < e.start) {
        p.stall = {ready, e.start};
        p.derivedStall = true;
    }
    return p;
}

// ---- FrontEnd ----------------------------------------------------------------

namespace {
bool isBranch(Op op) {
    return op == Op::BEQ || op == Op::BNE || op == Op::BLT || op == Op::BGE || op == Op::JMP;
}

/** When event e left its queue: an instruction when it started, a WAIT_FLAG when its flag came. */
uint64_t leftQueue(const TraceEvent &e) {
    return e.op == Op::WAIT_FLAG ? e.end : e.start;
}
} // namespace

FrontEnd::FrontEnd(const tessel::sim::SimReport &report, const tessel::isa::Program &program,
                   const TraceMachine &m) {
    const auto &trace = report.trace;
    const auto &code = program.code;
    m_queued.assign(trace.size(), UINT64_MAX);
    // Per core: the scalar pipe's events, and per other pipe its events in queue order.
    struct Core {
        std::vector<size_t> scalar;
        std::map<uint16_t, std::vector<size_t>> pipes; // pipe name id -> events
        std::map<uint16_t, size_t> next;               // pipe -> its next event to issue
    };
    std::map<int, Core> cores;
    for (size_t i = 0; i < trace.size(); ++i) {
        const TraceEvent &e = trace[i];
        Core &c = cores[e.core];
        if (e.pipe == m.scalarPipe) {
            c.scalar.push_back(i);
        } else {
            c.pipes[e.pipe.id()].push_back(i);
        }
    }
    // The pipe (name id) of each instruction, as the simulator queues it, and its queue depth.
    std::vector<int> pipeOfPc(code.size(), -1);
    std::map<std::string, int> ids;
    std::map<int, size_t> depth;
    for (size_t q = 0; q < code.size(); ++q) {
        const std::string pipe = m.pipeOf(code[q]);
        auto it = ids.find(pipe);
        if (it == ids.end()) {
            const int id = pipe.empty() ? -1 : int(tessel::sim::Name(pipe).id());
            it = ids.emplace(pipe, id).first;
            auto qd = m.queueDepth.find(pipe);
            depth[id] = size_t(std::max(1, qd == m.queueDepth.end() ? 32 : qd->second));
        }
        pipeOfPc[q] = it->second;
    }
    const int scalarId = int(tessel::sim::Name(m.scalarPipe).id());
    auto fail = [&](const std::string &why) {
        m_ok = false;
        m_failure = why;
        m_spans.clear();
        m_queued.clear();
        m_until.clear();
    };
    for (auto &[id, c] : cores) {
        std::vector<Span> &spans = m_spans[id];
        uint64_t fe = 0;
        // The straight-line code [from, to) the front end issued between two scalar instructions:
        // Yes, No, or Unrecorded (it would be, but the trace stops before those instructions ran).
        enum class Fit { Yes, No, Unrecorded };
        auto fits = [&](uint32_t from, uint32_t to) {
            if (from > to || to > code.size()) {
                return Fit::No;
            }
            for (uint32_t q = from; q < to; ++q) {
                if (pipeOfPc[q] < 0 || pipeOfPc[q] == scalarId) {
                    return Fit::No;
                }
                const auto &evs = c.pipes[uint16_t(pipeOfPc[q])];
                const size_t k = c.next[uint16_t(pipeOfPc[q])];
                if (q == from && k < evs.size() && trace[evs[k]].pc != q) {
                    return Fit::No;
                }
            }
            return Fit::Yes;
        };
        // Issues [from, to): an instruction the trace stops before is still issued (its pipe
        // is known), as long as the one that must leave its queue first was recorded.
        auto issue = [&](uint32_t from, uint32_t to) {
            for (uint32_t q = from; q < to; ++q) {
                const uint16_t pipe = uint16_t(pipeOfPc[q]);
                const auto &evs = c.pipes[pipe];
                const size_t k = c.next[pipe]++;
                if (k < evs.size() && trace[evs[k]].pc != q) {
                    return Fit::No;
                }
                const size_t d = depth[pipe];
                if (k >= d && k - d >= evs.size()) {
                    return Fit::Unrecorded;
                }
                uint64_t ready = fe;
                int64_t blocker = -1;
                if (k >= d && leftQueue(trace[evs[k - d]]) > fe) {
                    blocker = int64_t(evs[k - d]);
                    ready = leftQueue(trace[evs[k - d]]);
                }
                if (ready > fe) {
                    spans.push_back({fe, ready, true, 0, blocker});
                }
                if (k < evs.size()) {
                    m_queued[evs[k]] = ready;
                }
                if (!spans.empty() && !spans.back().stall && spans.back().end == ready) {
                    spans.back().end = ready + m.issueCycles;
                    spans.back().issued++;
                } else {
                    spans.push_back({ready, ready + m.issueCycles, false, 1, -1});
                }
                fe = ready + m.issueCycles;
            }
            return Fit::Yes;
        };
        uint32_t pc = 0;
        int64_t branch = -1; // the last scalar event, when it was a branch (two ways on)
        for (size_t si : c.scalar) {
            const TraceEvent &s = trace[si];
            if (s.pc >= code.size() || code[s.pc].op != s.op) {
                fail("the program does not match the trace");
                return;
            }
            uint32_t from = pc;
            if (branch >= 0) {
                const tessel::isa::Instr &b = code[trace[size_t(branch)].pc];
                const uint32_t taken = uint32_t(std::max<int64_t>(0, b.imm));
                const bool fall = b.op != Op::JMP && fits(pc, s.pc) != Fit::No;
                from = fall ? pc : taken;
            }
            Fit f = fits(from, s.pc);
            if (f == Fit::Yes) {
                f = issue(from, s.pc);
            }
            if (f == Fit::Unrecorded) {
                // A trace that stops (the trace cap, a run still going): replayed up to here.
                m_until[id] = fe;
                m_complete = false;
                break;
            }
            if (f == Fit::No) {
                fail("cannot replay the front end before pc " + std::to_string(s.pc));
                return;
            }
            if (s.start != fe) {
                fail("the replay reaches pc " + std::to_string(s.pc) + " at cycle " +
                     std::to_string(fe) + ", the trace at " + std::to_string(s.start));
                return;
            }
            fe = s.end;
            pc = s.pc + 1;
            branch = isBranch(s.op) ? int64_t(si) : -1;
            m_until[id] = fe;
        }
    }
    m_ok = true;
}

uint64_t FrontEnd::until(int core) const {
    auto it = m_until.find(core);
    return it == m_until.end() ? UINT64_MAX : it->second;
}

const std::vector<FrontEnd::Span> &FrontEnd::spansOf(int core) const {
    static const std::vector<Span> none;
    auto it = m_spans.find(core);
    return it == m_spans.end() ? none : it->second;
}

namespace {
uint64_t overlap(const CycleSpan &s, uint64_t t0, uint64_t t1) {
    const uint64_t a = std::max(s.start, t0), b = std::min(s.end, t1);
    return b > a ? b - a : 0;
}
} // namespace

const PipeRangeStats *RangeSummary::pipe(const std::string &name, int core) const {
    for (const auto &p : pipes) {
        if (p.pipe == name && p.core == core) {
            return &p;
        }
    }
    return nullptr;
}

const EdgeRangeStats *RangeSummary::edge(const std::string &src, const std::string &dst,
                                         int core) const {
    for (const auto &e : edges) {
        if (e.src == src && e.dst == dst && e.core == core) {
            return &e;
        }
    }
    return nullptr;
}

RangeSummary summarizeRange(const std::vector<TraceEvent> &events, uint64_t t0, uint64_t t1,
                            const TraceMachine &m, const FrontEnd *fe) {
    const bool replayed = fe && fe->ok();
    RangeSummary r;
    r.t0 = t0;
    r.t1 = std::max(t0, t1);
    struct PipeState {
        size_t index;
        uint64_t prevEnd = 0;
    };
    std::map<std::pair<int, uint16_t>, PipeState> pipes; // (core, pipe name id)
    std::map<std::tuple<int, uint16_t, uint16_t, uint16_t>, size_t> edges;
    for (size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &e = events[i];
        auto key = std::make_pair(int(e.core), e.pipe.id());
        auto it = pipes.find(key);
        if (it == pipes.end()) {
            it = pipes.emplace(key, PipeState{r.pipes.size()}).first;
            PipeRangeStats s;
            s.core = e.core;
            s.pipe = e.pipe.str();
            r.pipes.push_back(s);
        }
        PipeState &ps = it->second;
        PipeRangeStats &s = r.pipes[ps.index];
        const EventParts parts =
            splitEvent(e, ps.prevEnd, m, replayed ? fe->queuedAt(i) : UINT64_MAX);
        if (e.pipe == m.scalarPipe) {
            // The front end between two traced events where it was not replayed: counted as
            // issuing (busy).
            const uint64_t from = replayed ? std::max(ps.prevEnd, fe->until(e.core)) : ps.prevEnd;
            s.busy += overlap({from, e.start}, r.t0, r.t1);
        }
        ps.prevEnd = std::max(ps.prevEnd, e.end);
        const uint64_t busy = overlap(parts.busy, r.t0, r.t1),
                       stall = overlap(parts.stall, r.t0, r.t1);
        s.busy += busy;
        s.stall += stall;
        const bool inRange =
            busy + stall > 0 || (e.start == e.end && e.start >= r.t0 && e.start < r.t1);
        if (inRange) {
            s.events++;
        }
        // Bytes of a DMA in proportion to the part of its transfer inside the range (all of
        // a zero-length one when it starts inside).
        const uint64_t len = parts.busy.length();
        const bool moved = len > 0 ? busy > 0 : e.start >= r.t0 && e.start < r.t1;
        if (e.op != Op::DMA || !moved) {
            continue;
        }
        auto ekey = std::make_tuple(int(e.core), e.pipe.id(), e.src.id(), e.dst.id());
        auto eit = edges.find(ekey);
        if (eit == edges.end()) {
            eit = edges.emplace(ekey, r.edges.size()).first;
            EdgeRangeStats es;
            es.core = e.core;
            es.pipe = e.pipe.str();
            es.src = e.src.str();
            es.dst = e.dst.str();
            es.engine = m.engineOf(es.pipe, es.src, es.dst);
            r.edges.push_back(es);
        }
        EdgeRangeStats &es = r.edges[eit->second];
        es.bytes += len > 0 ? double(e.bytes) * double(busy) / double(len) : double(e.bytes);
        es.transfers++;
    }
    if (replayed) {
        // The front end's issue slots and full-queue waits between its traced events.
        for (auto &s : r.pipes) {
            if (s.pipe != m.scalarPipe) {
                continue;
            }
            for (const FrontEnd::Span &f : fe->spansOf(s.core)) {
                (f.stall ? s.stall : s.busy) += overlap({f.start, f.end}, r.t0, r.t1);
            }
        }
    }
    const uint64_t span = r.t1 - r.t0;
    for (auto &s : r.pipes) {
        s.idle = span > s.busy + s.stall ? span - s.busy - s.stall : 0;
    }
    return r;
}

// ---- WaitLinks ---------------------------------------------------------------

WaitLinks::WaitLinks(const tessel::sim::SimReport &report, const tessel::isa::Program *program) {
    if (!program) {
        return;
    }
    const auto &trace = report.trace;
    // The scalar pipe is the one BARRIER / END run on.
    std::string scalarPipe = "S";
    for (const auto &e : trace) {
        if (e.op == Op::BARRIER || e.op == Op::END) {
            scalarPipe = e.pipe.str();
            break;
        }
    }
    std::map<std::tuple<int, uint8_t, uint8_t, uint8_t>, std::deque<size_t>>
        fired;                                              // flag -> set_flag events
    std::map<std::pair<int, uint16_t>, int64_t> lastOnPipe; // (core, pipe) -> last event recorded
    std::unordered_map<size_t, int64_t>
        beforeSet; // set_flag event -> the event before it on its pipe
    for (size_t i = 0; i < trace.size(); ++i) {
        const TraceEvent &e = trace[i];
        if (e.pc >= program->code.size() || program->code[e.pc].op != e.op) {
            continue; // not this program
        }
        const tessel::isa::Instr &in = program->code[e.pc];
        auto pipeKey = std::make_pair(int(e.core), e.pipe.id());
        if (e.op == Op::SET_FLAG) {
            fired[{int(e.core), in.src_pipe, in.dst_pipe, in.event}].push_back(i);
            auto lp = lastOnPipe.find(pipeKey);
            beforeSet[i] = lp == lastOnPipe.end() ? -1 : lp->second;
        } else if (e.op == Op::WAIT_FLAG) {
            Link l;
            l.what = "flag " + flagPipeName(in.src_pipe, scalarPipe) + " -> " +
                     flagPipeName(in.dst_pipe, scalarPipe) + " #" + std::to_string(int(in.event));
            auto &q = fired[{int(e.core), in.src_pipe, in.dst_pipe, in.event}];
            if (!q.empty()) {
                l.setEvent = int64_t(q.front());
                l.lastEvent = beforeSet[q.front()];
                q.pop_front();
            }
            m_links[i] = l;
        } else if (e.op == Op::BARRIER || e.op == Op::END) {
            const bool all = e.op == Op::END || in.src_pipe == uint8_t(tessel::isa::Pipe::ALL);
            const std::string one = all ? std::string() : flagPipeName(in.src_pipe, scalarPipe);
            Link l;
            l.what = all ? "every pipe to drain" : one + " to drain";
            for (const auto &kv : lastOnPipe) {
                const TraceEvent &last = trace[size_t(kv.second)];
                if (kv.first.first != int(e.core) || last.pipe == scalarPipe ||
                    (!all && last.pipe != one)) {
                    continue;
                }
                if (l.lastEvent < 0 || last.end > trace[size_t(l.lastEvent)].end) {
                    l.lastEvent = kv.second;
                }
            }
            m_links[i] = l;
        }
        lastOnPipe[pipeKey] = int64_t(i);
    }
}

const WaitLinks::Link *WaitLinks::of(size_t index) const {
    auto it = m_links.find(index);
    return it == m_links.end() ? nullptr : &it->second;
}

namespace {
std::string eventWords(const TraceEvent &e) {
    std::ostringstream os;
    os << tessel::isa::op_info(e.op).mnemonic;
    if (!e.src.empty() || !e.dst.empty()) {
        os << " " << e.src.str() << " -> " << e.dst.str();
    }
    return os.str();
}
} // namespace

std::string WaitLinks::describe(const tessel::sim::SimReport &report, size_t index) const {
    if (index >= report.trace.size()) {
        return {};
    }
    const TraceEvent &e = report.trace[index];
    const Link *l = of(index);
    std::ostringstream os;
    if (!l) {
        if (e.op == Op::WAIT_FLAG) {
            os << "waits for a flag (which one: the program that ran is not at hand)";
        } else if (e.op == Op::BARRIER || e.op == Op::END) {
            os << "waits for the pipes to drain";
        } else if (e.op == Op::LD || e.op == Op::ST) {
            os << "waits out the memory's latency of this " << tessel::isa::op_info(e.op).mnemonic
               << " (the simulator counts it neither busy nor stall)";
        }
        return os.str();
    }
    os << "waits for " << l->what;
    if (l->setEvent >= 0) {
        const TraceEvent &s = report.trace[size_t(l->setEvent)];
        os << ", set by " << s.pipe.str() << " at cycle " << s.start;
        if (l->lastEvent >= 0) {
            const TraceEvent &p = report.trace[size_t(l->lastEvent)];
            os << " after " << eventWords(p) << " (cycles " << p.start << " - " << p.end << ")";
        }
    } else if (e.op == Op::WAIT_FLAG) {
        os << " (its set_flag is not in the trace)";
    } else if (l->lastEvent >= 0) {
        const TraceEvent &p = report.trace[size_t(l->lastEvent)];
        os << "; the last to finish: " << p.pipe.str() << " " << eventWords(p) << " (cycles "
           << p.start << " - " << p.end << ")";
    }
    return os.str();
}

} // namespace tessel::ide

// ---- CriticalPath ------------------------------------------------------------

namespace tessel::ide {

std::map<std::string, uint64_t> CriticalPath::cyclesIn(uint64_t t0, uint64_t t1) const {
    std::map<std::string, uint64_t> out;
    for (const PathStep &s : steps) {
        const uint64_t o = overlap({s.start, s.end}, t0, t1);
        if (o > 0) {
            out[s.pipe] += o;
        }
    }
    return out;
}

std::string CriticalPath::describe() const {
    std::ostringstream os;
    if (steps.empty()) {
        return "no critical path (no trace)";
    }
    os << "critical path " << length() << " cycles (" << start() << " - " << end() << "):";
    std::vector<std::pair<uint64_t, std::string>> order;
    for (const auto &[pipe, c] : cycles) {
        order.push_back({c, pipe});
    }
    std::sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    const char *sep = " ";
    for (const auto &[c, pipe] : order) {
        if (c == 0) {
            continue;
        }
        os << sep << pipe << " " << (length() ? (200 * c + length()) / (2 * length()) : 0) << "%";
        sep = ", ";
    }
    if (latency > 0 || unexplained > 0) {
        os << " (of which latency " << latency << ", unexplained " << unexplained << ")";
    }
    return os.str();
}

namespace {

/** The critical-path walk (criticalPath in TimeRange.h says what it matches and in what order). */
class PathWalker {
public:
    PathWalker(const tessel::sim::SimReport &r, const WaitLinks &links, const FrontEnd *fe,
               const TraceMachine &m)
        : t_(r.trace), links_(links), fe_(fe && fe->ok() ? fe : nullptr), m_(m) {
        prev_.assign(t_.size(), -1);
        std::map<std::pair<int, uint16_t>, int64_t> last;
        for (size_t i = 0; i < t_.size(); ++i) {
            const TraceEvent &e = t_[i];
            auto key = std::make_pair(int(e.core), e.pipe.id());
            auto it = last.find(key);
            prev_[i] = it == last.end() ? -1 : it->second;
            last[key] = int64_t(i);
            if (e.pipe == m_.scalarPipe && e.end > e.start) {
                s_[e.core].push_back({e.start, e.end, Piece::Traced, int64_t(i)});
            }
        }
        for (auto &[core, pieces] : s_) {
            std::vector<Piece> extra;
            if (fe_) {
                for (const FrontEnd::Span &f : fe_->spansOf(core)) {
                    if (f.end > f.start) {
                        extra.push_back({f.start, f.end, f.stall ? Piece::Stall : Piece::Issue,
                                         f.stall ? f.blockedBy : -1});
                    }
                }
            } else {
                // Without the replay the gaps between traced scalar events count as issuing.
                uint64_t at = 0;
                for (const Piece &p : pieces) {
                    if (p.start > at) {
                        extra.push_back({at, p.start, Piece::Issue, -1});
                    }
                    at = std::max(at, p.end);
                }
            }
            pieces.insert(pieces.end(), extra.begin(), extra.end());
            std::sort(pieces.begin(), pieces.end(),
                      [](const Piece &a, const Piece &b) { return a.end < b.end; });
        }
        budget_ = 8 * (t_.size() + 16);
        for (const auto &kv : s_) {
            budget_ += 8 * kv.second.size();
        }
    }

    CriticalPath run() {
        CriticalPath out;
        if (t_.empty()) {
            return out;
        }
        size_t last = 0;
        for (size_t i = 0; i < t_.size(); ++i) {
            if (t_[i].end >= t_[last].end) {
                last = i;
            }
        }
        State st{State::AtEnd, int64_t(last), t_[last].core, t_[last].end};
        while (st.mode != State::Stop && budget_-- > 0) {
            st = step(st);
        }
        std::reverse(rev_.begin(), rev_.end());
        out.steps = std::move(rev_);
        if (!out.steps.empty()) {
            out.steps.front().via.clear(); // where the walk stopped
        }
        for (const PathStep &s : out.steps) {
            out.cycles[s.pipe] += s.end - s.start;
            if (s.kind == PathStep::Kind::Latency) {
                out.latency += s.end - s.start;
            } else if (s.kind == PathStep::Kind::Unexplained) {
                out.unexplained += s.end - s.start;
            }
        }
        return out;
    }

private:
    struct Piece {
        uint64_t start, end;
        enum Kind { Traced, Issue, Stall } kind;
        int64_t event; // Traced: the event; Stall: the event whose leaving the queue made room
    };
    struct State {
        enum Mode { AtEnd, AtStart, OnScalar, Stop } mode;
        int64_t event;
        int core;
        uint64_t t;
    };
    static constexpr State kStop{State::Stop, -1, 0, 0};

    const std::vector<TraceEvent> &t_;
    const WaitLinks &links_;
    const FrontEnd *fe_;
    const TraceMachine &m_;
    std::vector<int64_t> prev_;           // per event: the previous one of its core and pipe
    std::map<int, std::vector<Piece>> s_; // per core: the scalar front end's timeline, by end
    std::vector<PathStep> rev_;           // the path, last step first
    size_t budget_ = 0;

    void add(PathStep::Kind k, int64_t ev, int core, const std::string &pipe, uint64_t a,
             uint64_t b) {
        PathStep s;
        s.kind = k;
        s.event = ev;
        s.core = core;
        s.pipe = pipe;
        s.start = a;
        s.end = std::max(a, b);
        rev_.push_back(s);
    }
    void via(const char *why) {
        if (!rev_.empty()) {
            rev_.back().via = why;
        }
    }
    bool isScalar(const TraceEvent &e) const { return e.pipe == m_.scalarPipe; }

    State step(const State &st) {
        switch (st.mode) {
        case State::AtEnd:
            return atEnd(size_t(st.event));
        case State::AtStart:
            return atStart(size_t(st.event));
        case State::OnScalar:
            return onScalar(st.core, st.t);
        default:
            return kStop;
        }
    }

    /** The path has reached the end of event i: cover it, then explain how it began. */
    State atEnd(size_t i) {
        const TraceEvent &e = t_[i];
        if (isScalar(e)) {
            return {State::OnScalar, -1, e.core, e.end};
        }
        if (e.op == Op::WAIT_FLAG && e.end > e.start) {
            return released(i, e.end);
        }
        add(PathStep::Kind::Busy, int64_t(i), e.core, e.pipe.str(), e.start, e.end);
        return {State::AtStart, int64_t(i), e.core, e.start};
    }

    /** Explains the start of event i (not on the scalar pipe); the last step added begins there. */
    State atStart(size_t i) {
        const TraceEvent &e = t_[i];
        const int64_t p = prev_[i];
        const uint64_t q = fe_ ? fe_->queuedAt(i) : UINT64_MAX;
        if (p >= 0 && t_[size_t(p)].end == e.start) {
            via("pipe");
            return {State::AtEnd, p, e.core, e.start};
        }
        if (q == e.start) {
            via("front end");
            return {State::OnScalar, -1, e.core, e.start};
        }
        if (e.op == Op::DMA && e.stall == "dma_outstanding") {
            const int64_t d = slotFreedBy(i);
            if (d >= 0) { // an earlier transfer became visible: its slot freed
                via("dma slot");
                add(PathStep::Kind::Latency, d, e.core, e.pipe.str(), t_[size_t(d)].end, e.start);
                via("latency");
                return {State::AtEnd, d, e.core, t_[size_t(d)].end};
            }
        }
        // Nothing traced matches: [ready, start) is unexplained (see the header).
        const uint64_t pe = p >= 0 ? t_[size_t(p)].end : 0;
        const bool queueLater = q != UINT64_MAX && (p < 0 || q > pe);
        const uint64_t ready = queueLater ? q : pe;
        if ((p < 0 && q == UINT64_MAX) || ready >= e.start) {
            return kStop;
        }
        via("unexplained");
        add(PathStep::Kind::Unexplained, int64_t(i), e.core, e.pipe.str(), ready, e.start);
        via(queueLater ? "front end" : "pipe");
        return queueLater ? State{State::OnScalar, -1, e.core, q}
                          : State{State::AtEnd, p, e.core, pe};
    }

    /** The earlier DMA of i's pipe whose end + latency (its engine's, or L2's) is i's start. */
    int64_t slotFreedBy(size_t i) const {
        const TraceEvent &e = t_[i];
        uint64_t most = m_.l2Latency;
        for (const auto &kv : m_.engineLatency) {
            most = std::max(most, kv.second);
        }
        int steps = 0;
        for (int64_t k = prev_[i]; k >= 0 && steps < 256; k = prev_[size_t(k)], ++steps) {
            const TraceEvent &d = t_[size_t(k)];
            if (d.op != Op::DMA) {
                continue;
            }
            if (d.end + most < e.start) {
                break; // a pipe's transfers end in order: the earlier ones became visible earlier
            }
            auto it = m_.engineLatency.find(m_.engineOf(d.pipe.str(), d.src.str(), d.dst.str()));
            if (it == m_.engineLatency.end()) {
                continue;
            }
            if (d.end + it->second == e.start ||
                (m_.l2Latency > 0 && d.end + std::min(it->second, m_.l2Latency) == e.start)) {
                return k;
            }
        }
        return -1;
    }

    /** Wait event i (it waited) was released at cycle r: follow its flag or its drain. */
    State released(size_t i, uint64_t r) {
        const TraceEvent &e = t_[i];
        const bool barrier = e.op == Op::BARRIER || e.op == Op::END;
        add(PathStep::Kind::Released, int64_t(i), e.core, e.pipe.str(), r, r);
        via(barrier ? "barrier" : "flag");
        const WaitLinks::Link *l = links_.of(i);
        if (!l) {
            return kStop;
        }
        if (!barrier) {
            if (l->setEvent < 0) {
                return kStop;
            }
            const size_t sv = size_t(l->setEvent);
            const TraceEvent &s = t_[sv];
            if (s.start == r) { // the flag fired as the set_flag ran
                via("flag");
                add(PathStep::Kind::Released, int64_t(sv), s.core, s.pipe.str(), r, r);
                return isScalar(s) ? State{State::OnScalar, -1, s.core, r}
                                   : State{State::AtStart, int64_t(sv), s.core, r};
            }
            if (s.start > r) {
                return kStop; // not this trace's order
            }
            // Fired later than the set_flag ran: when the producer's work completed.
            int64_t k = prev_[sv];
            while (k >= 0 &&
                   (t_[size_t(k)].op == Op::WAIT_FLAG || t_[size_t(k)].op == Op::SET_FLAG)) {
                k = prev_[size_t(k)];
            }
            if (k < 0 || t_[size_t(k)].end > r) {
                return kStop;
            }
            return producer(size_t(k), r);
        }
        if (l->lastEvent < 0 || t_[size_t(l->lastEvent)].end > r) {
            return kStop;
        }
        return producer(size_t(l->lastEvent), r);
    }

    /** The producer k completed at r (its end, or later by its latency). */
    State producer(size_t k, uint64_t r) {
        const TraceEvent &pe = t_[k];
        if (pe.end < r) {
            add(PathStep::Kind::Latency, int64_t(k), pe.core, pe.pipe.str(), pe.end, r);
            via("latency");
        }
        return {State::AtEnd, int64_t(k), pe.core, pe.end};
    }

    /** The path has reached cycle t in the scalar front end's timeline of `core`. */
    State onScalar(int core, uint64_t t) {
        if (t == 0) {
            return kStop;
        }
        const auto &pieces = s_[core];
        auto it = std::lower_bound(pieces.begin(), pieces.end(), t,
                                   [](const Piece &p, uint64_t v) { return p.end < v; });
        if (it == pieces.end() || it->start >= t) {
            return kStop;
        }
        const Piece &pc = *it;
        const std::string &S = m_.scalarPipe;
        if (pc.kind == Piece::Issue) {
            add(PathStep::Kind::Issue, -1, core, S, pc.start, t);
            via("front end");
            return {State::OnScalar, -1, core, pc.start};
        }
        if (pc.kind == Piece::Stall) {
            if (pc.event < 0 || t != pc.end) {
                return kStop;
            }
            const size_t b = size_t(pc.event);
            const TraceEvent &be = t_[b];
            if (be.op == Op::WAIT_FLAG && be.end > be.start) {
                via("queue room");
                return released(b, be.end);
            }
            via("queue room");
            add(PathStep::Kind::Released, int64_t(b), be.core, be.pipe.str(), t, t);
            return {State::AtStart, int64_t(b), be.core, be.start};
        }
        const size_t j = size_t(pc.event);
        const TraceEvent &e = t_[j];
        const EventParts parts = splitEvent(e, 0, m_);
        const bool wait = e.op == Op::WAIT_FLAG || e.op == Op::BARRIER || e.op == Op::END;
        if (wait && !parts.stall.empty() && t > parts.stall.start) {
            const uint64_t r = std::min(t, parts.stall.end);
            if (t > r) {
                add(PathStep::Kind::Issue, int64_t(j), core, S, r, t);
                via(e.op == Op::WAIT_FLAG ? "flag" : "barrier");
            }
            return released(j, r);
        }
        add(PathStep::Kind::Busy, int64_t(j), core, S, e.start, t);
        via("pipe");
        return {State::OnScalar, -1, core, e.start};
    }
};

} // namespace

CriticalPath criticalPath(const tessel::sim::SimReport &report, const WaitLinks &links,
                          const FrontEnd *fe, const TraceMachine &m) {
    return PathWalker(report, links, fe, m).run();
}

} // namespace tessel::ide
