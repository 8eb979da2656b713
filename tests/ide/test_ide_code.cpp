// The code views as a code viewer (issue 29, item 3): the assembly's per-line cycles are the
// run's trace summed per instruction, the highlighter colours mnemonics, a line with deeper
// lines under it folds and unfolds (by its gutter marker too), Ctrl+F opens a find bar whose
// Enter / Shift+Enter walk the matches and whose Esc closes it (not the window's Cancel), and
// selecting a directive highlights its lines in every text.
#include "ide/core/Session.h"
#include "ide/views/TextViews.h"

#include <QLabel>
#include <QLineEdit>
#include <QTextBlock>
#include <QtTest>

using namespace tessel::ide;

namespace {
tessel::ScheduleSpec tiledStaged() {
    return tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) +
                                 "/samples/gemm/schedules/tiled_staged.json");
}
} // namespace

class TestCode : public QObject {
    Q_OBJECT
    std::unique_ptr<Session> m_s;
    std::unique_ptr<CodeTabs> m_tabs;

private Q_SLOTS:
    void initTestCase() {
        m_s = std::make_unique<Session>();
        m_s->setAutosavePath(QString());
        m_s->service()->setDebounceMs(10);
        m_tabs = std::make_unique<CodeTabs>(m_s.get());
        m_tabs->resize(900, 600);
        m_tabs->show();
        QString error;
        QVERIFY2(m_s->open("gemm", {{"M", "128"}, {"N", "128"}, {"K", "128"}}, "ascend-like",
                           tiledStaged(), &error),
                 qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!m_s->service()->isBusy() && m_s->lastRun() && m_s->lastRun()->sim,
                                 60000);
    }

    void assemblyCyclesAreTheTraceSummedPerInstruction() {
        m_tabs->tabs()->setCurrentIndex(Session::AsmText);
        CodeView *v = m_tabs->view(Session::AsmText);
        QTRY_VERIFY(v->isCurrent());
        const auto &run = *m_s->lastRun();
        QVERIFY(!run.sim->trace_truncated);
        qint64 traced = 0;
        for (const auto &e : run.sim->trace) {
            traced += qint64(e.end - e.start);
        }
        qint64 shown = 0, executions = 0, mmadLines = 0;
        for (int line = 0; line < v->blockCount(); ++line) {
            const auto c = v->lineCycles(line);
            if (c.first < 0) {
                continue;
            }
            shown += c.first;
            executions += c.second;
            const QString text = v->document()->findBlockByNumber(line).text().trimmed();
            QVERIFY2(!text.startsWith('.') && !text.endsWith(':'),
                     qPrintable(text)); // instructions only
            if (text.startsWith("mmad")) {
                mmadLines++;
                QVERIFY(c.first > 0);
            }
        }
        QCOMPARE(shown, traced); // every traced cycle on its line
        QCOMPARE(executions, qint64(run.sim->trace.size()));
        QVERIFY(mmadLines > 0);
        if (qEnvironmentVariableIsSet("TESSEL_CODE_PNG")) { // to look at the view
            v->moveCursor(QTextCursor::End);
            m_tabs->grab().save(qEnvironmentVariable("TESSEL_CODE_PNG"));
        }
        // The pcs of the text are the program's: as many instruction lines as instructions.
        int instructions = 0;
        for (int pc : asmLinePcs(QString::fromStdString(m_s->lastCompile()->asm_text))) {
            instructions += pc >= 0;
        }
        QCOMPARE(instructions, int(m_s->lastCompile()->program.code.size()));
    }

    void mnemonicsAreHighlighted() {
        CodeView *v = m_tabs->view(Session::AsmText);
        for (QTextBlock b = v->document()->firstBlock(); b.isValid(); b = b.next()) {
            if (!b.text().trimmed().startsWith("mmad")) {
                continue;
            }
            const int at = int(b.text().indexOf("mmad"));
            bool bold = false;
            for (const auto &r : b.layout()->formats()) {
                bold = bold || (r.start <= at && at < r.start + r.length &&
                                r.format.fontWeight() == QFont::Bold);
            }
            QVERIFY2(bold, qPrintable(b.text()));
            return;
        }
        QFAIL("no mmad line");
    }

