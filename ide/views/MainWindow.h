#ifndef TESSEL_IDE_VIEWS_MAINWINDOW_H
#define TESSEL_IDE_VIEWS_MAINWINDOW_H

// The main window: schedule editor and diagnostics on the left, the timeline,
// buffer lifetimes and tiling in the middle, metrics/roofline, code and
// history on the right. Every view attaches to one Session. The Schedule menu
// (and toolbar) has Undo/Redo and Tune (Ctrl+T: the tuner with a budget and a
// progress dialog; the best schedule is loaded when it finishes) and Export
// library (the edited schedule through the exporter, on a worker thread).
// The File menu opens and saves schedule files (with a recent list), opens
// another problem (generator, params, arch) and quits; the toolbar's Undo/Redo
// keep their text (the command is in the tooltip), Run (F5) recompiles and runs
// now and Cancel (Esc) stops the running job, whose progress the status bar
// shows.

#include <QList>
#include <QMainWindow>
#include <QPair>

class QAction;
class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QSettings;
class QSplitter;
class QTableView;
class QTimer;

namespace tessel::ide {

class Session;
class ScheduleEditor;
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
    QAction *undoAction() const { return m_undo; }
    QAction *redoAction() const { return m_redo; }
    QAction *runAction() const { return m_run; }
    QAction *cancelAction() const { return m_cancel; }
    QAction *openScheduleAction() const { return m_openSchedule; }
    QAction *saveScheduleAction() const { return m_saveSchedule; }
    QAction *saveScheduleAsAction() const { return m_saveScheduleAs; }
    QAction *openProblemAction() const { return m_openProblem; }
    QAction *quitAction() const { return m_quit; }
    QMenu *recentMenu() const { return m_recentMenu; }
    ScheduleEditor *scheduleEditor() const { return m_editor; }
    /** The status bar's text (compile state, run progress, last result). */
    QString statusText() const;

    /** File > Open schedule: loads `path` as one undo step. A bad file changes nothing and
     * opens a message naming the file and the error (non-blocking, also in `error`). */
    bool openScheduleFile(const QString &path, QString *error = nullptr);
    /** Writes the schedule to `path`; it becomes the file Save writes to. */
    bool saveScheduleFile(const QString &path, QString *error = nullptr);
    /** The schedule file opened or saved last ("" for none). */
    QString scheduleFile() const { return m_file; }
    /** File > Open problem: checks everything first, then Session::open (the schedule is kept
     * for the same generator, else empty). A bad value keeps the open problem. */
    bool openProblem(const QString &generator, const QString &params, const QString &arch, QString *error = nullptr);
    /** File > Open model: the kernels of the ONNX model at `path` (after the model compiler's
     * passes, on the open arch) in a dialog; the one chosen becomes the problem, with the
     * automatic scheduler's schedule. `pick` >= 0 chooses that kernel without the dialog
     * (scripts, tests). A model that does not load opens a message naming what is wrong. */
    bool openModel(const QString &path, int pick = -1, QString *error = nullptr);

    /** Window geometry, toolbar/dock state and the splitters (QSettings group "mainWindow"). */
    void saveLayout(QSettings &settings) const;
    void restoreLayout(const QSettings &settings);
    TimelineView *timelineView() const { return m_timeline; }
    LifetimeView *lifetimeView() const { return m_lifetimes; }
    TilingView *tilingView() const { return m_tiling; }
    /** Shows the cost model's predicted timeline next to the simulated one. */
    void setShowPrediction(bool on);
    /** The lifetime view's time axis: simulated cycles (true) or program order. */
    void setLifetimeCycles(bool on);

private:
    void buildFileMenu();
    void openScheduleDialog();
    bool saveSchedule();
    bool saveScheduleAs();
    void openProblemDialog();
    void openModelDialog();
    /** `path` becomes the file Save writes to and the newest recent schedule. */
    void setScheduleFile(const QString &path);
    void updateRecentMenu();
    void updateTitle();
    void showError(const QString &title, const QString &message);
    void updateStatus();
    void tune();
    /** Schedule > Export library...: the edited schedule as a one-kernel library (ide/core/LibraryExport). */
    void exportLibrary();
    Session *m_session;
    QAction *m_tune = nullptr;
    QAction *m_undo = nullptr;
    QAction *m_redo = nullptr;
    QAction *m_run = nullptr;
    QAction *m_cancel = nullptr;
    class BaselineView *m_baseline = nullptr;
    QAction *m_openSchedule = nullptr;
    QAction *m_saveSchedule = nullptr;
    QAction *m_saveScheduleAs = nullptr;
    QAction *m_openProblem = nullptr;
    QAction *m_quit = nullptr;
    QMenu *m_recentMenu = nullptr;
    ScheduleEditor *m_editor = nullptr;
    QList<QSplitter *> m_splitters;
    QTimer *m_progressTimer = nullptr;
    QString m_file;
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
