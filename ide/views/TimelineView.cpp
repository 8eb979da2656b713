#include "ide/views/TimelineView.h"

#include "ide/core/Session.h"
#include "npu_target/isa/InstrTable.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

namespace tessel::ide {

namespace {
constexpr double kLabelWidth = 76, kRuler = 20;

QColor barColor(const tessel::sim::TraceEvent &e) {
    using tessel::isa::Op;
    using tessel::isa::Unit;
    if (e.op == Op::WAIT_FLAG) {
        return QColor(200, 200, 200);
    }
    switch (tessel::isa::op_info(e.op).unit) {
    case Unit::Dma:
        return e.src == "GM" ? QColor(52, 120, 200) : e.dst == "GM" ? QColor(120, 80, 190) : QColor(40, 170, 190);
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
} // namespace

TimelineView::TimelineView(Session *session, QWidget *parent) : QWidget(parent), m_session(session) {
    setMouseTracking(true);
    setMinimumHeight(160);
    auto repaint = [this] { update(); };
    connect(session->viewState(), &ViewState::zoomChanged, this, repaint);
    connect(session->viewState(), &ViewState::selectionChanged, this, repaint);
    connect(session->timeline(), &QAbstractItemModel::modelReset, this, repaint);
    connect(session, &Session::predictionChanged, this, repaint);
}

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
        auto rank = [&](const QString &x) { return sim.contains(x) ? sim.indexOf(x) : int(sim.size()); };
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

TimeAxis TimelineView::axis() const {
    const ZoomRange &z = m_session->viewState()->zoom();
    QRectF a = plotArea();
    return TimeAxis{z.start, z.end, a.left(), a.right()};
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
    for (double t = std::ceil(ax.t0 / step) * step; t <= ax.t1; t += step) {
        double x = ax.mapTimeToX(t);
        p.drawLine(QPointF(x, kRuler - 5), QPointF(x, kRuler));
        p.drawText(QPointF(x + 2, kRuler - 7), QString::number(qint64(t)));
    }
    p.drawText(QPointF(4, kRuler - 7), tr("cycles"));
    const QString selected = m_session->viewState()->selectedDirective();
    p.setClipRect(QRectF(0, kRuler, width(), height()));
    const int rows = rowCount();
    for (int row = 0; row < pipes.size(); ++row) {
        QRectF lane = laneRect(area, rows, row, 3);
        p.setClipping(false);
        p.setPen(Qt::black);
        p.drawText(QRectF(2, lane.top(), kLabelWidth - 6, lane.height()), Qt::AlignVCenter | Qt::AlignRight, pipes[row]);
        p.setClipRect(area);
        // Idle background: whatever no bar covers stays this colour.
        p.fillRect(lane, QColor(250, 228, 228));
        for (int i : m->eventsOf(row)) {
            const auto &e = m->event(i);
            if (double(e.end) < ax.t0 || double(e.start) > ax.t1) {
                continue;
            }
            double x0 = ax.mapTimeToX(double(e.start)), x1 = ax.mapTimeToX(double(e.end));
            QRectF bar(x0, lane.top() + 1, std::max(1.0, x1 - x0), lane.height() - 2);
            QColor c = barColor(e);
            if (e.op == tessel::isa::Op::WAIT_FLAG) {
                bar = QRectF(x0, lane.center().y() - 1, std::max(1.0, x1 - x0), 2);
            }
            bool isSel = !selected.isEmpty() && m->directiveOf(i) == selected;
            if (!selected.isEmpty() && !isSel) {
                c = c.lighter(150);
            }
            p.fillRect(bar, c);
            if (isSel) {
                p.setPen(QPen(Qt::black, 1.5));
                p.drawRect(bar);
            }
        }
    }
    // A capped trace: a marker where the recorded events stop (the summary still counts the whole run).
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
                   Qt::AlignRight | Qt::AlignTop, tr("trace stops at cycle %1 (trace cap); later events not shown").arg(cut));
        p.setClipRect(QRectF(0, kRuler, width(), height()));
    }
    // The cost model's predicted timeline: hatched bars, one row per pipe it models.
    QStringList model = predictedPipes();
    auto prediction = m_session->prediction();
    for (int k = 0; k < model.size(); ++k) {
        QRectF lane = laneRect(area, rows, int(pipes.size()) + k, 3);
        p.setClipping(false);
        p.setPen(QColor(40, 90, 160));
        p.drawText(QRectF(0, lane.top(), kLabelWidth - 4, lane.height()), Qt::AlignVCenter | Qt::AlignRight,
                   tr("model %1").arg(model[k]));
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

void TimelineView::wheelEvent(QWheelEvent *e) {
    double factor = e->angleDelta().y() > 0 ? 1.25 : 0.8;
    m_session->viewState()->zoomBy(factor, axis().mapXToTime(e->position().x()));
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *e) {
    m_dragX = e->position().x();
    m_dragged = false;
}

void TimelineView::mouseMoveEvent(QMouseEvent *e) {
    if (m_dragX >= 0 && (e->buttons() & Qt::LeftButton)) {
        double dx = e->position().x() - m_dragX;
        if (std::abs(dx) > 2 || m_dragged) {
            m_dragged = true;
            m_session->viewState()->panBy(-dx / std::max(axis().scale(), 1e-12));
            m_dragX = e->position().x();
        }
        return;
    }
    int i = eventAt(e->position());
    if (i < 0) {
        QToolTip::hideText();
        return;
    }
    const TimelineModel *m = m_session->timeline();
    const auto &ev = m->event(i);
    QString text = QStringLiteral("%1 on %2\ncycles %3 - %4 (%5)\n")
                       .arg(QString::fromLatin1(tessel::isa::op_info(ev.op).mnemonic), QString::fromStdString(ev.pipe))
                       .arg(ev.start)
                       .arg(ev.end)
                       .arg(ev.end - ev.start);
    if (ev.bytes > 0) {
        text += QStringLiteral("%1 bytes").arg(ev.bytes);
    }
    if (!ev.src.empty() || !ev.dst.empty()) {
        text += QStringLiteral("  %1 -> %2").arg(QString::fromStdString(ev.src), QString::fromStdString(ev.dst));
    }
    if (!ev.stall.empty()) {
        text += QStringLiteral("\nstall: ") + QString::fromStdString(ev.stall);
    }
    text += QStringLiteral("\ndirective: ") + (m->directiveOf(i).isEmpty() ? tr("(none)") : m->directiveOf(i));
    QToolTip::showText(e->globalPosition().toPoint(), text, this);
}

void TimelineView::mouseReleaseEvent(QMouseEvent *e) {
    if (!m_dragged) {
        int i = eventAt(e->position());
        if (i >= 0) {
            m_session->viewState()->selectDirective(m_session->timeline()->directiveOf(i));
        }
    }
    m_dragX = -1;
    m_dragged = false;
}

} // namespace tessel::ide
