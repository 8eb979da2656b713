#include "ide/views/TimelineView.h"
#include "ide/views/FindKeys.h"

#include "ide/core/Session.h"
#include "npu_target/isa/InstrTable.h"

#include <QHBoxLayout>
#include <QHash>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSet>
#include <QShortcut>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace tessel::ide {

namespace {
constexpr double kLabelWidth = 76, kRuler = 20;

const QColor kStallFill(238, 238, 238), kStallHatch(110, 110, 110), kIssueFill(196, 204, 218);

QColor barColor(const tessel::sim::TraceEvent &e) {
    using tessel::isa::Op;
    using tessel::isa::Unit;
    if (e.op == Op::WAIT_FLAG) {
        return QColor(200, 200, 200);
    }
    switch (tessel::isa::op_info(e.op).unit) {
    case Unit::Dma:
        return e.src == "GM"   ? QColor(52, 120, 200)
               : e.dst == "GM" ? QColor(120, 80, 190)
                               : QColor(40, 170, 190);
    case Unit::Matrix:
        return QColor(235, 140, 30);
    case Unit::Vector:
        return QColor(60, 170, 80);
    case Unit::Sync:
        return QColor(170, 170, 170);
    default:
        return QColor(120, 120, 120);
    }
}

/** Round tick spacing (1, 2, 5 x 10^n) giving about `target` ticks. */
double tickStep(double span, int target) {
    double raw = span / std::max(1, target);
    double p = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-9))));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (raw <= m * p) {
            return m * p;
        }
    }
    return 10 * p;
}

QString percentOf(uint64_t part, uint64_t whole) {
    return QString::number(whole ? 100.0 * double(part) / double(whole) : 0.0, 'f', 0) +
           QLatin1Char('%');
}

/** When an instruction left its queue (made room): its start; a WAIT_FLAG's end. */
uint64_t leftQueueCycle(const tessel::sim::TraceEvent &e) {
    return e.op == tessel::isa::Op::WAIT_FLAG ? e.end : e.start;
}

QString eventLine(const tessel::sim::TraceEvent &ev) {
    QString text = QStringLiteral("%1 on %2\ncycles %3 - %4 (%5)")
                       .arg(QString::fromLatin1(tessel::isa::op_info(ev.op).mnemonic),
                            QString::fromStdString(ev.pipe))
                       .arg(ev.start)
                       .arg(ev.end)
                       .arg(ev.end - ev.start);
    if (ev.bytes > 0 || !ev.src.empty() || !ev.dst.empty()) {
        text += QLatin1Char('\n');
    }
    if (ev.bytes > 0) {
        text += QStringLiteral("%1 bytes").arg(ev.bytes);
    }
    if (!ev.src.empty() || !ev.dst.empty()) {
        text += QStringLiteral("  %1 -> %2")
                    .arg(QString::fromStdString(ev.src), QString::fromStdString(ev.dst));
    }
    return text;
}
} // namespace

