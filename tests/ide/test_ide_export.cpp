// Export from the IDE (ide/core/LibraryExport): the schedule being edited
// becomes a one-kernel library through the same exporter as `tessel export`.
#include "ide/core/LibraryExport.h"

#include "dsl/ScheduleSpec.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

using namespace tessel::ide;

class TestIdeExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exportsTheEditedSchedule() {
        tessel::CompileRequest req;
        req.generator = "gemm";
        req.params = {{"M", "32"}, {"N", "32"}, {"K", "32"}, {"dtype", "int8"}};
        tessel::Schedule s;
        s.func("C").tile("j", "i", "jo", "io", "ji", "ii", 16, 16);
        s.func("acc").compute_at("C", "jo");
        req.schedule = s.spec();
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        LibraryExportResult r = exportLibrary(req, dir.path(), QStringLiteral("idekernels"));
        QVERIFY2(r.ok, qPrintable(r.message));
        QVERIFY(QFileInfo(r.staticLibrary).size() > 0);
        QVERIFY(QFileInfo(r.header).size() > 0);
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("idekernels.schedule.json"))));
        QFile h(r.header);
        QVERIFY(h.open(QIODevice::ReadOnly));
        QVERIFY2(h.readAll().contains("idekernels"), "the header declares the kernel");
    }
    void refusesABadNameAndAFailingSchedule() {
        tessel::CompileRequest req;
        req.generator = "gemm";
        req.params = {{"M", "32"}, {"N", "32"}, {"K", "32"}, {"dtype", "int8"}};
        QTemporaryDir dir;
        LibraryExportResult bad = exportLibrary(req, dir.path(), QStringLiteral("9lives"));
        QVERIFY(!bad.ok);
        QVERIFY2(bad.message.contains(QStringLiteral("9lives")), qPrintable(bad.message));
        tessel::Schedule s;
        s.func("C").split("nosuchvar", "a", "b", 4);
        req.schedule = s.spec();
        LibraryExportResult fail = exportLibrary(req, dir.path(), QStringLiteral("broken"));
        QVERIFY(!fail.ok);
        QVERIFY2(fail.message.contains(QStringLiteral("nosuchvar")), qPrintable(fail.message));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("libbroken.a"))));
    }
};

QTEST_GUILESS_MAIN(TestIdeExport)
#include "test_ide_export.moc"
