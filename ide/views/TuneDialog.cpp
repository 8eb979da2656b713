#include "ide/views/TuneDialog.h"

#include "ide/core/Session.h"

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

namespace tessel::ide {

TuneDialog::TuneDialog(Session *session, QWidget *parent) : QDialog(parent), m_session(session) {
    setWindowTitle(tr("Tune %1 on %2").arg(session->generator(), session->archName()));
    auto *l = new QVBoxLayout(this);
    m_text = new QLabel(tr("starting..."));
    m_text->setMinimumWidth(420);
    m_bar = new QProgressBar;
    m_bar->setRange(0, 1000);
    m_cancel = new QPushButton(tr("Cancel"));
    l->addWidget(m_text);
    l->addWidget(m_bar);
    l->addWidget(m_cancel, 0, Qt::AlignRight);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        m_session->tuner()->cancel();
        m_cancel->setEnabled(false);
        m_text->setText(m_text->text() + tr("\ncancelling: the running measurements finish..."));
    });
    connect(session->tuner(), &TuneService::progress, this, [this](const tessel::sched::TuneProgress &p) {
        m_last = p;
        showProgress();
    });
    connect(session, &Session::tuneFinished, this, [this](bool, const QString &message) {
        m_clock.stop();
        m_text->setText(message);
        accept();
    });
    m_clock.setInterval(500); // the ETA and the bar move between measurements too
    connect(&m_clock, &QTimer::timeout, this, [this] {
        m_last.elapsed_s = m_elapsed.elapsed() / 1000.0;
        showProgress();
    });
}

bool TuneDialog::start(double budgetS, int jobs, int maxMeasurements) {
    QString error;
    m_max = maxMeasurements;
    m_last = {};
    m_last.budget_s = budgetS;
    if (!m_session->startTune(budgetS, jobs, maxMeasurements, &error)) {
        m_text->setText(error);
        m_cancel->setText(tr("Close"));
        return false;
    }
    m_elapsed.start();
    m_clock.start();
    showProgress();
    return true;
}

QString TuneDialog::eta(const tessel::sched::TuneProgress &p, int maxMeasurements) {
    double left = std::max(0.0, p.budget_s - p.elapsed_s);
    if (maxMeasurements > 0 && p.measured > 0) {
        double rate = p.elapsed_s / p.measured;
        left = std::min(left, std::max(0, maxMeasurements - p.measured) * rate);
    }
    int s = int(std::ceil(left));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

void TuneDialog::showProgress() {
    const auto &p = m_last;
    QString best = p.best_cycles > 0 ? tr("best so far: efficiency %1 (%2 cycles)").arg(p.best_efficiency, 0, 'f', 3).arg(p.best_cycles)
                                     : tr("best so far: none verified yet");
    m_text->setText(tr("candidates measured %1 (%2 failed, %3 skipped: already in the database)\n%4\nETA %5 (budget %6 s)")
                        .arg(p.measured)
                        .arg(p.failed)
                        .arg(p.skipped)
                        .arg(best, eta(p, m_max))
                        .arg(p.budget_s, 0, 'f', 0));
    m_bar->setValue(p.budget_s > 0 ? int(std::min(1.0, p.elapsed_s / p.budget_s) * 1000) : 0);
}

QString TuneDialog::progressText() const {
    return m_text->text();
}

} // namespace tessel::ide
