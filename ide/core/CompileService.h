#ifndef TESSEL_IDE_CORE_COMPILESERVICE_H
#define TESSEL_IDE_CORE_COMPILESERVICE_H

// Compiles and runs schedules off the GUI thread. request() restarts a short
// debounce timer; when it fires, the newest request runs on a worker
// (QtConcurrent): compile(), then (if it compiled) run() with the trace. Each
// result is handed over as std::shared_ptr<const T> in one signal. Requests
// coalesce: while a job runs only the newest pending request is kept, and a
// result older than the newest request is dropped (never emitted). Runs use the
// request's simulator budgets and trace cap (CompileRequest::max_instructions,
// max_cycles, max_trace_events; the defaults unless the caller changed them); a
// job that fails in the worker (a budget, std::bad_alloc, any exception) ends
// with its error as a diagnostic, so the service never stays running. A newer
// request, cancel() and shutdown stop the running simulation (sim::RunControl).
// While a run goes, its trace so far arrives in partialRun() every half second
// (up to kLivePartialEvents events, so that redrawing stays cheap), and a run
// that ends without a result (a budget, Cancel, an error) hands over the events
// it recorded before it stopped in one last partialRun() after ran(). The CPU
// reference's outputs are kept between runs of the same problem (an edit changes
// only the schedule): a run after an edit is its compile and its simulation.

#include "dsl/Compile.h"
#include "ide/core/PartialTrace.h"

#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <memory>
#include <optional>

namespace tessel::ide {

/** The pool the IDE's worker jobs (compile, run, the cost model's prediction) run on — never
 * QThreadPool::globalInstance(): Qt's raster paint engine splits image scaling and format
 * conversion over the global pool and waits for the pieces, so with a compile and a prediction
 * occupying it a paint waited 60-140 ms for 0.2 ms of work (tessel_ide_bench, 2 cores). */
QThreadPool *workerPool();

class CompileService : public QObject {
    Q_OBJECT
public:
    explicit CompileService(QObject *parent = nullptr);
    ~CompileService() override;
    /** Live partial timelines stop past this many events (the final one has them all). */
    static constexpr size_t kLivePartialEvents = 200000;

    void setDebounceMs(int ms) { m_debounce.setInterval(ms); }
    int debounceMs() const { return m_debounce.interval(); }
    /** Also run on the simulator after a successful compile (default on). */
    void setRunEnabled(bool on) { m_runEnabled = on; }

    /** Debounced: the newest request wins. */
    void request(const tessel::CompileRequest &req);
    /** No debounce. */
    void requestNow(const tessel::CompileRequest &req);
    /** Generation of the newest request (1, 2, ...). */
    quint64 generation() const { return m_generation; }
    /** True while a request is pending, debouncing or running. */
    bool isBusy() const;
    /** True while a job (compile, then run) is running on the worker. */
    bool isRunning() const { return m_running; }
    /** Held: requests are kept (the newest wins) but none starts until released.
     * The tuner forks measurement processes, and a fork while a worker is inside
     * Halide or LLVM could leave a child waiting on a lock no thread will release. */
    void setHeld(bool held);
    bool isHeld() const { return m_held; }
    /** Cancels the pending request and the running job: a simulation stops within
     * 4096 instructions (sim::RunControl), a compile is finished but not run. The job
     * ends with a cancelled RunReport (RunReport::cancelled, an error diagnostic that
     * says so). A request made while a job runs cancels that job the same way (its
     * result would be dropped anyway), so a long run is never waited for. */
    void cancel();
    /** Instructions the running job's simulation has issued so far (0 when none runs). */
    quint64 instructionsIssued() const;
    /** Cancels whatever runs and blocks until no job is running (for shutdown). */
    void waitForIdle();

Q_SIGNALS:
    void started(quint64 generation);
    void compiled(std::shared_ptr<const tessel::CompileResult> result, quint64 generation, double ms);
    void ran(std::shared_ptr<const tessel::RunReport> report, quint64 generation, double ms);
    /** The running job's trace so far (a report with only sim->trace and a note), or after
     * ran() the trace of a run that stopped without a result. Only for the timeline. */
    void partialRun(std::shared_ptr<const tessel::RunReport> report, quint64 generation, bool stopped);
    /** Every requested job has finished (or was dropped). */
    void idle();
    /** The running job finished (whether or not more are pending or held). */
    void jobDone();

private:
    void startPending();
    void jobFinished();

    QTimer m_debounce;
    std::optional<tessel::CompileRequest> m_pending;
    quint64 m_pendingGeneration = 0;
    quint64 m_generation = 0;
    std::shared_ptr<std::atomic<quint64>> m_latest; // read by workers to skip stale runs
    std::shared_ptr<tessel::sim::RunControl> m_control; // the running job's
    std::shared_ptr<PartialTrace> m_partial;            // the running job's trace so far
    std::shared_ptr<tessel::ReferenceCache> m_references = std::make_shared<tessel::ReferenceCache>();
    QTimer m_partialTimer;
    size_t m_partialShown = 0;
    quint64 m_runningGeneration = 0;
    void emitPartial();
    bool m_running = false;
    bool m_runEnabled = true;
    bool m_held = false;
};

} // namespace tessel::ide

#endif
