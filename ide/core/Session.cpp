#include "ide/core/Session.h"

#include "ide/core/SourceLinks.h"
#include "scheduler/AutoSchedule.h"
#include "npu_target/common/Error.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace tessel::ide {

namespace {
qint64 nowNs() {
    static QElapsedTimer clock = [] {
        QElapsedTimer t;
        t.start();
        return t;
    }();
    return clock.nsecsElapsed();
}
} // namespace

Session::Session(QObject *parent)
    : QObject(parent), m_schedule(&m_undo), m_args(&m_schedule), m_autosavePath(defaultAutosavePath()),
      m_dbPath(QString::fromStdString(tessel::db::ScheduleStore::default_path())) {
    connect(&m_schedule, &ScheduleModel::scheduleChanged, this, &Session::onScheduleChanged);
    connect(&m_service, &CompileService::compiled, this, &Session::onCompiled);
    connect(&m_service, &CompileService::ran, this, &Session::onRan);
    connect(&m_service, &CompileService::partialRun, this, &Session::onPartialRun);
    connect(&m_service, &CompileService::started, this, [this] { Q_EMIT busyChanged(true); });
    connect(&m_service, &CompileService::idle, this, [this] { Q_EMIT busyChanged(false); });
    connect(&m_tuner, &TuneService::finished, this, &Session::onTuned);
}

Session::~Session() {
    m_tuner.cancel();
    m_tuner.wait();
    m_service.waitForIdle();
}

bool Session::open(const QString &generator, const tessel::ParamMap &params, const QString &arch,
                   const tessel::ScheduleSpec &schedule, QString *error) {
    try {
        tessel::GeneratorInfo info = tessel::find_generator(generator.toStdString());
        m_params = tessel::resolve_params(info, params);
        m_arch = tessel::load_arch(arch.toStdString());
    } catch (const tessel::UserError &e) {
        if (error) {
            *error = QString::fromStdString(e.what());
        }
        return false;
    }
    m_generator = generator;
    m_archName = arch;
    m_opened = true;
    QStringList levels;
    for (const auto &m : m_arch.memories) {
        levels << QString::fromStdString(m.name);
    }
    m_schedule.setLevels(levels);
    // The legal values of the editor's arguments: the pipeline's Funcs, Vars and RDoms
    // (plain data, dsl/PipelineInfo.h) and the machine.
    try {
        m_schedule.setLegalValues(LegalValues(tessel::describe_pipeline(generator.toStdString(), m_params), m_arch));
    } catch (const std::exception &) {
        m_schedule.setLegalValues(LegalValues()); // the editor falls back to the last loop nest's names
    }
    if (schedule == m_schedule.spec()) {
        onScheduleChanged(); // same schedule, new problem: recompile anyway
    } else {
        m_schedule.setSchedule(schedule, QStringLiteral("open schedule"));
    }
    refreshHistory();
    return true;
}

tessel::CompileRequest Session::request() const {
    tessel::CompileRequest req;
    req.generator = m_generator.toStdString();
    req.params = m_params;
    req.schedule = m_schedule.spec();
    req.arch = m_archName.toStdString();
    req.max_instructions = m_maxInstructions;
    return req;
}

void Session::onScheduleChanged() {
    if (!m_opened) {
        return;
    }
    m_editStamp = nowNs();
    if (!m_autosavePath.isEmpty()) {
        writeAutosave(m_autosavePath, {m_generator, m_params, m_archName, m_schedule.json()});
    }
    m_run.reset(); // the last run belongs to the previous schedule
    m_diagnostics.setEditorMessage(QString());
    m_service.request(request());
}

