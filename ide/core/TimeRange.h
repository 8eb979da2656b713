#ifndef TESSEL_IDE_CORE_TIMERANGE_H
#define TESSEL_IDE_CORE_TIMERANGE_H

// What the pipes did in a range of simulated cycles, from the simulator's trace
// (plain data, no widgets; the timeline view paints and summarises with it,
// tests/ide/test_ide_timeline.cpp checks it against the SimReport):
//  - splitEvent: the stall part and the busy part of one trace event;
//  - summarizeRange: per pipe busy / stall / idle cycles and per DMA edge the
//    bytes moved in [t0, t1), events overlapping an end clipped proportionally;
//  - FrontEnd: the scalar front end's issue slots and full-queue waits, which
//    are not trace events, replayed from the trace and the program;
//  - WaitLinks: what each waiting event waited for (the flag and the set_flag
//    that released it, the pipe a barrier drained);
//  - criticalPath: the chain of events that determines the run's length (below).
//
// How the trace tells executing from waiting (npu_target/sim/Simulator.cpp):
//  - WAIT_FLAG on a pipe other than the scalar one is recorded from the cycle it
//    reached the head of its queue to the cycle the flag let it go, and the
//    pipe does nothing else meanwhile: the whole event is a stall.
//  - On the scalar pipe (the front end) WAIT_FLAG, BARRIER and SET_FLAG are
//    recorded from the cycle the front end reached them to the end of their
//    issue slot: [start, end - issue) is the wait, the last `issue` cycles the
//    issue. END is recorded up to the drain, all wait (its issue slot lies past
//    the end of the run).
//  - The front end also issues every other instruction (one `issue` slot each,
//    in the simulator's busy count) and waits while the target pipe's queue is
//    full (in its stall count); neither is a trace event. FrontEnd replays them
//    from the trace and the program: the straight-line code between two traced
//    scalar instructions is what was issued between them, and the n-th
//    instruction of a pipe with queue depth D could be queued once the (n-D)-th
//    had left the queue (its start; a WAIT_FLAG's end). The replay is checked
//    against every traced front-end event; without the program, or if the check
//    fails, the gaps are counted as busy (issuing) and the replay is not used.
//  - A DMA that carries the stall reason "dma_outstanding" started late because
//    the engine had max_outstanding descriptors in flight: its wait runs from
//    when it could have started (the end of the pipe's previous event, or later
//    if it was queued later: FrontEnd::queuedAt) to its start. Without the
//    replay the queue time is unknown and the span starts at the previous
//    event's end (an upper bound).
//  - A scalar LD/ST is recorded up to the end of its memory latency, which
//    holds the front end: the issue slot is busy, the latency a stall (the
//    simulator counts the latency neither busy nor stall).
//  - Everything else (DMA transfers, MMAD with its fill/drain, vector ops with
//    bank conflicts, other scalar ops) is busy for its whole span.

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/isa/Program.h"
#include "npu_target/sim/Simulator.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessel::ide {

/** What the splitting needs to know about the machine. */
struct TraceMachine {
    std::string scalarPipe = "S";
    uint64_t issueCycles = 1;
    /** (engine, pipe, src, dst) of every engine edge, to name the engine of a DMA event. */
    struct Edge {
        std::string engine, pipe, src, dst;
    };
    std::vector<Edge> edges;
    std::map<std::string, int> queueDepth; // pipe -> instructions its queue holds (32 when absent)
    std::vector<std::string> enginePipe;   // per engine index: its pipe
    std::string matrixPipe = "M", vectorPipe = "V";
    /** Per engine: cycles after a transfer's end until its data is visible (and its outstanding
     * slot frees); l2Latency: the shorter one of a transfer that hits L2 (0: no L2). */
    std::map<std::string, uint64_t> engineLatency;
    uint64_t l2Latency = 0;
    /** The pipe an instruction queues on (as the simulator's pipe_of_instr; "" when unknown). */
    std::string pipeOf(const tessel::isa::Instr &in) const;
    static TraceMachine of(const tessel::ArchSpec &arch);
    /** The engine that moves src -> dst on `pipe` ("" when the arch has none). */
    std::string engineOf(const std::string &pipe, const std::string &src,
                         const std::string &dst) const;
};

/** [start, end) in cycles; empty when end <= start. */
struct CycleSpan {
    uint64_t start = 0, end = 0;
    bool empty() const { return end <= start; }
    uint64_t length() const { return empty() ? 0 : end - start; }
};

