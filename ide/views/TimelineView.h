#ifndef TESSEL_IDE_VIEWS_TIMELINEVIEW_H
#define TESSEL_IDE_VIEWS_TIMELINEVIEW_H

// The DMA/pipe timeline: one row per pipe, a bar per traced instruction
// (simulated cycles on x, zoom/pan shared through ViewState), idle time shaded,
// waits drawn as hatched stall spans (core/TimeRange.h says how the trace tells
// them apart), a 1 px gap and alternating shades between adjacent bars, hover
// details (what a wait waits for), click selects the bar's directive.
// Shift+drag selects a cycle range [t0, t1) and an overlay lists per pipe busy /
// stall / idle cycles and per DMA edge the bytes moved in it (summarizeRange);
// Esc or a click clears it; F (or the corner button) zooms to fit the run.
// With the cost model shown, a second group of rows ("model MTE2", ...) holds
// the cost model's predicted timeline (scheduler/CostModel.h) on the same axis.

#include "ide/core/Geometry.h"
#include "ide/core/TimeRange.h"

#include <QWidget>

#include <memory>

class QToolButton;

namespace tessel::ide {

class Session;

/** One rectangle the timeline fills for a simulated row. */
struct TimelineBar {
    QRectF rect;    // the filled rectangle (1 px shorter than the span when it is 3 px or wider)
    int event = -1; // index into the trace
    CycleSpan span; // the cycles it stands for
    bool stall = false;     // a wait (hatched), else the instruction executing
    bool derived = false;   // a stall derived from the trace, not recorded (core/TimeRange.h)
    bool alternate = false; // every other bar of one colour in a row is a shade darker
    int cause = -1;         // a front-end wait for a full queue: the event that made room
    int issued = 0;         // a front-end issue span: how many instructions (0: not replayed)
};

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(Session *session, QWidget *parent = nullptr);
    ~TimelineView() override;
    QSize sizeHint() const override { return {900, 260}; }
    /** The event under a point (index into the trace), or -1. */
    int eventAt(const QPointF &p) const;
    void setShowPrediction(bool on);
    bool showPrediction() const { return m_showPrediction; }
    /** The predicted pipes drawn now (empty when hidden or when there is no prediction). */
    QStringList predictedPipes() const;

    /** The bars of simulated row `row` (TimelineModel::pipes() order) at the current zoom, in time
     * order. */
    QVector<TimelineBar> bars(int row) const;
    /** Cycles <-> x at the current zoom. */
    TimeAxis timeAxis() const { return axis(); }
    /** The lane of simulated row `row`. */
    QRectF laneOf(int row) const;
    /** The tooltip text at a point ("" when nothing is there). */
    QString hoverText(const QPointF &p) const;

    /** The selected cycle range [t0, t1); t1 <= t0 when nothing is selected. */
    bool hasSelection() const { return m_selT1 > m_selT0; }
    QPair<qint64, qint64> selection() const { return {m_selT0, m_selT1}; }
    void setSelection(qint64 t0, qint64 t1);
    void clearSelection();
    /** What the pipes did in the selected range (empty without a selection). */
    RangeSummary selectionSummary() const;
    /** The overlay's lines for the selection ("" without one). */
    QString selectionText() const;
    /** The scalar front end's replay for the run shown (FrontEnd::ok() false without one). */
    const FrontEnd &frontEnd() const;
    /** The "fit" button (zooms to the whole run, as F). */
    QToolButton *fitButton() const { return m_fit; }

Q_SIGNALS:
    void selectionChanged();

protected:
    bool event(QEvent *e) override;
    void paintEvent(QPaintEvent *) override;
    void wheelEvent(QWheelEvent *e) override;
    void mousePressEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;
    void mouseReleaseEvent(QMouseEvent *e) override;
    void keyPressEvent(QKeyEvent *e) override;

private:
    QRectF plotArea() const;
    TimeAxis axis() const;
    int rowCount() const;
    TraceMachine machine() const;
    qint64 timeAt(double x) const;
    const WaitLinks &waitLinks() const;
    /** Replays the front end and links the waits of the run shown, once per run. */
    void analyse() const;
    void forgetRun();
    void paintSelection(QPainter &p, const QRectF &area, const TimeAxis &ax) const;
    Session *m_session;
    QToolButton *m_fit = nullptr;
    bool m_showPrediction = false;
    double m_dragX = -1;
    bool m_dragged = false;
    bool m_selecting = false;
    qint64 m_selAnchor = 0, m_selT0 = 0, m_selT1 = 0;
    // Made from the run shown (forgotten when another one arrives).
    mutable bool m_analysed = false;
    mutable std::unique_ptr<WaitLinks> m_links;
    mutable std::unique_ptr<FrontEnd> m_frontEnd;
    mutable const void *m_summaryOf = nullptr;
    mutable QPair<qint64, qint64> m_summaryRange{0, 0};
    mutable RangeSummary m_summary;
};

} // namespace tessel::ide

#endif
