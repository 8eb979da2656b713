#ifndef TESSEL_IDE_CORE_HISTORY_H
#define TESSEL_IDE_CORE_HISTORY_H

// The schedule database as the History panel sees it (results for one
// generator + params + arch, sortable), saving a run with a note, and the
// autosave file that keeps the working schedule across a crash.

#include "database/ScheduleStore.h"
#include "dsl/Compile.h"

#include <QAbstractTableModel>
#include <QString>
#include <QVector>

#include <optional>

namespace tessel::ide {

class HistoryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { CreatedColumn, CyclesColumn, EfficiencyColumn, VerifiedColumn, ScheduleColumn, NoteColumn, ColumnCount };
    enum Role { SortRole = Qt::UserRole + 20, ScheduleJsonRole };
    using QAbstractTableModel::QAbstractTableModel;

    struct Row {
        tessel::db::ResultRecord result;
        QString note;
        QString scheduleJson;
    };
    /** Reloads from the database at `dbPath`; false (and `error`) when it cannot be read. */
    bool reload(const QString &dbPath, const std::string &generator, const tessel::ParamMap &params,
                const std::string &archHash, QString *error = nullptr);
    const QVector<Row> &rows() const { return m_rows; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    QVector<Row> m_rows;
};

/** Records `run` (with the schedule it ran and a note) in the database at
 * `dbPath`; returns the result id, or nullopt with `error`. */
std::optional<qint64> saveRun(const QString &dbPath, const tessel::RunReport &run, const tessel::ScheduleSpec &spec,
                              const tessel::ArchSpec &arch, const QString &note, QString *error = nullptr);

/** What the autosave file holds. */
struct AutosaveState {
    QString generator;
    tessel::ParamMap params;
    QString arch;
    QString scheduleJson;
};

/** $XDG_STATE_HOME/tessel/ide-autosave.json, else ~/.local/state/tessel/ide-autosave.json. */
QString defaultAutosavePath();
/** Writes atomically (QSaveFile); false on an I/O error. */
bool writeAutosave(const QString &path, const AutosaveState &s);
std::optional<AutosaveState> readAutosave(const QString &path);
/** Non-empty when `spec` would run as scalar code (no vectorize and no tensorize
 * directive: every operation on the scalar unit, which for a real-sized problem
 * runs into the simulator's budget); the text says so and what to do. The IDE asks
 * before restoring such an autosave. */
QString scalarScheduleWarning(const tessel::ScheduleSpec &spec);

} // namespace tessel::ide

#endif
