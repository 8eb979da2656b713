#ifndef TESSEL_IDE_VIEWS_BASELINEVIEW_H
#define TESSEL_IDE_VIEWS_BASELINEVIEW_H

// Two runs side by side: "Set baseline" pins the current run and its schedule;
// every later run of the same problem is shown against it — both timelines at
// one time scale (a row per pipe, baseline above current), the metrics with
// their change (green: better, red: worse) and the field-level schedule diff
// (RunComparison). A baseline of another problem is kept but not compared.

#include "ide/core/RunComparison.h"
#include "ide/core/Session.h"

#include <QWidget>

#include <memory>

class QLabel;
class QPushButton;
class QTableWidget;

namespace tessel::ide {

/** Both runs' pipe occupancy at one scale (baseline row above current row per pipe). */
class RunStrip : public QWidget {
    Q_OBJECT
public:
    explicit RunStrip(QWidget *parent = nullptr);
    void setRuns(std::shared_ptr<const tessel::RunReport> a,
                 std::shared_ptr<const tessel::RunReport> b);
    /** Pipes drawn (the union, in first-seen order) and the shared cycle scale. */
    QStringList pipes() const { return m_pipes; }
    double scaleCycles() const { return m_scale; }
    /** x of cycle `c` in this widget's width. */
    double xOf(double c) const;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *e) override;

private:
    std::shared_ptr<const tessel::RunReport> m_a, m_b;
    QStringList m_pipes;
    double m_scale = 1;
};

class BaselineView : public QWidget {
    Q_OBJECT
public:
    explicit BaselineView(Session *session, QWidget *parent = nullptr);
    /** Pins the last run (and the schedule it ran) as the baseline; false when there is no run. */
    bool setBaseline();
    bool hasBaseline() const { return bool(m_base); }
    /** The comparison on screen (empty metrics when there is none). */
    const RunComparison &comparison() const { return m_cmp; }
    RunStrip *strip() const { return m_strip; }
    QTableWidget *metricsTable() const { return m_metrics; }
    QTableWidget *directivesTable() const { return m_directives; }

private:
    void refresh();
    Session *m_session;
    std::shared_ptr<const tessel::RunReport> m_base;
    tessel::ScheduleSpec m_baseSpec;
    QString m_baseProblem; // generator (params) on arch
    RunComparison m_cmp;
    QLabel *m_title;
    QPushButton *m_set;
    RunStrip *m_strip;
    QTableWidget *m_metrics, *m_directives;
};

} // namespace tessel::ide

#endif
