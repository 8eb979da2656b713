#include "ide/core/CompileService.h"

#include "ide/core/UserNames.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <new>

namespace tessel::ide {

QThreadPool *workerPool() {
    // Never destroyed: jobs may still be finishing when static destructors run.
    static QThreadPool *pool = [] {
        auto *p = new QThreadPool;
        p->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
        return p;
    }();
    return pool;
}

CompileService::CompileService(QObject *parent)
    : QObject(parent), m_latest(std::make_shared<std::atomic<quint64>>(0)) {
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(200); // coalesces bursts (undo, typing); a superseded run is cancelled anyway
    connect(&m_debounce, &QTimer::timeout, this, &CompileService::startPending);
    m_partialTimer.setInterval(500);
    connect(&m_partialTimer, &QTimer::timeout, this, &CompileService::emitPartial);
}

void CompileService::emitPartial() {
    if (!m_running || !m_partial) {
        m_partialTimer.stop();
        return;
    }
    const size_t n = m_partial->size();
    if (m_runningGeneration != m_generation || n == m_partialShown || m_partialShown >= kLivePartialEvents) {
        return;
    }
    m_partialShown = n;
    const size_t shown = std::min(n, kLivePartialEvents);
    std::string note = "running: the timeline shows the " + std::to_string(shown) + " events recorded so far";
    if (shown < n) {
        note += " (the first " + std::to_string(kLivePartialEvents) + "; the rest when the run ends)";
    }
    Q_EMIT partialRun(m_partial->snapshot("", note, kLivePartialEvents), m_runningGeneration, false);
}

CompileService::~CompileService() {
    waitForIdle();
}

void CompileService::waitForIdle() {
    m_latest->store(~quint64(0)); // every running job is now stale: it skips its run
    if (m_control) {
        m_control->cancel = true; // and a run under way stops
    }
    workerPool()->waitForDone();
    m_latest->store(m_generation);
}

void CompileService::cancel() {
    m_pending.reset();
    m_debounce.stop();
    if (m_running && m_control) {
        m_control->cancel = true; // the job ends soon with a cancelled report
    } else if (!isBusy()) {
        Q_EMIT idle();
    }
}

quint64 CompileService::instructionsIssued() const {
    return m_running && m_control ? quint64(m_control->issued.load()) : 0;
}

bool CompileService::isBusy() const {
    return m_running || m_pending.has_value() || m_debounce.isActive();
}

void CompileService::request(const tessel::CompileRequest &req) {
    if (m_running && m_control) {
        m_control->cancel = true; // superseded: its result would be dropped
    }
    m_pending = req;
    m_pendingGeneration = ++m_generation;
    m_latest->store(m_generation);
    m_debounce.start();
}

void CompileService::requestNow(const tessel::CompileRequest &req) {
    if (m_running && m_control) {
        m_control->cancel = true;
    }
    m_pending = req;
    m_pendingGeneration = ++m_generation;
    m_latest->store(m_generation);
    m_debounce.stop();
    startPending();
}

void CompileService::setHeld(bool held) {
    m_held = held;
    if (!held && !m_debounce.isActive()) {
        startPending();
    }
}

void CompileService::startPending() {
    if (m_running || !m_pending || m_held) {
        return;
    }
    tessel::CompileRequest req = std::move(*m_pending);
    m_pending.reset();
    quint64 gen = m_pendingGeneration;
    m_control = std::make_shared<tessel::sim::RunControl>();
    req.control = m_control;
    auto partial = std::make_shared<PartialTrace>();
    m_partial = partial;
    m_partialShown = 0;
    m_runningGeneration = gen;
    req.trace_sink = partial.get(); // kept alive by the job's capture below
    req.reference_cache = m_references;
    m_partialTimer.start();
    m_running = true;
    Q_EMIT started(gen);
    QPointer<CompileService> self(this);
    auto latest = m_latest;
    bool wantRun = m_runEnabled;
    (void)QtConcurrent::run(workerPool(), [self, latest, req, gen, wantRun, partial] {
        QElapsedTimer t;
        t.start();
        // Any failure in the worker (std::bad_alloc, an internal error) becomes an error
        // diagnostic: the job always finishes and the views show it.
        auto failure = [](const char *what, const std::exception *e) {
            tessel::Diagnostic d;
            d.severity = tessel::Diagnostic::Error;
            d.message = std::string(what) + (e ? std::string(": ") + e->what() : std::string(": unknown exception"));
            if (e && dynamic_cast<const std::bad_alloc *>(e)) {
                d.message += " (out of memory)";
            }
            return d;
        };
        std::shared_ptr<const tessel::CompileResult> result;
        try {
            tessel::CompileResult r = tessel::compile(req);
            useUserNames(r); // no "acc$5" growing with each compile (ide/core/UserNames.h)
            result = std::make_shared<const tessel::CompileResult>(std::move(r));
        } catch (const std::exception &e) {
            auto r = std::make_shared<tessel::CompileResult>();
            r->diagnostics.push_back(failure("the compile failed", &e));
            result = r;
        } catch (...) {
            auto r = std::make_shared<tessel::CompileResult>();
            r->diagnostics.push_back(failure("the compile failed", nullptr));
            result = r;
        }
        double compileMs = t.nsecsElapsed() / 1e6;
        const bool cancelled = req.control->cancel;
        bool runIt = wantRun && result->ok && latest->load() == gen && !cancelled;
        std::shared_ptr<tessel::RunReport> notRun; // cancelled while compiling: said in place of the run
        if (cancelled && wantRun && result->ok) {
            notRun = std::make_shared<tessel::RunReport>();
            notRun->generator = req.generator;
            notRun->cancelled = true;
            tessel::Diagnostic d;
            d.severity = tessel::Diagnostic::Error;
            d.message = "the run was cancelled before the simulation started";
            notRun->diagnostics.push_back(d);
        }
        QMetaObject::invokeMethod(
            self.data(),
            [self, result, notRun, gen, compileMs, runIt] {
                if (!self) {
                    return;
                }
                if (gen == self->m_generation) {
                    Q_EMIT self->compiled(result, gen, compileMs);
                    if (notRun) {
                        Q_EMIT self->ran(notRun, gen, 0);
                    }
                }
                if (!runIt) {
                    self->jobFinished();
                }
            },
            Qt::QueuedConnection);
        if (!runIt) {
            return;
        }
        t.restart();
        tessel::CompileRequest runReq = req;
        runReq.check_cpu_schedule = false; // the views need the NPU run and its check, not a second CPU JIT
        std::shared_ptr<const tessel::RunReport> report;
        try {
            tessel::RunReport r = tessel::run(runReq, 1, true);
            useUserNames(r);
            report = std::make_shared<const tessel::RunReport>(std::move(r));
        } catch (const std::exception &e) {
            auto r = std::make_shared<tessel::RunReport>();
            r->generator = req.generator;
            r->diagnostics.push_back(failure("the simulation failed", &e));
            report = r;
        } catch (...) {
            auto r = std::make_shared<tessel::RunReport>();
            r->generator = req.generator;
            r->diagnostics.push_back(failure("the simulation failed", nullptr));
            report = r;
        }
        double runMs = t.nsecsElapsed() / 1e6;
        QMetaObject::invokeMethod(
            self.data(),
            [self, report, gen, runMs, partial] {
                if (!self) {
                    return;
                }
                if (gen == self->m_generation) {
                    Q_EMIT self->ran(report, gen, runMs);
                    if (!report->sim && partial->size() > 0) {
                        // What ran before it stopped: the timeline shows it, said as such.
                        std::string why = "the run stopped";
                        for (const auto &d : report->diagnostics) {
                            if (d.severity == tessel::Diagnostic::Error) {
                                why = d.message;
                                break;
                            }
                        }
                        Q_EMIT self->partialRun(
                            partial->snapshot(report->generator,
                                              "partial timeline: the " + std::to_string(partial->size()) +
                                                  " events recorded before the run stopped (" + why + ")"),
                            gen, true);
                    }
                }
                self->jobFinished();
            },
            Qt::QueuedConnection);
    });
}

void CompileService::jobFinished() {
    m_running = false;
    m_control.reset();
    m_partial.reset();
    m_partialTimer.stop();
    Q_EMIT jobDone();
    if (m_pending && !m_debounce.isActive()) {
        startPending();
        return;
    }
    if (!isBusy()) {
        Q_EMIT idle();
    }
}

} // namespace tessel::ide
