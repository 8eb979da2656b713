#include "ide/core/DesktopFiles.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"

#include <QFileInfo>
#include <QSaveFile>
#include <QSettings>

#include <algorithm>

namespace tessel::ide {

namespace {
const char *kRecentKey = "recentSchedules";

QString millions(quint64 n) {
    return QString::number(double(n) / 1e6, 'f', n < 10000000 ? 1 : 0);
}
} // namespace

std::optional<tessel::ScheduleSpec> readScheduleFile(const QString &path, QString *error) {
    try {
        return tessel::load_schedule(path.toStdString());
    } catch (const std::exception &e) { // UserError, or a JSON library error
        if (error) {
            QString what = QString::fromStdString(e.what());
            *error = what.contains(path) ? what : QStringLiteral("%1: %2").arg(path, what);
        }
        return std::nullopt;
    }
}

bool writeScheduleFile(const QString &path, const tessel::ScheduleSpec &spec, QString *error) {
    QSaveFile file(path);
    const QByteArray bytes = QByteArray::fromStdString(tessel::schedule_to_json(spec));
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        if (error) {
            *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        }
        return false;
    }
    return true;
}

QStringList withRecent(QStringList list, const QString &path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kMaxRecent) {
        list.removeLast();
    }
    return list;
}

QStringList recentSchedules() {
    QStringList list = QSettings().value(kRecentKey).toStringList();
    return list.mid(0, kMaxRecent);
}

QStringList addRecentSchedule(const QString &path) {
    QStringList list = withRecent(recentSchedules(), path);
    setRecentSchedules(list);
    return list;
}

void setRecentSchedules(const QStringList &list) {
    QSettings().setValue(kRecentKey, list.mid(0, kMaxRecent));
}

QStringList generatorNames() {
    QStringList names;
    for (const auto &g : tessel::list_generators()) {
        names << QString::fromStdString(g.name);
    }
    names.sort();
    return names;
}

QStringList archPresetNames() {
    QStringList names;
    for (const auto &p : tessel::arch_presets()) {
        names << QString::fromStdString(p);
    }
    return names;
}

std::optional<ProblemChoice> checkProblem(const QString &generator, const QString &paramsText,
                                          const QString &arch, QString *error) {
    try {
        ProblemChoice c;
        c.generator = generator.trimmed();
        c.arch = arch.trimmed();
        const tessel::GeneratorInfo info = tessel::find_generator(c.generator.toStdString());
        c.params = tessel::parse_params(paramsText.trimmed().toStdString());
        tessel::resolve_params(info, c.params);
        tessel::load_arch(c.arch.toStdString());
        return c;
    } catch (const std::exception &e) {
        if (error) {
            *error = QString::fromStdString(e.what());
        }
        return std::nullopt;
    }
}

QSize defaultWindowSize(const QRect &available) {
    const QSize preferred(1600, 1000);
    if (available.isEmpty()) {
        return preferred;
    }
    return QSize(std::min(preferred.width(), available.width() * 9 / 10),
                 std::min(preferred.height(), available.height() * 9 / 10));
}

QString runProgressText(quint64 issued, quint64 budget) {
    const QString limit =
        budget ? QStringLiteral("budget %1 M").arg(millions(budget)) : QStringLiteral("no budget");
    return QStringLiteral("running: %1 M instructions issued (%2) - Esc cancels")
        .arg(millions(issued), limit);
}

} // namespace tessel::ide
