#ifndef TESSEL_IDE_VIEWS_LIFETIMEVIEW_H
#define TESSEL_IDE_VIEWS_LIFETIMEVIEW_H

// The buffer-lifetime view: one lane per on-chip memory level, time on x
// (program order, or simulated cycles with the timeline's zoom), address on y;
// a bar per buffer (its copies stacked, so multi-buffer rotation is visible:
// in cycles each copy is drawn where it holds data), the level's capacity as a
// dashed line, an overflowing buffer in red with its directive (at least 16 px
// tall, hatched, whatever its size against the lane). A bar too thin for its
// label has it beside the bar. Click selects the buffer's directive.

#include "ide/core/Geometry.h"

#include <QVector>
#include <QWidget>

namespace tessel::ide {

class Session;

class LifetimeView : public QWidget {
    Q_OBJECT
public:
    enum class TimeAxisKind { ProgramOrder, Cycles };

    explicit LifetimeView(Session *session, QWidget *parent = nullptr);
    void setTimeAxis(TimeAxisKind kind);
    TimeAxisKind timeAxis() const { return m_axis; }
    QSize sizeHint() const override { return {700, 320}; }
    /** The lifetime (index) drawn under a point, or -1. */
    int lifetimeAt(const QPointF &p) const;
    /** The rectangle of lifetime `i` (all copies), as painted. */
    QRectF barRect(int i) const;
    /** The labels the last paint drew: lifetime index, where, and the text shown. */
    struct Label {
        int lifetime = -1;
        QRectF rect;
        QString text;
        bool beside = false; // drawn beside a bar too thin for it
    };
    const QVector<Label> &labels() const { return m_labels; }

protected:
    void paintEvent(QPaintEvent *) override;
    void mouseReleaseEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;

private:
    QRectF laneOf(int levelIndex) const;
    double laneTop(const QString &level) const; // the largest address a lane shows
    TimeAxis xAxis(const QRectF &lane) const;
    bool cyclesShown() const; // cycle axis chosen and a run's cycle lifetimes at hand
    Session *m_session;
    TimeAxisKind m_axis = TimeAxisKind::ProgramOrder;
    QVector<Label> m_labels;
};

} // namespace tessel::ide

#endif
