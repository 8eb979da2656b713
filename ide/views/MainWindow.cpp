#include "ide/views/MainWindow.h"

#include "ide/core/Session.h"
#include "ide/views/HistoryView.h"
#include "ide/views/LifetimeView.h"
#include "ide/views/MetricsView.h"
#include "ide/views/ScheduleEditor.h"
#include "ide/views/TextViews.h"
#include "ide/views/TilingView.h"
#include "ide/views/TimelineView.h"

#include <QGroupBox>
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
    QWidget *timelineBox = titled(tr("DMA / pipe timeline (wheel: zoom, drag: pan)"), timeline);
    QWidget *lifetimeBox = titled(tr("Buffer lifetimes per memory level"), lifetimes);
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
    m_views = {{"editor", editorBox},     {"diagnostics", diagBox},   {"timeline", timelineBox},
               {"lifetimes", lifetimeBox}, {"tiling", tilingBox},     {"metrics", metricsBox},
               {"code", code},             {"history", history}};
}

void MainWindow::updateStatus() {
    QString text = QStringLiteral("%1 (%2) on %3")
                       .arg(m_session->generator(),
                            QString::fromStdString(tessel::format_params(m_session->params())), m_session->archName());
    if (m_session->service()->isBusy()) {
        text += tr("   compiling...");
    }
    if (auto r = m_session->lastRun(); r && r->cycles) {
        text += tr("   %1 cycles, efficiency %2, %3")
                    .arg(*r->cycles)
                    .arg(r->efficiency.value_or(0), 0, 'f', 3)
                    .arg(r->verified ? tr("verified") : tr("NOT verified"));
    } else if (auto c = m_session->lastCompile(); c && !c->ok) {
        text += tr("   compile failed (see Diagnostics)");
    }
    m_status->setText(text);
}

} // namespace tessel::ide
