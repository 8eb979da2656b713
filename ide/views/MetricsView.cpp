#include "ide/views/MetricsView.h"

#include "ide/core/Session.h"

#include <QChart>
#include <QChartView>
#include <QGraphicsSimpleTextItem>
#include <QHeaderView>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <cmath>

namespace tessel::ide {

MetricsView::MetricsView(Session *session, QWidget *parent) : QWidget(parent), m_session(session) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *split = new QSplitter(Qt::Vertical);
    m_table = new QTableView;
    m_table->setModel(session->metrics());
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(20);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setColumnWidth(0, 170);
    m_chart = new QChartView;
    m_chart->setRenderHint(QPainter::Antialiasing);
    m_chart->setMinimumHeight(200);
    split->addWidget(m_table);
    split->addWidget(m_chart);
    layout->addWidget(split);
    connect(session->metrics(), &QAbstractItemModel::modelReset, this, &MetricsView::rebuildChart);
    rebuildChart();
}

QWidget *MetricsView::chartView() const {
    return m_chart;
}

QWidget *MetricsView::table() const {
    return m_table;
}

namespace {

// A colour per roof, stable for a given position in the roof list.
QColor roofColor(int i) {
    static const QColor palette[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),
                                     QColor(148, 103, 189), QColor(140, 86, 75),  QColor(227, 119, 194),
                                     QColor(23, 190, 207),  QColor(188, 189, 34), QColor(127, 127, 127)};
    return palette[i % int(sizeof palette / sizeof palette[0])];
}

} // namespace

