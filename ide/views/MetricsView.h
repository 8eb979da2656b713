#ifndef TESSEL_IDE_VIEWS_METRICSVIEW_H
#define TESSEL_IDE_VIEWS_METRICSVIEW_H

// Metrics (cycles, efficiency, binding resource, busy % per pipe, bytes per
// engine edge, the speed of light of every resource) and the measured roofline
// chart (QtCharts): a roof per compute resource (matrix, vector, FIX) and per
// memory (GM read/write, L2, each engine edge that the run needs), the
// schedule's point under each memory roof at its own measured intensity, and
// the physical limit's point at the compulsory GM traffic (RooflinePoints).

#include <QWidget>

class QChartView;
class QTableView;

namespace tessel::ide {

class Session;

class MetricsView : public QWidget {
    Q_OBJECT
public:
    explicit MetricsView(Session *session, QWidget *parent = nullptr);
    QWidget *chartView() const;
    QWidget *table() const;

private:
    void rebuildChart();
    Session *m_session;
    QTableView *m_table;
    QChartView *m_chart;
};

} // namespace tessel::ide

#endif
