#ifndef TESSEL_IDE_CORE_GEOMETRY_H
#define TESSEL_IDE_CORE_GEOMETRY_H

// Pure geometry the views paint with (no widgets, no painting): time or program
// order <-> x, address <-> y, a tile of an iteration space -> rectangle, a zoom
// range. Unit-tested in tests/ide/test_geometry.cpp.

#include <QPointF>
#include <QRectF>

#include <cstdint>
#include <optional>
#include <utility>

namespace tessel::ide {

/** A visible range of time (cycles, or program order) mapped onto [x0, x1]. */
struct TimeAxis {
    double t0 = 0, t1 = 1; // visible range
    double x0 = 0, x1 = 1; // pixels

    double mapTimeToX(double t) const;
    double mapXToTime(double x) const;
    /** Pixels per unit of time (0 for an empty range). */
    double scale() const;
};

/** Addresses [0, top) of one memory level mapped onto a lane [yTop, yBottom]:
 * address 0 at the bottom, `top` at the top. */
struct AddressAxis {
    double top = 1;             // the largest address shown (the level's size, or more on an overflow)
    double yTop = 0, yBottom = 1;

    double mapAddressToY(double address) const;
    double mapYToAddress(double y) const;
};

/** `count` equal lanes stacked top to bottom in `area`, `gap` pixels apart. */
QRectF laneRect(const QRectF &area, int count, int index, double gap = 4);

/** An iteration space of width x height elements (x innermost) cut into tiles
 * of tileWidth x tileHeight, drawn into `area` (the whole space fills it). */
struct TileGrid {
    int64_t width = 1, height = 1;
    int64_t tileWidth = 1, tileHeight = 1;
    QRectF area;

    int columns() const;
    int rows() const;
    /** The rectangle of tile (column, row); partial tiles at the edge are clipped. */
    QRectF tileRect(int column, int row) const;
    /** The rectangle of elements [x, x+w) x [y, y+h). */
    QRectF elementRect(int64_t x, int64_t y, int64_t w, int64_t h) const;
    /** The tile under `p`, if any. */
    std::optional<std::pair<int, int>> tileAt(const QPointF &p) const;
};

/** The visible part [start, end] of a full range [0, length], with zoom and pan
 * clamped to the full range (what every timeline shares). */
struct ZoomRange {
    double length = 1;
    double start = 0, end = 1;

    /** Zooms by `factor` (> 1 zooms in) keeping `anchor` (a time) in place. */
    void zoom(double factor, double anchor);
    /** Moves the window by `delta` (time units), clamped. */
    void pan(double delta);
    void reset();
    /** Clamps start/end into [0, length] keeping a minimum width of 1e-9 * length. */
    void clamp();
};

} // namespace tessel::ide

#endif