TimelineView::TimelineView(Session *session, QWidget *parent)
    : QWidget(parent), m_session(session) {
    setMouseTracking(true);
    setMinimumHeight(160);
    setFocusPolicy(Qt::ClickFocus); // Esc and F; not a Tab stop
    auto repaint = [this] { update(); };
    connect(session->viewState(), &ViewState::zoomChanged, this, repaint);
    connect(session->viewState(), &ViewState::selectionChanged, this, repaint);
    connect(session->timeline(), &QAbstractItemModel::modelReset, this, [this] {
        forgetRun();
        update();
    });
    connect(session, &Session::compileFinished, this, [this] { forgetRun(); });
    connect(session, &Session::predictionChanged, this, repaint);
    m_fit = new QToolButton(this);
    m_fit->setText(tr("fit"));
    m_fit->setToolTip(
        tr("Zoom to fit the whole run (F)\nA: every flag arrow, C: the critical path, "
           "Ctrl+F: find events"));
    m_fit->setAutoRaise(true);
    m_fit->setFocusPolicy(Qt::NoFocus);
    m_fit->setGeometry(int(kLabelWidth) - 32, 0, 28, int(kRuler) - 1);
    connect(m_fit, &QToolButton::clicked, this, [this] { m_session->viewState()->resetZoom(); });
    // Ctrl+F: a search field over the timeline, scoped to this widget (the code view below has
    // its own Ctrl+F, scoped the same way).
    m_searchBar = new QWidget(this);
    m_searchBar->setAutoFillBackground(true);
    auto *sl = new QHBoxLayout(m_searchBar);
    sl->setContentsMargins(2, 1, 2, 1);
    m_search = new QLineEdit;
    m_search->setObjectName(QStringLiteral("timelineSearch"));
    m_search->setPlaceholderText(tr("Find events (Enter: next, Shift+Enter: previous, Esc)"));
    m_search->installEventFilter(this);
    m_searchStatus = new QLabel;
    sl->addWidget(m_search, 1);
    sl->addWidget(m_searchStatus);
    m_searchBar->hide();
    connect(m_search, &QLineEdit::textChanged, this, [this] { updateMatches(); });
    auto *find =
        new QShortcut(QKeySequence::Find, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(find, &QShortcut::activated, this, &TimelineView::openSearch);
}

TimelineView::~TimelineView() = default;

void TimelineView::setShowPrediction(bool on) {
    m_showPrediction = on;
    update();
}

QStringList TimelineView::predictedPipes() const {
    QStringList out;
    auto p = m_session->prediction();
    if (!m_showPrediction || !p || !p->ok) {
        return out;
    }
    // In the simulated rows' order, then any other.
    QStringList sim = m_session->timeline()->pipes();
    for (const auto &b : p->prediction.timeline) {
        QString pipe = QString::fromStdString(b.pipe);
        if (!out.contains(pipe)) {
            out << pipe;
        }
    }
    std::stable_sort(out.begin(), out.end(), [&](const QString &a, const QString &b) {
        auto rank = [&](const QString &x) {
            return sim.contains(x) ? sim.indexOf(x) : int(sim.size());
        };
        return rank(a) < rank(b);
    });
    return out;
}

int TimelineView::rowCount() const {
    return int(m_session->timeline()->pipes().size() + predictedPipes().size());
}

QRectF TimelineView::plotArea() const {
    return QRectF(kLabelWidth, kRuler, width() - kLabelWidth - 6, height() - kRuler - 4);
}

QRectF TimelineView::laneOf(int row) const {
    return laneRect(plotArea(), rowCount(), row, 3);
}

TimeAxis TimelineView::axis() const {
    const ZoomRange &z = m_session->viewState()->zoom();
    QRectF a = plotArea();
    return TimeAxis{z.start, z.end, a.left(), a.right()};
}

TraceMachine TimelineView::machine() const {
    return TraceMachine::of(m_session->arch());
}

QVector<TimelineBar> TimelineView::bars(int row) const {
    QVector<TimelineBar> out;
    const TimelineModel *m = m_session->timeline();
    if (row < 0 || row >= m->pipes().size()) {
        return out;
    }
    const TimeAxis ax = axis();
    const QRectF lane = laneOf(row);
    const TraceMachine tm = machine();
    // Whole pixels, and a 1 px gap at the right end of any bar 3 px or wider: N
    // back-to-back bars read as N.
    auto rectOf = [&](const CycleSpan &s) {
        const double x0 = std::round(ax.mapTimeToX(double(s.start))),
                     x1 = std::round(ax.mapTimeToX(double(s.end)));
        const double w = x1 - x0 >= 3 ? x1 - x0 - 1 : std::max(1.0, x1 - x0);
        return QRectF(x0, lane.top() + 1, w, lane.height() - 2);
    };
    auto visible = [&](const CycleSpan &s) {
        return !(double(s.end) < ax.t0 || double(s.start) > ax.t1);
    };
    const FrontEnd &fe = frontEnd();
    QHash<int, uint64_t> prevEnd; // per core
    QHash<int, int> feNext;       // per core: the next front-end span to draw
    QHash<QRgb, int> sameColour;  // bars so far of each colour: every other one is a shade darker
    for (int i : m->eventsOf(row)) {
        const auto &e = m->event(i);
        uint64_t &prev = prevEnd[e.core];
        const EventParts parts =
            splitEvent(e, prev, tm, fe.ok() ? fe.queuedAt(size_t(i)) : UINT64_MAX);
        // Where the front end was not replayed, the gap before a scalar event counts as issuing.
        const CycleSpan gap{fe.ok() ? std::max(prev, fe.until(e.core)) : prev, e.start};
        prev = std::max(prev, e.end);
        if (e.pipe == tm.scalarPipe && fe.ok()) {
            // The front end's issue slots and full-queue waits before this event (replayed).
            const auto &spans = fe.spansOf(e.core);
            int &k = feNext[e.core];
            for (; k < int(spans.size()) && spans[size_t(k)].start < e.start; ++k) {
                const FrontEnd::Span &f = spans[size_t(k)];
                const CycleSpan fs{f.start, f.end};
                if (visible(fs)) {
                    out.append({rectOf(fs), -1, fs, f.stall, f.stall, false, int(f.blockedBy),
                                int(f.issued)});
                }
            }
        }
        if (e.pipe == tm.scalarPipe && !gap.empty() && visible(gap)) {
            out.append({rectOf(gap), -1, gap, false, false, false});
        }
        if (!parts.stall.empty() && visible(parts.stall)) {
            out.append({rectOf(parts.stall), i, parts.stall, true, parts.derivedStall, false});
        }
        CycleSpan busy = parts.busy;
        if (busy.empty() && parts.stall.empty() && e.op != tessel::isa::Op::WAIT_FLAG) {
            busy = {e.start, e.start}; // a zero-length instruction: still one pixel
        } else if (busy.empty()) {
            continue;
        }
        const bool alternate = (sameColour[barColor(e).rgb()]++ & 1) != 0;
        if (visible(busy)) {
            out.append({rectOf(busy), i, busy, false, false, alternate});
        }
    }
    return out;
}

qint64 TimelineView::timeAt(double x) const {
    const double t = std::round(axis().mapXToTime(x));
    return qint64(std::clamp(t, 0.0, double(m_session->timeline()->cycles())));
}

void TimelineView::setSelection(qint64 t0, qint64 t1) {
    m_selT0 = std::max<qint64>(0, std::min(t0, t1));
    m_selT1 = std::max<qint64>(0, std::max(t0, t1));
    update();
    Q_EMIT selectionChanged();
}

void TimelineView::clearSelection() {
    m_selecting = false;
    if (m_selT0 == 0 && m_selT1 == 0) {
        return;
    }
    m_selT0 = m_selT1 = 0;
    update();
    Q_EMIT selectionChanged();
}

RangeSummary TimelineView::selectionSummary() const {
    const auto &report = m_session->timeline()->report();
    if (!hasSelection() || !report || !report->sim) {
        return {};
    }
    const QPair<qint64, qint64> range{m_selT0, m_selT1};
    if (m_summaryOf != report.get() || m_summaryRange != range) {
        m_summary = summarizeRange(report->sim->trace, uint64_t(m_selT0), uint64_t(m_selT1),
                                   machine(), &frontEnd());
        m_summaryOf = report.get();
        m_summaryRange = range;
    }
    return m_summary;
}

QString TimelineView::selectionText() const {
    if (!hasSelection()) {
        return {};
    }
    const RangeSummary s = selectionSummary();
    const uint64_t span = s.t1 - s.t0;
    QStringList lines;
    lines << tr("cycles %1 - %2 (%3)").arg(s.t0).arg(s.t1).arg(span);
    // One line per pipe and per edge, summed over the cores (percentages of cores x cycles).
    struct Sum {
        uint64_t busy = 0, stall = 0, idle = 0, transfers = 0;
        double bytes = 0;
        int cores = 0;
    };
    const QStringList rows = m_session->timeline()->pipes();
    QStringList order;
    QHash<QString, Sum> pipes;
    for (const auto &p : s.pipes) {
        const QString name = QString::fromStdString(p.pipe);
        Sum &u = pipes[name];
        if (!u.cores++) {
            order << name;
        }
        u.busy += p.busy, u.stall += p.stall, u.idle += p.idle;
    }
    std::stable_sort(order.begin(), order.end(), [&](const QString &a, const QString &b) {
        return rows.indexOf(a) < rows.indexOf(b);
    });
    for (const QString &name : order) {
        const Sum &u = pipes[name];
        const uint64_t all = span * uint64_t(u.cores);
        lines << tr("%1%2: busy %3 (%4), stall %5 (%6), idle %7 (%8)")
                     .arg(name, u.cores > 1 ? QStringLiteral(" x%1").arg(u.cores) : QString())
                     .arg(u.busy)
                     .arg(percentOf(u.busy, all))
                     .arg(u.stall)
                     .arg(percentOf(u.stall, all))
                     .arg(u.idle)
                     .arg(percentOf(u.idle, all));
    }
    QStringList edgeOrder;
    QHash<QString, Sum> edges;
    for (const auto &e : s.edges) {
        const QString name = QStringLiteral("%1 %2 -> %3")
                                 .arg(QString::fromStdString(e.engine.empty() ? e.pipe : e.engine),
                                      QString::fromStdString(e.src), QString::fromStdString(e.dst));
        Sum &u = edges[name];
        if (!u.cores++) {
            edgeOrder << name;
        }
        u.bytes += e.bytes, u.transfers += e.transfers;
    }
    for (const QString &name : edgeOrder) {
        const Sum &u = edges[name];
        lines << tr("%1: %2 in %3 %4")
                     .arg(name, formatBytes(qint64(std::llround(u.bytes))))
                     .arg(u.transfers)
                     .arg(u.transfers == 1 ? tr("transfer") : tr("transfers"));
    }
    if (m_showPath && !criticalPath().steps.empty()) {
        // The critical path's cycles inside the range, per pipe.
        const auto in = criticalPath().cyclesIn(s.t0, s.t1);
        uint64_t total = 0;
        for (const auto &kv : in) {
            total += kv.second;
        }
        QStringList parts;
        for (const auto &[pipe, c] : in) {
            parts << QStringLiteral("%1 %2 (%3)")
                         .arg(QString::fromStdString(pipe))
                         .arg(c)
                         .arg(percentOf(c, total));
        }
        lines << tr("critical path in range: %1 cycles%2%3")
                     .arg(total)
                     .arg(parts.isEmpty() ? QString() : QStringLiteral(": "))
                     .arg(parts.join(QStringLiteral(", ")));
    }
    const qint64 cut = m_session->timeline()->traceCutCycle();
    if (cut >= 0 && m_selT1 > cut) {
        lines << tr("the trace stops at cycle %1: later events are not counted").arg(cut);
    }
    return lines.join(QLatin1Char('\n'));
}

void TimelineView::paintSelection(QPainter &p, const QRectF &area, const TimeAxis &ax) const {
    if (!hasSelection() && !m_selecting) {
        return;
    }
    const double x0 = std::max(area.left(), ax.mapTimeToX(double(m_selT0)));
    const double x1 = std::min(area.right(), ax.mapTimeToX(double(m_selT1)));
    p.setClipping(false);
    if (x1 >= x0) {
        p.fillRect(QRectF(x0, area.top(), std::max(1.0, x1 - x0), area.height()),
                   QColor(40, 110, 220, 45));
        p.setPen(QPen(QColor(40, 110, 220), 1));
        p.drawLine(QPointF(x0, kRuler), QPointF(x0, area.bottom()));
        p.drawLine(QPointF(x1, kRuler), QPointF(x1, area.bottom()));
    }
    const QString text = selectionText();
    if (text.isEmpty()) {
        return;
    }
    // The summary box on the side of the plot the selection leaves free.
    const QFontMetrics fm = p.fontMetrics();
    const QStringList lines = text.split(QLatin1Char('\n'));
    int w = 0;
    for (const QString &l : lines) {
        w = std::max(w, fm.horizontalAdvance(l));
    }
    const double bw = std::min(area.width() - 8, double(w + 12));
    const double bh = std::min(area.height() - 8, double(lines.size() * fm.height() + 8));
    const bool left = (x0 + x1) / 2 > area.center().x();
    const QRectF box(left ? area.left() + 4 : area.right() - 4 - bw, area.top() + 4, bw, bh);
    p.fillRect(box, QColor(255, 255, 255, 235));
    p.setPen(QColor(40, 110, 220));
    p.drawRect(box);
    p.setPen(Qt::black);
    p.drawText(box.adjusted(6, 4, -6, -4), Qt::AlignLeft | Qt::AlignTop, text);
}

void TimelineView::paintEvent(QPaintEvent *) {
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    const TimelineModel *m = m_session->timeline();
    QStringList pipes = m->pipes();
    if (pipes.isEmpty()) {
        p.setPen(Qt::gray);
        p.drawText(rect(), Qt::AlignCenter, tr("no simulation yet (the schedule has not run)"));
        return;
    }
    QRectF area = plotArea();
    TimeAxis ax = axis();
    // Ruler with cycle ticks.
    p.setPen(QColor(90, 90, 90));
    double step = tickStep(ax.t1 - ax.t0, int(area.width() / 90));
    // A label right of its tick, or left of it where it would leave the widget ("10000" cut to
    // "1000" at the right edge); one that would overlap the previous label is left out.
    m_rulerLabels.clear();
    const QFontMetricsF rfm(p.font());
    const QString unit = tr("cycles");
    double lastRight = 4 + rfm.horizontalAdvance(unit) + 4;
    for (double t = std::ceil(ax.t0 / step) * step; t <= ax.t1; t += step) {
        double x = ax.mapTimeToX(t);
        p.drawLine(QPointF(x, kRuler - 5), QPointF(x, kRuler));
        const QString text = QString::number(qint64(t));
        const double w = rfm.horizontalAdvance(text);
        double left = x + 2 > width() - 2 - w ? x - 2 - w : x + 2;
        if (left < lastRight) {
            continue;
        }
        const QRectF r(left, kRuler - 7 - rfm.ascent(), w, rfm.height());
        p.drawText(QPointF(left, kRuler - 7), text);
        m_rulerLabels.append({r, text});
        lastRight = left + w + 4;
    }
    p.drawText(QPointF(4, kRuler - 7), unit);
    const QString selected = m_session->viewState()->selectedDirective();
    p.setClipRect(QRectF(0, kRuler, width(), height()));
    const int rows = rowCount();
    QSet<int> matched;
    for (int i : m_matches) {
        matched.insert(i);
    }
    for (int row = 0; row < pipes.size(); ++row) {
        QRectF lane = laneRect(area, rows, row, 3);
        p.setClipping(false);
        p.setPen(Qt::black);
        p.drawText(QRectF(2, lane.top(), kLabelWidth - 6, lane.height()),
                   Qt::AlignVCenter | Qt::AlignRight, pipes[row]);
        p.setClipRect(area);
        // Idle background: whatever no bar covers stays this colour.
        p.fillRect(lane, QColor(250, 228, 228));
        for (const TimelineBar &b : bars(row)) {
            if (b.event < 0) { // the front end between its traced events
                p.fillRect(b.rect, b.stall ? kStallFill : kIssueFill);
                if (b.stall) {
                    p.fillRect(b.rect, QBrush(kStallHatch, Qt::FDiagPattern));
                }
                continue;
            }
            const bool isSel = !selected.isEmpty() && m->directiveOf(b.event) == selected;
            if (b.stall) {
                // A wait: light, hatched, the same height as a bar.
                p.fillRect(b.rect, kStallFill);
                p.fillRect(b.rect,
                           QBrush(kStallHatch, b.derived ? Qt::FDiagPattern : Qt::BDiagPattern));
            } else {
                QColor c = barColor(m->event(b.event));
                if (b.alternate) {
                    c = c.darker(118);
                }
                if (!selected.isEmpty() && !isSel) {
                    c = c.lighter(150);
                }
                p.fillRect(b.rect, c);
            }
            if (isSel) {
                p.setPen(QPen(Qt::black, 1.5));
                p.drawRect(b.rect);
            }
            if (!matched.isEmpty() && !b.stall && matched.contains(b.event)) {
                const bool current = b.event == currentMatch();
                p.setPen(QPen(QColor(220, 0, 200), current ? 3 : 1.5));
                p.drawRect(b.rect.adjusted(-1, -1, 1, 1));
            }
        }
    }
    // A capped trace: a marker where the recorded events stop (the summary still counts the whole
    // run).
    const qint64 cut = m->traceCutCycle();
    if (cut >= 0) {
        p.setClipping(false);
        const double x = ax.mapTimeToX(double(cut));
        p.setPen(QPen(QColor(200, 30, 30), 1.5, Qt::DashLine));
        if (double(cut) >= ax.t0 && double(cut) <= ax.t1) {
            p.drawLine(QPointF(x, kRuler), QPointF(x, height()));
        }
        p.setPen(QColor(200, 30, 30));
        p.drawText(QRectF(kLabelWidth, kRuler + 2, std::max(10.0, width() - kLabelWidth - 4.0), 16),
                   Qt::AlignRight | Qt::AlignTop,
                   tr("trace stops at cycle %1 (trace cap); later events not shown").arg(cut));
        p.setClipRect(QRectF(0, kRuler, width(), height()));
    }
    // The cost model's predicted timeline: hatched bars, one row per pipe it models.
    QStringList model = predictedPipes();
    auto prediction = m_session->prediction();
    for (int k = 0; k < model.size(); ++k) {
        QRectF lane = laneRect(area, rows, int(pipes.size()) + k, 3);
        p.setClipping(false);
        p.setPen(QColor(40, 90, 160));
        p.drawText(QRectF(0, lane.top(), kLabelWidth - 4, lane.height()),
                   Qt::AlignVCenter | Qt::AlignRight, tr("model %1").arg(model[k]));
        p.setClipRect(area);
        p.fillRect(lane, QColor(236, 242, 250));
        for (const auto &b : prediction->prediction.timeline) {
            if (QString::fromStdString(b.pipe) != model[k] || b.end < ax.t0 || b.start > ax.t1) {
                continue;
            }
            double x0 = ax.mapTimeToX(b.start), x1 = ax.mapTimeToX(b.end);
            QRectF bar(x0, lane.top() + 1, std::max(1.0, x1 - x0), lane.height() - 2);
            p.fillRect(bar, QBrush(QColor(40, 90, 160), Qt::BDiagPattern));
            p.setPen(QPen(QColor(40, 90, 160), 1));
            p.drawRect(bar);
        }
    }
    p.setClipRect(area);
    paintCriticalPath(p, area, ax);
    paintArrows(p, ax);
    paintSelection(p, area, ax);
}

int TimelineView::eventAt(const QPointF &pt) const {
    const TimelineModel *m = m_session->timeline();
    QRectF area = plotArea();
    for (int row = 0; row < m->pipes().size(); ++row) {
        if (laneRect(area, rowCount(), row, 3).contains(pt)) {
            TimeAxis ax = axis();
            double slack = 3 / std::max(ax.scale(), 1e-12); // 3 pixels
            return m->eventAt(row, ax.mapXToTime(pt.x()), slack);
        }
    }
    return -1;
}

void TimelineView::forgetRun() {
    m_analysed = false;
    m_links.reset();
    m_frontEnd.reset();
    m_summaryOf = nullptr;
    m_path.reset();
    m_haystack.clear();
    m_waits.clear();
    m_waitsOf.clear();
    m_linksIndexed = false;
    m_focusEvent = m_hoverEvent = -1;
    if (m_searchBar && m_searchBar->isVisible()) {
        updateMatches();
    }
}

void TimelineView::analyse() const {
    if (m_analysed) {
        return;
    }
    m_analysed = true;
    const auto &report = m_session->timeline()->report();
    auto compile = m_session->lastCompile();
    // The program that ran: the last compile, when it is of the same schedule.
    const tessel::isa::Program *program = nullptr;
    if (report && report->sim && compile && compile->has_program &&
        compile->schedule_hash == report->schedule_hash) {
        program = &compile->program;
    }
    m_links = std::make_unique<WaitLinks>(program ? WaitLinks(*report->sim, program) : WaitLinks());
    m_frontEnd = std::make_unique<FrontEnd>(program ? FrontEnd(*report->sim, *program, machine())
                                                    : FrontEnd());
}

const WaitLinks &TimelineView::waitLinks() const {
    analyse();
    return *m_links;
}

const FrontEnd &TimelineView::frontEnd() const {
    analyse();
    return *m_frontEnd;
}

QString TimelineView::hoverText(const QPointF &pt) const {
    const TimelineModel *m = m_session->timeline();
    int row = -1;
    for (int r = 0; r < m->pipes().size(); ++r) {
        if (laneOf(r).contains(pt)) {
            row = r;
        }
    }
    if (row < 0) {
        return {};
    }
    const TimelineBar *best = nullptr;
    double bestDist = 3.5; // pixels
    const QVector<TimelineBar> all = bars(row);
    for (const TimelineBar &b : all) {
        const double d = pt.x() < b.rect.left()        ? b.rect.left() - pt.x()
                         : pt.x() > b.rect.right() + 1 ? pt.x() - b.rect.right() - 1
                                                       : 0;
        if (d < bestDist) {
            best = &b;
            bestDist = d;
        }
    }
    if (!best) {
        return {};
    }
    const CycleSpan s = best->span;
    if (best->event < 0 && best->stall) {
        QString text = tr("stall on %1: cycles %2 - %3 (%4)\n")
                           .arg(m->pipes()[row])
                           .arg(s.start)
                           .arg(s.end)
                           .arg(s.length());
        if (best->cause >= 0) {
            const auto &c = m->event(best->cause);
            text +=
                tr("waits for room in the %1 queue (full); made when %2 %3\n(%4 at cycle %5, "
                   "directive %6)")
                    .arg(QString::fromStdString(c.pipe),
                         QString::fromLatin1(tessel::isa::op_info(c.op).mnemonic),
                         c.op == tessel::isa::Op::WAIT_FLAG ? tr("got its flag") : tr("started"),
                         QString::fromStdString(c.src.empty() ? c.pipe.str()
                                                              : c.src.str() + " -> " + c.dst.str()))
                    .arg(leftQueueCycle(c))
                    .arg(m->directiveOf(best->cause).isEmpty() ? tr("(none)")
                                                               : m->directiveOf(best->cause));
        }
        return text + tr("\n(replayed from the trace and the program: not a trace event)");
    }
    if (best->event < 0) {
        if (best->issued > 0) {
            return tr("%1 issues %2 instructions to the other pipes\ncycles %3 - %4 "
                      "(%5)\n(replayed from the "
                      "trace and the program: not trace events)")
                .arg(m->pipes()[row])
                .arg(best->issued)
                .arg(s.start)
                .arg(s.end)
                .arg(s.length());
        }
        return tr("%1 issuing instructions to the other pipes\ncycles %2 - %3 (%4)\n(not replayed: "
                  "the program "
                  "that ran is not at hand;\na wait for a full queue is counted here too)")
            .arg(m->pipes()[row])
            .arg(s.start)
            .arg(s.end)
            .arg(s.length());
    }
    const auto &ev = m->event(best->event);
    const QString directive =
        m->directiveOf(best->event).isEmpty() ? tr("(none)") : m->directiveOf(best->event);
    if (!best->stall) {
        QString text = eventLine(ev);
        if (!ev.stall.empty()) {
            text += QStringLiteral("\nstall: ") + QString::fromStdString(ev.stall);
        }
        return text + QStringLiteral("\ndirective: ") + directive;
    }
    QString text = tr("stall on %1: cycles %2 - %3 (%4)\n")
                       .arg(QString::fromStdString(ev.pipe))
                       .arg(s.start)
                       .arg(s.end)
                       .arg(s.length());
    if (best->derived) {
        const uint64_t queued =
            frontEnd().ok() ? frontEnd().queuedAt(size_t(best->event)) : UINT64_MAX;
        text += tr("waits for a free DMA slot (the engine's max_outstanding transfers are in "
                   "flight),\nthen runs "
                   "%1 %2 -> %3 (cycles %4 - %5)\n")
                    .arg(QString::fromLatin1(tessel::isa::op_info(ev.op).mnemonic),
                         QString::fromStdString(ev.src), QString::fromStdString(ev.dst))
                    .arg(ev.start)
                    .arg(ev.end);
        text +=
            queued == UINT64_MAX
                ? tr("(derived: when it was queued is unknown, so this span starts where the "
                     "pipe's\nprevious "
                     "instruction ended: an upper bound)")
                : tr("(derived: queued at cycle %1, ready from cycle %2)").arg(queued).arg(s.start);
    } else {
        const auto &report = m->report();
        const WaitLinks &links = waitLinks();
        text += QString::fromStdString(links.describe(*report->sim, size_t(best->event)));
        text += tr("\n(%1, cycles %2 - %3)")
                    .arg(QString::fromLatin1(tessel::isa::op_info(ev.op).mnemonic))
                    .arg(ev.start)
                    .arg(ev.end);
        const WaitLinks::Link *l = links.of(size_t(best->event));
        if (l && l->lastEvent >= 0 && !m->directiveOf(int(l->lastEvent)).isEmpty()) {
            text += tr("\ndirective of the instruction waited on: %1")
                        .arg(m->directiveOf(int(l->lastEvent)));
        }
    }
    return text + QStringLiteral("\ndirective: ") + directive;
}

bool TimelineView::event(QEvent *e) {
    if (e->type() == QEvent::ShortcutOverride) {
        // Esc clears a selection (instead of the window's Esc), F zooms to fit.
        auto *k = static_cast<QKeyEvent *>(e);
        const bool plain = k->modifiers() == Qt::NoModifier;
        if ((k->key() == Qt::Key_Escape && (hasSelection() || m_selecting)) ||
            (plain && (k->key() == Qt::Key_F || k->key() == Qt::Key_A || k->key() == Qt::Key_C))) {
            e->accept();
            return true;
        }
    }
    return QWidget::event(e);
}

void TimelineView::keyPressEvent(QKeyEvent *e) {
    if (e->key() == Qt::Key_Escape && (hasSelection() || m_selecting)) {
        clearSelection();
        e->accept();
        return;
    }
    if (e->key() == Qt::Key_F && e->modifiers() == Qt::NoModifier) {
        m_session->viewState()->resetZoom();
        e->accept();
        return;
    }
    if (e->key() == Qt::Key_A && e->modifiers() == Qt::NoModifier) {
        setShowAllArrows(!m_allArrows);
        e->accept();
        return;
    }
    if (e->key() == Qt::Key_C && e->modifiers() == Qt::NoModifier) {
        setShowCriticalPath(!m_showPath);
        e->accept();
        return;
    }
    QWidget::keyPressEvent(e);
}

void TimelineView::wheelEvent(QWheelEvent *e) {
    double factor = e->angleDelta().y() > 0 ? 1.25 : 0.8;
    m_session->viewState()->zoomBy(factor, axis().mapXToTime(e->position().x()));
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *e) {
    if (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier) &&
        !m_session->timeline()->pipes().isEmpty()) {
        // Shift+drag: a range selection from here.
        m_selecting = true;
        m_selAnchor = timeAt(e->position().x());
        m_selT0 = m_selT1 = m_selAnchor;
        update();
        return;
    }
    m_dragX = e->position().x();
    m_dragged = false;
}

