#ifndef TESSEL_IDE_VIEWS_LIFETIMEVIEW_H
#define TESSEL_IDE_VIEWS_LIFETIMEVIEW_H

// The buffer-lifetime view: one lane per on-chip memory level, program order
// on x, address on y; a bar per buffer (its copies stacked, so multi-buffer
// rotation is visible), the level's capacity as a dashed line, an overflowing
// buffer in red with its directive. Click selects the buffer's directive.

#include <QWidget>

namespace tessel::ide {

class Session;

class LifetimeView : public QWidget {
    Q_OBJECT
public:
    explicit LifetimeView(Session *session, QWidget *parent = nullptr);
    QSize sizeHint() const override { return {700, 320}; }
    /** The lifetime (index) drawn under a point, or -1. */
    int lifetimeAt(const QPointF &p) const;
    /** The rectangle of lifetime `i` (all copies), as painted. */
    QRectF barRect(int i) const;

protected:
    void paintEvent(QPaintEvent *) override;
    void mouseReleaseEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;

private:
    QRectF laneOf(int levelIndex) const;
    double laneTop(const QString &level) const; // the largest address a lane shows
    Session *m_session;
};

} // namespace tessel::ide

#endif
