#ifndef TESSEL_IDE_CORE_TUNING_H
#define TESSEL_IDE_CORE_TUNING_H

// The IDE's side of the tuner (scheduler/Tuner.h) and of the cost model
// (scheduler/CostModel.h): TuneService runs sched::tune() off the GUI thread on
// its own thread pool, forwards its progress and hands the result over as one
// std::shared_ptr<const T>; cancel() stops it starting measurements (the
// running ones finish and are recorded). predictSchedule() finds the open
// schedule in the tuner's search space and returns the cost model's
// prediction (per-stage times and the predicted timeline the timeline view
// draws next to the simulated one).

#include "dsl/Compile.h"
#include "scheduler/CostModel.h"
#include "scheduler/Tuner.h"

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <memory>

namespace tessel::ide {

struct ModelPrediction {
    bool ok = false;
    std::string why;          // !ok: why the model has nothing to say about this schedule
    std::string scheduleHash; // the schedule it is for (CompileResult::schedule_hash)
    tessel::sched::Candidate candidate;
    tessel::sched::Prediction prediction;
};

/** The cost model's prediction for req.schedule with `timelineIters`
 * iterations of the predicted timeline. The schedule must be a candidate of
 * the tuner's space (the samples' hand schedules and tuned schedules are;
 * directive ids are ignored); otherwise, or for a problem the tuner does not
 * handle, ok is false and `why` says so. Never throws. */
ModelPrediction predictSchedule(const tessel::CompileRequest &req, int timelineIters = 12);

class TuneService : public QObject {
    Q_OBJECT
public:
    explicit TuneService(QObject *parent = nullptr);
    ~TuneService() override; // cancels and waits

    /** Starts tuning (options.on_progress and options.cancel are set here);
     * false when a tuning run is already going. */
    bool start(tessel::sched::TuneOptions options);
    void cancel();
    bool isRunning() const { return m_running; }
    bool isCancelled() const { return m_cancelEarly || (m_cancel && m_cancel->load()); }
    /** Blocks until the running tuning (if any) has returned. */
    void wait();

Q_SIGNALS:
    void progress(const tessel::sched::TuneProgress &p);
    /** `result` is null when tune() threw; `error` says why. */
    void finished(std::shared_ptr<const tessel::sched::TuneResult> result, const QString &error, bool cancelled);

private:
    QThreadPool m_pool;
    std::shared_ptr<std::atomic<bool>> m_cancel; // of the running tuning
    bool m_cancelEarly = false;                  // cancel() came before start()
    bool m_running = false;
};

} // namespace tessel::ide

#endif
