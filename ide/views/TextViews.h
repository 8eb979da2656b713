#ifndef TESSEL_IDE_VIEWS_TEXTVIEWS_H
#define TESSEL_IDE_VIEWS_TEXTVIEWS_H

// Read-only text of one compile (Halide Stmt, loop nest, NPU IR, assembly):
// lines of the selected directive are highlighted; clicking a line selects
// its directive. A view that is not on screen (the other tabs, a closed dock)
// takes the new text when it is shown: laying out four documents of a large
// kernel after every compile would hold the GUI thread for tens of ms.

#include "ide/core/Session.h"

#include <QPlainTextEdit>
#include <QTabWidget>

namespace tessel::ide {

class CodeView : public QPlainTextEdit {
    Q_OBJECT
public:
    CodeView(Session *session, Session::TextKind kind, QWidget *parent = nullptr);
    void reload();
    void highlight(const QString &directive);

    /** The text is the last compile's (false while the view waits to be shown). */
    bool isCurrent() const { return !m_stale; }

protected:
    void mouseReleaseEvent(QMouseEvent *e) override;
    void showEvent(QShowEvent *e) override;

private:
    Session *m_session;
    Session::TextKind m_kind;
    QStringList m_links;
    bool m_stale = false;
};

class CodeTabs : public QTabWidget {
    Q_OBJECT
public:
    explicit CodeTabs(Session *session, QWidget *parent = nullptr);
    CodeView *view(Session::TextKind kind) const { return m_views[kind]; }

private:
    CodeView *m_views[4];
};

} // namespace tessel::ide

#endif
