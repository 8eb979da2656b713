// Geometry the IDE's views paint with: time <-> x, address <-> y, tiles -> rectangles, zoom.
#include "ide/core/Geometry.h"
#include "ide/core/ViewState.h"

#include <QSignalSpy>
#include <QtTest>

using namespace tessel::ide;

class TestGeometry : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void timeAxisMapsBothWays() {
        TimeAxis a{1000, 3000, 100, 500}; // 2000 cycles over 400 px
        QCOMPARE(a.scale(), 0.2);
        QCOMPARE(a.mapTimeToX(1000), 100.0);
        QCOMPARE(a.mapTimeToX(2000), 300.0);
        QCOMPARE(a.mapTimeToX(3000), 500.0);
        QCOMPARE(a.mapXToTime(300), 2000.0);
        QCOMPARE(a.mapXToTime(a.mapTimeToX(1234.5)), 1234.5);
        TimeAxis empty{5, 5, 0, 100};
        QCOMPARE(empty.scale(), 0.0);
        QCOMPARE(empty.mapXToTime(50), 5.0);
    }
    void addressAxisPutsZeroAtTheBottom() {
        AddressAxis a{65536, 10, 110}; // 64 KiB over 100 px
        QCOMPARE(a.mapAddressToY(0), 110.0);
        QCOMPARE(a.mapAddressToY(65536), 10.0);
        QCOMPARE(a.mapAddressToY(32768), 60.0);
        QCOMPARE(a.mapYToAddress(60), 32768.0);
        QVERIFY(a.mapAddressToY(131072) < 10.0); // an overflow is drawn above the lane top
    }
    void lanesSplitTheAreaWithGaps() {
        QRectF area(0, 0, 200, 100);
        QRectF l0 = laneRect(area, 3, 0, 5), l2 = laneRect(area, 3, 2, 5);
        QCOMPARE(l0.height(), 30.0);
        QCOMPARE(l0.top(), 0.0);
        QCOMPARE(l2.bottom(), 100.0);
        QCOMPARE(laneRect(area, 0, 0), QRectF());
    }
    void tileGridCutsTheIterationSpace() {
        TileGrid g{512, 256, 128, 128, QRectF(0, 0, 400, 200)}; // 4 x 2 tiles
        QCOMPARE(g.columns(), 4);
        QCOMPARE(g.rows(), 2);
        QCOMPARE(g.tileRect(1, 1), QRectF(100, 100, 100, 100));
        QCOMPARE(g.tileAt(QPointF(150, 150)), std::make_optional(std::make_pair(1, 1)));
        QCOMPARE(g.tileAt(QPointF(399, 10)), std::make_optional(std::make_pair(3, 0)));
        QVERIFY(!g.tileAt(QPointF(401, 10)));
        TileGrid partial{300, 100, 128, 128, QRectF(0, 0, 300, 100)}; // last column is 44 wide
        QCOMPARE(partial.columns(), 3);
        QCOMPARE(partial.rows(), 1);
        QCOMPARE(partial.tileRect(2, 0), QRectF(256, 0, 44, 100));
    }
    void zoomKeepsTheAnchorAndClamps() {
        ZoomRange z{1000, 0, 1000};
        z.zoom(4, 500); // 250 cycles around 500
        QCOMPARE(z.start, 375.0);
        QCOMPARE(z.end, 625.0);
        z.pan(1000); // clamped at the end
        QCOMPARE(z.end, 1000.0);
        QCOMPARE(z.start, 750.0);
        z.zoom(0.01, 0); // zooming out past the full range clamps to it
        QCOMPARE(z.start, 0.0);
        QCOMPARE(z.end, 1000.0);
    }
    void viewStateIsShared() {
        ViewState v;
        QSignalSpy zoom(&v, &ViewState::zoomChanged), sel(&v, &ViewState::selectionChanged);
        v.setLength(2000);
        v.zoomBy(2, 1000);
        QCOMPARE(v.zoom().start, 500.0);
        v.selectDirective("stage_A");
        v.selectDirective("stage_A"); // no second signal for the same selection
        QCOMPARE(zoom.count(), 2);
        QCOMPARE(sel.count(), 1);
        QCOMPARE(sel.at(0).at(0).toString(), QString("stage_A"));
    }
};

QTEST_GUILESS_MAIN(TestGeometry)
#include "test_ide_geometry.moc"
