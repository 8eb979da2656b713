#include "ide/views/TextViews.h"
#include "ide/views/FindKeys.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QRegularExpression>
#include <QShortcut>
#include <QSyntaxHighlighter>
#include <QTextBlock>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace tessel::ide {

PcCycles cyclesPerPc(const tessel::RunReport &run) {
    PcCycles c;
    if (!run.sim) {
        return c;
    }
    for (const auto &e : run.sim->trace) {
        if (int(e.pc) >= c.cycles.size()) {
            c.cycles.resize(int(e.pc) + 1);
            c.count.resize(int(e.pc) + 1);
        }
        c.cycles[int(e.pc)] += qint64(e.end - e.start);
        c.count[int(e.pc)] += 1;
    }
    return c;
}

QVector<int> asmLinePcs(const QString &asmText) {
    // An instruction line is indented and is neither a directive nor a label: the program's
    // instructions in order (npu_target/isa/Asm.cpp prints them so).
    QVector<int> pcs;
    int pc = 0;
    for (const QString &line : asmText.split(QLatin1Char('\n'))) {
        const QString t = line.trimmed();
        const bool instruction = line.startsWith(QLatin1Char(' ')) && !t.isEmpty() && !t.startsWith(QLatin1Char('.')) &&
                                 !t.startsWith(QLatin1Char(';')) && !t.endsWith(QLatin1Char(':'));
        pcs.append(instruction ? pc++ : -1);
    }
    return pcs;
}

namespace {

class CodeHighlighter : public QSyntaxHighlighter {
public:
    CodeHighlighter(QTextDocument *doc, Session::TextKind kind) : QSyntaxHighlighter(doc) {
        QTextCharFormat keyword, number, comment, mnemonic, directive, label, tag, reg;
        keyword.setForeground(QColor(120, 40, 140));
        keyword.setFontWeight(QFont::Bold);
        number.setForeground(QColor(20, 90, 160));
        comment.setForeground(QColor(120, 120, 120));
        comment.setFontItalic(true);
        mnemonic.setForeground(QColor(20, 60, 170));
        mnemonic.setFontWeight(QFont::Bold);
        directive.setForeground(QColor(30, 120, 60));
        label.setForeground(QColor(160, 40, 40));
        label.setFontWeight(QFont::Bold);
        tag.setForeground(QColor(150, 150, 150));
        reg.setForeground(QColor(0, 120, 120));
        m_rules.append({QRegularExpression(QStringLiteral("\\b\\d+(\\.\\d+)?\\b")), number, 0});
        switch (kind) {
        case Session::StmtText:
        case Session::NpuIrText:
            m_rules.append({QRegularExpression(QStringLiteral(
                                "\\b(for|produce|consume|allocate|free|let|if|else|realize|assert|parallel|"
                                "vectorized|serial|unrolled|in|dma|mmad|wait_flag|set_flag|barrier)\\b")),
                            keyword, 0});
            m_rules.append({QRegularExpression(QStringLiteral("//.*$")), comment, 0});
            break;
        case Session::LoopNestText:
            m_rules.append({QRegularExpression(QStringLiteral(
                                "\\b(for|produce|consume|store|compute|in|serial|vectorized|parallel|unrolled|at|"
                                "root|inline)\\b")),
                            keyword, 0});
            break;
        case Session::AsmText:
            m_rules.append({QRegularExpression(QStringLiteral("\\br\\d+\\b")), reg, 0});
            m_rules.append({QRegularExpression(QStringLiteral("^\\s+([a-z_][a-z0-9_.]*)")), mnemonic, 1});
            m_rules.append({QRegularExpression(QStringLiteral("^\\.[a-z_]+")), directive, 0});
            m_rules.append({QRegularExpression(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*:")), label, 0});
            m_rules.append({QRegularExpression(QStringLiteral("@p\\d+")), tag, 0});
            m_rules.append({QRegularExpression(QStringLiteral(";.*$")), comment, 0});
            break;
        }
    }

protected:
    void highlightBlock(const QString &text) override {
        for (const Rule &r : m_rules) {
            auto it = r.re.globalMatch(text);
            while (it.hasNext()) {
                const auto m = it.next();
                setFormat(int(m.capturedStart(r.group)), int(m.capturedLength(r.group)), r.format);
            }
        }
    }

private:
    struct Rule {
        QRegularExpression re;
        QTextCharFormat format;
        int group;
    };
    QVector<Rule> m_rules;
};

} // namespace

class CodeGutter : public QWidget {
public:
    explicit CodeGutter(CodeView *view) : QWidget(view), m_view(view) {
        setObjectName(QStringLiteral("codeGutter"));
        setMouseTracking(true);
    }
    QSize sizeHint() const override { return QSize(m_view->gutterWidth(), 0); }

protected:
    void paintEvent(QPaintEvent *e) override { m_view->paintGutter(e); }
    void mousePressEvent(QMouseEvent *e) override { m_view->gutterClicked(int(e->position().y())); }
    bool event(QEvent *e) override {
        if (e->type() == QEvent::ToolTip) {
            auto *he = static_cast<QHelpEvent *>(e);
            QTextCursor c = m_view->cursorForPosition(QPoint(0, he->pos().y()));
            const int line = c.blockNumber();
            const auto cyc = m_view->lineCycles(line);
            QString tip;
            if (cyc.first >= 0) {
                tip = tr("line %1: %2 cycles on its pipe over %3 executions in the last run (a wait: the cycles it blocked)")
                          .arg(line + 1)
                          .arg(cyc.first)
                          .arg(cyc.second);
            } else if (m_view->isFoldable(line)) {
                tip = m_view->isFolded(line) ? tr("click to unfold") : tr("click to fold the lines under it");
            }
            if (tip.isEmpty()) {
                QToolTip::hideText();
            } else {
                QToolTip::showText(he->globalPos(), tip, this);
            }
            return true;
        }
        return QWidget::event(e);
    }

private:
    CodeView *m_view;
};

CodeView::CodeView(Session *session, Session::TextKind kind, QWidget *parent)
    : QPlainTextEdit(parent), m_session(session), m_kind(kind), m_gutter(new CodeGutter(this)) {
    setReadOnly(true);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setFont(QFont(QStringLiteral("monospace"), 9));
    new CodeHighlighter(document(), kind);
    connect(session, &Session::compileFinished, this, &CodeView::reload);
    connect(session, &Session::runFinished, this, [this] {
        reloadCycles();
        m_gutter->update();
    });
    connect(session->viewState(), &ViewState::selectionChanged, this, &CodeView::highlight);
    connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(gutterWidth(), 0, 0, 0); });
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect &r, int dy) {
        if (dy) {
            m_gutter->scroll(0, dy);
        } else {
            m_gutter->update(0, r.y(), m_gutter->width(), r.height());
        }
    });
    setViewportMargins(gutterWidth(), 0, 0, 0);
}