void MetricsView::rebuildChart() {
    auto compile = m_session->metrics()->compileResult();
    auto report = m_session->metrics()->report();
    const tessel::RooflinePoints *rl = report && report->roofline ? &*report->roofline : nullptr;
    if (!rl || !rl->valid) {
        QString why = compile && !compile->ok ? tr("the schedule did not compile")
                      : !report              ? tr("waiting for the run")
                      : rl                   ? QString::fromStdString(rl->why_not)
                                             : tr("the run did not finish");
        // While the new schedule runs, the last run's chart stays (the metrics table above
        // says the run is pending): repainting the chart while a run is in flight held the
        // GUI thread 60-90 ms (tessel_ide_bench), and the points would only vanish to come back.
        QChart *chart = m_chart->chart();
        const bool hasRun = chart && !chart->series().isEmpty();
        if (hasRun && compile && compile->ok && !report) {
            return;
        }
        chart = new QChart;
        chart->setMargins(QMargins(2, 2, 2, 2));
        chart->setTitle(tr("Roofline: %1").arg(why));
        QChart *old = m_chart->chart();
        m_chart->setChart(chart);
        delete old;
        return;
    }
    auto *chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(2, 2, 2, 2));
    auto install = [this, chart] {
        QChart *old = m_chart->chart();
        m_chart->setChart(chart);
        delete old;
    };
    chart->setTitle(tr("Roofline (%1): %2 binds<br>\u25CF this schedule, one point per memory roof "
                       "&nbsp; \u25A0 physical limit")
                        .arg(QString::fromStdString(rl->work_unit), QString::fromStdString(rl->binding)));
    chart->legend()->hide(); // the roofs are labelled on the plot: a legend does not fit the dock
    // A memory roof is drawn when it is a GM roof or the run needs it for at least 1% of its
    // cycles; the table lists every roof.
    std::vector<int> shown;
    double top = 0;
    for (int i = 0; i < int(rl->roofs.size()); i++) {
        const auto &r = rl->roofs[size_t(i)];
        if (!r.memory) {
            top = std::max(top, r.peak);
            shown.push_back(i);
        } else if (r.bytes > 0 && (r.compulsory_bytes > 0 || r.utilisation >= 0.01)) {
            shown.push_back(i);
        }
    }
    if (top <= 0) {
        top = 2 * rl->achieved;
    }
    double lo = rl->limit_intensity, hi = rl->limit_intensity;
    for (int i : shown) {
        const auto &r = rl->roofs[size_t(i)];
        if (r.memory) {
            lo = std::min({lo, r.intensity, top / r.peak});
            hi = std::max({hi, r.intensity, top / r.peak});
        }
    }
    lo /= 4;
    hi *= 4;
    double bottom = rl->achieved;
    auto *schedule = new QScatterSeries;
    schedule->setObjectName(QStringLiteral("schedule"));
    schedule->setName(tr("this schedule (a point per memory roof, at its traffic)"));
    schedule->setMarkerSize(11);
    schedule->setColor(QColor(220, 30, 30));
    auto *limit = new QScatterSeries;
    limit->setObjectName(QStringLiteral("limit"));
    limit->setName(tr("physical limit (compulsory GM traffic)"));
    limit->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    limit->setMarkerSize(9);
    limit->setColor(QColor(90, 90, 90));
    QStringList scheduleRoofs, limitRoofs;
    // A label per roof, placed at a data point (left end of a memory roof, right end of a
    // compute roof) and moved with the plot area.
    struct Label {
        QGraphicsSimpleTextItem *item;
        QPointF at;
        bool right;
    };
    auto labels = std::make_shared<std::vector<Label>>();
    for (int i : shown) {
        const auto &r = rl->roofs[size_t(i)];
        const QString name = QString::fromStdString(r.name);
        auto *line = new QLineSeries;
        line->setObjectName(QStringLiteral("roof:") + name);
        QPen pen(roofColor(i), r.name == rl->binding ? 3 : 1.5);
        if (!r.memory) {
            pen.setStyle(Qt::DashLine);
            line->setName(tr("%1: %2 ops/cycle").arg(name).arg(r.peak, 0, 'g', 4));
            line->append(lo, r.peak);
            line->append(hi, r.peak);
        } else {
            line->setName(tr("%1: %2 B/cycle").arg(name).arg(r.peak, 0, 'g', 4));
            line->append(lo, r.peak * lo);
            line->append(top / r.peak, top);
            bottom = std::min(bottom, r.peak * lo);
            schedule->append(r.intensity, rl->achieved);
            schedule->setPointConfiguration(schedule->count() - 1, QXYSeries::PointConfiguration::Color, roofColor(i));
            scheduleRoofs << name;
            if (r.compulsory_bytes > 0) {
                limit->append(rl->work / double(r.compulsory_bytes), rl->limit_ops_per_cycle);
                limitRoofs << name;
            }
        }
        line->setPen(pen);
        chart->addSeries(line);
        // Roofs on the same line (GM read and write at one bandwidth) share a label.
        const QPointF at = r.memory ? QPointF(lo, r.peak * lo) : QPointF(hi, r.peak);
        auto same = std::find_if(labels->begin(), labels->end(), [&](const Label &l) {
            return l.right == !r.memory && std::abs(l.at.y() - at.y()) <= 1e-6 * at.y();
        });
        if (same != labels->end()) {
            same->item->setText(same->item->text() + QStringLiteral(", ") + name);
            continue;
        }
        auto *text = new QGraphicsSimpleTextItem(name, chart);
        text->setBrush(roofColor(i).darker(130));
        QFont f = text->font();
        f.setPointSizeF(f.pointSizeF() * 0.85);
        f.setBold(r.name == rl->binding);
        text->setFont(f);
        text->setToolTip(line->name());
        labels->push_back({text, at, !r.memory});
    }
    schedule->setProperty("roofs", scheduleRoofs);
    limit->setProperty("roofs", limitRoofs);
    chart->addSeries(limit);
    chart->addSeries(schedule);
    // Hovering a point names its roof and its numbers.
    for (QScatterSeries *s : {schedule, limit}) {
        connect(s, &QXYSeries::hovered, this, [this, s](const QPointF &pt, bool state) {
            if (!state) {
                QToolTip::hideText();
                return;
            }
            const QStringList names = s->property("roofs").toStringList();
            const auto pts = s->points();
            for (int k = 0; k < pts.size() && k < names.size(); k++) {
                if (std::abs(pts[k].x() - pt.x()) <= 1e-9 * std::max(1.0, std::abs(pt.x()))) {
                    QToolTip::showText(QCursor::pos(),
                                       tr("%1 on %2: %3 ops/byte, %4 ops/cycle")
                                           .arg(s->objectName() == QLatin1String("schedule") ? tr("this schedule")
                                                                                            : tr("physical limit"),
                                                names[k])
                                           .arg(pts[k].x(), 0, 'g', 4)
                                           .arg(pts[k].y(), 0, 'g', 4),
                                       m_chart);
                    return;
                }
            }
        });
    }
    auto *ax = new QLogValueAxis;
    ax->setTitleText(tr("ops per byte moved (through each roof)"));
    ax->setBase(10);
    ax->setLabelFormat("%g");
    ax->setRange(lo, hi);
    auto *ay = new QLogValueAxis;
    ay->setTitleText(tr("ops per cycle"));
    ay->setBase(10);
    ay->setLabelFormat("%g");
    ay->setRange(bottom / 2, top * 2);
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    for (auto *s : chart->series()) {
        s->attachAxis(ax);
        s->attachAxis(ay);
    }
    // Each label at its roof's end; labels on the same side that would overlap are moved apart
    // (the lower one further down), so close roofs (L2 write beside L0C->GM) stay readable.
    auto place = [chart, labels, schedule] {
        std::vector<std::pair<QRectF, QGraphicsSimpleTextItem *>> at[2];
        for (const auto &l : *labels) {
            const QPointF p = chart->mapToPosition(l.at, schedule);
            const QRectF b = l.item->boundingRect();
            at[l.right ? 1 : 0].push_back(
                {QRectF(QPointF(l.right ? p.x() - b.width() - 2 : p.x() + 2, p.y() - b.height() - 1), b.size()),
                 l.item});
        }
        for (auto &side : at) {
            std::sort(side.begin(), side.end(),
                      [](const auto &a, const auto &b) { return a.first.top() < b.first.top(); });
            double bottom = -1e9;
            for (auto &[r, item] : side) {
                if (r.top() < bottom) {
                    r.moveTop(bottom);
                }
                bottom = r.bottom();
                item->setPos(r.topLeft());
            }
        }
    };
    connect(chart, &QChart::plotAreaChanged, chart, place);
    install();
    place();
}

} // namespace tessel::ide
