#include "ide/core/History.h"

#include "database/Canonical.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace tessel::ide {

namespace {
QString qs(const std::string &s) {
    return QString::fromStdString(s);
}
} // namespace

bool HistoryModel::reload(const QString &dbPath, const std::string &generator, const tessel::ParamMap &params,
                          const std::string &archHash, QString *error) {
    beginResetModel();
    m_rows.clear();
    bool ok = true;
    try {
        auto store = tessel::db::ScheduleStore::open(dbPath.toStdString());
        for (const auto &r : store.history(generator, tessel::db::params_to_json(params), archHash)) {
            Row row{r, QString(), QString()};
            if (auto s = store.schedule_by_hash(r.schedule_hash)) {
                row.note = qs(s->note);
                row.scheduleJson = qs(s->spec_json);
            }
            m_rows.append(row);
        }
    } catch (const std::exception &e) {
        ok = false;
        if (error) {
            *error = QString::fromUtf8(e.what());
        }
    }
    endResetModel();
    return ok;
}

int HistoryModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int HistoryModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HistoryModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size()) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const auto &r = row.result;
    if (role == ScheduleJsonRole) {
        return row.scheduleJson;
    }
    bool sort = role == SortRole;
    if (role != Qt::DisplayRole && !sort) {
        return {};
    }
    switch (index.column()) {
    case CreatedColumn:
        return qs(r.created);
    case CyclesColumn:
        if (!r.simulated_cycles) {
            return sort ? QVariant(qlonglong(-1)) : QVariant(QString());
        }
        return sort ? QVariant(qlonglong(*r.simulated_cycles)) : QVariant(QString::number(*r.simulated_cycles));
    case EfficiencyColumn:
        if (!r.efficiency) {
            return sort ? QVariant(-1.0) : QVariant(QString());
        }
        return sort ? QVariant(*r.efficiency) : QVariant(QString::number(*r.efficiency, 'f', 3));
    case VerifiedColumn:
        return r.verified ? QStringLiteral("yes") : QStringLiteral("no");
    case ScheduleColumn:
        return qs(r.schedule_hash);
    default:
        return row.note;
    }
}

QVariant HistoryModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char *names[] = {"when", "cycles", "efficiency", "verified", "schedule", "note"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

std::optional<qint64> saveRun(const QString &dbPath, const tessel::RunReport &run, const tessel::ScheduleSpec &spec,
                              const tessel::ArchSpec &arch, const QString &note, QString *error) {
    try {
        auto store = tessel::db::ScheduleStore::open(dbPath.toStdString());
        tessel::db::RunRecord rec;
        rec.generator = run.generator;
        rec.params_json = tessel::db::params_to_json(run.params);
        rec.arch_name = arch.name;
        rec.arch_json = arch.to_json(-1);
        rec.arch_hash = arch.hash();
        rec.schedule_json = tessel::schedule_to_json(spec);
        rec.schedule_hash = tessel::schedule_hash(spec);
        rec.origin = "manual";
        rec.note = note.toStdString();
        auto &r = rec.result;
        if (run.cycles) {
            r.simulated_cycles = *run.cycles;
        }
        if (run.t_phys_cycles) {
            r.t_phys_cycles = *run.t_phys_cycles;
        }
        r.efficiency = run.efficiency;
        r.verified = run.verified;
        r.max_error = run.max_abs_error;
        r.compile_ms = run.compile_ms;
        if (run.sim) {
            r.l2_hit_bytes = run.sim->l2_hit_bytes;
        }
        r.tool_version = "tessel-ide 0.1";
        for (const auto &d : run.diagnostics) {
            if (d.severity == tessel::Diagnostic::Error) {
                r.error_text = d.message;
                break;
            }
        }
        return store.record_run(rec);
    } catch (const std::exception &e) {
        if (error) {
            *error = QString::fromUtf8(e.what());
        }
        return std::nullopt;
    }
}

QString defaultAutosavePath() {
    QString base = qEnvironmentVariable("XDG_STATE_HOME");
    if (base.isEmpty()) {
        base = QDir::homePath() + QStringLiteral("/.local/state");
    }
    return base + QStringLiteral("/tessel/ide-autosave.json");
}

bool writeAutosave(const QString &path, const AutosaveState &s) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QJsonObject params;
    for (const auto &[k, v] : s.params) {
        params.insert(qs(k), qs(v));
    }
    QJsonObject o{{"generator", s.generator}, {"params", params}, {"arch", s.arch}, {"schedule", s.scheduleJson}};
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        return false;
    }
    f.write(QJsonDocument(o).toJson());
    return f.commit();
}

std::optional<AutosaveState> readAutosave(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return std::nullopt;
    }
    QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    if (!doc.isObject()) {
        return std::nullopt;
    }
    QJsonObject o = doc.object();
    AutosaveState s;
    s.generator = o.value(QStringLiteral("generator")).toString();
    s.arch = o.value(QStringLiteral("arch")).toString();
    s.scheduleJson = o.value(QStringLiteral("schedule")).toString();
    QJsonObject params = o.value(QStringLiteral("params")).toObject();
    for (auto it = params.begin(); it != params.end(); ++it) {
        s.params[it.key().toStdString()] = it.value().toString().toStdString();
    }
    if (s.generator.isEmpty()) {
        return std::nullopt;
    }
    return s;
}

QString scalarScheduleWarning(const tessel::ScheduleSpec &spec) {
    for (const auto &d : spec.directives) {
        if (d.kind == tessel::DirectiveKind::Vectorize || d.kind == tessel::DirectiveKind::Tensorize) {
            return {};
        }
    }
    return spec.directives.empty()
               ? QStringLiteral("The schedule is empty: every operation runs on the scalar unit, which for a "
                                "real-sized problem stops at the simulator's instruction budget.")
               : QStringLiteral("The schedule has no vectorize and no tensorize directive: every operation runs "
                                "on the scalar unit, which for a real-sized problem stops at the simulator's "
                                "instruction budget.");
}

} // namespace tessel::ide
