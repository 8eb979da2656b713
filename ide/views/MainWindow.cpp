#include "ide/views/MainWindow.h"

#include "ide/core/DesktopFiles.h"
#include "ide/core/LibraryExport.h"
#include "ide/core/Session.h"
#include "ide/views/BaselineView.h"
#include "ide/views/HistoryView.h"
#include "ide/views/ModelDialog.h"
#include "ide/views/LifetimeView.h"
#include "ide/views/MetricsView.h"
#include "ide/views/ScheduleEditor.h"
#include "ide/views/TextViews.h"
#include "ide/views/TilingView.h"
#include "ide/views/TimelineView.h"
#include "ide/views/TuneDialog.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QMessageBox>
#include <QtConcurrent>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QSettings>
#include <QTimer>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QMenuBar>
#include <QThread>
#include <QToolBar>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace tessel::ide {

namespace {
QWidget *titled(const QString &title, QWidget *w) {
    auto *box = new QGroupBox(title);
    auto *l = new QVBoxLayout(box);
    l->setContentsMargins(4, 4, 4, 4);
    l->addWidget(w);
    return box;
}
} // namespace

MainWindow::MainWindow(Session *session, QWidget *parent) : QMainWindow(parent), m_session(session) {
    auto *editor = new ScheduleEditor(session);
    m_editor = editor;
    auto *diagnostics = new QTableView;
    diagnostics->setModel(session->diagnostics());
    diagnostics->verticalHeader()->hide();
    diagnostics->horizontalHeader()->setStretchLastSection(true);
    diagnostics->setSelectionBehavior(QAbstractItemView::SelectRows);
    diagnostics->setWordWrap(true);
    connect(diagnostics, &QTableView::clicked, this, [this](const QModelIndex &i) {
        QString id = i.data(DirectiveRole).toString();
        if (!id.isEmpty()) {
            m_session->viewState()->selectDirective(id);
        }
    });
    connect(session->diagnostics(), &QAbstractItemModel::modelReset, diagnostics, &QTableView::resizeRowsToContents);
    auto *timeline = new TimelineView(session);
    auto *lifetimes = new LifetimeView(session);
    auto *tiling = new TilingView(session);
    m_timeline = timeline;
    m_lifetimes = lifetimes;
    m_tiling = tiling;
    // Options above the timeline and the lifetimes.
    auto *timelinePane = new QWidget;
    auto *tl = new QVBoxLayout(timelinePane);
    tl->setContentsMargins(0, 0, 0, 0);
    m_predictionBox = new QCheckBox(tr("cost model's predicted timeline (for schedules of the tuner's space)"));
    m_predictionBox->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed); // a long text must not widen the window
    connect(m_predictionBox, &QCheckBox::toggled, timeline, &TimelineView::setShowPrediction);
    connect(session, &Session::predictionChanged, this, [this] {
        auto p = m_session->prediction();
        m_predictionBox->setText(p && p->ok ? tr("cost model: %1 cycles predicted (bound: %2)")
                                                  .arg(qint64(p->prediction.cycles))
                                                  .arg(QString::fromStdString(p->prediction.bound))
                                            : tr("cost model: no prediction for this schedule"));
        m_predictionBox->setToolTip(p && !p->ok ? QString::fromStdString(p->why) : QString());
    });
    tl->addWidget(m_predictionBox);
    tl->addWidget(timeline, 1);
    auto *lifetimePane = new QWidget;
    auto *ll = new QVBoxLayout(lifetimePane);
    ll->setContentsMargins(0, 0, 0, 0);
    auto *axisRow = new QHBoxLayout;
    m_axisBox = new QComboBox;
    m_axisBox->addItems({tr("program order"), tr("simulated cycles")});
    connect(m_axisBox, &QComboBox::currentIndexChanged, this, [lifetimes](int i) {
        lifetimes->setTimeAxis(i == 1 ? LifetimeView::TimeAxisKind::Cycles : LifetimeView::TimeAxisKind::ProgramOrder);
    });
    axisRow->addWidget(new QLabel(tr("time:")));
    axisRow->addWidget(m_axisBox);
    axisRow->addStretch(1);
    ll->addLayout(axisRow);
    ll->addWidget(lifetimes, 1);
    auto *metrics = new MetricsView(session);
    auto *code = new CodeTabs(session);
    auto *history = new HistoryView(session);
    auto *baseline = new BaselineView(session);
    m_baseline = baseline;

    auto *left = new QSplitter(Qt::Vertical);
    left->setObjectName(QStringLiteral("leftSplitter"));
    QWidget *editorBox = titled(tr("Schedule"), editor);
    QWidget *diagBox = titled(tr("Diagnostics"), diagnostics);
    left->addWidget(editorBox);
    left->addWidget(diagBox);
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 1);
    auto *middle = new QSplitter(Qt::Vertical);
    middle->setObjectName(QStringLiteral("middleSplitter"));
    QWidget *timelineBox = titled(tr("DMA / pipe timeline (wheel: zoom, drag: pan)"), timelinePane);
    QWidget *lifetimeBox = titled(tr("Buffer lifetimes per memory level"), lifetimePane);
    QWidget *tilingBox = titled(tr("Tiling"), tiling);
    middle->addWidget(timelineBox);
    middle->addWidget(lifetimeBox);
    middle->addWidget(tilingBox);
    auto *right = new QSplitter(Qt::Vertical);
    right->setObjectName(QStringLiteral("rightSplitter"));
    QWidget *metricsBox = titled(tr("Metrics and roofline"), metrics);
    auto *tabs = new QTabWidget;
    tabs->addTab(code, tr("Code"));
    tabs->addTab(history, tr("History"));
    tabs->addTab(baseline, tr("Baseline"));
    tabs->setTabToolTip(2, tr("The current run against a pinned baseline run: timelines, metrics, schedule diff"));
    right->addWidget(metricsBox);
    right->addWidget(tabs);
    auto *main = new QSplitter(Qt::Horizontal);
    main->setObjectName(QStringLiteral("mainSplitter"));
    m_splitters = {main, left, middle, right};
    main->addWidget(left);
    main->addWidget(middle);
    main->addWidget(right);
    main->setSizes({470, 700, 430});
    setCentralWidget(main);
    m_status = new QLabel;
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // a long status must not widen the window
    m_status->setMinimumWidth(1);
    statusBar()->addWidget(m_status, 1);
    connect(session, &Session::busyChanged, this, &MainWindow::updateStatus);
    connect(session, &Session::runFinished, this, &MainWindow::updateStatus);
    connect(session, &Session::compileFinished, this, &MainWindow::updateStatus);
    updateTitle();

    buildFileMenu();
    QMenu *menu = menuBar()->addMenu(tr("&Schedule"));
    // Constant texts (a toolbar that changes width under the mouse after each edit is no
    // toolbar); the command to undo or redo is in the tooltip.
    QUndoStack *stack = session->undoStack();
    m_undo = new QAction(tr("&Undo"), this);
    m_undo->setObjectName(QStringLiteral("undo"));
    m_undo->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Z));
    m_redo = new QAction(tr("&Redo"), this);
    m_redo->setObjectName(QStringLiteral("redo"));
    m_redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Y), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)});
    connect(m_undo, &QAction::triggered, stack, &QUndoStack::undo);
    connect(m_redo, &QAction::triggered, stack, &QUndoStack::redo);
    auto undoTips = [this, stack] {
        m_undo->setEnabled(stack->canUndo());
        m_redo->setEnabled(stack->canRedo());
        m_undo->setToolTip(stack->canUndo() ? tr("Undo %1 (Ctrl+Z)").arg(stack->undoText()) : tr("Nothing to undo"));
        m_redo->setToolTip(stack->canRedo() ? tr("Redo %1 (Ctrl+Y)").arg(stack->redoText()) : tr("Nothing to redo"));
    };
    connect(stack, &QUndoStack::indexChanged, this, undoTips);
    connect(stack, &QUndoStack::canUndoChanged, this, undoTips);
    connect(stack, &QUndoStack::canRedoChanged, this, undoTips);
    connect(stack, &QUndoStack::undoTextChanged, this, undoTips);
    connect(stack, &QUndoStack::redoTextChanged, this, undoTips);
    undoTips();
    QAction *undo = m_undo, *redo = m_redo;
    m_run = new QAction(tr("R&un now"), this);
    m_run->setObjectName(QStringLiteral("run"));
    m_run->setShortcut(QKeySequence(Qt::Key_F5));
    m_run->setToolTip(tr("Recompile and run this schedule now (F5)"));
    connect(m_run, &QAction::triggered, this,
            [this] { m_session->service()->requestNow(m_session->request()); });
    m_cancel = new QAction(tr("&Cancel run"), this);
    m_cancel->setObjectName(QStringLiteral("cancel"));
    m_cancel->setShortcut(QKeySequence(Qt::Key_Escape));
    m_cancel->setToolTip(tr("Stop the running compile / simulation (Esc)"));
    m_cancel->setEnabled(session->service()->isBusy());
    connect(m_cancel, &QAction::triggered, this, [this] {
        m_session->cancelRun();
        statusBar()->showMessage(tr("run cancelled"), 5000);
    });
    // A run that stopped without a result still shows what it did: the timeline has the
    // events recorded before it stopped, and the status bar says so.
    connect(session, &Session::partialTimeline, this, [this](const QString &note, bool stopped) {
        if (stopped) {
            statusBar()->showMessage(note.left(300), 15000);
        }
    });
    // Run progress in the status bar while a job is in flight.
    m_progressTimer = new QTimer(this);
    m_progressTimer->setInterval(250);
    connect(m_progressTimer, &QTimer::timeout, this, &MainWindow::updateStatus);
    connect(session, &Session::busyChanged, this, [this](bool busy) {
        m_cancel->setEnabled(busy);
        if (busy) {
            m_progressTimer->start();
        } else {
            m_progressTimer->stop();
        }
    });
    m_tune = new QAction(tr("&Tune..."), this);
    m_tune->setObjectName(QStringLiteral("tune"));
    m_tune->setShortcut(QKeySequence(tr("Ctrl+T")));
    m_tune->setToolTip(tr("Search the legal schedules of this problem with the tuner (cost model + simulator) within a "
                          "time budget; the best one is loaded into the editor"));
    connect(m_tune, &QAction::triggered, this, &MainWindow::tune);
    connect(session->tuner(), &TuneService::finished, this, [this] { m_tune->setEnabled(true); });
    connect(session, &Session::tuneFinished, this, [this](bool, const QString &message) {
        statusBar()->showMessage(message, 15000);
    });
    QAction *autoAction = new QAction(tr("&Auto schedule"), this);
    autoAction->setObjectName(QStringLiteral("autoSchedule"));
    autoAction->setShortcut(QKeySequence(tr("Ctrl+Shift+A")));
    autoAction->setToolTip(tr("Replace the schedule with the automatic NPU scheduler's for this generator and arch "
                              "(docs/autoschedule.md); one undo step, editable as any schedule"));
    connect(autoAction, &QAction::triggered, this, [this] {
        QString summary, error;
        if (!m_session->applyAutoSchedule(&summary, &error)) {
            QMessageBox::warning(this, tr("Auto schedule"), error);
            return;
        }
        statusBar()->showMessage(tr("auto schedule: ") + summary.section(QLatin1Char('\n'), 0, 0), 15000);
    });
    menu->addAction(undo);
    menu->addAction(redo);
    menu->addSeparator();
    menu->addAction(m_run);
    menu->addAction(m_cancel);
    auto *pin = menu->addAction(tr("Set &baseline"));
    pin->setObjectName(QStringLiteral("setBaselineAction"));
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    pin->setToolTip(tr("Pin the last run as the baseline the Baseline tab compares later runs with (Ctrl+B)"));
    connect(pin, &QAction::triggered, this, [this] {
        statusBar()->showMessage(m_baseline->setBaseline() ? tr("baseline set: later runs are compared with it (Baseline tab)")
                                                           : tr("no finished run to pin as the baseline"),
                                 5000);
    });
    menu->addSeparator();
    menu->addAction(autoAction);
    menu->addAction(m_tune);
    QAction *exportAction = new QAction(tr("&Export library..."), this);
    exportAction->setObjectName(QStringLiteral("exportLibrary"));
    exportAction->setToolTip(tr("Compile this schedule for this generator, parameters and arch, verify it on the "
                                "simulator and package it as libNAME.a + NAME.h (as `tessel export`)"));
    connect(exportAction, &QAction::triggered, this, &MainWindow::exportLibrary);
    menu->addAction(exportAction);
    QToolBar *bar = addToolBar(tr("Schedule"));
    bar->setObjectName(QStringLiteral("scheduleToolbar"));
    bar->addAction(undo);
    bar->addAction(redo);
    bar->addAction(autoAction);
    bar->addAction(m_tune);
    bar->addSeparator();
    bar->addAction(m_run);
    bar->addAction(m_cancel);
    m_views = {{"editor", editorBox},     {"diagnostics", diagBox},   {"timeline", timelineBox},
               {"lifetimes", lifetimeBox}, {"tiling", tilingBox},     {"metrics", metricsBox},
               {"code", code},             {"history", history},       {"baseline", baseline}};
}

