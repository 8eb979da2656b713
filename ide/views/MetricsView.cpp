#include "ide/views/MetricsView.h"

#include "ide/core/Session.h"

#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

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

void MetricsView::rebuildChart() {
    auto *chart = new QChart;
    chart->setTitle(tr("Roofline: min(matrix peak, GM bandwidth x intensity)"));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(2, 2, 2, 2));
    auto compile = m_session->metrics()->compileResult();
    auto report = m_session->metrics()->report();
    const tessel::Roofline *rf = compile ? &compile->roofline : nullptr;
    double matrixCycles = 0, readCycles = 0;
    if (rf) {
        for (const auto &t : rf->terms) {
            if (t.resource.rfind("matrix", 0) == 0) {
                matrixCycles = t.cycles;
            } else if (t.resource == "GM read") {
                readCycles = t.cycles;
            }
        }
    }
    if (!rf || rf->macs <= 0 || matrixCycles <= 0 || readCycles <= 0) {
        chart->setTitle(compile && !compile->ok ? tr("Roofline: the schedule did not compile")
                                                : tr("Roofline: no matrix work in this operator"));
        m_chart->setChart(chart);
        return;
    }
    double ops = 2.0 * double(rf->macs);
    double bytes = double(rf->gm_read_bytes + rf->gm_write_bytes);
    double ai = ops / bytes;
    double peak = ops / matrixCycles;                     // ops per cycle
    double bw = double(rf->gm_read_bytes) / readCycles;  // bytes per cycle
    auto *roof = new QLineSeries;
    roof->setName(tr("roof"));
    double lo = ai / 64, hi = std::max(ai * 64, 2 * peak / bw);
    for (double x = lo; x <= hi * 1.001; x *= 1.25) {
        roof->append(x, std::min(peak, bw * x));
    }
    roof->append(peak / bw, peak); // the ridge point
    auto pts = roof->points();
    std::sort(pts.begin(), pts.end(), [](const QPointF &a, const QPointF &b) { return a.x() < b.x(); });
    roof->replace(pts);
    auto *limit = new QScatterSeries;
    limit->setName(tr("physical limit"));
    limit->setMarkerSize(9);
    limit->setColor(QColor(120, 120, 120));
    limit->append(ai, ops / std::max(1.0, rf->t_phys_cycles));
    chart->addSeries(roof);
    chart->addSeries(limit);
    if (report && report->cycles && *report->cycles > 0) {
        auto *kernel = new QScatterSeries;
        kernel->setName(tr("this schedule"));
        kernel->setMarkerSize(12);
        kernel->setColor(QColor(220, 30, 30));
        kernel->append(ai, ops / double(*report->cycles));
        chart->addSeries(kernel);
    }
    auto *ax = new QLogValueAxis;
    ax->setTitleText(tr("ops per GM byte"));
    ax->setBase(10);
    ax->setLabelFormat("%g");
    auto *ay = new QLogValueAxis;
    ay->setTitleText(tr("ops per cycle"));
    ay->setBase(10);
    ay->setLabelFormat("%g");
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    for (auto *s : chart->series()) {
        s->attachAxis(ax);
        s->attachAxis(ay);
    }
    ay->setRange(std::min(bw * lo, ops / double(report && report->cycles ? *report->cycles : rf->t_phys_cycles)) / 2,
                 peak * 2);
    QChart *old = m_chart->chart();
    m_chart->setChart(chart);
    delete old;
}

} // namespace tessel::ide