/** One event's cycles: the wait before or instead of its work, then the work. */
struct EventParts {
    CycleSpan stall;
    CycleSpan busy;
    bool derivedStall = false; // a DMA's wait for an outstanding slot: derived, not a traced span
};

/** `prevEnd`: the end of the previous event of the same core and pipe (0 for the first);
 * `queued`: when the event was queued (FrontEnd::queuedAt; UINT64_MAX when unknown). */
EventParts splitEvent(const tessel::sim::TraceEvent &e, uint64_t prevEnd, const TraceMachine &m,
                      uint64_t queued = UINT64_MAX);

/** The scalar front end between its traced events, replayed (see the top of this file). */
class FrontEnd {
public:
    FrontEnd() = default;
    FrontEnd(const tessel::sim::SimReport &report, const tessel::isa::Program &program,
             const TraceMachine &m);
    /** The replay matched every traced front-end event it reached (else nothing below is known). */
    bool ok() const { return m_ok; }
    std::string failure() const { return m_failure; }
    struct Span {
        uint64_t start = 0, end = 0;
        bool stall = false;     // waiting for room in a full queue; else issuing
        uint32_t issued = 0;    // issuing: how many instructions
        int64_t blockedBy = -1; // stall: the event whose leaving the queue made room
    };
    /** Core `core`'s issue slots and full-queue waits, in time order (empty unless ok()). */
    const std::vector<Span> &spansOf(int core) const;
    /** The cycle up to which core `core` was replayed: the end of its last replayed scalar
     * event (the last one, unless a trace that stops leaves out what must leave a queue first). */
    uint64_t until(int core) const;
    /** Every recorded scalar event was replayed. */
    bool complete() const { return m_complete; }
    /** When trace event `i` (not on the scalar pipe) was queued, UINT64_MAX when unknown. */
    uint64_t queuedAt(size_t i) const { return i < m_queued.size() ? m_queued[i] : UINT64_MAX; }

private:
    bool m_ok = false, m_complete = true;
    std::string m_failure;
    std::map<int, uint64_t> m_until;
    std::map<int, std::vector<Span>> m_spans;
    std::vector<uint64_t> m_queued;
};

struct PipeRangeStats {
    int core = 0;
    std::string pipe;
    uint64_t busy = 0, stall = 0, idle = 0; // busy + stall + idle == t1 - t0
    uint64_t events = 0;                    // events overlapping the range
};

struct EdgeRangeStats {
    int core = 0;
    std::string engine, pipe, src, dst;
    double bytes = 0;       // events overlapping an end of the range count in proportion
    uint64_t transfers = 0; // DMA events overlapping the range
};

struct RangeSummary {
    uint64_t t0 = 0, t1 = 0;
    std::vector<PipeRangeStats> pipes; // in the order the pipes first appear in the trace
    std::vector<EdgeRangeStats> edges; // in the order the edges first appear
    const PipeRangeStats *pipe(const std::string &name, int core = 0) const;
    const EdgeRangeStats *edge(const std::string &src, const std::string &dst, int core = 0) const;
};

/** Per pipe busy / stall / idle cycles and per DMA edge the bytes moved in [t0, t1); with `fe`
 * (ok()) the scalar pipe's gaps and the DMAs' queue times come from its replay. */
RangeSummary summarizeRange(const std::vector<tessel::sim::TraceEvent> &events, uint64_t t0,
                            uint64_t t1, const TraceMachine &m, const FrontEnd *fe = nullptr);

/** What the waiting events of a trace waited for, when the program is at hand. */
class WaitLinks {
public:
    WaitLinks() = default;
    /** `program`: the program that ran (the event pcs index its code); null: only the stall
     * reasons. */
    WaitLinks(const tessel::sim::SimReport &report, const tessel::isa::Program *program);
    struct Link {
        std::string what;      // "flag MTE2 -> M #1", "MTE2 to drain", "every pipe to drain"
        int64_t setEvent = -1; // the set_flag event that released a WAIT_FLAG
        int64_t lastEvent =
            -1; // the producer's event just before that set_flag / the barrier's last drained event
    };
    /** The link of waiting event `index`, or null (not a wait, or not known). */
    const Link *of(size_t index) const;
    /** One line for a tooltip: "waits for flag MTE2 -> M #1, set by MTE2 at cycle 120 after dma (GM
     * -> L1)". */
    std::string describe(const tessel::sim::SimReport &report, size_t index) const;

