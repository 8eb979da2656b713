// What the lifetime and tiling views draw for the cases issue 29 found unreadable: a buffer
// that overflows its level by a few KiB (it was a 4 px red strip: now at least 16 px, red and
// hatched, named), a buffer too thin for its label (the label went missing: now beside it),
// captions cut at the pane's edge with no way to read them (now elided, whole in the tooltip),
// and a 4-D convolution drawn as if it were 2-D (now one plane, the others stacked behind it,
// the caption saying how many).
#include "ide/core/Session.h"
#include "ide/views/LifetimeView.h"
#include "ide/views/TilingView.h"
#include "ide/views/TimelineView.h"

#include <QHelpEvent>
#include <QToolTip>
#include <QtTest>

using namespace tessel::ide;

namespace {
tessel::BufferLifetime buffer(const char *name, int64_t offset, int64_t bytes, int64_t first,
                              int64_t last, bool overflow = false) {
    tessel::BufferLifetime l;
    l.name = name;
    l.level = "L1";
    l.offset = offset;
    l.bytes = bytes;
    l.first = first;
    l.last = last;
    l.directive = std::string("stage_") + name;
    l.overflow = overflow;
    return l;
}
} // namespace

class TestViews : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aSmallOverflowAndAThinBufferStayReadable() {
        Session s;
        s.setAutosavePath(QString());
        auto r = std::make_shared<tessel::CompileResult>();
        r->ok = false;
        r->lifetimes = {
            buffer("big", 0, 500 * 1024, 0, 9), buffer("thin", 500 * 1024, 1024, 2, 7),
            buffer("late", 508 * 1024, 8 * 1024, 4, 9, true)}; // ends at 516 KiB > 512 KiB
        s.lifetimes()->setResult(r, {{"L1", 512 * 1024}});
        LifetimeView view(&s);
        view.resize(600, 160);
        const QImage img = view.grab().toImage();
        const QRectF over = view.barRect(2);
        QVERIFY2(over.height() >= 16, qPrintable(QString::number(over.height())));
        const QColor c =
            img.pixelColor(over.center().toPoint() + QPoint(int(over.width() / 2) - 3, 0));
        QVERIFY2(c.red() > 150 && c.green() < 80 && c.blue() < 80, qPrintable(c.name()));
        bool overLabel = false, thinLabel = false;
        for (const auto &l : view.labels()) {
            overLabel = overLabel || (l.lifetime == 2 && l.text.contains("OVERFLOW"));
            if (l.lifetime == 1) {
                thinLabel =
                    l.beside && l.text.startsWith("thin") && view.rect().contains(l.rect.toRect());
            }
        }
        QVERIFY(overLabel);
        QVERIFY2(view.barRect(1).height() < 10,
                 qPrintable(QString::number(view.barRect(1).height())));
        QVERIFY(thinLabel); // drawn beside the 1 KiB bar, inside the view
    }

    void captionsHaveTooltipsAndAConvolutionShowsItsPlanes() {
        Session s;
        s.setAutosavePath(QString());
        s.service()->setRunEnabled(false);
        s.service()->setDebounceMs(10);
        QString error;
        const auto spec = tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) +
                                                "/samples/conv2d/schedules/ops_ascend_3x3.json");
        QVERIFY2(s.open("conv2d",
                        {{"H", "4"},
                         {"W", "32"},
                         {"CI", "32"},
                         {"CO", "128"},
                         {"K", "3"},
                         {"dtype", "fp16"}},
                        "ascend-like", spec, &error),
                 qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!s.service()->isBusy() && s.lastCompile(), 60000);
        QVERIFY(s.lastCompile()->ok);
        TilingView view(&s);
        view.resize(390, 230);
        view.show();
        (void)view.grab();
        QVERIFY(!view.captions().isEmpty());
        int elided = 0;
        bool planes = false;
        for (const auto &c : view.captions()) {
            planes = planes || (c.text.startsWith("output [") && c.text.contains("plane of"));
            if (c.shown == c.text) {
                continue;
            }
            elided++;
            QVERIFY2(c.shown.endsWith(QChar(0x2026)), qPrintable(c.shown)); // "..."
            QHelpEvent help(QEvent::ToolTip, c.rect.center().toPoint(),
                            view.mapToGlobal(c.rect.center().toPoint()));
            QCoreApplication::sendEvent(&view, &help);
            QCOMPARE(QToolTip::text(), c.text);
        }
        QVERIFY(elided > 0); // at this width some are
        QVERIFY(planes);
        // Wide enough, nothing is elided.
        view.resize(1800, 400);
        (void)view.grab();
        for (const auto &c : view.captions()) {
            QCOMPARE(c.shown, c.text);
        }
    }

    // The timeline's ruler: no cycle label leaves the widget ("10000" read "1000" at the right
    // edge), at any width.
    void rulerLabelsStayInside() {
        Session s;
        s.setAutosavePath(QString());
        s.service()->setDebounceMs(10);
        QString error;
        const auto spec = tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) +
                                                "/samples/gemm/schedules/tiled_staged.json");
        QVERIFY(s.open("gemm", {{"M", "128"}, {"N", "128"}, {"K", "128"}}, "ascend-like", spec,
                       &error));
        QTRY_VERIFY_WITH_TIMEOUT(!s.service()->isBusy() && s.lastRun() && s.lastRun()->sim, 60000);
        TimelineView view(&s);
        int checked = 0;
        for (int w = 300; w <= 1300; w += 37) {
            view.resize(w, 200);
            (void)view.grab();
            QVERIFY(!view.rulerLabels().isEmpty());
            double lastRight = -1;
            for (const auto &[r, text] : view.rulerLabels()) {
                QVERIFY2(r.left() >= 0 && r.right() <= w, qPrintable(QString("%1 at %2..%3 of %4")
                                                                         .arg(text)
                                                                         .arg(r.left())
                                                                         .arg(r.right())
                                                                         .arg(w)));
                QVERIFY(r.left() > lastRight); // no overlap
                lastRight = r.right();
                checked++;
            }
        }
        QVERIFY(checked > 50);
    }
};

QTEST_MAIN(TestViews)
#include "test_ide_views.moc"
