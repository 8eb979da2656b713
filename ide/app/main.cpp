// tessel-ide: open a generator, edit its schedule, see what it does.
//   tessel-ide [--generators lib.so] [--open NAME] [--params K=V,...] [--arch PRESET|FILE]
//              [--schedule FILE] [--select ID] [--tile C,R] [--lifetime-cycles] [--cost-model] [--tune SECONDS]
//              [--screenshot OUT.png] [--screenshot-views DIR] [--size WxH]
// Without --schedule the autosaved working schedule is restored when it was
// for the same generator (--no-restore starts empty); one that would run as
// scalar code is restored only if the user says so (else the auto schedule).
#include "ide/core/DesktopFiles.h"
#include "ide/core/Session.h"
#include "ide/views/MainWindow.h"
#include "scheduler/AutoSchedule.h"
#include "ide/views/TilingView.h"
#include "ide/views/TuneDialog.h"

#include "npu_target/common/Error.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QThread>
#include <QTimer>

#include <cstdio>
#include <functional>

using namespace tessel::ide;

namespace {
int fail(const QString &msg) {
    std::fprintf(stderr, "tessel-ide: error: %s\n", qPrintable(msg));
    return 1;
}
} // namespace

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("tessel-ide"));
    QApplication::setOrganizationName(QStringLiteral("tessel")); // QSettings: ~/.config/tessel/tessel-ide.conf
    QCommandLineParser cli;
    cli.setApplicationDescription(QStringLiteral("Tessel IDE: interactive NPU schedule tuning"));
    cli.addHelpOption();
    QCommandLineOption open({"o", "open"}, "generator to open", "NAME", "gemm");
    QCommandLineOption params({"p", "params"}, "generator parameters K=V[,K=V...]", "PARAMS");
    QCommandLineOption arch("arch", "arch preset or ArchSpec JSON file", "ARCH", "ascend-like");
    QCommandLineOption schedule("schedule", "schedule JSON file, or auto (the automatic NPU scheduler)", "FILE");
    QCommandLineOption generators("generators", "load generators from a shared library", "LIB");
    QCommandLineOption select("select", "select a directive (by id) at start", "ID");
    QCommandLineOption screenshot("screenshot", "render the main window to a PNG once every view is populated, then exit", "PNG");
    QCommandLineOption views("screenshot-views", "also write one PNG per view into DIR, then exit", "DIR");
    QCommandLineOption noRestore("no-restore", "do not restore the autosaved schedule");
    QCommandLineOption size("size", "window size WxH (default: 1600x1000 or 90 % of the screen, or the last one)", "WxH");
    QCommandLineOption tile("tile", "select output tile COLUMN,ROW in the tiling view", "C,R");
    QCommandLineOption cycles("lifetime-cycles", "buffer lifetimes in simulated cycles (default: program order)");
    QCommandLineOption model("cost-model", "show the cost model's predicted timeline next to the simulated one");
    QCommandLineOption tuneOpt("tune", "run the Tune action with this budget once the schedule has run (with "
                                       "--screenshot-views: DIR/ide-tune.png is its progress dialog, and the shots "
                                       "show the tuned schedule)", "SECONDS");
    cli.addOptions({open, params, arch, schedule, generators, select, screenshot, views, noRestore, size, tile, cycles,
                    model, tuneOpt});
    cli.process(app);

    tessel::ParamMap paramMap;
    tessel::ScheduleSpec spec;
    try {
        if (cli.isSet(generators)) {
            tessel::load_generator_library(cli.value(generators).toStdString());
        }
        if (cli.isSet(params)) {
            paramMap = tessel::parse_params(cli.value(params).toStdString());
        }
        if (cli.isSet(schedule) && cli.value(schedule) != QStringLiteral("auto")) {
            spec = tessel::load_schedule(cli.value(schedule).toStdString());
        }
    } catch (const tessel::UserError &e) {
        return fail(QString::fromStdString(e.what()));
    }
    QString generator = cli.value(open), archName = cli.value(arch);
    Session session;
    bool declinedAutosave = false; // a scalar autosave the user did not restore: start from the auto schedule
    if (!cli.isSet(schedule) && !cli.isSet(noRestore)) {
        auto saved = readAutosave(session.autosavePath());
        if (saved && saved->generator == generator) {
            try {
                tessel::ScheduleSpec restored = tessel::parse_schedule(saved->scheduleJson.toStdString(), "autosave");
                // A schedule that runs as scalar code (the mmad row deleted, everything undone) would
                // start a long run at once: ask first. Without a user to ask (screenshots), it is
                // not restored.
                const QString scalar = scalarScheduleWarning(restored);
                bool restore = true;
                if (!scalar.isEmpty()) {
                    const bool interactive = !cli.isSet(screenshot) && !cli.isSet(views);
                    restore = interactive &&
                              QMessageBox::question(nullptr, QStringLiteral("Restore the autosaved schedule?"),
                                                    QStringLiteral("The autosaved schedule of %1 (%2) would run as scalar "
                                                                   "code.\n\n%3\n\nRestore it anyway? (No starts "
                                                                   "with the automatic scheduler's schedule.)")
                                                        .arg(saved->generator, saved->arch, scalar),
                                                    QMessageBox::Yes | QMessageBox::No,
                                                    QMessageBox::No) == QMessageBox::Yes;
                    if (!restore) {
                        std::fprintf(stderr,
                                     "tessel-ide: the autosaved schedule in %s was not restored (%s); starting with "
                                     "the automatic scheduler's schedule\n",
                                     qPrintable(session.autosavePath()), qPrintable(scalar));
                        declinedAutosave = true;
                    }
                }
                if (!cli.isSet(params)) { // the problem of the autosave either way
                    paramMap = saved->params;
                }
                if (!cli.isSet(arch)) {
                    archName = saved->arch;
                }
                if (restore) {
                    spec = restored;
                    std::fprintf(stderr, "tessel-ide: restored the working schedule from %s\n",
                                 qPrintable(session.autosavePath()));
                }
            } catch (const tessel::UserError &) {
                // A damaged autosave is ignored: the user starts from an empty schedule.
            }
        }
    }
    if ((cli.isSet(schedule) && cli.value(schedule) == QStringLiteral("auto")) || declinedAutosave) {
        // The automatic NPU scheduler's schedule, before the first compile (docs/autoschedule.md).
        try {
            tessel::AutoSchedule as =
                tessel::auto_schedule_for(generator.toStdString(), paramMap, archName.toStdString());
            for (const auto &n : as.notes) {
                std::fprintf(stderr, "tessel-ide: auto: %s\n", n.c_str());
            }
            for (const auto &w : as.warnings) {
                std::fprintf(stderr, "tessel-ide: warning: auto: %s\n", w.c_str());
            }
            spec = as.spec;
        } catch (const std::exception &e) {
            if (!declinedAutosave) {
                return fail(QString::fromStdString(e.what()));
            }
            std::fprintf(stderr, "tessel-ide: warning: no auto schedule (%s); the editor starts empty\n", e.what());
        }
    }
    QString error;
    if (!session.open(generator, paramMap, archName, spec, &error)) {
        return fail(error);
    }
    MainWindow window(&session);
    // --size and the screenshots are reproducible: no remembered geometry, read or written.
    const bool rememberLayout = !cli.isSet(size) && !cli.isSet(screenshot) && !cli.isSet(views);
    const QScreen *screen = QGuiApplication::primaryScreen();
    const QSize fallback = defaultWindowSize(screen ? screen->availableGeometry() : QRect());
    QStringList wh = cli.value(size).split('x');
    window.resize(wh.value(0).toInt() > 0 ? wh.value(0).toInt() : fallback.width(),
                  wh.value(1).toInt() > 0 ? wh.value(1).toInt() : fallback.height());
    if (rememberLayout) {
        QSettings settings;
        window.restoreLayout(settings);
    }
    if (cli.isSet(select)) {
        session.viewState()->selectDirective(cli.value(select));
    }
    if (cli.isSet(tile)) {
        QStringList cr = cli.value(tile).split(',');
        window.tilingView()->selectTile(cr.value(0).toInt(), cr.value(1).toInt());
    }
    window.setLifetimeCycles(cli.isSet(cycles));
    window.setShowPrediction(cli.isSet(model));
    window.show();
    // --tune: the Tune action once the opened schedule has run.
    TuneDialog *tuneDialog = nullptr;
    bool tuneDone = !cli.isSet(tuneOpt);
    auto startTune = [&] {
        if (tuneDialog) {
            return;
        }
        tuneDialog = new TuneDialog(&session, &window);
        tuneDialog->show();
        tuneDialog->start(cli.value(tuneOpt).toDouble(), std::max(1, QThread::idealThreadCount() - 1));
    };
    QObject::connect(session.tuner(), &TuneService::progress, &app, [&] {
        if (cli.isSet(views) && tuneDialog) { // the last progress before the end stays
            QDir().mkpath(cli.value(views));
            tuneDialog->grab().save(QDir(cli.value(views)).filePath(QStringLiteral("ide-tune.png")));
        }
    });
    if (!cli.isSet(screenshot) && !cli.isSet(views)) {
        if (cli.isSet(tuneOpt)) {
            QObject::connect(&session, &Session::busyChanged, &app, [&](bool busy) {
                if (!busy) {
                    startTune();
                }
            });
        }
        const int code = app.exec();
        if (rememberLayout) {
            QSettings settings;
            window.saveLayout(settings);
        }
        return code;
    }
    // Screenshot mode: wait until the compile (and the run, when it compiles) has landed.
    int status = 0;
    std::function<void()> shoot = [&] {
        if (session.service()->isBusy()) {
            return;
        }
        if (!tuneDone) {
            startTune();
            return;
        }
        QApplication::processEvents();
        if (cli.isSet(select)) { // re-apply so views highlight after the results arrived
            QString id = cli.value(select);
            session.viewState()->selectDirective(QString());
            session.viewState()->selectDirective(id);
        }
        QApplication::processEvents();
        if (cli.isSet(screenshot) && !window.grab().save(cli.value(screenshot))) {
            status = fail(QStringLiteral("cannot write %1").arg(cli.value(screenshot)));
        }
        if (cli.isSet(views)) {
            QDir().mkpath(cli.value(views));
            for (const auto &[name, w] : window.views()) {
                QString path = QDir(cli.value(views)).filePath(QStringLiteral("ide-%1.png").arg(name));
                if (!w->grab().save(path)) {
                    status = fail(QStringLiteral("cannot write %1").arg(path));
                }
            }
        }
        app.exit(status);
    };
    QObject::connect(&session, &Session::busyChanged, &app, [&](bool busy) {
        if (!busy) {
            QTimer::singleShot(50, &app, shoot);
        }
    });
    QObject::connect(&session, &Session::tuneFinished, &app, [&] {
        tuneDone = true;
        QTimer::singleShot(50, &app, shoot); // the tuned schedule may equal the open one (no recompile)
    });
    int waitMs = 120000 + (cli.isSet(tuneOpt) ? int(cli.value(tuneOpt).toDouble() * 1000) : 0);
    QTimer::singleShot(waitMs, &app, [&] { app.exit(fail(QStringLiteral("timed out waiting for the compile"))); });
    return app.exec();
}
