#ifndef TESSEL_IDE_CORE_SCHEDULEMODEL_H
#define TESSEL_IDE_CORE_SCHEDULEMODEL_H

// The working schedule: a table of directives (id, kind, func, stage,
// arguments) and, for one directive, its argument fields (DirectiveArgsModel).
// Every change goes through the undo stack as a whole-schedule snapshot, so
// undo/redo, the JSON tab and the table always agree.

#include "dsl/ScheduleSpec.h"
#include "ide/core/DirectiveFields.h"
#include "ide/core/LegalValues.h"

#include <QAbstractTableModel>
#include <QMap>
#include <QStringList>

class QUndoStack;

namespace tessel::ide {

class ScheduleModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { IdColumn, KindColumn, FuncColumn, StageColumn, ArgsColumn, ColumnCount };

    explicit ScheduleModel(QUndoStack *undo, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;

    const tessel::ScheduleSpec &spec() const { return m_spec; }
    QString json() const;
    /** The row of the directive with `id`, or -1. */
    int rowOf(const QString &id) const;

    // ---- edits (each is one undo step) ----
    /** Replaces the whole schedule (e.g. loaded from a file, the JSON tab, the database). */
    void setSchedule(const tessel::ScheduleSpec &spec, const QString &what);
    /** Parses JSON; on a syntax error returns false with the message (line:col). */
    bool setScheduleJson(const QString &json, QString *error);
    bool setField(int row, const QString &field, const QString &value, QString *error = nullptr);
    void insertDirective(int row, tessel::DirectiveKind kind, const QString &func);
    void removeDirective(int row);
    void moveDirective(int from, int to);

    // ---- legal choices for the editor ----
    /** Loop names per Func (from the loop nest) and per-directive names the schedule creates. */
    void setLoops(const QMap<QString, QStringList> &loopsByFunc) { m_loops = loopsByFunc; }
    void setLevels(const QStringList &levels) { m_levels = levels; }
    /** Funcs and inputs known from the last compile (for func/at_func). */
    void setFuncs(const QStringList &funcs) { m_funcs = funcs; }
    QStringList levels() const { return m_levels; }
    /** The pipeline and the machine the legal values come from (Session::open sets them). */
    void setLegalValues(LegalValues legal) {
        m_legal = std::move(legal);
        m_problems.clear();
    }
    const LegalValues &legal() const { return m_legal; }
    /** The legal values for `field` of the directive in `row` (empty = free text). */
    QStringList choices(int row, const QString &field) const;
    /** What is wrong with `value` for `field` of `row` ("" when it is legal). */
    QString check(int row, const QString &field, const QString &value) const;
    /** The directive Add would insert at `row`: built from the legal values, on
     * `func` when it can be; false with `why` when no directive of `kind` is legal there. */
    bool templateFor(int row, tessel::DirectiveKind kind, const QString &func, tessel::Directive *out,
                     QString *why = nullptr) const;

    /** Called by the undo commands only: shows `spec` without pushing a command. */
    void applySpec(const tessel::ScheduleSpec &spec);

Q_SIGNALS:
    /** The schedule changed (edit, undo, redo, load). */
    void scheduleChanged();

private:
    void push(tessel::ScheduleSpec next, const QString &what);

    QUndoStack *m_undo;
    tessel::ScheduleSpec m_spec;
    QMap<QString, QStringList> m_loops;
    QStringList m_levels;
    QStringList m_funcs;
    LegalValues m_legal;
    mutable QVector<QMap<QString, QString>> m_problems; // per row: field -> what is wrong (ArgsColumn)
};

/** The argument fields of one directive of a ScheduleModel: rows = fields,
 * columns = name, value (editable, with choices from ScheduleModel::choices). */
class DirectiveArgsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role { ChoicesRole = Qt::UserRole + 1, ProblemRole };
    explicit DirectiveArgsModel(ScheduleModel *schedule, QObject *parent = nullptr);

    void setRow(int row);
    int row() const { return m_row; }
    QString fieldAt(int r) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;

    QString lastError() const { return m_error; }
    /** What is wrong with the value of field row `r` ("" when legal): a typed value that
     * was refused, else the legal values' check of the current one. Shown as the cell's
     * tooltip, in red. */
    QString problemAt(int r) const;
    /** What would be wrong with `value` in field row `r` ("" when legal). */
    QString checkValue(int r, const QString &value) const { return m_schedule->check(m_row, fieldAt(r), value); }

private:
    void reload();
    ScheduleModel *m_schedule;
    int m_row = -1;
    QStringList m_fields;
    QString m_error;
    QMap<QString, QString> m_refused; // field -> why the typed text was not applied
    QMap<QString, QString> m_problems; // field -> what is wrong with its value
    QMap<QString, QString> m_values;   // field -> its value when the cells were last updated
};

} // namespace tessel::ide

#endif
