#ifndef TESSEL_IDE_CORE_RUNCOMPARISON_H
#define TESSEL_IDE_CORE_RUNCOMPARISON_H

// Two runs side by side (the Baseline tab): a pinned baseline run and the
// current one, each with its schedule. The metrics that matter when tuning —
// cycles, efficiency, instructions, busy and stall cycles per pipe, bytes per
// engine edge, the speed of light of each roof and what binds — with the change
// from baseline to current, and the field-level schedule diff (Comparison).
// Plain data; the view lays it out.

#include "ide/core/Comparison.h"

#include "dsl/Compile.h"

#include <QString>
#include <QVector>

namespace tessel::ide {

struct MetricDelta {
    QString name; // "cycles", "busy MTE2", "bytes MTE2 GM->L1", "speed of light GM read"
    bool hasA = false, hasB = false;
    double a = 0, b = 0;
    bool lowerIsBetter = true; // cycles, stalls, bytes: lower is better; efficiency: higher
    /** (b - a) / a, 0 when either is missing or a is 0. */
    double change() const { return hasA && hasB && a != 0 ? (b - a) / a : 0; }
    /** The current run is better (+1), worse (-1) or the same (0) on this metric, by 1%. */
    int verdict() const;
};

struct RunComparison {
    QVector<MetricDelta> metrics;
    QString bindingA, bindingB;  // the roof that binds each run ("" without a roofline)
    ScheduleComparison schedule; // directives, field-level changes
};

/** Baseline `a` (run of schedule `sa`) against current `b` (of `sb`). */
RunComparison compareRuns(const tessel::RunReport &a, const tessel::ScheduleSpec &sa,
                          const tessel::RunReport &b, const tessel::ScheduleSpec &sb);

} // namespace tessel::ide

#endif
