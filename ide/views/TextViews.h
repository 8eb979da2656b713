#ifndef TESSEL_IDE_VIEWS_TEXTVIEWS_H
#define TESSEL_IDE_VIEWS_TEXTVIEWS_H

// Read-only text of one compile (Halide Stmt, loop nest, NPU IR, assembly):
// lines of the selected directive are highlighted; clicking a line selects
// its directive.

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

protected:
    void mouseReleaseEvent(QMouseEvent *e) override;

private:
    Session *m_session;
    Session::TextKind m_kind;
    QStringList m_links;
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
