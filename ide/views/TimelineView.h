#ifndef TESSEL_IDE_VIEWS_TIMELINEVIEW_H
#define TESSEL_IDE_VIEWS_TIMELINEVIEW_H

// The DMA/pipe timeline: one row per pipe, a bar per traced instruction
// (simulated cycles on x, zoom/pan shared through ViewState), idle time shaded,
// hover details, click selects the bar's directive. With the cost model shown,
// a second group of rows ("model MTE2", ...) holds the cost model's predicted
// timeline (scheduler/CostModel.h) on the same axis.

#include "ide/core/Geometry.h"

#include <QWidget>

namespace tessel::ide {

class Session;

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(Session *session, QWidget *parent = nullptr);
    QSize sizeHint() const override { return {900, 260}; }
    /** The event under a point (index into the trace), or -1. */
    int eventAt(const QPointF &p) const;
    void setShowPrediction(bool on);
    bool showPrediction() const { return m_showPrediction; }
    /** The predicted pipes drawn now (empty when hidden or when there is no prediction). */
    QStringList predictedPipes() const;

protected:
    void paintEvent(QPaintEvent *) override;
    void wheelEvent(QWheelEvent *e) override;
    void mousePressEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;
    void mouseReleaseEvent(QMouseEvent *e) override;

private:
    QRectF plotArea() const;
    TimeAxis axis() const;
    int rowCount() const;
    Session *m_session;
    bool m_showPrediction = false;
    double m_dragX = -1;
    bool m_dragged = false;
};

} // namespace tessel::ide

#endif