void Session::onCompiled(std::shared_ptr<const tessel::CompileResult> r, quint64, double) {
    qint64 t0 = nowNs();
    m_compile = r;
    QVector<QPair<QString, qint64>> capacities;
    for (const auto &m : m_arch.memories) {
        if (!m.off_chip) {
            capacities.append({QString::fromStdString(m.name), qint64(m.size_bytes)});
        }
    }
    m_diagnostics.setCompile(r);
    m_lifetimes.setResult(r, capacities);
    m_tiling.setResult(r, m_schedule.spec());
    m_metrics.setCompile(r);
    if (!r->ok) {
        m_run.reset();
        m_timeline.setReport(nullptr);
    }
    if (!r->loop_nest.empty()) {
        m_schedule.setLoops(loopsByFunc(QString::fromStdString(r->loop_nest)));
        m_schedule.setFuncs(funcNames(*r));
    }
    auto tokens = directiveTokens(*r);
    m_lineLinks.clear();
    for (int k = StmtText; k <= AsmText; ++k) {
        m_lineLinks[k] = ide::lineDirectives(text(TextKind(k)), tokens, r->program.provenance);
    }
    qint64 t1 = nowNs();
    m_modelUpdateMs = (t1 - t0) / 1e6;
    m_compileLatencyMs = (t1 - m_editStamp) / 1e6;
    Q_EMIT compileFinished();
    requestPrediction();
}

void Session::requestPrediction() {
    if (!m_compile || !m_compile->ok) {
        return;
    }
    if (m_prediction && m_prediction->scheduleHash == m_compile->schedule_hash) {
        return;
    }
    QPointer<Session> self(this);
    tessel::CompileRequest req = request();
    std::string hash = m_compile->schedule_hash;
    (void)QtConcurrent::run(workerPool(), [self, req, hash] {
        auto p = std::make_shared<ModelPrediction>(predictSchedule(req));
        p->scheduleHash = hash;
        QMetaObject::invokeMethod(
            self.data(),
            [self, p] {
                // Only the prediction of the schedule on screen is kept.
                if (self && self->m_compile && self->m_compile->schedule_hash == p->scheduleHash) {
                    self->m_prediction = p;
                    Q_EMIT self->predictionChanged();
                }
            },
            Qt::QueuedConnection);
    });
}

bool Session::startTune(double budgetS, int jobs, int maxMeasurements, QString *error) {
    if (!m_opened || m_tuner.isRunning() || m_tuneWaiting) {
        if (error) {
            *error = m_opened ? QStringLiteral("a tuning run is already going") : QStringLiteral("nothing is open");
        }
        return false;
    }
    tessel::sched::TuneOptions o;
    o.generator = m_generator.toStdString();
    o.params = m_params;
    o.arch = m_archName.toStdString();
    o.budget_s = budgetS;
    o.jobs = std::max(1, jobs);
    o.max_measurements = maxMeasurements;
    o.db_path = m_dbPath.toStdString();
    // Edits made while tuning compile when it ends (see CompileService::setHeld); a
    // job already running finishes before the tuner forks its first worker.
    m_service.setHeld(true);
    if (!m_service.isRunning()) {
        return m_tuner.start(o);
    }
    m_tuneWaiting = true;
    auto conn = std::make_shared<QMetaObject::Connection>();
    *conn = connect(&m_service, &CompileService::jobDone, this, [this, o, conn] {
        disconnect(*conn);
        m_tuneWaiting = false;
        m_tuner.start(o);
    });
    return true;
}

void Session::onTuned(std::shared_ptr<const tessel::sched::TuneResult> r, const QString &error, bool cancelled) {
    m_tune = r;
    m_service.setHeld(false); // edits made meanwhile compile now
    refreshHistory();
    if (!r) {
        Q_EMIT tuneFinished(false, QStringLiteral("tuning failed: ") + error);
        return;
    }
    QString counts = QStringLiteral("%1 measured, %2 already in the database").arg(r->measured.size()).arg(r->skipped);
    if (cancelled) {
        Q_EMIT tuneFinished(false, QStringLiteral("tuning cancelled (%1); the editor is unchanged").arg(counts));
        return;
    }
    if (!r->best) {
        Q_EMIT tuneFinished(false, QStringLiteral("tuning found no verified schedule (%1)").arg(counts));
        return;
    }
    QString parseError;
    tessel::ScheduleSpec best;
    try {
        best = tessel::parse_schedule(r->best->schedule_json, "tuned schedule");
    } catch (const tessel::UserError &e) {
        Q_EMIT tuneFinished(false, QStringLiteral("the tuned schedule does not parse: ") + QString::fromStdString(e.what()));
        return;
    }
    m_schedule.setSchedule(best, QStringLiteral("load tuned schedule"));
    Q_EMIT tuneFinished(true, QStringLiteral("loaded the tuned schedule: %1 cycles, efficiency %2 (%3)")
                                  .arg(r->best->cycles)
                                  .arg(r->best->efficiency, 0, 'f', 3)
                                  .arg(counts));
}