void TimelineView::mouseMoveEvent(QMouseEvent *e) {
    if (m_selecting) {
        const qint64 t = timeAt(e->position().x());
        m_selT0 = std::min(m_selAnchor, t);
        m_selT1 = std::max(m_selAnchor, t);
        update();
        return;
    }
    if (m_dragX >= 0 && (e->buttons() & Qt::LeftButton)) {
        double dx = e->position().x() - m_dragX;
        if (std::abs(dx) > 2 || m_dragged) {
            m_dragged = true;
            m_session->viewState()->panBy(-dx / std::max(axis().scale(), 1e-12));
            m_dragX = e->position().x();
        }
        return;
    }
    const int hovered = eventAt(e->position());
    if (hovered != m_hoverEvent) {
        m_hoverEvent = hovered;
        update(); // its arrows
    }
    const QString text = hoverText(e->position());
    if (text.isEmpty()) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(e->globalPosition().toPoint(), text, this);
}

void TimelineView::mouseReleaseEvent(QMouseEvent *e) {
    if (m_selecting) {
        const qint64 t = timeAt(e->position().x());
        m_selecting = false;
        if (t == m_selAnchor) {
            clearSelection(); // a Shift+click selects nothing
        } else {
            setSelection(m_selAnchor, t);
        }
        return;
    }
    if (!m_dragged) {
        clearSelection(); // a click clears the range
        int i = eventAt(e->position());
        setFocusEvent(i);
        if (i >= 0) {
            m_session->viewState()->selectDirective(m_session->timeline()->directiveOf(i));
        }
    }
    m_dragX = -1;
    m_dragged = false;
}

} // namespace tessel::ide

