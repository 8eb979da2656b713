// Two runs side by side (issue 29, item 3): pin a run of GEMM tiled_staged as the baseline,
// change the k_chunks factor, and the Baseline tab shows both runs — the metrics with their
// change (cycles, busy/stall per pipe, bytes per edge, speed of light), the field-level
// schedule diff (exactly the factor that changed), both timelines at one scale — and says
// when the open problem is another one. Also through the window's Ctrl+B.
#include "ide/core/RunComparison.h"
#include "ide/core/Session.h"
#include "ide/views/BaselineView.h"
#include "ide/views/MainWindow.h"

#include <QTableWidget>
#include <QtTest>

using namespace tessel::ide;

namespace {
tessel::ScheduleSpec tiledStaged() {
    return tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) +
                                 "/samples/gemm/schedules/tiled_staged.json");
}
bool settled(Session &s) {
    QElapsedTimer t;
    t.start();
    while ((s.service()->isBusy() || !s.lastRun()) && t.elapsed() < 60000) {
        QTest::qWait(20);
    }
    return !s.service()->isBusy() && s.lastRun() && s.lastRun()->verified;
}
const MetricDelta *metric(const RunComparison &c, const QString &name) {
    for (const auto &m : c.metrics) {
        if (m.name == name) {
            return &m;
        }
    }
    return nullptr;
}
} // namespace

class TestBaseline : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aPinnedRunAgainstTheCurrentOne() {
        Session s;
        s.setAutosavePath(QString());
        s.service()->setDebounceMs(10);
        BaselineView view(&s);
        view.resize(800, 600);
        QVERIFY(!view.setBaseline()); // nothing ran yet
        QString error;
        QVERIFY2(s.open("gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, "ascend-like",
                        tiledStaged(), &error),
                 qPrintable(error));
        QVERIFY(settled(s));
        const qint64 baseCycles = *s.lastRun()->cycles;
        QVERIFY(view.setBaseline());
        const int row = s.schedule()->rowOf("k_chunks");
        QVERIFY(s.schedule()->setField(row, "factor", "32"));
        QVERIFY(settled(s));
        const qint64 curCycles = *s.lastRun()->cycles;
        QVERIFY(curCycles != baseCycles);

        const RunComparison &c = view.comparison();
        const MetricDelta *cyc = metric(c, "cycles");
        QVERIFY(cyc && cyc->hasA && cyc->hasB);
        QCOMPARE(qint64(cyc->a), baseCycles);
        QCOMPARE(qint64(cyc->b), curCycles);
        QCOMPARE(cyc->verdict(), curCycles < baseCycles ? 1 : -1);
        QVERIFY(metric(c, "busy MTE2") && metric(c, "stall S"));
        QVERIFY(metric(c, "bytes MTE2 GM->L1"));
        QVERIFY(metric(c, "speed of light GM read"));
        const MetricDelta *eff = metric(c, "efficiency");
        QVERIFY(eff && !eff->lowerIsBetter);
        QCOMPARE(eff->verdict(),
                 cyc->verdict()); // fewer cycles is higher efficiency: both better (or worse)
        // The field-level diff: only k_chunks changed, and only its factor.
        int changed = 0;
        for (const auto &d : c.schedule.directives) {
            if (d.kind == DirectiveDiffRow::Same) {
                continue;
            }
            changed++;
            QVERIFY2(d.id == "k_chunks", qPrintable(d.id + ": " + d.a + " vs " + d.b + " [" +
                                                    d.fields.join("; ") + "]"));
            QCOMPARE(d.kind, DirectiveDiffRow::Changed);
            QCOMPARE(d.fields.size(), 1);
            QCOMPARE(d.fields[0], QString("factor: 64 -> 32"));
        }
        QCOMPARE(changed, 1);
        // The tables and the strip show it.
        QCOMPARE(view.metricsTable()->rowCount(), c.metrics.size());
        QCOMPARE(view.metricsTable()->item(0, 0)->text(), QString("cycles"));
        QCOMPARE(view.metricsTable()->item(0, 1)->text(), QString::number(baseCycles));
        QCOMPARE(view.metricsTable()->item(0, 2)->text(), QString::number(curCycles));
        bool diffShown = false;
        for (int r = 0; r < view.directivesTable()->rowCount(); ++r) {
            diffShown =
                diffShown || (view.directivesTable()->item(r, 0)->text() == "k_chunks" &&
                              view.directivesTable()->item(r, 3)->text() == "factor: 64 -> 32");
        }
        QVERIFY(diffShown);
        QCOMPARE(view.strip()->scaleCycles(), double(std::max(baseCycles, curCycles)));
        QVERIFY(view.strip()->pipes().contains("MTE2") && view.strip()->pipes().contains("M"));

        // Another problem: the baseline stays, nothing is compared.
        QVERIFY(s.open("gemm", {{"M", "128"}, {"N", "128"}, {"K", "128"}}, "ascend-like",
                       tiledStaged(), &error));
        QVERIFY(settled(s));
        QVERIFY(view.hasBaseline());
        QVERIFY(view.comparison().metrics.isEmpty());
        QCOMPARE(view.metricsTable()->rowCount(), 0);
    }

    void ctrlBInTheWindowPinsTheRun() {
        Session s;
        s.setAutosavePath(QString());
        s.service()->setDebounceMs(10);
        QString error;
        QVERIFY(s.open("gemm", {{"M", "128"}, {"N", "128"}, {"K", "128"}}, "ascend-like",
                       tiledStaged(), &error));
        QVERIFY(settled(s));
        MainWindow w(&s);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        auto *view = w.findChild<BaselineView *>();
        QVERIFY(view && !view->hasBaseline());
        QTest::keyClick(&w, Qt::Key_B, Qt::ControlModifier);
        QVERIFY(view->hasBaseline());
    }
};

QTEST_MAIN(TestBaseline)
#include "test_ide_baseline.moc"