namespace {
/** File > Open problem: generator, params (K=V,...) and arch (a preset or a file); OK checks
 * the choice (checkProblem) and keeps the dialog open with the error when it is bad. */
class OpenProblemDialog : public QDialog {
public:
    OpenProblemDialog(Session *session, QWidget *parent) : QDialog(parent) {
        setWindowTitle(tr("Open problem"));
        auto *form = new QFormLayout(this);
        m_generator = new QComboBox;
        m_generator->addItems(generatorNames());
        m_generator->setCurrentText(session->generator());
        m_params = new QLineEdit(QString::fromStdString(tessel::format_params(session->params())));
        m_params->setPlaceholderText(QStringLiteral("K=V,K=V"));
        m_params->setToolTip(tr("Generator parameters K=V,...; the ones not given take their defaults"));
        m_arch = new QComboBox;
        m_arch->addItems(archPresetNames());
        if (m_arch->findText(session->archName()) < 0) {
            m_arch->addItem(session->archName());
        }
        m_arch->setCurrentText(session->archName());
        m_arch->addItem(tr("file..."));
        m_lastArch = m_arch->currentIndex();
        connect(m_arch, &QComboBox::activated, this, [this](int i) {
            if (i != m_arch->count() - 1) {
                m_lastArch = i;
                return;
            }
            const QString file =
                QFileDialog::getOpenFileName(this, tr("ArchSpec JSON"), QString(), tr("ArchSpec (*.json);;All files (*)"));
            if (file.isEmpty()) {
                m_arch->setCurrentIndex(m_lastArch);
                return;
            }
            m_arch->insertItem(i, file);
            m_arch->setCurrentIndex(i);
            m_lastArch = i;
        });
        m_error = new QLabel;
        m_error->setWordWrap(true);
        m_error->setStyleSheet(QStringLiteral("color: #b00020"));
        m_error->hide();
        auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
        connect(buttons, &QDialogButtonBox::accepted, this, [this] {
            QString error;
            if (!checkProblem(generator(), params(), arch(), &error)) {
                m_error->setText(error);
                m_error->show();
                return;
            }
            accept();
        });
        connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
        form->addRow(tr("Generator:"), m_generator);
        form->addRow(tr("Parameters:"), m_params);
        form->addRow(tr("Arch:"), m_arch);
        form->addRow(m_error);
        form->addRow(buttons);
        resize(480, sizeHint().height());
    }
    QString generator() const { return m_generator->currentText(); }
    QString params() const { return m_params->text(); }
    QString arch() const { return m_arch->currentText(); }

private:
    QComboBox *m_generator;
    QLineEdit *m_params;
    QComboBox *m_arch;
    QLabel *m_error;
    int m_lastArch = 0;
};
} // namespace

