#include "ide/core/RunComparison.h"

#include <cmath>
#include <map>

namespace tessel::ide {

int MetricDelta::verdict() const {
    if (!hasA || !hasB) {
        return 0;
    }
    const double tol = 0.01 * std::max(std::abs(a), std::abs(b));
    if (std::abs(b - a) <= tol) {
        return 0;
    }
    return (b < a) == lowerIsBetter ? 1 : -1;
}

namespace {

// The metrics of one run, by name, in the order they are listed.
struct Named {
    std::vector<std::pair<QString, std::pair<double, bool>>>
        values; // name -> value, lower is better
    void add(const QString &n, double v, bool lowerIsBetter = true) {
        values.push_back({n, {v, lowerIsBetter}});
    }
};

Named metricsOf(const tessel::RunReport &r) {
    Named m;
    if (r.cycles) {
        m.add(QStringLiteral("cycles"), double(*r.cycles));
    }
    if (r.efficiency) {
        m.add(QStringLiteral("efficiency"), *r.efficiency, false);
    }
    if (!r.sim) {
        return m;
    }
    const auto &s = *r.sim;
    m.add(QStringLiteral("instructions"), double(s.instructions));
    // Per pipe, summed over cores.
    std::map<std::string, std::pair<double, double>> pipes;
    std::vector<std::string> order;
    for (const auto &p : s.pipes) {
        if (!pipes.count(p.pipe)) {
            order.push_back(p.pipe);
        }
        pipes[p.pipe].first += double(p.busy_cycles);
        pipes[p.pipe].second += double(p.stall_cycles);
    }
    for (const auto &p : order) {
        m.add(QStringLiteral("busy %1").arg(QString::fromStdString(p)), pipes[p].first);
    }
    for (const auto &p : order) {
        m.add(QStringLiteral("stall %1").arg(QString::fromStdString(p)), pipes[p].second);
    }
    for (const auto &e : s.edges) {
        m.add(QStringLiteral("bytes %1 %2->%3")
                  .arg(QString::fromStdString(e.engine), QString::fromStdString(e.src),
                       QString::fromStdString(e.dst)),
              double(e.bytes));
    }
    if (r.roofline && r.roofline->valid) {
        for (const auto &roof : r.roofline->roofs) {
            // The share of the run the resource needs: for a fixed amount of work, the higher
            // the better (the run is closer to that roof).
            m.add(QStringLiteral("speed of light %1").arg(QString::fromStdString(roof.name)),
                  roof.utilisation, false);
        }
    }
    return m;
}

} // namespace

RunComparison compareRuns(const tessel::RunReport &a, const tessel::ScheduleSpec &sa,
                          const tessel::RunReport &b, const tessel::ScheduleSpec &sb) {
    RunComparison c;
    const Named ma = metricsOf(a), mb = metricsOf(b);
    std::map<QString, size_t> at;
    for (const auto &[name, v] : ma.values) {
        MetricDelta d;
        d.name = name;
        d.hasA = true;
        d.a = v.first;
        d.lowerIsBetter = v.second;
        at[name] = size_t(c.metrics.size());
        c.metrics.push_back(d);
    }
    for (const auto &[name, v] : mb.values) {
        auto it = at.find(name);
        if (it == at.end()) {
            MetricDelta d;
            d.name = name;
            d.lowerIsBetter = v.second;
            at[name] = size_t(c.metrics.size());
            c.metrics.push_back(d);
            it = at.find(name);
        }
        c.metrics[int(it->second)].hasB = true;
        c.metrics[int(it->second)].b = v.first;
    }
    if (a.roofline && a.roofline->valid) {
        c.bindingA = QString::fromStdString(a.roofline->binding);
    }
    if (b.roofline && b.roofline->valid) {
        c.bindingB = QString::fromStdString(b.roofline->binding);
    }
    c.schedule = compareSpecs(sa, sb);
    return c;
}

} // namespace tessel::ide