    /** Every link, by waiting event. */
    const std::unordered_map<size_t, Link> &all() const { return m_links; }

private:
    std::unordered_map<size_t, Link> m_links;
};

/** One step of the critical path: [start, end) of the run spent on `pipe` by `event` (or by the
 * front end's issue slots, or a gap the trace does not explain), in time order; each step starts
 * where the one before it ends. */
struct PathStep {
    enum class Kind {
        Busy,        // `event` executing (its busy part; a scalar ld/st with its memory latency)
        Issue,       // the scalar front end issuing (a replayed issue span, or a traced flag /
                     // barrier's issue slot after its wait); event: the traced one or -1
        Released,    // zero length: `event` (a wait, or a set_flag / queue-room event) let go here
        Latency,     // the producer's data became visible after its transfer / mmad ended (the
                     // engine's or matrix's latency, not a trace event); pipe: the producer's
        Unexplained, // a start no traced constraint explains (a DMA waiting for a free
                     // outstanding slot, or anything else): [ready, start) on the event's pipe
    };
    Kind kind = Kind::Busy;
    int64_t event = -1;
    int core = 0;
    std::string pipe;
    uint64_t start = 0, end = 0;
    /** What matched this step's start, i.e. how the step before it led here: "pipe", "flag",
     * "barrier", "front end" (issued then), "dma slot", "queue room" (the front end's full-queue
     * wait ended when this event left its queue), "latency", "unexplained"; "" for the first step.
     */
    std::string via;
};

struct CriticalPath {
    std::vector<PathStep> steps;            // in time order, contiguous
    std::map<std::string, uint64_t> cycles; // per pipe: cycles of its steps (sum == length())
    uint64_t unexplained = 0, latency = 0;  // of which: Unexplained and Latency steps
    uint64_t start() const { return steps.empty() ? 0 : steps.front().start; }
    uint64_t end() const { return steps.empty() ? 0 : steps.back().end; }
    uint64_t length() const { return end() - start(); }
    /** Per pipe cycles of the path inside [t0, t1). */
    std::map<std::string, uint64_t> cyclesIn(uint64_t t0, uint64_t t1) const;
    /** "critical path 16366 cycles: MTE2 62%, M 20%, ..." (largest first). */
    std::string describe() const;
};

/** The critical path of a run: from the event that ends last, walking back in time. At each
 * step the current event's start (for a wait: its release) must be *matched* exactly (equal
 * cycles) by one of these constraints, tried in this order:
 *  1. pipe: the previous event of the same core and pipe ends at that cycle (the simulator's
 *     next_start: a pipe starts its next instruction when the previous one ends);
 *  2. flag / barrier: the event is a wait that waited (its stall is not empty) and its release
 *     is the set_flag's fire (WaitLinks::setEvent; the set_flag's start, or later when the
 *     producer's work was still completing: then the producer's last non-flag event before the
 *     set_flag that ends at or before the release, and the gap [its end, release) is a Latency
 *     step) or, for a barrier / END, the drain: the latest-ending last event of the drained
 *     pipes (WaitLinks::lastEvent), again with a Latency gap when it ended earlier;
 *  3. front end: the event was issued (FrontEnd::queuedAt) at that cycle, so the path goes on
 *     in the scalar front end's own timeline (traced scalar events and the replayed issue spans;
 *     a full-queue wait there goes to the event whose leaving the queue made room);
 *  4. dma slot: a DMA that waited for a free outstanding slot ("dma_outstanding") starts when
 *     an earlier DMA of its pipe became visible: that DMA's end + its engine's latency
 *     (TraceMachine::engineLatency, or the L2 latency: the trace does not say which transfers
 *     hit L2, both are tried) equals the start; the gap is a Latency step on the pipe.
 * When none matches (a DMA slot no earlier transfer's latency explains; a scalar gap without the
 * replay), the
 * walk does not stop: it records [ready, start) as an Unexplained step on the event's pipe,
 * ready being the later of the pipe predecessor's end and the queue time, and follows that
 * (the pipe predecessor, or the front end when the queue time is later). It stops at cycle 0,
 * or where nothing precedes (an event with no predecessor, no queue time and no link): the
 * path then starts at that event's start. `fe` may be null or not ok(): no front-end steps. */
CriticalPath criticalPath(const tessel::sim::SimReport &report, const WaitLinks &links,
                          const FrontEnd *fe, const TraceMachine &m);

} // namespace tessel::ide

#endif
