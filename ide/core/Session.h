#ifndef TESSEL_IDE_CORE_SESSION_H
#define TESSEL_IDE_CORE_SESSION_H

// One open problem (generator + params + arch) and its working schedule: the
// schedule model with its undo stack, the compile service, every result model
// and the shared view state. Widgets attach to it; the tests drive it without
// any widget.

#include "ide/core/CompileService.h"
#include "ide/core/History.h"
#include "ide/core/ResultModels.h"
#include "ide/core/ScheduleModel.h"
#include "ide/core/Tuning.h"
#include "ide/core/ViewState.h"

#include "npu_target/arch/ArchSpec.h"

#include <QObject>
#include <QUndoStack>

#include <memory>

namespace tessel::ide {

class Session : public QObject {
    Q_OBJECT
public:
    enum TextKind { StmtText, LoopNestText, NpuIrText, AsmText };

    explicit Session(QObject *parent = nullptr);
    ~Session() override;

    /** Opens a problem with a schedule (an undo-able step); false with `error`
     * for an unknown generator, parameter or arch. Recompiles immediately. */
    bool open(const QString &generator, const tessel::ParamMap &params, const QString &arch,
              const tessel::ScheduleSpec &schedule, QString *error = nullptr);
    tessel::CompileRequest request() const;
    /** Cancels the pending and the running compile/run (CompileService::cancel): the
     * views show a "cancelled" diagnostic, the editor stays as it is. */
    void cancelRun() { m_service.cancel(); }
    /** The simulator's instruction budget for the runs (CompileRequest::max_instructions;
     * the default sim::kDefaultMaxInstructions, 0 = unlimited). */
    void setMaxInstructions(quint64 n) { m_maxInstructions = n; }
    quint64 maxInstructions() const { return m_maxInstructions; }

    QString generator() const { return m_generator; }
    const tessel::ParamMap &params() const { return m_params; }
    const tessel::ArchSpec &arch() const { return m_arch; }
    QString archName() const { return m_archName; }

    ScheduleModel *schedule() { return &m_schedule; }
    DirectiveArgsModel *args() { return &m_args; }
    QUndoStack *undoStack() { return &m_undo; }
    CompileService *service() { return &m_service; }
    ViewState *viewState() { return &m_view; }
    DiagnosticsModel *diagnostics() { return &m_diagnostics; }
    LifetimeModel *lifetimes() { return &m_lifetimes; }
    TimelineModel *timeline() { return &m_timeline; }
    MetricsModel *metrics() { return &m_metrics; }
    TilingModel *tiling() { return &m_tiling; }
    HistoryModel *history() { return &m_history; }

    std::shared_ptr<const tessel::CompileResult> lastCompile() const { return m_compile; }
    std::shared_ptr<const tessel::RunReport> lastRun() const { return m_run; }
    QString text(TextKind kind) const;
    /** The directive id of every line of text(kind) ("" for none). */
    QStringList lineDirectives(TextKind kind) const { return m_lineLinks.value(kind); }

    // ---- persistence ----
    void setAutosavePath(const QString &path) { m_autosavePath = path; }
    QString autosavePath() const { return m_autosavePath; }
    void setDatabasePath(const QString &path) { m_dbPath = path; }
    QString databasePath() const { return m_dbPath; }
    bool refreshHistory(QString *error = nullptr);
    /** Saves the last run with `note`; false when there is no run or the database fails. */
    bool saveToDatabase(const QString &note, QString *error = nullptr);
    /** Loads the schedule of history row `row` into the editor (one undo step). */
    bool loadFromHistory(int row, QString *error = nullptr);
    /** Replaces the schedule with the automatic scheduler's for the open problem
     * (scheduler/AutoSchedule.h; one undo step, editable as any schedule). `summary` gets
     * what it decided and its warnings, one per line. False (with the reason) when the
     * generator cannot be described. */
    bool applyAutoSchedule(QString *summary, QString *error = nullptr);

    // ---- tuning (scheduler/Tuner.h) and the cost model ----
    TuneService *tuner() { return &m_tuner; }
    /** Tunes the open problem for `budgetS` seconds on `jobs` measurement threads
     * (at most `maxMeasurements` when > 0), recording into the database. When it
     * finishes, the best verified schedule goes into the editor as one undo step
     * and the history reloads; a cancelled run changes nothing in the editor (its
     * measurements are in the history). While it runs, edits are kept and compile
     * when it ends. False with `error` when already tuning. */
    bool startTune(double budgetS, int jobs, int maxMeasurements = 0, QString *error = nullptr);
    std::shared_ptr<const tessel::sched::TuneResult> lastTune() const { return m_tune; }
    /** The cost model's prediction for the compiled schedule (null until it arrived). */
    std::shared_ptr<const ModelPrediction> prediction() const { return m_prediction; }

    /** Milliseconds from the last schedule change to its models being updated. */
    double lastCompileLatencyMs() const { return m_compileLatencyMs; }
    double lastRunLatencyMs() const { return m_runLatencyMs; }
    /** Time spent updating the models for the last compile / run (GUI thread). */
    double lastModelUpdateMs() const { return m_modelUpdateMs; }

Q_SIGNALS:
    void compileFinished();
    void runFinished();
    /** The timeline now shows a partial trace: of a run under way, or (`stopped`) of one that
     * ended without a result; `note` says which and how many events. */
    void partialTimeline(const QString &note, bool stopped);
    /** The compile service started or finished work. */
    void busyChanged(bool busy);
    /** A tuning run ended: `loaded` when its best schedule went into the editor. */
    void tuneFinished(bool loaded, const QString &message);
    void predictionChanged();

private:
    void onScheduleChanged();
    void onCompiled(std::shared_ptr<const tessel::CompileResult> r, quint64 gen, double ms);
    void onRan(std::shared_ptr<const tessel::RunReport> r, quint64 gen, double ms);
    /** The timeline of a run under way, or of one that stopped without a result. */
    void onPartialRun(std::shared_ptr<const tessel::RunReport> r, quint64 gen, bool stopped);
    void onTuned(std::shared_ptr<const tessel::sched::TuneResult> r, const QString &error, bool cancelled);
    void requestPrediction();

    QString m_generator;
    tessel::ParamMap m_params;
    QString m_archName;
    tessel::ArchSpec m_arch;
    QUndoStack m_undo;
    ScheduleModel m_schedule;
    DirectiveArgsModel m_args;
    CompileService m_service;
    ViewState m_view;
    DiagnosticsModel m_diagnostics;
    LifetimeModel m_lifetimes;
    TimelineModel m_timeline;
    MetricsModel m_metrics;
    TilingModel m_tiling;
    HistoryModel m_history;
    TuneService m_tuner;
    bool m_tuneWaiting = false; // startTune() waits for the running compile job
    std::shared_ptr<const tessel::sched::TuneResult> m_tune;
    std::shared_ptr<const ModelPrediction> m_prediction;
    std::shared_ptr<const tessel::CompileResult> m_compile;
    std::shared_ptr<const tessel::RunReport> m_run;
    QMap<int, QStringList> m_lineLinks;
    QString m_autosavePath;
    QString m_dbPath;
    qint64 m_editStamp = 0; // QElapsedTimer ns at the last schedule change
    double m_compileLatencyMs = 0, m_runLatencyMs = 0, m_modelUpdateMs = 0;
    bool m_opened = false;
    quint64 m_maxInstructions = tessel::sim::kDefaultMaxInstructions;
};

} // namespace tessel::ide

#endif
