#include "ide/core/Geometry.h"

#include <algorithm>
#include <cmath>

namespace tessel::ide {

double TimeAxis::scale() const {
    return t1 > t0 ? (x1 - x0) / (t1 - t0) : 0.0;
}

double TimeAxis::mapTimeToX(double t) const {
    return x0 + (t - t0) * scale();
}

double TimeAxis::mapXToTime(double x) const {
    double s = scale();
    return s > 0 ? t0 + (x - x0) / s : t0;
}

double AddressAxis::mapAddressToY(double address) const {
    if (top <= 0) {
        return yBottom;
    }
    return yBottom - (address / top) * (yBottom - yTop);
}

double AddressAxis::mapYToAddress(double y) const {
    if (yBottom <= yTop) {
        return 0;
    }
    return (yBottom - y) / (yBottom - yTop) * top;
}

QRectF laneRect(const QRectF &area, int count, int index, double gap) {
    if (count <= 0) {
        return {};
    }
    double h = (area.height() - gap * (count - 1)) / count;
    return QRectF(area.left(), area.top() + index * (h + gap), area.width(), std::max(0.0, h));
}

int TileGrid::columns() const {
    return tileWidth > 0 ? int((width + tileWidth - 1) / tileWidth) : 0;
}

int TileGrid::rows() const {
    return tileHeight > 0 ? int((height + tileHeight - 1) / tileHeight) : 0;
}

QRectF TileGrid::elementRect(int64_t x, int64_t y, int64_t w, int64_t h) const {
    if (width <= 0 || height <= 0) {
        return {};
    }
    int64_t xe = std::min(width, x + w), ye = std::min(height, y + h);
    double sx = area.width() / double(width), sy = area.height() / double(height);
    return QRectF(area.left() + x * sx, area.top() + y * sy, (xe - x) * sx, (ye - y) * sy);
}

QRectF TileGrid::tileRect(int column, int row) const {
    return elementRect(int64_t(column) * tileWidth, int64_t(row) * tileHeight, tileWidth, tileHeight);
}

std::optional<std::pair<int, int>> TileGrid::tileAt(const QPointF &p) const {
    if (!area.contains(p) || width <= 0 || height <= 0) {
        return std::nullopt;
    }
    double ex = (p.x() - area.left()) / area.width() * width;
    double ey = (p.y() - area.top()) / area.height() * height;
    int c = int(int64_t(ex) / tileWidth), r = int(int64_t(ey) / tileHeight);
    if (c >= columns() || r >= rows()) {
        return std::nullopt;
    }
    return std::make_pair(c, r);
}

void ZoomRange::clamp() {
    double minWidth = std::max(1e-9 * length, 1e-9);
    double w = std::clamp(end - start, minWidth, length);
    start = std::clamp(start, 0.0, length - w);
    end = start + w;
}

void ZoomRange::zoom(double factor, double anchor) {
    if (factor <= 0) {
        return;
    }
    double w = (end - start) / factor;
    double f = end > start ? (anchor - start) / (end - start) : 0.5;
    start = anchor - f * w;
    end = start + w;
    clamp();
}

void ZoomRange::pan(double delta) {
    start += delta;
    end += delta;
    clamp();
}

void ZoomRange::reset() {
    start = 0;
    end = length;
}

} // namespace tessel::ide