namespace tessel::ide {

// ---- flow arrows, critical path, search ---------------------------------------

int TimelineView::rowOfPipe(const std::string &pipe) const {
    return int(m_session->timeline()->pipes().indexOf(QString::fromStdString(pipe)));
}

void TimelineView::setFocusEvent(int event) {
    if (event != m_focusEvent) {
        m_focusEvent = event;
        update();
    }
}

void TimelineView::setShowAllArrows(bool on) {
    m_allArrows = on;
    update();
}

void TimelineView::setShowCriticalPath(bool on) {
    m_showPath = on;
    update();
}

uint64_t TimelineView::releaseOf(int i) const {
    const auto &e = m_session->timeline()->event(i);
    const EventParts parts = splitEvent(e, 0, machine());
    if (e.op == tessel::isa::Op::WAIT_FLAG && e.pipe != machine().scalarPipe) {
        return e.end;
    }
    return parts.stall.empty() ? e.start : parts.stall.end;
}

QVector<FlowArrow> TimelineView::arrows() const {
    QVector<FlowArrow> out;
    const TimelineModel *m = m_session->timeline();
    if (m->pipes().isEmpty() || !m->report() || !m->report()->sim) {
        return out;
    }
    const WaitLinks &links = waitLinks();
    if (!m_linksIndexed) {
        m_linksIndexed = true;
        for (const auto &kv : links.all()) {
            m_waits.push_back(kv.first);
        }
        std::sort(m_waits.begin(), m_waits.end());
        for (size_t w : m_waits) {
            const WaitLinks::Link &l = links.all().at(w);
            for (int64_t from : {l.setEvent, l.lastEvent}) {
                if (from >= 0) {
                    m_waitsOf[int(from)].append(int(w));
                }
            }
        }
    }
    const TimeAxis ax = axis();
    auto make = [&](int wait, const WaitLinks::Link &l) {
        const bool flag = l.setEvent >= 0;
        const int from = flag ? int(l.setEvent) : int(l.lastEvent);
        if (from < 0 || (!flag && m->event(wait).op == tessel::isa::Op::WAIT_FLAG)) {
            return;
        }
        const auto &a = m->event(from), &b = m->event(wait);
        const int ra = rowOfPipe(a.pipe), rb = rowOfPipe(b.pipe);
        if (ra < 0 || rb < 0) {
            return;
        }
        const uint64_t release = releaseOf(wait);
        FlowArrow f;
        f.from = from;
        f.to = wait;
        f.barrier = !flag;
        f.p0 = QPointF(ax.mapTimeToX(double(a.end)), laneOf(ra).center().y());
        f.p1 = QPointF(ax.mapTimeToX(double(release)), laneOf(rb).center().y());
        out.append(f);
    };
    if (m_allArrows) {
        for (size_t w : m_waits) {
            const WaitLinks::Link &l = links.all().at(w);
            const int from = l.setEvent >= 0 ? int(l.setEvent) : int(l.lastEvent);
            if (from < 0) {
                continue;
            }
            // Culled: both ends before or both after the cycles in view.
            const double t0 = double(m->event(from).end), t1 = double(releaseOf(int(w)));
            if (std::max(t0, t1) < ax.t0 || std::min(t0, t1) > ax.t1) {
                continue;
            }
            make(int(w), l);
        }
        return out;
    }
    const int f = m_hoverEvent >= 0 ? m_hoverEvent : m_focusEvent;
    if (f < 0) {
        return out;
    }
    if (const WaitLinks::Link *l = links.of(size_t(f))) {
        make(f, *l); // f waited: what released it
    }
    // f released waits (a set_flag), or was the producer before a set_flag / a barrier's last
    // drained event.
    for (int w : m_waitsOf.value(f)) {
        make(w, *links.of(size_t(w)));
    }
    std::sort(out.begin(), out.end(), [](const FlowArrow &a, const FlowArrow &b) {
        return a.to != b.to ? a.to < b.to : a.from < b.from;
    });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const FlowArrow &a, const FlowArrow &b) {
                              return a.to == b.to && a.from == b.from;
                          }),
              out.end());
    return out;
}

