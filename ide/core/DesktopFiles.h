#ifndef TESSEL_IDE_CORE_DESKTOPFILES_H
#define TESSEL_IDE_CORE_DESKTOPFILES_H

// The non-widget part of the IDE's File menu and window habits: reading and
// writing a schedule file, the recent-schedules list (QSettings), checking a
// problem (generator + params + arch) before Session::open, the default window
// size for a screen and the status bar's run-progress text. Plain functions,
// tested without a window (tests/ide/test_ide_desktop.cpp).

#include "dsl/Compile.h"

#include <QRect>
#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

namespace tessel::ide {

/** The schedule in the JSON file at `path`; nullopt with `error` ("PATH: what is wrong"). */
std::optional<tessel::ScheduleSpec> readScheduleFile(const QString &path, QString *error = nullptr);
/** Writes `spec` as canonical JSON to `path`, atomically (QSaveFile); false with `error`. */
bool writeScheduleFile(const QString &path, const tessel::ScheduleSpec &spec,
                       QString *error = nullptr);

/** Recent schedule files, newest first, at most kMaxRecent, kept in QSettings
 * under "recentSchedules". */
constexpr int kMaxRecent = 8;
/** `list` with `path` (made absolute) moved to the front, duplicates removed, cut to kMaxRecent. */
QStringList withRecent(QStringList list, const QString &path);
QStringList recentSchedules();
/** Adds `path` to the stored list and returns the new list. */
QStringList addRecentSchedule(const QString &path);
void setRecentSchedules(const QStringList &list);

/** Names of the registered generators (tessel::list_generators), sorted. */
QStringList generatorNames();
/** Names of the shipped arch presets (tessel::arch_presets). */
QStringList archPresetNames();

/** A problem checked before it is opened: Session::open changes nothing only for some errors,
 * so the File > Open problem dialog checks everything first. */
struct ProblemChoice {
    QString generator;
    tessel::ParamMap params;
    QString arch;
};
/** Parses `paramsText` (K=V,...) and checks generator, params and arch (preset or file);
 * nullopt with the error naming what is wrong. */
std::optional<ProblemChoice> checkProblem(const QString &generator, const QString &paramsText,
                                          const QString &arch, QString *error = nullptr);

/** min(1600x1000, 90 % of `available`) (an empty `available`: 1600x1000). */
QSize defaultWindowSize(const QRect &available);

/** "running: N M instructions issued (budget B M) - Esc cancels" (budget 0: "no budget"). */
QString runProgressText(quint64 issued, quint64 budget);

} // namespace tessel::ide

#endif