void MainWindow::buildFileMenu() {
    QMenu *file = menuBar()->addMenu(tr("&File"));
    m_openSchedule = file->addAction(tr("&Open schedule..."), this, &MainWindow::openScheduleDialog);
    m_openSchedule->setObjectName(QStringLiteral("openSchedule"));
    m_openSchedule->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_O));
    m_saveSchedule = file->addAction(tr("&Save schedule"), this, &MainWindow::saveSchedule);
    m_saveSchedule->setObjectName(QStringLiteral("saveSchedule"));
    m_saveSchedule->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_S));
    m_saveScheduleAs = file->addAction(tr("Save schedule &as..."), this, &MainWindow::saveScheduleAs);
    m_saveScheduleAs->setObjectName(QStringLiteral("saveScheduleAs"));
    m_saveScheduleAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    m_recentMenu = file->addMenu(tr("&Recent schedules"));
    m_recentMenu->setObjectName(QStringLiteral("recentSchedules"));
    updateRecentMenu();
    file->addSeparator();
    m_openProblem = file->addAction(tr("Open &problem..."), this, &MainWindow::openProblemDialog);
    m_openProblem->setObjectName(QStringLiteral("openProblem"));
    m_openProblem->setToolTip(tr("Switch generator, parameters or arch"));
    QAction *openModelAction = file->addAction(tr("Open &model..."), this, &MainWindow::openModelDialog);
    openModelAction->setObjectName(QStringLiteral("openModel"));
    openModelAction->setToolTip(tr("An ONNX model's kernels after the model compiler's passes: open one to tune it"));
    file->addSeparator();
    m_quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    m_quit->setObjectName(QStringLiteral("quit"));
    m_quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
}