void TimelineView::paintArrows(QPainter &p, const TimeAxis &) const {
    const QVector<FlowArrow> all = arrows();
    p.setRenderHint(QPainter::Antialiasing, true);
    for (const FlowArrow &f : all) {
        const QColor c = f.barrier ? QColor(120, 60, 20) : QColor(20, 60, 160);
        p.setPen(QPen(c, 1.3, f.barrier ? Qt::DashLine : Qt::SolidLine));
        // A curve leaving the producer's row to the right and entering the consumer's row.
        QPainterPath path(f.p0);
        const double dx = std::max(12.0, std::abs(f.p1.x() - f.p0.x()) / 2);
        path.cubicTo(f.p0 + QPointF(dx, 0), f.p1 - QPointF(dx, 0), f.p1);
        p.drawPath(path);
        const QPointF d(-6, 0);
        QPolygonF head;
        head << f.p1 << f.p1 + d + QPointF(0, -3.5) << f.p1 + d + QPointF(0, 3.5);
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawPolygon(head);
        p.setBrush(Qt::NoBrush);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
}

const CriticalPath &TimelineView::criticalPath() const {
    if (!m_path) {
        m_path = std::make_unique<CriticalPath>();
        const auto &report = m_session->timeline()->report();
        if (report && report->sim) {
            *m_path = tessel::ide::criticalPath(*report->sim, waitLinks(), &frontEnd(), machine());
        }
    }
    return *m_path;
}

QString TimelineView::criticalPathText() const {
    const CriticalPath &cp = criticalPath();
    if (cp.steps.empty()) {
        return {};
    }
    return QString::fromStdString(cp.describe());
}

void TimelineView::paintCriticalPath(QPainter &p, const QRectF &area, const TimeAxis &ax) const {
    if (!m_showPath) {
        return;
    }
    const CriticalPath &cp = criticalPath();
    const QColor red(220, 30, 30);
    QPointF prev(-1, -1);
    for (const PathStep &s : cp.steps) {
        const int row = rowOfPipe(s.pipe);
        if (row < 0) {
            continue;
        }
        const QRectF lane = laneOf(row);
        const double x0 = ax.mapTimeToX(double(s.start)), x1 = ax.mapTimeToX(double(s.end));
        if (prev.x() >= 0 && std::abs(prev.y() - lane.center().y()) > 0.5) {
            // Joins the step before on another row.
            p.setPen(QPen(red, 1.5));
            p.drawLine(QPointF(x0, prev.y()), QPointF(x0, lane.center().y()));
        }
        if (s.end > s.start && x1 >= area.left() && x0 <= area.right()) {
            const bool own = s.kind == PathStep::Kind::Busy || s.kind == PathStep::Kind::Issue;
            p.setPen(QPen(red, own ? 2 : 1.5, own ? Qt::SolidLine : Qt::DotLine));
            p.drawRect(QRectF(x0, lane.top() + 0.5, std::max(1.0, x1 - x0), lane.height() - 1));
        }
        prev = QPointF(x1, lane.center().y());
    }
    // The share of each pipe, bottom left.
    const QString text = criticalPathText();
    if (text.isEmpty()) {
        return;
    }
    const QFontMetrics fm = p.fontMetrics();
    const QRectF box(area.left() + 4, area.bottom() - fm.height() - 6,
                     std::min(area.width() - 8, double(fm.horizontalAdvance(text) + 12)),
                     fm.height() + 4);
    p.fillRect(box, QColor(255, 255, 255, 230));
    p.setPen(red);
    p.drawRect(box);
    p.drawText(box.adjusted(6, 2, -6, -2), Qt::AlignLeft | Qt::AlignVCenter, text);
}

void TimelineView::placeSearch() {
    const int w = std::min(360, std::max(160, width() - int(kLabelWidth) - 12));
    m_searchBar->setGeometry(width() - w - 6, 0, w, std::max(int(kRuler) + 4, 24));
}

void TimelineView::resizeEvent(QResizeEvent *e) {
    QWidget::resizeEvent(e);
    placeSearch();
}

void TimelineView::openSearch() {
    placeSearch();
    m_searchBar->show();
    m_searchBar->raise();
    m_search->setFocus();
    m_search->selectAll();
    updateMatches();
}

void TimelineView::closeSearch() {
    m_searchBar->hide();
    m_matches.clear();
    m_match = -1;
    setFocus();
    update();
}

int TimelineView::currentMatch() const {
    return m_match >= 0 && m_match < m_matches.size() ? m_matches[m_match] : -1;
}

void TimelineView::updateMatches() {
    m_matches.clear();
    m_match = -1;
    const TimelineModel *m = m_session->timeline();
    const QString q = m_search->text().trimmed().toLower();
    const auto &report = m->report();
    if (!q.isEmpty() && report && report->sim) {
        const auto &trace = report->sim->trace;
        if (m_haystack.size() != int(trace.size())) {
            // What the tooltip names: mnemonic, pipe, levels, stall reason, directive.
            m_haystack.resize(int(trace.size()));
            for (int i = 0; i < int(trace.size()); ++i) {
                const auto &e = trace[size_t(i)];
                m_haystack[i] =
                    QStringLiteral("%1 %2 %3 -> %4 %5 %6")
                        .arg(QString::fromLatin1(tessel::isa::op_info(e.op).mnemonic),
                             QString::fromStdString(e.pipe), QString::fromStdString(e.src),
                             QString::fromStdString(e.dst), QString::fromStdString(e.stall),
                             m->directiveOf(i))
                        .toLower();
            }
        }
        for (int i = 0; i < m_haystack.size(); ++i) {
            if (m_haystack[i].contains(q)) {
                m_matches.append(i);
            }
        }
        std::stable_sort(m_matches.begin(), m_matches.end(), [&](int a, int b) {
            return trace[size_t(a)].start < trace[size_t(b)].start;
        });
    }
    m_searchStatus->setText(q.isEmpty()           ? QString()
                            : m_matches.isEmpty() ? tr("not found")
                                                  : tr("%1 events").arg(m_matches.size()));
    update();
}

void TimelineView::findNext(bool backward) {
    if (m_matches.isEmpty()) {
        return;
    }
    const int n = int(m_matches.size());
    m_match = m_match < 0 ? (backward ? n - 1 : 0) : (m_match + (backward ? n - 1 : 1)) % n;
    const auto &e = m_session->timeline()->event(m_matches[m_match]);
    // Centred, zoomed so that the event is a sixth of the view (at least 40 cycles in view).
    const double len = std::max(1.0, double(e.end - e.start));
    const double width = std::max(40.0, 6 * len);
    const double c = (double(e.start) + double(e.end)) / 2;
    m_session->viewState()->zoomTo(c - width / 2, c + width / 2);
    m_searchStatus->setText(tr("%1 / %2").arg(m_match + 1).arg(n));
    setFocusEvent(m_matches[m_match]);
    update();
}

bool TimelineView::eventFilter(QObject *o, QEvent *e) {
    if (o == m_search) {
        const FindKey key = findFieldKey(e);
        switch (key) {
        case FindKey::None:
            break;
        case FindKey::Claimed:
            return true;
        case FindKey::Close:
            closeSearch();
            return true;
        case FindKey::Next:
        case FindKey::Previous:
            findNext(key == FindKey::Previous);
            return true;
        }
    }
    return QWidget::eventFilter(o, e);
}

} // namespace tessel::ide
