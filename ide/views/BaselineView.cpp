#include "ide/views/BaselineView.h"

#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSet>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace tessel::ide {

namespace {
constexpr int kLabelW = 60, kRowH = 9, kPipeGap = 5;

QString problemOf(const Session &s) {
    return QStringLiteral("%1 (%2) on %3")
        .arg(s.generator(), QString::fromStdString(tessel::format_params(s.params())),
             s.archName());
}

QString number(double v) {
    return std::abs(v - std::round(v)) < 1e-9 ? QString::number(qint64(std::llround(v)))
                                              : QString::number(v, 'g', 4);
}
} // namespace

RunStrip::RunStrip(QWidget *parent) : QWidget(parent) {
    setMinimumHeight(40);
}

void RunStrip::setRuns(std::shared_ptr<const tessel::RunReport> a,
                       std::shared_ptr<const tessel::RunReport> b) {
    m_a = std::move(a);
    m_b = std::move(b);
    m_pipes.clear();
    m_scale = 1;
    for (const auto *r : {m_a.get(), m_b.get()}) {
        if (!r || !r->sim) {
            continue;
        }
        m_scale = std::max(m_scale, double(r->sim->cycles));
        QSet<quint16> seen;
        for (const auto &e : r->sim->trace) {
            if (!seen.contains(e.pipe.id())) {
                seen.insert(e.pipe.id());
                const QString p = QString::fromStdString(e.pipe.str());
                if (!m_pipes.contains(p)) {
                    m_pipes << p;
                }
            }
        }
    }
    updateGeometry();
    update();
}

double RunStrip::xOf(double c) const {
    return kLabelW + (width() - kLabelW - 4) * c / m_scale;
}

QSize RunStrip::sizeHint() const {
    return QSize(400, 14 + int(m_pipes.size()) * (2 * kRowH + kPipeGap));
}

void RunStrip::paintEvent(QPaintEvent *) {
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    p.setPen(QColor(90, 90, 90));
    const QColor colors[2] = {QColor(110, 140, 200), QColor(235, 120, 40)};
    // Occupancy per run, pipe and pixel column (a column is drawn when any event covers it):
    // one pass over each run's trace, its pipes told apart by their interned name.
    const int w = std::max(1, width() - kLabelW - 4);
    std::vector<std::vector<char>> occupancy[2];
    const tessel::RunReport *runs[2] = {m_a.get(), m_b.get()};
    for (int ri = 0; ri < 2; ++ri) {
        const bool traced = runs[ri] && runs[ri]->sim;
        occupancy[ri].assign(size_t(m_pipes.size()), std::vector<char>(traced ? size_t(w) : 0, 0));
        if (!traced) {
            continue;
        }
        QHash<quint16, int> row; // pipe name id -> index in m_pipes
        for (const auto &e : runs[ri]->sim->trace) {
            auto it = row.find(e.pipe.id());
            if (it == row.end()) {
                it = row.insert(e.pipe.id(),
                                int(m_pipes.indexOf(QString::fromStdString(e.pipe.str()))));
            }
            if (*it < 0) {
                continue;
            }
            std::vector<char> &busy = occupancy[ri][size_t(*it)];
            const int x0 = int(xOf(double(e.start))) - kLabelW,
                      x1 = int(xOf(double(e.end))) - kLabelW;
            for (int x = std::max(0, x0); x <= std::min(w - 1, x1); ++x) {
                busy[size_t(x)] = 1;
            }
        }
    }
    for (int k = 0; k < m_pipes.size(); ++k) {
        const int y = 12 + k * (2 * kRowH + kPipeGap);
        p.setPen(QColor(60, 60, 60));
        p.drawText(QRect(0, y, kLabelW - 4, 2 * kRowH), Qt::AlignRight | Qt::AlignVCenter,
                   m_pipes[k]);
        for (int run = 0; run < 2; ++run) {
            const int ry = y + run * kRowH;
            p.fillRect(QRectF(kLabelW, ry, width() - kLabelW - 4, kRowH - 1),
                       QColor(245, 245, 245));
            const std::vector<char> &busy = occupancy[run][size_t(k)];
            for (int x = 0; x < int(busy.size()); ++x) {
                if (busy[size_t(x)]) {
                    p.fillRect(QRectF(kLabelW + x, ry, 1, kRowH - 1), colors[run]);
                }
            }
        }
    }
    p.setPen(QColor(90, 90, 90));
    p.drawText(QRect(kLabelW, 0, width() - kLabelW, 12), Qt::AlignLeft | Qt::AlignVCenter,
               tr("per pipe: baseline (blue) above current (orange), 0 .. %1 cycles")
                   .arg(qint64(m_scale)));
}