void MainWindow::showError(const QString &title, const QString &message) {
    // Not exec(): a modal loop here would stall the compile results behind it (and the tests).
    auto *box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

bool MainWindow::openScheduleFile(const QString &path, QString *error) {
    QString why;
    auto spec = readScheduleFile(path, &why);
    if (!spec) {
        showError(tr("Open schedule"), tr("Cannot open the schedule %1:\n%2").arg(path, why));
        if (error) {
            *error = why;
        }
        return false;
    }
    m_session->schedule()->setSchedule(*spec, tr("open %1").arg(QFileInfo(path).fileName()));
    setScheduleFile(path);
    statusBar()->showMessage(tr("opened %1").arg(m_file), 5000);
    return true;
}

void MainWindow::setScheduleFile(const QString &path) {
    m_file = QFileInfo(path).absoluteFilePath();
    addRecentSchedule(m_file);
    updateRecentMenu();
    updateTitle();
}

bool MainWindow::saveScheduleFile(const QString &path, QString *error) {
    QString why;
    if (!writeScheduleFile(path, m_session->schedule()->spec(), &why)) {
        showError(tr("Save schedule"), tr("Cannot save the schedule:\n%1").arg(why));
        if (error) {
            *error = why;
        }
        return false;
    }
    setScheduleFile(path);
    statusBar()->showMessage(tr("saved %1").arg(m_file), 5000);
    return true;
}

void MainWindow::openScheduleDialog() {
    const QString dir = m_file.isEmpty() ? QString() : QFileInfo(m_file).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open schedule"), dir, tr("Schedules (*.json);;All files (*)"));
    if (!path.isEmpty()) {
        openScheduleFile(path);
    }
}

bool MainWindow::saveSchedule() {
    return m_file.isEmpty() ? saveScheduleAs() : saveScheduleFile(m_file);
}

bool MainWindow::saveScheduleAs() {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save schedule as"), m_file, tr("Schedules (*.json);;All files (*)"));
    return !path.isEmpty() && saveScheduleFile(path);
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = recentSchedules();
    for (const QString &path : recent) {
        QAction *a = m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openScheduleFile(path); });
        a->setToolTip(path);
        a->setData(path);
    }
    if (!recent.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear list"), this, [this] {
            setRecentSchedules({});
            updateRecentMenu();
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::updateTitle() {
    setWindowTitle(m_file.isEmpty() ? tr("Tessel IDE") : tr("%1 - Tessel IDE").arg(QFileInfo(m_file).fileName()));
}

bool MainWindow::openProblem(const QString &generator, const QString &params, const QString &arch, QString *error) {
    QString why;
    auto choice = checkProblem(generator, params, arch, &why);
    // The same generator keeps the schedule; another one starts empty.
    const tessel::ScheduleSpec spec =
        choice && choice->generator == m_session->generator() ? m_session->schedule()->spec() : tessel::ScheduleSpec{};
    if (!choice || !m_session->open(choice->generator, choice->params, choice->arch, spec, &why)) {
        showError(tr("Open problem"), tr("The problem was not opened:\n%1").arg(why));
        if (error) {
            *error = why;
        }
        return false;
    }
    updateStatus();
    return true;
}

void MainWindow::openModelDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), QString(), tr("ONNX models (*.onnx)"));
    if (!path.isEmpty()) {
        openModel(path);
    }
}

