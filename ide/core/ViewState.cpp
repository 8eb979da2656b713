#include "ide/core/ViewState.h"

#include <algorithm>

namespace tessel::ide {

ViewState::ViewState(QObject *parent) : QObject(parent) {}

void ViewState::setLength(double length) {
    if (length == m_zoom.length) {
        return;
    }
    m_zoom.length = length > 0 ? length : 1;
    m_zoom.reset();
    Q_EMIT zoomChanged();
}

void ViewState::zoomBy(double factor, double anchor) {
    m_zoom.zoom(factor, anchor);
    Q_EMIT zoomChanged();
}

void ViewState::panBy(double delta) {
    m_zoom.pan(delta);
    Q_EMIT zoomChanged();
}

void ViewState::resetZoom() {
    m_zoom.reset();
    Q_EMIT zoomChanged();
}

void ViewState::zoomTo(double start, double end) {
    m_zoom.start = std::min(start, end);
    m_zoom.end = std::max(start, end);
    m_zoom.clamp();
    Q_EMIT zoomChanged();
}

void ViewState::selectDirective(const QString &id) {
    if (id == m_selected) {
        return;
    }
    m_selected = id;
    Q_EMIT selectionChanged(id);
}

} // namespace tessel::ide
