// The roofline chart says what `tessel run` says (issue 29: "the roofline's points match
// tessel run's numbers"). The IDE runs a schedule; the same problem goes through the
// `tessel run --report-json` program; every point the chart draws (the schedule's point
// under each memory roof, the physical limit's) and every roof line must be the report's
// numbers. Changing the tiling moves the schedule's point on the L2 read roof (the
// operands' re-reads; the chart's single point used to stay at the compulsory intensity
// whatever the schedule; HBM's stays there while the 192 MB L2 holds both operands),
// softmax gets a vector roof, and no point sits above its roof.
#include "ide/core/Session.h"
#include "ide/views/MetricsView.h"

#include <QChart>
#include <QChartView>
#include <QGraphicsSimpleTextItem>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineSeries>
#include <QProcess>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace tessel::ide;

namespace {

QString sourceDir() {
    return QString::fromUtf8(TESSEL_SOURCE_DIR);
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

struct Problem {
    QString generator;
    tessel::ParamMap params;
    QString schedulePath; // under samples/
};

QString paramText(const tessel::ParamMap &p) {
    QStringList parts;
    for (const auto &[k, v] : p) {
        parts << QString::fromStdString(k + "=" + v);
    }
    return parts.join(',');
}

/** `tessel run --report-json` on the problem: its "roofline" object (empty on failure). */
QJsonObject cliRoofline(const Problem &p, const QTemporaryDir &dir, QString *why) {
    const QString report = dir.filePath(p.generator + "-report.json");
    QProcess cli;
    cli.start(QCoreApplication::applicationDirPath() + "/../bin/tessel",
              {"run", "-g", p.generator, "-p", paramText(p.params), "--arch", "ascend-like",
               "--schedule", sourceDir() + "/samples/" + p.schedulePath, "--seed", "1",
               "--report-json", report});
    if (!cli.waitForFinished(120000) || cli.exitCode() != 0) {
        *why = QString::fromLocal8Bit(cli.readAllStandardError());
        return {};
    }
    QFile f(report);
    if (!f.open(QIODevice::ReadOnly)) {
        *why = "no report";
        return {};
    }
    const QJsonObject all = QJsonDocument::fromJson(f.readAll()).object();
    const QString out = QString::fromLocal8Bit(cli.readAllStandardOutput());
    if (!out.contains("roofline: work") || !out.contains("binds: ")) { // the text table too
        *why = "no roofline table in tessel run's output:\n" + out;
        return {};
    }
    return all.value("roofline").toObject();
}

QJsonObject roofNamed(const QJsonObject &rl, const QString &name) {
    for (const auto &v : rl.value("roofs").toArray()) {
        if (v.toObject().value("name").toString() == name) {
            return v.toObject();
        }
    }
    return {};
}

template <typename T>
T *seriesNamed(QChart *chart, const QString &objectName) {
    for (auto *s : chart->series()) {
        if (s->objectName() == objectName) {
            return qobject_cast<T *>(s);
        }
    }
    return nullptr;
}

} // namespace

class TestRoofline : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    /** Opens `p` in a fresh session with a metrics view, waits for its run. */
    bool openAndRun(Session &s, const Problem &p) {
        s.setAutosavePath(QString());
        s.setDatabasePath(m_dir.filePath("tessel.db"));
        s.service()->setDebounceMs(10);
        QString error;
        const auto spec =
            tessel::load_schedule((sourceDir() + "/samples/" + p.schedulePath).toStdString());
        if (!s.open(p.generator, p.params, "ascend-like", spec, &error)) {
            qWarning("%s", qPrintable(error));
            return false;
        }
        QElapsedTimer t;
        t.start();
        while ((s.service()->isBusy() || !s.lastRun()) && t.elapsed() < 120000) {
            QTest::qWait(20);
        }
        return s.lastRun() && s.lastRun()->verified;
    }