void Session::onRan(std::shared_ptr<const tessel::RunReport> r, quint64, double) {
    qint64 t0 = nowNs();
    m_run = r;
    m_timeline.setReport(r);
    m_lifetimes.setRun(r, m_arch);
    m_metrics.setReport(r);
    m_diagnostics.setRun(r);
    m_view.setLength(double(m_timeline.cycles()));
    qint64 t1 = nowNs();
    m_modelUpdateMs = (t1 - t0) / 1e6;
    m_runLatencyMs = (t1 - m_editStamp) / 1e6;
    Q_EMIT runFinished();
}

void Session::onPartialRun(std::shared_ptr<const tessel::RunReport> r, quint64, bool stopped) {
    m_timeline.setReport(r);
    m_view.setLength(double(m_timeline.cycles()));
    Q_EMIT partialTimeline(QString::fromStdString(r->diagnostics.empty() ? std::string() : r->diagnostics[0].message),
                           stopped);
}

QString Session::text(TextKind kind) const {
    if (!m_compile) {
        return {};
    }
    switch (kind) {
    case StmtText:
        return QString::fromStdString(m_compile->stmt_text);
    case LoopNestText:
        return QString::fromStdString(m_compile->loop_nest);
    case NpuIrText:
        return QString::fromStdString(m_compile->npu_ir_text);
    case AsmText:
        return QString::fromStdString(m_compile->asm_text);
    }
    return {};
}

bool Session::refreshHistory(QString *error) {
    if (!m_opened || m_dbPath.isEmpty()) {
        return false;
    }
    return m_history.reload(m_dbPath, m_generator.toStdString(), m_params, m_arch.hash(), error);
}

bool Session::saveToDatabase(const QString &note, QString *error) {
    if (!m_run) {
        if (error) {
            *error = QStringLiteral("nothing to save: the schedule has not run yet");
        }
        return false;
    }
    // m_run belongs to the current schedule: a new edit clears it until its run arrives.
    if (!saveRun(m_dbPath, *m_run, m_schedule.spec(), m_arch, note, error)) {
        return false;
    }
    return refreshHistory(error);
}

bool Session::loadFromHistory(int row, QString *error) {
    if (row < 0 || row >= m_history.rows().size()) {
        return false;
    }
    return m_schedule.setScheduleJson(m_history.rows()[row].scheduleJson, error);
}

bool Session::applyAutoSchedule(QString *summary, QString *error) {
    try {
        tessel::AutoSchedule as = tessel::auto_schedule_for(m_generator.toStdString(), m_params, m_archName.toStdString());
        QStringList lines;
        for (const auto &n : as.notes) {
            lines << QString::fromStdString(n);
        }
        for (const auto &w : as.warnings) {
            lines << QStringLiteral("warning: ") + QString::fromStdString(w);
        }
        if (summary) {
            *summary = lines.join(QLatin1Char('\n'));
        }
        m_schedule.setSchedule(as.spec, QStringLiteral("auto schedule (%1 form)").arg(QString::fromStdString(as.form)));
        return true;
    } catch (const std::exception &e) {
        if (error) {
            *error = QString::fromStdString(e.what());
        }
        return false;
    }
}

} // namespace tessel::ide