void CodeView::reload() {
    if (!isVisible()) {
        m_stale = true; // showEvent() loads it
        return;
    }
    m_stale = false;
    m_folded.clear();
    const QString text = m_session->text(m_kind);
    setPlainText(text);
    m_links = m_session->lineDirectives(m_kind);
    m_pcs = m_kind == Session::AsmText ? asmLinePcs(text) : QVector<int>();
    reloadCycles();
    setViewportMargins(gutterWidth(), 0, 0, 0);
    highlight(m_session->viewState()->selectedDirective());
}

void CodeView::reloadCycles() {
    m_cyc.clear();
    auto run = m_session->lastRun();
    if (m_kind != Session::AsmText || !run || !run->sim || m_pcs.isEmpty()) {
        return;
    }
    const PcCycles pc = cyclesPerPc(*run);
    m_cyc.resize(m_pcs.size());
    for (int i = 0; i < m_pcs.size(); ++i) {
        const int p = m_pcs[i];
        m_cyc[i] = p >= 0 && p < pc.cycles.size() && pc.count[p] > 0 ? qMakePair(pc.cycles[p], pc.count[p])
                                                                       : qMakePair(qint64(-1), qint64(-1));
    }
}

QPair<qint64, qint64> CodeView::lineCycles(int block) const {
    return block >= 0 && block < m_cyc.size() ? m_cyc[block] : qMakePair(qint64(-1), qint64(-1));
}

int CodeView::indentOf(const QString &line) {
    int n = 0;
    while (n < line.size() && line[n] == QLatin1Char(' ')) {
        ++n;
    }
    return n;
}

