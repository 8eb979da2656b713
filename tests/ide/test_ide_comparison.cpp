// Two schedules side by side: directives aligned by id (same, changed, only in
// one of them) and their results.
#include "ide/core/Comparison.h"

#include <QtTest>

using namespace tessel;
using namespace tessel::ide;

namespace {

HistoryModel::Row row(const ScheduleSpec &s, int64_t cycles, double eff, bool verified) {
    HistoryModel::Row r;
    r.scheduleJson = QString::fromStdString(schedule_to_json(s));
    r.result.simulated_cycles = cycles;
    r.result.efficiency = eff;
    r.result.verified = verified;
    r.result.schedule_hash = schedule_hash(s);
    return r;
}

} // namespace

class TestComparison : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void alignsDirectivesAndShowsResults() {
        Schedule a;
        a.func("C").tile("j", "i", "jo", "io", "ji", "ii", 128, 128).id("tile_C");
        a.func("acc").compute_at("C", "jo").id("acc_at");
        a.stage("A", "L1").at("acc", "jo").buffers(2).id("stage_A");
        Schedule b;
        b.func("C").tile("j", "i", "jo", "io", "ji", "ii", 64, 128).id("tile_C");
        b.func("acc").compute_at("C", "jo").id("acc_at");
        b.func("acc").accumulate_in("L0C").id("acc_L0C");
        ScheduleComparison c = compareSchedules(row(a.spec(), 13727, 0.597, true), row(b.spec(), 20000, 0.41, false));
        QVERIFY(c.error.isEmpty());
        QCOMPARE(c.directives.size(), 4);
        QCOMPARE(c.directives[0].id, QString("tile_C"));
        QCOMPARE(c.directives[0].kind, DirectiveDiffRow::Changed);
        QVERIFY(c.directives[0].a.contains(R"("fx":128)"));
        QVERIFY(c.directives[0].b.contains(R"("fx":64)"));
        QCOMPARE(c.directives[1].kind, DirectiveDiffRow::Same);
        QCOMPARE(c.directives[2].id, QString("stage_A"));
        QCOMPARE(c.directives[2].kind, DirectiveDiffRow::OnlyA);
        QVERIFY(c.directives[2].b.isEmpty());
        QCOMPARE(c.directives[3].id, QString("acc_L0C"));
        QCOMPARE(c.directives[3].kind, DirectiveDiffRow::OnlyB);
        QCOMPARE(c.changed, 1);
        QCOMPARE(c.onlyA, 1);
        QCOMPARE(c.onlyB, 1);
        QCOMPARE(c.metricsA, QString("cycles 13727, efficiency 0.597, verified"));
        QCOMPARE(c.metricsB, QString("cycles 20000, efficiency 0.410, not verified"));
    }
    void aScheduleThatDoesNotParseIsAnError() {
        HistoryModel::Row bad;
        bad.scheduleJson = "{\"directives\": [{\"kind\": 3}]}";
        Schedule s;
        ScheduleComparison c = compareSchedules(bad, row(s.spec(), 1, 1, true));
        QVERIFY(c.error.contains("schedule A"));
    }
};

QTEST_GUILESS_MAIN(TestComparison)
#include "test_ide_comparison.moc"
