#ifndef TESSEL_IDE_VIEWS_TUNEDIALOG_H
#define TESSEL_IDE_VIEWS_TUNEDIALOG_H

// The Tune action's progress dialog: runs the session's tuner (off the GUI
// thread) and shows candidates measured, failed and skipped, the best result
// so far and the time left of the budget; Cancel stops it starting
// measurements. It closes itself when the run ends (the session then loads
// the best schedule into the editor).

#include "scheduler/Tuner.h"

#include <QDialog>
#include <QElapsedTimer>
#include <QTimer>

class QLabel;
class QProgressBar;
class QPushButton;

namespace tessel::ide {

class Session;

class TuneDialog : public QDialog {
    Q_OBJECT
public:
    explicit TuneDialog(Session *session, QWidget *parent = nullptr);
    /** Starts tuning; false (and the reason shown in the dialog) when it cannot. */
    bool start(double budgetS, int jobs, int maxMeasurements = 0);
    QString progressText() const;
    /** "0:12": seconds left, from the budget and (with a measurement cap) the rate so far. */
    static QString eta(const tessel::sched::TuneProgress &p, int maxMeasurements);

private:
    void showProgress();
    Session *m_session;
    QLabel *m_text;
    QProgressBar *m_bar;
    QPushButton *m_cancel;
    QTimer m_clock;
    QElapsedTimer m_elapsed;
    tessel::sched::TuneProgress m_last;
    int m_max = 0;
};

} // namespace tessel::ide

#endif
