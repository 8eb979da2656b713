#include "ide/core/LibraryExport.h"

#include "dsl/ScheduleSpec.h"
#include "export/Export.h"
#include "npu_target/common/Error.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace tessel::ide {

namespace {

bool writeFile(const QString &path, const QByteArray &data, QString &error) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(data) != data.size()) {
        error = QStringLiteral("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

} // namespace

LibraryExportResult exportLibrary(const tessel::CompileRequest &request, const QString &dir, const QString &name) {
    LibraryExportResult r;
    if (!QRegularExpression(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$")).match(name).hasMatch()) {
        r.message = QStringLiteral("library name '%1': use letters, digits and '_', not starting with a digit").arg(name);
        return r;
    }
    if (!QDir().mkpath(dir)) {
        r.message = QStringLiteral("cannot create the folder %1").arg(dir);
        return r;
    }
    const QString schedulePath = QDir(dir).filePath(name + QStringLiteral(".schedule.json"));
    const QString manifestPath = QDir(dir).filePath(name + QStringLiteral(".manifest.json"));
    if (!writeFile(schedulePath, QByteArray::fromStdString(tessel::schedule_to_json(request.schedule)), r.message)) {
        return r;
    }
    QJsonObject params;
    for (const auto &[k, v] : request.params) {
        params.insert(QString::fromStdString(k), QString::fromStdString(v));
    }
    QJsonObject kernel{{QStringLiteral("name"), name},
                       {QStringLiteral("generator"), QString::fromStdString(request.generator)},
                       {QStringLiteral("params"), params},
                       {QStringLiteral("arch"), QString::fromStdString(request.arch)},
                       {QStringLiteral("schedule"), QFileInfo(schedulePath).absoluteFilePath()}};
    QJsonObject manifest{{QStringLiteral("library"), name}, {QStringLiteral("kernels"), QJsonArray{kernel}}};
    if (!writeFile(manifestPath, QJsonDocument(manifest).toJson(), r.message)) {
        return r;
    }
    try {
        tessel::exporter::ExportOptions opt;
        opt.manifest = manifestPath.toStdString();
        opt.out_dir = dir.toStdString();
        tessel::exporter::ExportResult e = tessel::exporter::export_library(opt);
        r.ok = true;
        r.staticLibrary = QString::fromStdString(e.static_library);
        r.header = QString::fromStdString(e.header);
        r.message = QStringLiteral("exported %1 and %2").arg(r.staticLibrary, r.header);
    } catch (const tessel::UserError &e) {
        r.message = QString::fromStdString(e.what());
    } catch (const std::exception &e) {
        r.message = QStringLiteral("export failed: %1").arg(QString::fromUtf8(e.what()));
    }
    return r;
}

} // namespace tessel::ide
