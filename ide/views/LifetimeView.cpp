#include "ide/views/LifetimeView.h"

#include "ide/core/Geometry.h"
#include "ide/core/Session.h"

#include <QMouseEvent>
#include <QPainter>
#include <QRegularExpression>
#include <QToolTip>

#include <algorithm>

namespace tessel::ide {

namespace {
constexpr double kLabelWidth = 84, kTop = 18;
const QColor kColors[] = {QColor(52, 120, 200), QColor(40, 170, 190), QColor(235, 140, 30),
                          QColor(60, 170, 80), QColor(150, 100, 200), QColor(200, 90, 140)};
} // namespace

LifetimeView::LifetimeView(Session *session, QWidget *parent) : QWidget(parent), m_session(session) {
    setMouseTracking(true);
    setMinimumHeight(180);
    connect(session->lifetimes(), &QAbstractItemModel::modelReset, this, [this] { update(); });
    connect(session->viewState(), &ViewState::selectionChanged, this, [this] { update(); });
    connect(session->viewState(), &ViewState::zoomChanged, this, [this] {
        if (cyclesShown()) {
            update();
        }
    });
}

void LifetimeView::setTimeAxis(TimeAxisKind kind) {
    m_axis = kind;
    update();
}

bool LifetimeView::cyclesShown() const {
    const LifetimeModel *m = m_session->lifetimes();
    return m_axis == TimeAxisKind::Cycles && !m->cycleLifetimes().empty() && m->runCycles() > 0;
}

TimeAxis LifetimeView::xAxis(const QRectF &lane) const {
    if (cyclesShown()) { // the timeline's zoom, so the two views line up
        const ZoomRange &z = m_session->viewState()->zoom();
        return TimeAxis{z.start, z.end, lane.left(), lane.right()};
    }
    return TimeAxis{0, double(std::max<qint64>(1, m_session->lifetimes()->orderLength())), lane.left(), lane.right()};
}

QRectF LifetimeView::laneOf(int levelIndex) const {
    QRectF area(kLabelWidth, kTop, width() - kLabelWidth - 8, height() - kTop - 16);
    return laneRect(area, int(m_session->lifetimes()->levels().size()), levelIndex, 10);
}

double LifetimeView::laneTop(const QString &level) const {
    // Linear in bytes; when the buffers use under a quarter of the level, the
    // lane zooms to them and the capacity is named instead of drawn.
    const LifetimeModel *m = m_session->lifetimes();
    double cap = double(m->capacity(level)), high = double(m->highWater(level));
    return cap > 4 * high ? high * 1.15 : std::max(cap, high) * 1.08;
}

QRectF LifetimeView::barRect(int i) const {
    const LifetimeModel *m = m_session->lifetimes();
    const auto &l = m->lifetimes()[i];
    QString level = QString::fromStdString(l.level);
    QRectF lane = laneOf(int(m->levels().indexOf(level)));
    TimeAxis x = xAxis(lane);
    AddressAxis y{laneTop(level), lane.top(), lane.bottom()};
    double top = y.mapAddressToY(double(l.offset + l.bytes * std::max(1, l.buffers)));
    double bottom = y.mapAddressToY(double(l.offset));
    QRectF r;
    if (cyclesShown()) {
        const CycleLifetime &c = m->cycleLifetimes()[size_t(i)];
        if (!c.used) {
            return {};
        }
        r = QRectF(QPointF(x.mapTimeToX(double(c.first)), top), QPointF(x.mapTimeToX(double(c.last)), bottom));
    } else {
        r = QRectF(QPointF(x.mapTimeToX(double(l.first)), top), QPointF(x.mapTimeToX(double(l.last + 1)), bottom));
    }
    // The buffer that does not fit is what the user must see: never a thin strip.
    constexpr double kOverflowMin = 16;
    if (l.overflow && r.height() < kOverflowMin) {
        const double c = std::clamp(r.center().y(), lane.top() + kOverflowMin / 2, lane.bottom() - kOverflowMin / 2);
        r.setTop(c - kOverflowMin / 2);
        r.setBottom(c + kOverflowMin / 2);
    }
    return r;
}

void LifetimeView::paintEvent(QPaintEvent *) {
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    const LifetimeModel *m = m_session->lifetimes();
    if (m->levels().isEmpty()) {
        p.setPen(Qt::gray);
        p.drawText(rect(), Qt::AlignCenter, tr("no on-chip buffers (compile to see their lifetimes)"));
        return;
    }
    const bool cycles = cyclesShown();
    p.setPen(Qt::darkGray);
    p.drawText(QPointF(kLabelWidth, kTop - 5),
               cycles ? tr("simulated cycles %1 - %2 (the timeline's zoom) ->   (address up; dashed = capacity)")
                            .arg(qint64(m_session->viewState()->zoom().start))
                            .arg(qint64(m_session->viewState()->zoom().end))
               : m_axis == TimeAxisKind::Cycles ? tr("program order (no run yet for cycles) ->   (address up; dashed = capacity)")
                                                : tr("program order ->   (address up; dashed = capacity)"));
    const QString selected = m_session->viewState()->selectedDirective();
    for (int li = 0; li < m->levels().size(); ++li) {
        QString level = m->levels()[li];
        QRectF lane = laneOf(li);
        p.fillRect(lane, QColor(246, 246, 246));
        AddressAxis y{laneTop(level), lane.top(), lane.bottom()};
        double capY = y.mapAddressToY(double(m->capacity(level)));
        p.setPen(Qt::black);
        p.drawText(QRectF(2, lane.top(), kLabelWidth - 6, lane.height() / 2), Qt::AlignRight | Qt::AlignVCenter, level);
        p.setPen(Qt::darkGray);
        p.drawText(QRectF(2, lane.center().y(), kLabelWidth - 6, lane.height() / 2), Qt::AlignRight | Qt::AlignTop,
                   formatBytes(m->capacity(level)));
        if (capY < lane.top()) {
            p.setPen(QColor(150, 0, 0));
            p.drawText(QRectF(2, lane.center().y() + 14, kLabelWidth - 6, 14), Qt::AlignRight | Qt::AlignTop,
                       tr("%1 used").arg(formatBytes(m->highWater(level))));
        }
    }
    const auto &ls = m->lifetimes();
    m_labels.clear();
    for (int i = 0; i < int(ls.size()); ++i) {
        const auto &l = ls[i];
        QRectF r = barRect(i);
        QColor c = l.overflow ? QColor(220, 30, 30) : kColors[i % 6];
        bool isSel = !selected.isEmpty() && QString::fromStdString(l.directive) == selected;
        if (!selected.isEmpty() && !isSel && !l.overflow) {
            c = c.lighter(140);
        }
        int copies = std::max(1, l.buffers);
        if (cycles && r.isNull()) {
            continue; // no traced access (scalar code only)
        }
        p.save();
        p.setClipRect(laneOf(int(m->levels().indexOf(QString::fromStdString(l.level)))));
        for (int k = 0; k < copies; ++k) { // copy k sits at offset + k * bytes
            QRectF part(r.left(), r.bottom() - (k + 1) * r.height() / copies, r.width(), r.height() / copies);
            if (!cycles) {
                p.fillRect(part, k % 2 ? c.darker(115) : c);
                p.setPen(QPen(Qt::white, 1));
                p.drawRect(part);
                continue;
            }
            // In cycles: each interval the copy holds data, so double buffering alternates.
            TimeAxis lx = xAxis(laneOf(int(m->levels().indexOf(QString::fromStdString(l.level)))));
            for (const auto &[start, end] : m->cycleLifetimes()[size_t(i)].live[size_t(k)]) {
                QRectF seg(QPointF(lx.mapTimeToX(double(start)), part.top()), QPointF(lx.mapTimeToX(double(end)), part.bottom()));
                seg.setWidth(std::max(1.0, seg.width()));
                p.fillRect(seg, k % 2 ? c.darker(115) : c);
            }
            p.setPen(QPen(c.darker(130), 1));
            p.drawRect(part);
        }
        p.restore();
        if (isSel) {
            p.setPen(QPen(Qt::black, 2));
            p.drawRect(r);
        }
        // "A_im_global_wrapper$3_global_wrapper$3" -> "A''" (the "$N" differs when a process builds a pipeline again).
        static const QRegularExpression wrapper(QStringLiteral("(_im)?(\\$[0-9]+)?_global_wrapper(\\$[0-9]+)?")), suffix(QStringLiteral("\\$[0-9]+"));
        QString label = QString::fromStdString(l.name);
        label.replace(wrapper, QStringLiteral("'"));
        label.replace(suffix, QString());
        label += QStringLiteral(" %1%2").arg(formatBytes(l.bytes), copies > 1 ? QStringLiteral(" x%1").arg(copies) : QString());
        if (l.overflow) {
            label = tr("OVERFLOW %1 needs %2 [%3]")
                        .arg(QString::fromStdString(l.name), formatBytes(l.bytes * copies),
                             QString::fromStdString(l.directive));
        }
        if (l.overflow) { // hatched as well as red: visible on any screen, in any print
            p.fillRect(r, QBrush(QColor(110, 0, 0, 70), Qt::BDiagPattern));
        }
        QFontMetricsF fm(font());
        if (r.height() >= fm.height()) {
            const QString shown = fm.elidedText(label, Qt::ElideRight, r.width() - 5);
            p.setPen(l.overflow ? Qt::white : Qt::black);
            p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter, shown);
            m_labels.append({i, r.adjusted(3, 0, -2, 0), shown, false});
        } else {
            // Too thin for its label: a smaller label beside the bar (right of it, else left),
            // on a white ground, within the lane.
            QFont small = font();
            small.setPointSizeF(small.pointSizeF() * 0.8);
            const QFontMetricsF sm(small);
            const QRectF lane = laneOf(int(m->levels().indexOf(QString::fromStdString(l.level))));
            const double w = sm.horizontalAdvance(label) + 4, h = sm.height();
            const double cy = std::clamp(r.center().y(), lane.top() + h / 2, lane.bottom() - h / 2);
            QRectF at(r.right() + 3, cy - h / 2, w, h);
            if (at.right() > lane.right()) {
                at.moveRight(r.left() - 3);
            }
            if (at.left() < lane.left()) {
                at.moveLeft(lane.left());
            }
            p.fillRect(at, QColor(255, 255, 255, 215));
            p.setFont(small);
            p.setPen(l.overflow ? QColor(180, 0, 0) : QColor(40, 40, 40));
            p.drawText(at.adjusted(2, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, label);
            p.setFont(font());
            m_labels.append({i, at, label, true});
        }
    }
    // Capacity lines on top of the bars (a lane zoomed to its buffers names the capacity on the left).
    p.setPen(QPen(QColor(200, 0, 0), 1.5, Qt::DashLine));
    for (int li = 0; li < m->levels().size(); ++li) {
        QRectF lane = laneOf(li);
        AddressAxis y{laneTop(m->levels()[li]), lane.top(), lane.bottom()};
        double capY = y.mapAddressToY(double(m->capacity(m->levels()[li])));
        if (capY >= lane.top()) {
            p.drawLine(QPointF(lane.left(), capY), QPointF(lane.right(), capY));
        }
    }
}

int LifetimeView::lifetimeAt(const QPointF &pt) const {
    const auto &ls = m_session->lifetimes()->lifetimes();
    for (int i = int(ls.size()) - 1; i >= 0; --i) {
        if (barRect(i).contains(pt)) {
            return i;
        }
    }
    return -1;
}

void LifetimeView::mouseReleaseEvent(QMouseEvent *e) {
    int i = lifetimeAt(e->position());
    if (i >= 0) {
        m_session->viewState()->selectDirective(QString::fromStdString(m_session->lifetimes()->lifetimes()[i].directive));
    }
}

void LifetimeView::mouseMoveEvent(QMouseEvent *e) {
    int i = lifetimeAt(e->position());
    if (i < 0) {
        QToolTip::hideText();
        return;
    }
    const auto &l = m_session->lifetimes()->lifetimes()[i];
    QString cycles;
    if (size_t(i) < m_session->lifetimes()->cycleLifetimes().size()) {
        const CycleLifetime &c = m_session->lifetimes()->cycleLifetimes()[size_t(i)];
        cycles = c.used ? tr("\nin use cycles %1 .. %2 (%3 traced accesses)").arg(c.first).arg(c.last).arg(c.accesses)
                        : tr("\nno traced access (scalar code only)");
    }
    QToolTip::showText(e->globalPosition().toPoint(),
                       tr("%1 in %2\noffset %3, %4 x %5 copies\nlive %6 .. %7 (program order)%10\ndirective %8%9")
                           .arg(QString::fromStdString(l.name), QString::fromStdString(l.level))
                           .arg(l.offset)
                           .arg(formatBytes(l.bytes))
                           .arg(l.buffers)
                           .arg(l.first)
                           .arg(l.last)
                           .arg(QString::fromStdString(l.directive), l.overflow ? tr("\nDOES NOT FIT") : QString(), cycles),
                       this);
}

} // namespace tessel::ide