bool MainWindow::openModel(const QString &path, int pick, QString *error) {
    std::vector<tessel::graph::ModelKernel> kernels;
    try {
        tessel::graph::ModelCompileOptions o;
        o.arch = m_session->archName().toStdString();
        QApplication::setOverrideCursor(Qt::WaitCursor);
        kernels = tessel::graph::list_model_kernels(path.toStdString(), o);
        QApplication::restoreOverrideCursor();
    } catch (const std::exception &e) {
        QApplication::restoreOverrideCursor();
        const QString why = QString::fromStdString(e.what());
        showError(tr("Open model"), tr("The model was not opened:\n%1").arg(why));
        if (error) {
            *error = why;
        }
        return false;
    }
    int chosen = pick;
    if (chosen < 0) {
        ModelDialog dialog(QFileInfo(path).fileName(), kernels, this);
        if (dialog.exec() != QDialog::Accepted || dialog.chosen() < 0) {
            return false;
        }
        chosen = dialog.chosen();
    }
    if (chosen >= int(kernels.size()) || kernels[size_t(chosen)].generator.empty()) {
        if (error) {
            *error = QStringLiteral("kernel %1 is not one the NPU computes").arg(chosen);
        }
        return false;
    }
    const auto &k = kernels[size_t(chosen)];
    if (!openProblem(QString::fromStdString(k.generator), QString::fromStdString(k.params_text), m_session->archName(),
                     error)) {
        return false;
    }
    // A model's kernel has no hand schedule: start from the automatic scheduler's.
    QString summary, why;
    if (!m_session->applyAutoSchedule(&summary, &why)) {
        statusBar()->showMessage(tr("%1: node %2 opened; no auto schedule (%3)")
                                     .arg(QFileInfo(path).fileName(), QString::fromStdString(k.node), why),
                                 15000);
        return true;
    }
    statusBar()->showMessage(tr("%1: node %2 (%3) opened with the auto schedule")
                                 .arg(QFileInfo(path).fileName(), QString::fromStdString(k.node),
                                      QString::fromStdString(k.op)),
                             15000);
    return true;
}

