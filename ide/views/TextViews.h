#ifndef TESSEL_IDE_VIEWS_TEXTVIEWS_H
#define TESSEL_IDE_VIEWS_TEXTVIEWS_H

// Read-only text of one compile (Halide Stmt, loop nest, NPU IR, assembly), as a
// code viewer: syntax highlighting (keywords, mnemonics, numbers, comments,
// provenance tags), a gutter with line numbers and fold markers (a line whose
// next lines are indented deeper folds them: a loop's body, a produce/consume
// block), and on the assembly the last run's cycles per line (busy cycles and
// executions of that instruction, summed over the trace: a perf-annotate view).
// Lines of the selected directive are highlighted; clicking a line selects its
// directive, which highlights its lines in the other three texts (the links
// Stmt <-> NPU IR <-> assembly go through the directive). Ctrl+F opens a find
// bar (Enter / F3 next, Shift+Enter / Shift+F3 previous, Esc closes).
// A view that is not on screen (the other tabs, a closed dock) takes the new
// text when it is shown: laying out four documents of a large kernel after
// every compile would hold the GUI thread for tens of ms.

#include "ide/core/Session.h"

#include <QPlainTextEdit>
#include <QSet>
#include <QTabWidget>
#include <QWidget>

class QLabel;
class QLineEdit;

namespace tessel::ide {

class CodeGutter;

/** Busy cycles and executions per pc of a run's trace (index = pc). */
struct PcCycles {
    QVector<qint64> cycles, count;
};
PcCycles cyclesPerPc(const tessel::RunReport &run);

/** The pc of each line of assembly text (-1 for directives, labels and blank lines). */
QVector<int> asmLinePcs(const QString &asmText);

class CodeView : public QPlainTextEdit {
    Q_OBJECT
public:
    CodeView(Session *session, Session::TextKind kind, QWidget *parent = nullptr);
    void reload();
    void highlight(const QString &directive);
    /** The text is the last compile's (false while the view waits to be shown). */
    bool isCurrent() const { return !m_stale; }

    /** Line `block` starts a fold (its next lines are indented deeper). */
    bool isFoldable(int block) const;
    /** Folds or unfolds the lines under `block`; false when it is not foldable. */
    bool toggleFold(int block);
    bool isFolded(int block) const;
    /** Assembly: the run's busy cycles and executions of line `block` ({-1, -1} when none). */
    QPair<qint64, qint64> lineCycles(int block) const;
    /** Selects the next (previous) occurrence of `text`, wrapping; false when there is none. */
    bool findText(const QString &text, bool backward = false);
    /** Occurrences of `text` (case-insensitive). */
    int countOf(const QString &text) const;

    int gutterWidth() const;
    void paintGutter(QPaintEvent *e);
    void gutterClicked(int y);

protected:
    void mouseReleaseEvent(QMouseEvent *e) override;
    void showEvent(QShowEvent *e) override;
    void resizeEvent(QResizeEvent *e) override;

private:
    void reloadCycles();
    static int indentOf(const QString &line);
    Session *m_session;
    Session::TextKind m_kind;
    QStringList m_links;
    bool m_stale = false;
    CodeGutter *m_gutter;
    QVector<int> m_pcs;                   // assembly: pc per line
    QVector<QPair<qint64, qint64>> m_cyc; // assembly: cycles and executions per line
    QSet<int> m_folded;
};

/** The four code views in tabs, with the find bar under them. */
class CodeTabs : public QWidget {
    Q_OBJECT
public:
    explicit CodeTabs(Session *session, QWidget *parent = nullptr);
    CodeView *view(Session::TextKind kind) const { return m_views[kind]; }
    CodeView *current() const;
    QTabWidget *tabs() const { return m_tabs; }
    /** Opens the find bar on the current view (Ctrl+F). */
    void openFind();
    QLineEdit *findField() const { return m_find; }
    QLabel *findStatus() const { return m_findStatus; }

protected:
    bool eventFilter(QObject *o, QEvent *e) override;

private:
    void findNext(bool backward);
    QTabWidget *m_tabs;
    CodeView *m_views[4];
    QWidget *m_findBar;
    QLineEdit *m_find;
    QLabel *m_findStatus;
};

} // namespace tessel::ide

#endif