    void foldAndUnfold() {
        m_tabs->tabs()->setCurrentIndex(Session::StmtText);
        CodeView *v = m_tabs->view(Session::StmtText);
        QTRY_VERIFY(v->isCurrent());
        int line = -1;
        for (QTextBlock b = v->document()->firstBlock(); b.isValid(); b = b.next()) {
            if (b.text().trimmed().startsWith("for (") && v->isFoldable(b.blockNumber())) {
                line = b.blockNumber();
                break;
            }
        }
        QVERIFY(line >= 0);
        QVERIFY(!v->isFoldable(v->blockCount() - 1) || v->blockCount() == 1);
        QTextBlock next = v->document()->findBlockByNumber(line + 1);
        QVERIFY(next.isVisible());
        QVERIFY(v->toggleFold(line));
        QVERIFY(v->isFolded(line));
        QVERIFY(!v->document()->findBlockByNumber(line + 1).isVisible());
        QVERIFY(v->document()->findBlockByNumber(line).isVisible());
        QVERIFY(v->toggleFold(line));
        QVERIFY(v->document()->findBlockByNumber(line + 1).isVisible());
        // The gutter's marker folds too: click at the line's height.
        v->centerCursor();
        QTextCursor c(v->document()->findBlockByNumber(line));
        v->setTextCursor(c);
        const int y = v->cursorRect(c).center().y();
        QWidget *gutter = v->findChild<QWidget *>("codeGutter");
        QVERIFY(gutter);
        QTest::mouseClick(gutter, Qt::LeftButton, {}, QPoint(5, y));
        QVERIFY(v->isFolded(line));
        QTest::mouseClick(gutter, Qt::LeftButton, {}, QPoint(5, y));
        QVERIFY(!v->isFolded(line));
    }

    void ctrlFFindsAndEscCloses() {
        m_tabs->tabs()->setCurrentIndex(Session::AsmText);
        CodeView *v = m_tabs->view(Session::AsmText);
        v->setFocus();
        QTest::keyClick(v, Qt::Key_F, Qt::ControlModifier);
        QLineEdit *find = m_tabs->findField();
        QTRY_VERIFY(find->isVisible());
        QVERIFY(find->hasFocus());
        QTest::keyClicks(find, "mmad");
        QCOMPARE(v->textCursor().selectedText(), QString("mmad"));
        const int first = v->textCursor().blockNumber();
        const int matches = v->countOf("mmad");
        QVERIFY(matches >= 2);
        QCOMPARE(m_tabs->findStatus()->text(), QString("%1 matches").arg(matches));
        QTest::keyClick(find, Qt::Key_Return);
        const int second = v->textCursor().blockNumber();
        QVERIFY(second != first);
        QTest::keyClick(find, Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(v->textCursor().blockNumber(), first);
        QTest::keyClicks(find, "zzz-not-there");
        QCOMPARE(m_tabs->findStatus()->text(), QString("not found"));
        QTest::keyClick(find, Qt::Key_Escape);
        QVERIFY(!find->isVisible());
    }

    void selectingADirectiveHighlightsItsLinesInEveryText() {
        m_s->viewState()->selectDirective("stage_A");
        for (int k = 0; k < 4; ++k) {
            m_tabs->tabs()->setCurrentIndex(k);
            CodeView *v = m_tabs->view(Session::TextKind(k));
            QTRY_VERIFY(v->isCurrent());
            if (k == Session::LoopNestText) {
                continue; // the loop nest names loops and Funcs, not the directives' copies
            }
            QVERIFY2(!v->extraSelections().isEmpty(), qPrintable(QString("text %1").arg(k)));
        }
    }
};

QTEST_MAIN(TestCode)
#include "test_ide_code.moc"
