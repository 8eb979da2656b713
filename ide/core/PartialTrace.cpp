#include "ide/core/PartialTrace.h"

#include <algorithm>

namespace tessel::ide {

void PartialTrace::event(const tessel::sim::TraceEvent &e) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_events.push_back(e);
    m_events.back().num_accesses = 0; // the accesses stay in the simulator's report
    m_events.back().first_access = 0;
    m_count.store(m_events.size(), std::memory_order_relaxed);
}

std::shared_ptr<const tessel::RunReport> PartialTrace::snapshot(const std::string &generator,
                                                                const std::string &note,
                                                                size_t maxEvents) const {
    auto r = std::make_shared<tessel::RunReport>();
    r->generator = generator;
    tessel::sim::SimReport sim;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        const size_t n = std::min(maxEvents, m_events.size());
        sim.trace.assign(m_events.begin(), m_events.begin() + static_cast<std::ptrdiff_t>(n));
    }
    int cores = 1;
    for (const auto &e : sim.trace) {
        sim.cycles = std::max(sim.cycles, e.end);
        cores = std::max(cores, int(e.core) + 1);
    }
    sim.cores = cores;
    sim.trace_events = sim.trace_recorded = sim.trace.size();
    r->sim = std::move(sim);
    tessel::Diagnostic d;
    d.severity = tessel::Diagnostic::Note;
    d.message = note;
    r->diagnostics.push_back(d);
    return r;
}

} // namespace tessel::ide
