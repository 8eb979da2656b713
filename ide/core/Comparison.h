#ifndef TESSEL_IDE_CORE_COMPARISON_H
#define TESSEL_IDE_CORE_COMPARISON_H

// Two schedules side by side (the History panel's "Compare"): their directives
// aligned by id (the same id in both, only in one, or changed arguments) and
// their measured results. Plain data; the view only lays it out.

#include "ide/core/History.h"

#include <QString>
#include <QStringList>
#include <QVector>

namespace tessel::ide {

struct DirectiveDiffRow {
    enum Kind { Same, Changed, OnlyA, OnlyB };
    Kind kind = Same;
    QString id;
    QString a; // the directive in schedule A ("" when absent)
    QString b;
    QStringList fields; // Changed: each field that differs, "factor: 64 -> 32" (a field absent on one side: "-")
};

struct ScheduleComparison {
    QVector<DirectiveDiffRow> directives; // A's order, then B's extra directives
    QString metricsA, metricsB;           // "cycles 13727, efficiency 0.597, verified"
    QString hashA, hashB;
    int changed = 0, onlyA = 0, onlyB = 0;
    QString error;                        // a schedule that does not parse
};

/** Compares two History rows. */
ScheduleComparison compareSchedules(const HistoryModel::Row &a, const HistoryModel::Row &b);

/** The directive part of a comparison (no metrics): `a` and `b` get ids assigned first. */
ScheduleComparison compareSpecs(ScheduleSpec a, ScheduleSpec b);

} // namespace tessel::ide

#endif