bool CodeView::isFoldable(int block) const {
    QTextBlock b = document()->findBlockByNumber(block);
    if (!b.isValid() || b.text().trimmed().isEmpty()) {
        return false;
    }
    const int indent = indentOf(b.text());
    for (QTextBlock n = b.next(); n.isValid(); n = n.next()) {
        if (!n.text().trimmed().isEmpty()) {
            return indentOf(n.text()) > indent;
        }
    }
    return false;
}

bool CodeView::isFolded(int block) const {
    return m_folded.contains(block);
}

bool CodeView::toggleFold(int block) {
    if (!isFoldable(block)) {
        return false;
    }
    QTextBlock b = document()->findBlockByNumber(block);
    const int indent = indentOf(b.text());
    const bool fold = !m_folded.contains(block);
    QTextBlock n = b.next();
    const int from = n.position();
    int to = from;
    for (; n.isValid(); n = n.next()) {
        if (!n.text().trimmed().isEmpty() && indentOf(n.text()) <= indent) {
            break;
        }
        n.setVisible(!fold);
        if (!fold) {
            m_folded.remove(n.blockNumber()); // unfolding shows the nested folds open
        }
        to = n.position() + n.length();
    }
    if (fold) {
        m_folded.insert(block);
    } else {
        m_folded.remove(block);
    }
    document()->markContentsDirty(from, std::max(0, to - from));
    viewport()->update();
    m_gutter->update();
    return true;
}

int CodeView::gutterWidth() const {
    const int digits = int(QString::number(std::max(1, blockCount())).size());
    int w = 8 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits + 14; // numbers + fold marker
    if (m_kind == Session::AsmText) {
        w += fontMetrics().horizontalAdvance(QStringLiteral(" 0000000 x0000 ")); // cycles, executions
    }
    return w;
}

void CodeView::resizeEvent(QResizeEvent *e) {
    QPlainTextEdit::resizeEvent(e);
    const QRect cr = contentsRect();
    m_gutter->setGeometry(QRect(cr.left(), cr.top(), gutterWidth(), cr.height()));
}

void CodeView::paintGutter(QPaintEvent *e) {
    QPainter p(m_gutter);
    p.fillRect(e->rect(), QColor(245, 245, 245));
    const QFontMetrics fm = fontMetrics();
    const int digitsW = 8 + fm.horizontalAdvance(QLatin1Char('9')) * int(QString::number(std::max(1, blockCount())).size());
    qint64 most = 1;
    for (const auto &c : m_cyc) {
        most = std::max(most, c.first);
    }
    QTextBlock b = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(b).translated(contentOffset()).top());
    int bottom = top + qRound(blockBoundingRect(b).height());
    const int cw = m_kind == Session::AsmText ? fm.horizontalAdvance(QStringLiteral(" 0000000 x0000 ")) : 0;
    while (b.isValid() && top <= e->rect().bottom()) {
        const int h = bottom - top;
        if (b.isVisible() && bottom >= e->rect().top()) {
            const int n = b.blockNumber();
            const auto c = lineCycles(n);
            if (c.first >= 0) {
                // Heat: the share of the hottest line's cycles.
                const double share = double(c.first) / double(most);
                p.fillRect(QRect(0, top, int(cw * share), h), QColor(255, 140, 60, 90));
                p.setPen(QColor(90, 50, 20));
                p.drawText(QRect(0, top, cw - 4, h), Qt::AlignRight | Qt::AlignVCenter,
                           QStringLiteral("%1 x%2").arg(c.first).arg(c.second));
            }
            p.setPen(QColor(140, 140, 140));
            p.drawText(QRect(cw, top, digitsW - 4, h), Qt::AlignRight | Qt::AlignVCenter, QString::number(n + 1));
            if (isFoldable(n)) {
                p.setPen(QColor(90, 90, 90));
                p.drawText(QRect(cw + digitsW, top, 12, h), Qt::AlignCenter,
                           m_folded.contains(n) ? QStringLiteral("\u25B8") : QStringLiteral("\u25BE"));
            }
        }
        b = b.next();
        top = bottom;
        bottom = top + (b.isValid() ? qRound(blockBoundingRect(b).height()) : 0);
    }
}

