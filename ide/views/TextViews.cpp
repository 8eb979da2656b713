#include "ide/views/TextViews.h"

#include <QTextBlock>

namespace tessel::ide {

CodeView::CodeView(Session *session, Session::TextKind kind, QWidget *parent)
    : QPlainTextEdit(parent), m_session(session), m_kind(kind) {
    setReadOnly(true);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setFont(QFont(QStringLiteral("monospace"), 9));
    connect(session, &Session::compileFinished, this, &CodeView::reload);
    connect(session->viewState(), &ViewState::selectionChanged, this, &CodeView::highlight);
}

void CodeView::reload() {
    if (!isVisible()) {
        m_stale = true; // showEvent() loads it
        return;
    }
    m_stale = false;
    setPlainText(m_session->text(m_kind));
    m_links = m_session->lineDirectives(m_kind);
    highlight(m_session->viewState()->selectedDirective());
}

void CodeView::showEvent(QShowEvent *e) {
    QPlainTextEdit::showEvent(e);
    if (m_stale) {
        reload();
    }
}

void CodeView::highlight(const QString &directive) {
    if (m_stale) {
        return; // reload() highlights
    }
    QList<QTextEdit::ExtraSelection> sels;
    int first = -1;
    if (!directive.isEmpty()) {
        QTextBlock b = document()->firstBlock();
        for (int i = 0; b.isValid() && i < m_links.size(); ++i, b = b.next()) {
            if (m_links[i] != directive) {
                continue;
            }
            QTextEdit::ExtraSelection s;
            s.format.setBackground(QColor(255, 236, 160));
            s.format.setProperty(QTextFormat::FullWidthSelection, true);
            s.cursor = QTextCursor(b);
            sels << s;
            if (first < 0) {
                first = i;
            }
        }
    }
    setExtraSelections(sels);
    if (first >= 0) {
        QTextCursor c(document()->findBlockByNumber(first));
        setTextCursor(c);
        centerCursor();
    }
}

void CodeView::mouseReleaseEvent(QMouseEvent *e) {
    QPlainTextEdit::mouseReleaseEvent(e);
    int line = textCursor().blockNumber();
    if (line >= 0 && line < m_links.size() && !m_links[line].isEmpty()) {
        m_session->viewState()->selectDirective(m_links[line]);
    }
}

CodeTabs::CodeTabs(Session *session, QWidget *parent) : QTabWidget(parent) {
    const char *names[] = {"Halide Stmt", "Loop nest", "NPU IR", "Assembly"};
    for (int k = 0; k < 4; ++k) {
        m_views[k] = new CodeView(session, Session::TextKind(k), this);
        addTab(m_views[k], tr(names[k]));
    }
}

} // namespace tessel::ide
