#ifndef TESSEL_IDE_VIEWS_METRICSVIEW_H
#define TESSEL_IDE_VIEWS_METRICSVIEW_H

// Metrics (cycles, efficiency, binding resource, busy % per pipe, bytes per
// engine edge) and the roofline chart (QtCharts) with the kernel's point.

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