void MainWindow::openProblemDialog() {
    OpenProblemDialog dialog(m_session, this);
    if (dialog.exec() == QDialog::Accepted) {
        openProblem(dialog.generator(), dialog.params(), dialog.arch());
    }
}

void MainWindow::saveLayout(QSettings &settings) const {
    settings.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("mainWindow/state"), saveState());
    for (const QSplitter *s : m_splitters) {
        settings.setValue(QStringLiteral("mainWindow/") + s->objectName(), s->saveState());
    }
}

void MainWindow::restoreLayout(const QSettings &settings) {
    restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
    for (QSplitter *s : m_splitters) {
        s->restoreState(settings.value(QStringLiteral("mainWindow/") + s->objectName()).toByteArray());
    }
}

void MainWindow::setShowPrediction(bool on) {
    m_predictionBox->setChecked(on);
}

void MainWindow::setLifetimeCycles(bool on) {
    m_axisBox->setCurrentIndex(on ? 1 : 0);
}

void MainWindow::tune() {
    bool ok = false;
    int budget = QInputDialog::getInt(this, tr("Tune"),
                                      tr("Budget in seconds (no measurement starts after it; results go to the "
                                         "schedule database and the history):"),
                                      30, 1, 3600, 5, &ok);
    if (!ok) {
        return;
    }
    auto *dialog = new TuneDialog(m_session, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    int jobs = std::max(1, QThread::idealThreadCount() - 1);
    if (dialog->start(budget, jobs)) {
        m_tune->setEnabled(false);
    }
    dialog->show();
}

void MainWindow::exportLibrary() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export into folder"));
    if (dir.isEmpty()) {
        return;
    }
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Export library"), tr("Library name (also the kernel's):"),
                                               QLineEdit::Normal, QStringLiteral("tessel_kernels"), &ok);
    if (!ok) {
        return;
    }
    const tessel::CompileRequest req = m_session->request();
    statusBar()->showMessage(tr("exporting %1 into %2 ...").arg(name, dir));
    auto *watcher = new QFutureWatcher<LibraryExportResult>(this);
    connect(watcher, &QFutureWatcher<LibraryExportResult>::finished, this, [this, watcher] {
        const LibraryExportResult r = watcher->result();
        watcher->deleteLater();
        statusBar()->showMessage(r.message, 15000);
        if (!r.ok) {
            QMessageBox::warning(this, tr("Export failed"), r.message);
        }
    });
    watcher->setFuture(QtConcurrent::run(workerPool(), [req, dir, name] { return tessel::ide::exportLibrary(req, dir, name); }));
}