    /** The chart's points and roofs are the CLI report's numbers; *l2ReadX: the intensity of
     * the chart's schedule point on the L2 read roof, for the caller's own checks. */
    void chartMatchesCli(const Problem &p, double *l2ReadX = nullptr,
                         QStringList *seriesNames = nullptr, QString *title = nullptr) {
        Session s;
        QVERIFY(openAndRun(s, p));
        MetricsView view(&s);
        auto *chart = static_cast<QChartView *>(view.chartView())->chart();
        QString why;
        const QJsonObject rl = cliRoofline(p, m_dir, &why);
        QVERIFY2(!rl.isEmpty(), qPrintable(why));
        QVERIFY(rl.value("valid").toBool());
        QCOMPARE(qint64(s.lastRun()->cycles.value()), qint64(rl.value("cycles").toDouble()));
        const double achieved = rl.value("achieved_ops_per_cycle").toDouble();
        QVERIFY(achieved > 0);

        auto *schedule = seriesNamed<QScatterSeries>(chart, "schedule");
        auto *limit = seriesNamed<QScatterSeries>(chart, "limit");
        QVERIFY(schedule && limit);
        const QStringList onRoofs = schedule->property("roofs").toStringList();
        QCOMPARE(onRoofs.size(), schedule->count());
        QVERIFY(schedule->count() >= 2); // at least GM read and GM write
        QVERIFY(onRoofs.contains("GM read") && onRoofs.contains("GM write"));
        for (int k = 0; k < schedule->count(); k++) {
            const QJsonObject roof = roofNamed(rl, onRoofs[k]);
            QVERIFY2(!roof.isEmpty(), qPrintable(onRoofs[k]));
            const QPointF pt = schedule->at(k);
            QVERIFY2(close(pt.x(), roof.value("intensity").toDouble()), qPrintable(onRoofs[k]));
            QVERIFY2(close(pt.y(), achieved), qPrintable(onRoofs[k]));
            // The intensity is this run's own traffic, not the compulsory one.
            QVERIFY(close(pt.x() * roof.value("bytes").toDouble(), rl.value("work").toDouble()));
            // Under its roof: the roof's line at x is peak * x.
            QVERIFY2(pt.y() <= roof.value("peak").toDouble() * pt.x() * (1 + 1e-9),
                     qPrintable(onRoofs[k]));
            if (l2ReadX && onRoofs[k] == "L2 read") {
                *l2ReadX = pt.x();
            }
        }
        // The physical limit: on the GM roofs at the compulsory traffic, on the lowest roof.
        const QStringList limitRoofs = limit->property("roofs").toStringList();
        QVERIFY(limitRoofs.contains("GM read"));
        double lowest = 1e300;
        for (const auto &v : rl.value("roofs").toArray()) {
            const QJsonObject roof = v.toObject();
            const double at = roof.value("memory").toBool()
                                  ? roof.value("peak").toDouble() * rl.value("work").toDouble() /
                                        std::max(1.0, roof.value("compulsory_bytes").toDouble())
                                  : roof.value("peak").toDouble();
            if (!roof.value("memory").toBool() || roof.value("compulsory_bytes").toDouble() > 0) {
                lowest = std::min(lowest, at);
            }
        }
        for (int k = 0; k < limit->count(); k++) {
            const QJsonObject roof = roofNamed(rl, limitRoofs[k]);
            QVERIFY(close(limit->at(k).x(),
                          rl.value("work").toDouble() / roof.value("compulsory_bytes").toDouble()));
            QVERIFY(close(limit->at(k).y(), rl.value("limit_ops_per_cycle").toDouble()));
        }
        QVERIFY2(close(rl.value("limit_ops_per_cycle").toDouble(), lowest),
                 qPrintable(QString("limit %1, lowest roof %2")
                                .arg(rl.value("limit_ops_per_cycle").toDouble())
                                .arg(lowest)));
        // Every roof of the report with a compute peak is drawn as that horizontal line.
        for (const auto &v : rl.value("roofs").toArray()) {
            const QJsonObject roof = v.toObject();
            if (roof.value("memory").toBool()) {
                continue;
            }
            auto *line = seriesNamed<QLineSeries>(chart, "roof:" + roof.value("name").toString());
            QVERIFY2(line, qPrintable(roof.value("name").toString()));
            QVERIFY(close(line->at(0).y(), roof.value("peak").toDouble()));
            QVERIFY(achieved <= roof.value("peak").toDouble() * (1 + 1e-9));
        }
        QVERIFY(chart->title().contains(rl.value("binding").toString()));
        // The roofs' labels do not overlap one another (close roofs were drawn on top of each other).
        view.resize(430, 420); // about the dock at 1280x800
        view.show();
        QTest::qWait(50);
        QList<QRectF> labelRects;
        for (auto *item : chart->childItems()) {
            if (auto *t = dynamic_cast<QGraphicsSimpleTextItem *>(item)) {
                labelRects << t->sceneBoundingRect();
            }
        }
        QVERIFY(labelRects.size() >= 3);
        for (int a = 0; a < labelRects.size(); ++a) {
            for (int b = a + 1; b < labelRects.size(); ++b) {
                QVERIFY2(!labelRects[a].intersects(labelRects[b]), "two roof labels overlap");
            }
        }
        for (auto *series : chart->series()) {
            if (seriesNames) {
                *seriesNames << series->objectName();
            }
        }
        if (title) {
            *title = chart->title();
        }
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void gemmPointsMatchTesselRunAndMoveWithTheTiling() {
        double staged = 0, naive = 0;
        chartMatchesCli({"gemm",
                         {{"M", "256"}, {"N", "256"}, {"K", "256"}},
                         "gemm/schedules/tiled_staged.json"},
                        &staged);
        if (QTest::currentTestFailed()) {
            return;
        }
        chartMatchesCli({"gemm",
                         {{"M", "256"}, {"N", "256"}, {"K", "256"}},
                         "gemm/schedules/ascend_b_once.json"},
                        &naive);
        if (QTest::currentTestFailed()) {
            return;
        }
        QVERIFY(staged > 0 && naive > 0);
        QVERIFY2(!close(staged, naive),
                 qPrintable(QString("L2 read intensity %1 for both schedules").arg(staged)));
    }

    void softmaxHasAVectorRoof() {
        QStringList names;
        QString title;
        chartMatchesCli({"softmax", {}, "softmax/schedules/staged_vector.json"}, nullptr, &names,
                        &title);
        if (QTest::currentTestFailed()) {
            return;
        }
        QVERIFY2(names.contains("roof:vector"), qPrintable(names.join(", ")));
        QVERIFY2(title.contains("vector element ops"), qPrintable(title));
    }
};

QTEST_MAIN(TestRoofline)
#include "test_ide_roofline.moc"
