#ifndef TESSEL_IDE_VIEWS_MAINWINDOW_H
#define TESSEL_IDE_VIEWS_MAINWINDOW_H

// The main window: schedule editor and diagnostics on the left, the timeline,
// buffer lifetimes and tiling in the middle, metrics/roofline, code and
// history on the right. Every view attaches to one Session. The Schedule menu
// (and toolbar) has Undo/Redo and Tune (Ctrl+T: the tuner with a budget and a
// progress dialog; the best schedule is loaded when it finishes) and Export
// library (the edited schedule through the exporter, on a worker thread).

#include <QList>
#include <QMainWindow>
#include <QPair>

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QTableView;

namespace tessel::ide {

class Session;
class LifetimeView;
class TilingView;
class TimelineView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(Session *session, QWidget *parent = nullptr);
    /** Every view with a file-name-friendly name (for --screenshot-views). */
    QList<QPair<QString, QWidget *>> views() const { return m_views; }
    QAction *tuneAction() const { return m_tune; }
    TimelineView *timelineView() const { return m_timeline; }
    LifetimeView *lifetimeView() const { return m_lifetimes; }
    TilingView *tilingView() const { return m_tiling; }
    /** Shows the cost model's predicted timeline next to the simulated one. */
    void setShowPrediction(bool on);
    /** The lifetime view's time axis: simulated cycles (true) or program order. */
    void setLifetimeCycles(bool on);

private:
    void updateStatus();
    void tune();
    /** Schedule > Export library...: the edited schedule as a one-kernel library (ide/core/LibraryExport). */
    void exportLibrary();
    Session *m_session;
    QAction *m_tune = nullptr;
    TimelineView *m_timeline = nullptr;
    LifetimeView *m_lifetimes = nullptr;
    TilingView *m_tiling = nullptr;
    QCheckBox *m_predictionBox = nullptr;
    QComboBox *m_axisBox = nullptr;
    QList<QPair<QString, QWidget *>> m_views;
    QLabel *m_status;
};

} // namespace tessel::ide

#endif