BaselineView::BaselineView(Session *session, QWidget *parent)
    : QWidget(parent), m_session(session) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    auto *top = new QHBoxLayout;
    m_title = new QLabel(tr(
        "No baseline: run a schedule, then Set baseline (Ctrl+B) to compare later runs with it."));
    m_title->setWordWrap(true);
    m_set = new QPushButton(tr("Set baseline"));
    m_set->setObjectName(QStringLiteral("setBaseline"));
    m_set->setToolTip(
        tr("Pin the last run and its schedule; later runs are shown against it (Ctrl+B)"));
    top->addWidget(m_title, 1);
    top->addWidget(m_set);
    layout->addLayout(top);
    m_strip = new RunStrip;
    m_metrics = new QTableWidget(0, 4);
    m_metrics->setObjectName(QStringLiteral("baselineMetrics"));
    m_metrics->setHorizontalHeaderLabels(
        {tr("metric"), tr("baseline"), tr("current"), tr("change")});
    m_directives = new QTableWidget(0, 4);
    m_directives->setObjectName(QStringLiteral("baselineDirectives"));
    m_directives->setHorizontalHeaderLabels(
        {tr("directive"), tr("baseline"), tr("current"), tr("changed fields")});
    for (auto *t : {m_metrics, m_directives}) {
        t->verticalHeader()->hide();
        t->verticalHeader()->setDefaultSectionSize(20);
        t->horizontalHeader()->setStretchLastSection(true);
        t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    }
    auto *split = new QSplitter(Qt::Vertical);
    split->addWidget(m_strip);
    split->addWidget(m_metrics);
    split->addWidget(m_directives);
    layout->addWidget(split, 1);
    connect(m_set, &QPushButton::clicked, this, [this] { setBaseline(); });
    connect(session, &Session::runFinished, this, &BaselineView::refresh);
}

bool BaselineView::setBaseline() {
    auto run = m_session->lastRun();
    if (!run || !run->sim || !run->cycles) {
        m_title->setText(tr("Nothing to pin: the schedule has no finished run yet."));
        return false;
    }
    m_base = run;
    m_baseSpec = m_session->schedule()->spec();
    m_baseProblem = problemOf(*m_session);
    refresh();
    return true;
}

void BaselineView::refresh() {
    if (!m_base) {
        return;
    }
    auto cur = m_session->lastRun();
    const QString baseText =
        tr("Baseline: %1 cycles (schedule %2) of %3")
            .arg(*m_base->cycles)
            .arg(QString::fromStdString(m_base->schedule_hash).left(8), m_baseProblem);
    if (problemOf(*m_session) != m_baseProblem) {
        m_title->setText(baseText + tr(" — the open problem is another one: not compared."));
        m_cmp = RunComparison();
        m_strip->setRuns(m_base, nullptr);
        m_metrics->setRowCount(0);
        m_directives->setRowCount(0);
        return;
    }
    if (!cur || !cur->sim) {
        m_title->setText(baseText + tr(" — the current schedule has no finished run."));
        m_strip->setRuns(m_base, nullptr);
        return;
    }
    m_cmp = compareRuns(*m_base, m_baseSpec, *cur, m_session->schedule()->spec());
    QString verdict;
    if (cur->cycles && *m_base->cycles > 0) {
        const double speedup = double(*m_base->cycles) / double(*cur->cycles);
        verdict = tr(" — current: %1 cycles, %2x the baseline's speed")
                      .arg(*cur->cycles)
                      .arg(speedup, 0, 'f', 3);
    }
    if (m_cmp.bindingA != m_cmp.bindingB && !m_cmp.bindingB.isEmpty()) {
        verdict += tr("; binds on %1 (baseline: %2)").arg(m_cmp.bindingB, m_cmp.bindingA);
    }
    m_title->setText(baseText + verdict);
    m_strip->setRuns(m_base, cur);
    m_metrics->setRowCount(int(m_cmp.metrics.size()));
    for (int i = 0; i < m_cmp.metrics.size(); ++i) {
        const MetricDelta &d = m_cmp.metrics[i];
        const QString change = d.hasA && d.hasB && d.a != 0 ? QStringLiteral("%1%2%")
                                                                  .arg(d.change() >= 0 ? "+" : "")
                                                                  .arg(100 * d.change(), 0, 'f', 1)
                               : d.hasA && d.hasB
                                   ? (d.a == d.b ? QStringLiteral("=") : QStringLiteral("new"))
                                   : QStringLiteral("-");
        const QString cells[4] = {d.name, d.hasA ? number(d.a) : QStringLiteral("-"),
                                  d.hasB ? number(d.b) : QStringLiteral("-"), change};
        for (int c = 0; c < 4; ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            const int v = d.verdict();
            if (c == 3 && v != 0) {
                item->setBackground(v > 0 ? QColor(205, 240, 205) : QColor(250, 210, 205));
            }
            m_metrics->setItem(i, c, item);
        }
    }
    const auto &rows = m_cmp.schedule.directives;
    m_directives->setRowCount(int(rows.size()));
    for (int i = 0; i < rows.size(); ++i) {
        const DirectiveDiffRow &r = rows[i];
        const QString cells[4] = {r.id, r.a, r.b,
                                  r.kind == DirectiveDiffRow::Changed
                                      ? r.fields.join(QStringLiteral("; "))
                                  : r.kind == DirectiveDiffRow::OnlyA ? tr("removed")
                                  : r.kind == DirectiveDiffRow::OnlyB ? tr("added")
                                                                      : QString()};
        for (int c = 0; c < 4; ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            item->setToolTip(cells[c]);
            if (r.kind != DirectiveDiffRow::Same) {
                item->setBackground(r.kind == DirectiveDiffRow::Changed ? QColor(255, 240, 190)
                                                                        : QColor(220, 235, 255));
            } else {
                item->setForeground(QColor(130, 130, 130));
            }
            m_directives->setItem(i, c, item);
        }
    }
    m_metrics->resizeColumnToContents(0);
    m_directives->resizeColumnToContents(0);
}

} // namespace tessel::ide