void MainWindow::updateStatus() {
    QString text = QStringLiteral("%1 (%2) on %3")
                       .arg(m_session->generator(),
                            QString::fromStdString(tessel::format_params(m_session->params())), m_session->archName());
    if (m_session->service()->isHeld() && m_session->service()->isBusy()) {
        text += tr("   tuning: the edits compile when it ends");
    } else if (const quint64 issued = m_session->service()->instructionsIssued(); issued > 0) {
        text += QStringLiteral("   ") + runProgressText(issued, m_session->request().max_instructions);
    } else if (m_session->service()->isBusy()) {
        text += tr("   compiling... (Esc cancels)");
    }
    if (auto r = m_session->lastRun(); r && r->cycles) {
        text += tr("   %1 cycles, efficiency %2, %3")
                    .arg(*r->cycles)
                    .arg(r->efficiency.value_or(0), 0, 'f', 3)
                    .arg(r->verified ? tr("verified") : tr("NOT verified"));
    } else if (auto c = m_session->lastCompile(); c && !c->ok) {
        text += tr("   compile failed (see Diagnostics)");
    } else if (auto r = m_session->lastRun(); r) {
        for (const auto &d : r->diagnostics) {
            if (d.severity == tessel::Diagnostic::Error) {
                text += tr("   run failed: %1 (see Diagnostics)")
                            .arg(QString::fromStdString(d.message.substr(0, d.message.find('\n'))).left(160));
                break;
            }
        }
    }
    m_status->setText(text);
    m_status->setToolTip(text);
}

QString MainWindow::statusText() const {
    return m_status->text();
}

} // namespace tessel::ide
