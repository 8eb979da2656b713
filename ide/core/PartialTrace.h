#ifndef TESSEL_IDE_CORE_PARTIALTRACE_H
#define TESSEL_IDE_CORE_PARTIALTRACE_H

// The trace of a run while it runs: the simulator hands each recorded event to
// this sink (CompileRequest::trace_sink) on the worker thread; the GUI thread
// takes snapshots of it as a RunReport the timeline can draw — live, every half
// second while the run is short enough to redraw cheaply, and once more when a
// run stops without a result (a budget, Cancel, an error), so that what ran
// before it stopped can be seen. Plain data, no widgets.

#include "dsl/Compile.h"

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessel::ide {

class PartialTrace : public tessel::sim::TraceSink {
public:
    void event(const tessel::sim::TraceEvent &e) override;
    /** Events recorded so far. */
    size_t size() const { return m_count.load(std::memory_order_relaxed); }
    /** A report holding the events so far (at most `maxEvents` of them, the first ones): its
     * sim has the trace, the cycle the last one ends and the cores seen; `note` is its one
     * diagnostic (a Note). No busy, edge or instruction figures: those come with the run's end. */
    std::shared_ptr<const tessel::RunReport> snapshot(const std::string &generator,
                                                      const std::string &note,
                                                      size_t maxEvents = ~size_t(0)) const;

private:
    mutable std::mutex m_mutex;
    std::vector<tessel::sim::TraceEvent> m_events;
    std::atomic<size_t> m_count{0};
};

} // namespace tessel::ide

#endif
