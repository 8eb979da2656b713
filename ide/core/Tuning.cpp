#include "ide/core/Tuning.h"

#include "npu_target/common/Error.h"

#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace tessel::ide {

namespace {
tessel::ScheduleSpec withoutIds(tessel::ScheduleSpec s) {
    for (auto &d : s.directives) {
        d.id.clear();
    }
    return s;
}
} // namespace

ModelPrediction predictSchedule(const tessel::CompileRequest &req, int timelineIters) {
    ModelPrediction out;
    try {
        tessel::ArchSpec arch = tessel::load_arch(req.arch);
        tessel::sched::SearchSpace space(tessel::sched::make_problem(req.generator, req.params, arch));
        const tessel::ScheduleSpec want = withoutIds(req.schedule);
        for (const auto &c : space.enumerate()) {
            if (withoutIds(space.to_spec(c)) == want) {
                out.ok = true;
                out.candidate = c;
                out.prediction = tessel::sched::predict(space, c, timelineIters);
                return out;
            }
        }
        out.why = "the cost model predicts the tuner's schedules (and the samples' hand schedules); this one is not "
                  "in its search space";
    } catch (const tessel::UserError &e) {
        out.why = e.what();
    }
    return out;
}

TuneService::TuneService(QObject *parent) : QObject(parent) {
    m_pool.setMaxThreadCount(1); // the tuner starts its own measurement workers
}

TuneService::~TuneService() {
    cancel();
    wait();
}

void TuneService::cancel() {
    if (m_cancel) {
        m_cancel->store(true);
        return;
    }
    m_cancelEarly = true; // before start(): a caller waiting to start it (Session::startTune)
}

void TuneService::wait() {
    m_pool.waitForDone();
}

bool TuneService::start(tessel::sched::TuneOptions options) {
    if (m_running) {
        return false;
    }
    m_running = true;
    m_cancel = std::make_shared<std::atomic<bool>>(m_cancelEarly);
    m_cancelEarly = false;
    auto cancelFlag = m_cancel;
    QPointer<TuneService> self(this);
    (void)QtConcurrent::run(&m_pool, [self, cancelFlag, options]() mutable {
        options.cancel = cancelFlag.get();
        options.on_progress = [self](const tessel::sched::TuneProgress &p) {
            QMetaObject::invokeMethod(
                self.data(),
                [self, p] {
                    if (self) {
                        Q_EMIT self->progress(p);
                    }
                },
                Qt::QueuedConnection);
        };
        std::shared_ptr<const tessel::sched::TuneResult> result;
        QString error;
        try {
            result = std::make_shared<const tessel::sched::TuneResult>(tessel::sched::tune(options));
        } catch (const std::exception &e) { // UserError: a problem the tuner does not handle, a bad database
            error = QString::fromStdString(e.what());
        }
        bool cancelled = cancelFlag->load();
        QMetaObject::invokeMethod(
            self.data(),
            [self, result, error, cancelled] {
                if (!self) {
                    return;
                }
                self->m_running = false;
                self->m_cancel.reset();
                Q_EMIT self->finished(result, error, cancelled);
            },
            Qt::QueuedConnection);
    });
    return true;
}

} // namespace tessel::ide
