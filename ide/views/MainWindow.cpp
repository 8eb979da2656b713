#include "ide/views/MainWindow.h"

#include "ide/core/LibraryExport.h"
#include "ide/core/Session.h"
#include "ide/views/HistoryView.h"
#include "ide/views/LifetimeView.h"
#include "ide/views/MetricsView.h"
#include "ide/views/ScheduleEditor.h"
#include "ide/views/TextViews.h"
#include "ide/views/TilingView.h"
#include "ide/views/TimelineView.h"
#include "ide/views/TuneDialog.h"

#include <QAction>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QMessageBox>
#include <QtConcurrent>
#include <QCheckBox>
#include <QComboBox>
#include <QGroupBox>
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

    auto *left = new QSplitter(Qt::Vertical);
    QWidget *editorBox = titled(tr("Schedule"), editor);
    QWidget *diagBox = titled(tr("Diagnostics"), diagnostics);
    left->addWidget(editorBox);
    left->addWidget(diagBox);
    left->setStretchFactor(0, 3);
    left->setStretchFactor(1, 1);
    auto *middle = new QSplitter(Qt::Vertical);
    QWidget *timelineBox = titled(tr("DMA / pipe timeline (wheel: zoom, drag: pan)"), timelinePane);
    QWidget *lifetimeBox = titled(tr("Buffer lifetimes per memory level"), lifetimePane);
    QWidget *tilingBox = titled(tr("Tiling"), tiling);
    middle->addWidget(timelineBox);
    middle->addWidget(lifetimeBox);
    middle->addWidget(tilingBox);
    auto *right = new QSplitter(Qt::Vertical);
    QWidget *metricsBox = titled(tr("Metrics and roofline"), metrics);
    auto *tabs = new QTabWidget;
    tabs->addTab(code, tr("Code"));
    tabs->addTab(history, tr("History"));
    right->addWidget(metricsBox);
    right->addWidget(tabs);
    auto *main = new QSplitter(Qt::Horizontal);
    main->addWidget(left);
    main->addWidget(middle);
    main->addWidget(right);
    main->setSizes({470, 700, 430});
    setCentralWidget(main);
    m_status = new QLabel;
    statusBar()->addWidget(m_status, 1);
    connect(session, &Session::busyChanged, this, &MainWindow::updateStatus);
    connect(session, &Session::runFinished, this, &MainWindow::updateStatus);
    connect(session, &Session::compileFinished, this, &MainWindow::updateStatus);
    setWindowTitle(tr("Tessel IDE"));

    QMenu *menu = menuBar()->addMenu(tr("&Schedule"));
    QAction *undo = session->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = session->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
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
    m_views = {{"editor", editorBox},     {"diagnostics", diagBox},   {"timeline", timelineBox},
               {"lifetimes", lifetimeBox}, {"tiling", tilingBox},     {"metrics", metricsBox},
               {"code", code},             {"history", history}};
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
    watcher->setFuture(QtConcurrent::run([req, dir, name] { return tessel::ide::exportLibrary(req, dir, name); }));
}

void MainWindow::updateStatus() {
    QString text = QStringLiteral("%1 (%2) on %3")
                       .arg(m_session->generator(),
                            QString::fromStdString(tessel::format_params(m_session->params())), m_session->archName());
    if (m_session->service()->isHeld() && m_session->service()->isBusy()) {
        text += tr("   tuning: the edits compile when it ends");
    } else if (m_session->service()->isBusy()) {
        text += tr("   compiling...");
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
}

} // namespace tessel::ide