void CodeView::gutterClicked(int y) {
    QTextCursor c = cursorForPosition(QPoint(0, y));
    toggleFold(c.blockNumber());
}

bool CodeView::findText(const QString &text, bool backward) {
    if (text.isEmpty()) {
        return false;
    }
    const QTextDocument::FindFlags flags = backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    if (find(text, flags)) {
        return true;
    }
    // Wrap around.
    QTextCursor c = textCursor();
    c.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
    setTextCursor(c);
    return find(text, flags);
}

int CodeView::countOf(const QString &text) const {
    return text.isEmpty() ? 0 : int(toPlainText().count(text, Qt::CaseInsensitive));
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

CodeTabs::CodeTabs(Session *session, QWidget *parent) : QWidget(parent) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    m_tabs = new QTabWidget;
    const char *names[] = {"Halide Stmt", "Loop nest", "NPU IR", "Assembly"};
    for (int k = 0; k < 4; ++k) {
        m_views[k] = new CodeView(session, Session::TextKind(k), m_tabs);
        m_tabs->addTab(m_views[k], tr(names[k]));
    }
    m_tabs->setTabToolTip(3, tr("The gutter shows the last run's busy cycles and executions of each instruction"));
    layout->addWidget(m_tabs);
    m_findBar = new QWidget;
    auto *fl = new QHBoxLayout(m_findBar);
    fl->setContentsMargins(2, 0, 2, 2);
    m_find = new QLineEdit;
    m_find->setObjectName(QStringLiteral("codeFind"));
    m_find->setPlaceholderText(tr("Find (Enter: next, Shift+Enter: previous, Esc: close)"));
    m_find->installEventFilter(this);
    m_findStatus = new QLabel;
    auto *close = new QToolButton;
    close->setText(QStringLiteral("\u00D7"));
    close->setToolTip(tr("Close the find bar (Esc)"));
    fl->addWidget(m_find, 1);
    fl->addWidget(m_findStatus);
    fl->addWidget(close);
    layout->addWidget(m_findBar);
    m_findBar->hide();
    connect(close, &QToolButton::clicked, m_findBar, &QWidget::hide);
    connect(m_find, &QLineEdit::textChanged, this, [this](const QString &t) {
        CodeView *v = current();
        QTextCursor c = v->textCursor();
        c.setPosition(c.selectionStart()); // search again from where this match starts
        v->setTextCursor(c);
        const bool found = v->findText(t);
        m_findStatus->setText(t.isEmpty() ? QString() : found ? tr("%1 matches").arg(v->countOf(t)) : tr("not found"));
    });
    auto *findKey = new QShortcut(QKeySequence::Find, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(findKey, &QShortcut::activated, this, &CodeTabs::openFind);
    auto *next = new QShortcut(QKeySequence::FindNext, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(next, &QShortcut::activated, this, [this] { findNext(false); });
    auto *prev = new QShortcut(QKeySequence::FindPrevious, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(prev, &QShortcut::activated, this, [this] { findNext(true); });
}

CodeView *CodeTabs::current() const {
    auto *v = qobject_cast<CodeView *>(m_tabs->currentWidget());
    return v ? v : m_views[0];
}

void CodeTabs::openFind() {
    m_findBar->show();
    const QString sel = current()->textCursor().selectedText();
    if (!sel.isEmpty() && !sel.contains(QChar::ParagraphSeparator)) {
        m_find->setText(sel);
    }
    m_find->setFocus();
    m_find->selectAll();
}

void CodeTabs::findNext(bool backward) {
    const QString t = m_find->text();
    if (t.isEmpty()) {
        openFind();
        return;
    }
    const bool found = current()->findText(t, backward);
    m_findStatus->setText(found ? tr("%1 matches").arg(current()->countOf(t)) : tr("not found"));
}

bool CodeTabs::eventFilter(QObject *o, QEvent *e) {
    if (o == m_find) {
        const FindKey key = findFieldKey(e);
        switch (key) {
        case FindKey::None:
            break;
        case FindKey::Claimed:
            return true;
        case FindKey::Close:
            m_findBar->hide();
            current()->setFocus();
            return true;
        case FindKey::Next:
        case FindKey::Previous:
            findNext(key == FindKey::Previous);
            return true;
        }
    }
    return QWidget::eventFilter(o, e);
}

} // namespace tessel::ide
