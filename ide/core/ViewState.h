#ifndef TESSEL_IDE_CORE_VIEWSTATE_H
#define TESSEL_IDE_CORE_VIEWSTATE_H

// The one zoom/selection object every view shares (as hotspot's
// FilterAndZoomStack): the visible cycle range of the timelines and the
// selected schedule directive (by id). Views read it and ask it to change;
// they never keep their own copy.

#include "ide/core/Geometry.h"

#include <QObject>
#include <QString>

namespace tessel::ide {

class ViewState : public QObject {
    Q_OBJECT
public:
    explicit ViewState(QObject *parent = nullptr);

    const ZoomRange &zoom() const { return m_zoom; }
    /** A new full range (a new run): the zoom resets when the length changed. */
    void setLength(double length);
    void zoomBy(double factor, double anchor);
    void panBy(double delta);
    void resetZoom();
    /** Shows [start, end] (clamped to the full range). */
    void zoomTo(double start, double end);

    QString selectedDirective() const { return m_selected; }
    void selectDirective(const QString &id);

Q_SIGNALS:
    void zoomChanged();
    void selectionChanged(const QString &directiveId);

private:
    ZoomRange m_zoom;
    QString m_selected;
};

} // namespace tessel::ide

#endif
