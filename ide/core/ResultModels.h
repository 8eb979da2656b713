#ifndef TESSEL_IDE_CORE_RESULTMODELS_H
#define TESSEL_IDE_CORE_RESULTMODELS_H

// Table models over one compile result and one run report (plain values made
// off the GUI thread, shared as std::shared_ptr<const T>): diagnostics, buffer
// lifetimes, the simulator timeline, metrics and the tiling plan. The views
// paint from these; the tests assert on them.

#include "dsl/Compile.h"
#include "ide/core/CycleLifetimes.h"

#include <QAbstractTableModel>
#include <QMap>
#include <QStringList>
#include <QVector>

#include <memory>

namespace tessel::ide {

enum ResultRole {
    DirectiveRole = Qt::UserRole + 10, // the directive id a row links to
    OverflowRole,                      // lifetimes: true for a buffer that does not fit
    SeverityRole,                      // diagnostics: Diagnostic::Severity
};

class DiagnosticsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    struct Row {
        tessel::Diagnostic::Severity severity;
        QString source; // "compile", "run", "editor"
        QString directive;
        QString message;
    };
    void setCompile(const std::shared_ptr<const tessel::CompileResult> &r);
    void setRun(const std::shared_ptr<const tessel::RunReport> &r);
    /** An editor-side problem (a JSON syntax error, a refused edit); "" clears it. */
    void setEditorMessage(const QString &message);
    const QVector<Row> &rows() const { return m_rows; }
    int errorCount() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    void rebuild();
    QVector<Row> m_compile, m_run;
    QString m_editor;
    QVector<Row> m_rows;
};

class LifetimeModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    /** `capacities`: level name -> bytes, in the ArchSpec's level order. */
    void setResult(const std::shared_ptr<const tessel::CompileResult> &r, const QVector<QPair<QString, qint64>> &capacities);
    const std::vector<tessel::BufferLifetime> &lifetimes() const;
    /** On-chip levels that hold a buffer, in ArchSpec order. */
    QStringList levels() const { return m_levels; }
    qint64 capacity(const QString &level) const;
    /** The highest address any buffer of `level` reaches (offset + bytes * copies). */
    qint64 highWater(const QString &level) const;
    /** Program order span: max(last) + 1. */
    qint64 orderLength() const;
    int overflowCount() const;
    /** The run of this compile: lifetimes in simulated cycles (from its trace); nullptr clears them. */
    void setRun(const std::shared_ptr<const tessel::RunReport> &r, const tessel::ArchSpec &arch);
    /** Per lifetime (same order as lifetimes()), empty until a run with a trace arrived. */
    const std::vector<CycleLifetime> &cycleLifetimes() const { return m_cycles; }
    /** Cycles of that run (0 without one). */
    qint64 runCycles() const { return m_runCycles; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const tessel::CompileResult> m_result;
    QStringList m_levels;
    QMap<QString, qint64> m_capacity;
    std::vector<CycleLifetime> m_cycles;
    qint64 m_runCycles = 0;
};

class TimelineModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setReport(const std::shared_ptr<const tessel::RunReport> &r);
    const std::shared_ptr<const tessel::RunReport> &report() const { return m_report; }
    /** Pipes with events, in the machine's order (S, V, M, MTE1, MTE2, MTE3, FIX, others). */
    QStringList pipes() const { return m_pipes; }
    /** Indices into the trace of the events of pipe `p` (ordered by start). */
    const QVector<int> &eventsOf(int p) const { return m_byPipe[p]; }
    const tessel::sim::TraceEvent &event(int i) const;
    QString directiveOf(int i) const;
    /** Where a capped trace stops ("" when the whole run was recorded), and its cycle (-1 then). */
    QString traceCutNote() const;
    qint64 traceCutCycle() const;
    /** The event of pipe `p` covering `time` (within `slack` cycles), or -1. */
    int eventAt(int p, double time, double slack = 0) const;
    /** Cycles of the run (0 without a simulation). */
    qint64 cycles() const;
    /** Cycles of pipe `p` with nothing running (the gaps the view shows). */
    qint64 idleCycles(int p) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const tessel::RunReport> m_report;
    QStringList m_pipes;
    QVector<QVector<int>> m_byPipe;
};

class MetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setCompile(const std::shared_ptr<const tessel::CompileResult> &r);
    void setReport(const std::shared_ptr<const tessel::RunReport> &r);
    const std::shared_ptr<const tessel::RunReport> &report() const { return m_report; }
    const std::shared_ptr<const tessel::CompileResult> &compileResult() const { return m_compile; }
    /** The value shown for `key` ("cycles", "efficiency", "busy % MTE2", "bytes MTE2 GM->L1", ...), or "". */
    QString value(const QString &key) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    void rebuild();
    std::shared_ptr<const tessel::CompileResult> m_compile;
    std::shared_ptr<const tessel::RunReport> m_report;
    QVector<QPair<QString, QString>> m_rows;
};

class TilingModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    struct Operand {
        QString name;
        QVector<qint64> shape; // innermost first
        bool output = false;
    };
    void setResult(const std::shared_ptr<const tessel::CompileResult> &r, const tessel::ScheduleSpec &spec);
    const std::vector<tessel::TiledBuffer> &buffers() const;
    QVector<Operand> operands() const { return m_operands; }
    /** The output tile (x, y: innermost first); the whole output when untiled. */
    QPair<qint64, qint64> outputTile() const { return m_tile; }
    /** Where the tile size came from: a directive id, or "" (whole output). */
    QString tileDirective() const { return m_tileDirective; }
    /** Indices of buffers() holding `operand`, outermost level first (L1 before L0A). */
    QVector<int> footprintsOf(const QString &operand) const;

    /** Elements [x, x + w) x [y, y + h) of an argument (x innermost). */
    struct Box {
        qint64 x = 0, y = 0, w = 0, h = 0;
        bool operator==(const Box &o) const { return x == o.x && y == o.y && w == o.w && h == o.h; }
    };
    /** Where buffer `index`'s box sits while output tile (column, row) is computed. */
    struct Footprint {
        bool placed = false; // false: the tiling plan does not say where it sits
        Box first;           // at the first iteration of every loop the tile does not fix (e.g. ko)
        Box span;            // the union over all iterations of those loops
        QStringList freeLoops; // those loops, "ko x4"
    };
    Footprint footprint(int index, int column, int row) const;
    /** The values of the tile loops (io, jo, ...) while output tile (column, row) is
     * computed: solved from where the output's tile buffer is written back, else
     * from the tiling directive's outer loop names. */
    QMap<QString, qint64> tileLoopValues(int column, int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const tessel::CompileResult> m_result;
    QVector<Operand> m_operands;
    QPair<qint64, qint64> m_tile{1, 1};
    QString m_tileDirective;
    QString m_output;
    QString m_outerX, m_outerY; // the tiling directive's outer loop names (xo, yo)
};

/** "64 KiB", "1.5 MiB", "512 B". */
QString formatBytes(qint64 bytes);

} // namespace tessel::ide

#endif
