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
// Flow arrows (as Perfetto's): from a set_flag's end to the end of the wait it
// released, from a barrier's last drained event to the barrier's release, for
// the hovered or clicked event, or for every one (A). The critical path
// (criticalPath in core/TimeRange.h; C) outlines its bars, joins them and names
// each pipe's share. Ctrl+F (scoped to this widget) searches the events'
// mnemonic, pipe, levels, stall reason and directive; Enter / Shift+Enter walk
// the matches (centred, zoomed in when small), Esc closes.

#include "ide/core/Geometry.h"
#include "ide/core/TimeRange.h"

#include <QHash>
#include <QVector>
#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
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

/** A flow arrow: from `from`'s end (a set_flag; a barrier's drained event) to where `to` (the
 * wait) was released, both at the centre of their rows. */
struct FlowArrow {
    int from = -1, to = -1;
    QPointF p0, p1;
    bool barrier = false;
};

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(Session *session, QWidget *parent = nullptr);
    ~TimelineView() override;
    /** The cycle labels the last paint drew on the ruler (where, and the number). */
    const QVector<QPair<QRectF, QString>> &rulerLabels() const { return m_rulerLabels; }
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

    /** The clicked event (arrows are drawn for it when nothing is hovered); -1: none. */
    int focusEvent() const { return m_focusEvent; }
    void setFocusEvent(int event);
    /** A: arrows for every wait instead of the hovered / clicked event only. */
    bool showAllArrows() const { return m_allArrows; }
    void setShowAllArrows(bool on);
    /** The arrows drawn now (culled to the visible cycles in the all mode). */
    QVector<FlowArrow> arrows() const;
    /** Where wait event `i` was let go (a pipe's WAIT_FLAG: its end; the scalar unit's wait,
     * barrier, END: the end of its stall, before its issue slot). */
    uint64_t releaseOf(int i) const;
    /** C: draw the critical path. */
    bool showCriticalPath() const { return m_showPath; }
    void setShowCriticalPath(bool on);
    /** The critical path of the run shown (computed once per run). */
    const CriticalPath &criticalPath() const;
    /** "critical path 16366 cycles (0 - 16366): MTE2 62%, ..." ("" without a run). */
    QString criticalPathText() const;

    /** Ctrl+F: the search field over the timeline (hidden until opened). */
    QLineEdit *searchField() const { return m_search; }
    void openSearch();
    void closeSearch();
    /** The events matching the search text, in time order (empty when closed). */
    const QVector<int> &searchMatches() const { return m_matches; }
    /** The match Enter moved to (an event index), or -1. */
    int currentMatch() const;
    /** Enter / Shift+Enter: centres the next / previous match (zooming in on a small one). */
    void findNext(bool backward = false);

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
    void resizeEvent(QResizeEvent *e) override;
    bool eventFilter(QObject *o, QEvent *e) override;

private:
    int rowOfPipe(const std::string &pipe) const;
    void paintArrows(QPainter &p, const TimeAxis &ax) const;
    void paintCriticalPath(QPainter &p, const QRectF &area, const TimeAxis &ax) const;
    void updateMatches();
    void placeSearch();
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
    mutable std::unique_ptr<CriticalPath> m_path;
    // The waits in trace order, and per event the waits it released or preceded (once per run).
    mutable std::vector<size_t> m_waits;
    mutable QHash<int, QVector<int>> m_waitsOf;
    mutable bool m_linksIndexed = false;
    mutable QVector<QString> m_haystack; // per event: what the search looks in (lower case)
    int m_focusEvent = -1, m_hoverEvent = -1;
    bool m_allArrows = false, m_showPath = false;
    QWidget *m_searchBar = nullptr;
    QLineEdit *m_search = nullptr;
    QLabel *m_searchStatus = nullptr;
    QVector<int> m_matches;
    int m_match = -1; // index into m_matches
    QVector<QPair<QRectF, QString>> m_rulerLabels;
};

} // namespace tessel::ide

#endif
