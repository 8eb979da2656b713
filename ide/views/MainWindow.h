#ifndef TESSEL_IDE_VIEWS_MAINWINDOW_H
#define TESSEL_IDE_VIEWS_MAINWINDOW_H

// The main window: schedule editor and diagnostics on the left, the timeline,
// buffer lifetimes and tiling in the middle, metrics/roofline, code and
// history on the right. Every view attaches to one Session.

#include <QList>
#include <QMainWindow>
#include <QPair>

class QLabel;
class QTableView;

namespace tessel::ide {

class Session;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(Session *session, QWidget *parent = nullptr);
    /** Every view with a file-name-friendly name (for --screenshot-views). */
    QList<QPair<QString, QWidget *>> views() const { return m_views; }

private:
    void updateStatus();
    Session *m_session;
    QList<QPair<QString, QWidget *>> m_views;
    QLabel *m_status;
};

} // namespace tessel::ide

#endif
