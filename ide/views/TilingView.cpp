#include "ide/views/TilingView.h"

#include "ide/core/Session.h"

#include <QMouseEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

namespace tessel::ide {

namespace {
const QColor kLevelColors[] = {QColor(52, 120, 200, 110), QColor(235, 140, 30, 150), QColor(60, 170, 80, 150),
                               QColor(150, 100, 200, 150)};

QString shapeText(const QVector<qint64> &shape) {
    QStringList s;
    for (qint64 e : shape) {
        s.prepend(QString::number(e)); // rows x columns (outermost first)
    }
    return s.join(QStringLiteral(" x "));
}
} // namespace

TilingView::TilingView(Session *session, QWidget *parent) : QWidget(parent), m_session(session) {
    setMinimumHeight(180);
    connect(session->tiling(), &QAbstractItemModel::modelReset, this, [this] {
        TileGrid g = outputGrid(); // keep the selected tile while it exists
        if (m_tile.first >= g.columns() || m_tile.second >= g.rows()) {
            m_tile = {0, 0};
        }
        update();
    });
}

QRectF TilingView::panel(int index, int count) const {
    double w = (width() - 8.0) / std::max(1, count);
    return QRectF(4 + index * w, 4, w - 8, height() - 8);
}

QRectF TilingView::fit(const QRectF &box, double w, double h) {
    double s = std::min(box.width() / std::max(1.0, w), box.height() / std::max(1.0, h));
    QRectF r(0, 0, w * s, h * s);
    r.moveCenter(box.center());
    return r;
}

TileGrid TilingView::outputGrid() const {
    const TilingModel *m = m_session->tiling();
    auto ops = m->operands();
    for (int i = 0; i < ops.size(); ++i) {
        if (!ops[i].output || ops[i].shape.isEmpty()) {
            continue;
        }
        qint64 w = ops[i].shape[0], h = ops[i].shape.size() > 1 ? ops[i].shape[1] : 1;
        QRectF box = panel(0, int(ops.size())).adjusted(0, 34, 0, -44);
        return TileGrid{w, h, m->outputTile().first, m->outputTile().second, fit(box, double(w), double(h))};
    }
    return {};
}

void TilingView::paintEvent(QPaintEvent *) {
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    const TilingModel *m = m_session->tiling();
    auto ops = m->operands();
    if (ops.isEmpty()) {
        p.setPen(Qt::gray);
        p.drawText(rect(), Qt::AlignCenter, tr("no tiling yet (compile to see it)"));
        return;
    }
    // Outputs first, then inputs.
    std::stable_partition(ops.begin(), ops.end(), [](const TilingModel::Operand &o) { return o.output; });
    TileGrid g = outputGrid();
    m_captions.clear();
    // Every caption is elided to its pane and keeps its whole text for the tooltip.
    auto caption = [&](const QRectF &r, const QString &text) {
        const QString shown = QFontMetricsF(p.font()).elidedText(text, Qt::ElideRight, r.width());
        p.drawText(r, Qt::AlignLeft, shown);
        m_captions.append({r, text, shown});
    };
    int panelIndex = 0;
    for (const auto &o : ops) {
        QRectF pane = panel(panelIndex++, int(ops.size()));
        p.setPen(Qt::black);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        // A tensor of more than two dimensions (a convolution's N x C x H x W) is drawn as its
        // innermost plane, with the planes behind it: the caption says how many.
        qint64 planes = 1;
        for (int d = 2; d < o.shape.size(); ++d) {
            planes *= o.shape[d];
        }
        caption(QRectF(pane.left(), pane.top(), pane.width(), 16),
                QStringLiteral("%1 [%2]%3%4")
                    .arg(o.name, shapeText(o.shape), o.output ? tr(" output") : QString(),
                         planes > 1 ? tr(": one %1 x %2 plane of %3 shown").arg(o.shape.value(1, 1)).arg(o.shape.value(0, 1)).arg(planes)
                                    : QString()));
        p.setFont(font());
        qint64 w = o.shape.value(0, 1), h = o.shape.value(1, 1);
        auto stackBehind = [&](const QRectF &box) {
            if (planes <= 1) {
                return;
            }
            p.setPen(QPen(QColor(150, 150, 150), 1));
            for (int k = std::min<qint64>(planes - 1, 2); k >= 1; --k) {
                p.fillRect(box.translated(4.0 * k, -4.0 * k), QColor(250, 250, 250));
                p.drawRect(box.translated(4.0 * k, -4.0 * k));
            }
        };
        if (o.output) {
            stackBehind(g.area);
            caption(QRectF(pane.left(), pane.top() + 16, pane.width(), 16),
                    tr("tile %1x%2 (%3), %4x%5 tiles")
                        .arg(m->outputTile().second)
                        .arg(m->outputTile().first)
                        .arg(m->tileDirective().isEmpty() ? tr("untiled") : m->tileDirective())
                        .arg(g.rows())
                        .arg(g.columns()));
            p.fillRect(g.area, QColor(245, 245, 245));
            p.setPen(QColor(120, 120, 120));
            for (int r = 0; r < g.rows(); ++r) {
                for (int c = 0; c < g.columns(); ++c) {
                    p.drawRect(g.tileRect(c, r));
                }
            }
            p.fillRect(g.tileRect(m_tile.first, m_tile.second), QColor(235, 140, 30, 170));
            p.setPen(QPen(Qt::black, 2));
            p.drawRect(g.area);
            p.drawText(QRectF(pane.left(), g.area.bottom() + 4, pane.width(), 36), Qt::AlignLeft | Qt::TextWordWrap,
                       tr("selected tile (%1, %2); click a tile").arg(m_tile.second).arg(m_tile.first));
            continue;
        }
        // Two text lines per level under the box: shape, copies, bytes, directive; where it sits.
        QVector<int> levels = m->footprintsOf(o.name);
        QFont small = font();
        small.setPointSizeF(small.pointSizeF() * 0.85);
        QFontMetricsF fm(small);
        int textLines = std::max<int>(1, 2 * int(levels.size()));
        QRectF box = fit(pane.adjusted(0, 34, 0, -(textLines * fm.height() + 6)), double(w), double(h));
        TileGrid space{w, h, w, h, box};
        stackBehind(box);
        p.fillRect(box, QColor(245, 245, 245));
        p.setPen(QPen(Qt::black, 2));
        p.drawRect(box);
        QStringList lines;
        int k = 0;
        for (int bi : levels) {
            const auto &b = m->buffers()[bi];
            qint64 fw = b.extents.empty() ? 1 : b.extents[0], fh = b.extents.size() > 1 ? b.extents[1] : 1;
            TilingModel::Footprint f = m->footprint(bi, m_tile.first, m_tile.second);
            QColor c = kLevelColors[k % 4];
            double inset = 2.0 * k; // inner levels drawn inside outer ones when the boxes coincide
            if (f.placed && !(f.span == f.first)) { // where the free loops (ko) move it
                QRectF sr = space.elementRect(f.span.x, f.span.y, f.span.w, f.span.h).adjusted(inset, inset, -inset, -inset);
                QColor light = c;
                light.setAlpha(45);
                p.fillRect(sr, light);
                p.setPen(QPen(c.darker(170), 1, Qt::DashLine));
                p.drawRect(sr);
            }
            QRectF fr = f.placed ? space.elementRect(f.first.x, f.first.y, f.first.w, f.first.h)
                                 : space.elementRect(0, 0, fw, fh);
            fr = fr.adjusted(inset, inset, -inset, -inset);
            p.fillRect(fr, c);
            p.setPen(QPen(c.darker(170), 1.5));
            p.drawRect(fr);
            lines << QStringLiteral("%1 %2x%3%4, %5 [%6]")
                         .arg(QString::fromStdString(b.level))
                         .arg(fh)
                         .arg(fw)
                         .arg(b.buffers > 1 ? QStringLiteral(" x%1").arg(b.buffers) : QString())
                         .arg(formatBytes(b.bytes), QString::fromStdString(b.directive));
            QString where = f.placed ? tr("  at (%1, %2)").arg(f.first.y).arg(f.first.x) : tr("  position unknown");
            if (f.placed && !f.freeLoops.isEmpty()) {
                where += tr(", over %1: %2x%3").arg(f.freeLoops.join(QStringLiteral(", "))).arg(f.span.h).arg(f.span.w);
            }
            lines << where;
            ++k;
        }
        if (lines.isEmpty()) {
            lines << tr("read from GM directly (not staged)");
        }
        p.setPen(Qt::black);
        caption(QRectF(pane.left(), pane.top() + 16, pane.width(), 16),
                tr("tile (%1, %2) reads (dashed: other loops)").arg(m_tile.second).arg(m_tile.first));
        p.setFont(small);
        for (int i = 0; i < lines.size(); ++i) {
            QColor ink = kLevelColors[(i / 2) % 4].darker(170);
            ink.setAlpha(255);
            p.setPen(i % 2 ? QColor(60, 60, 60) : ink);
            caption(QRectF(pane.left(), box.bottom() + 4 + i * fm.height(), pane.width(), fm.height()), lines[i]);
        }
        p.setFont(font());
    }
}

bool TilingView::event(QEvent *e) {
    if (e->type() == QEvent::ToolTip) {
        auto *he = static_cast<QHelpEvent *>(e);
        for (const auto &c : m_captions) {
            if (c.rect.contains(he->pos())) {
                QToolTip::showText(he->globalPos(), c.text, this);
                return true;
            }
        }
        QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

void TilingView::selectTile(int column, int row) {
    m_tile = {column, row};
    update();
}

void TilingView::mouseReleaseEvent(QMouseEvent *e) {
    auto t = outputGrid().tileAt(e->position());
    if (!t) {
        return;
    }
    m_tile = *t;
    QString d = m_session->tiling()->tileDirective();
    if (!d.isEmpty()) {
        m_session->viewState()->selectDirective(d);
    }
    update();
}

} // namespace tessel::ide
