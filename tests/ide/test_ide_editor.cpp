// The schedule editor offers only legal values (issue 29, item 4), offscreen:
// a loop drop-down lists the loops of that Func stage at that point of the
// schedule (not the names later directives create); a stage's levels are the
// ones an engine reaches from where its source is; factors divide the loop's
// extent (or the tail strategy handles the rest); every kind Add offers on GEMM
// tiled_staged compiles with its defaults, or Add is disabled and says why; an
// argument being typed survives an arriving compile result and is committed
// only by the user; an illegal value typed by hand turns its cell red with the
// reason as tooltip.
#include "ide/core/LegalValues.h"
#include "ide/core/Session.h"
#include "ide/views/MainWindow.h"
#include "ide/views/ScheduleEditor.h"

#include "dsl/Compile.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QPointer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace tessel::ide;
using tessel::Directive;
using tessel::DirectiveKind;

namespace {
// GEMM 256^3 and its hand schedule for ascend-like.
const tessel::ParamMap kGemm{{"M", "256"}, {"N", "256"}, {"K", "256"}};
tessel::ScheduleSpec tiledStaged() {
    return tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) +
                                 "/samples/gemm/schedules/tiled_staged.json");
}
LegalValues gemmLegal() {
    return LegalValues(tessel::describe_pipeline("gemm", kGemm), tessel::load_arch("ascend-like"));
}
Directive vectorizeOn(const char *func, int stage, const char *var) {
    Directive d;
    d.id = "vec";
    d.kind = DirectiveKind::Vectorize;
    d.func = func;
    d.stage = stage;
    d.vars = {var};
    return d;
}
tessel::ScheduleSpec inserted(tessel::ScheduleSpec s, int at, const Directive &d) {
    s.directives.insert(s.directives.begin() + at, d);
    return s;
}
QStringList loopNames(const QVector<LoopState> &loops) {
    QStringList l;
    for (const auto &x : loops) {
        l << x.name;
    }
    return l;
}
QString firstError(const tessel::CompileResult &r) {
    for (const auto &d : r.diagnostics) {
        if (d.severity == tessel::Diagnostic::Error) {
            return QString::fromStdString(d.message);
        }
    }
    return {};
}
/** The text field of the argument editor of `view` that has the focus (a combo box's line edit). */
QLineEdit *editorLine(QTableView *view) {
    QWidget *w = QApplication::focusWidget();
    if (!w || !view->isAncestorOf(w)) {
        return nullptr;
    }
    auto *box = qobject_cast<QComboBox *>(w);
    return box ? box->lineEdit() : qobject_cast<QLineEdit *>(w);
}
int fieldRow(DirectiveArgsModel *args, const QString &field) {
    for (int r = 0; r < args->rowCount(); ++r) {
        if (args->fieldAt(r) == field) {
            return r;
        }
    }
    return -1;
}
} // namespace

class TestEditor : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<Session> m_s;
    std::unique_ptr<ScheduleEditor> m_w; // the editor as a window of its own
    ScheduleEditor *m_editor = nullptr;

    bool idle() const { return !m_s->service()->isBusy(); }
    void reopen() {
        QString error;
        QVERIFY2(m_s->open("gemm", kGemm, "ascend-like", tiledStaged(), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(idle(), 60000);
    }
    /** Opens the argument editor of `field` of directive `id` (the table focused, F2). */
    QLineEdit *startEditing(const QString &id, const QString &field) {
        QTableView *table = m_editor->directiveTable();
        table->selectRow(m_s->schedule()->rowOf(id));
        QTableView *argsView = m_editor->argumentTable();
        const int r = fieldRow(m_s->args(), field);
        if (r < 0) {
            return nullptr;
        }
        argsView->setFocus();
        argsView->setCurrentIndex(m_s->args()->index(r, 1));
        if (!focusedLine()) {
            QTest::keyClick(argsView, Qt::Key_F2);
        }
        return focusedLine();
    }
    /** Types `text` over the value of `field` of directive `id`, then presses `key`
     * (Return commits on the next event loop turn, Escape cancels; 0 leaves it open). */
    QLineEdit *typeInto(const QString &id, const QString &field, const QString &text, int key = 0) {
        QLineEdit *line = startEditing(id, field);
        if (line) {
            line->selectAll();
            QTest::keyClicks(line, text);
            if (key) {
                QTest::keyClick(line, Qt::Key(key));
            }
        }
        return line;
    }
    /** The text field of the argument editor that has the focus (a combo box's line edit). */
    QLineEdit *focusedLine() const { return editorLine(m_editor->argumentTable()); }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_s = std::make_unique<Session>();
        m_s->setAutosavePath(m_dir.filePath("autosave.json"));
        m_s->setDatabasePath(m_dir.filePath("tessel.db"));
        m_s->service()->setDebounceMs(30);
        m_w = std::make_unique<ScheduleEditor>(m_s.get());
        m_w->resize(600, 700);
        m_w->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_w.get()));
        reopen();
        QVERIFY(m_s->lastCompile() && m_s->lastCompile()->ok);
        m_editor = m_w.get();
    }

    // ---- plain data: LegalValues on the generator's description and the arch ----

    void loopsExistAtThatPoint() {
        LegalValues lv = gemmLegal();
        QVERIFY(lv.valid());
        const auto spec = tiledStaged();
        // acc.update(0): k, j, i before the split, ki, ko, j, i after it, reordered after that.
        QCOMPARE(loopNames(lv.loopsAt(spec, 2, "acc", 0)), QStringList({"k", "j", "i"}));
        QCOMPARE(loopNames(lv.loopsAt(spec, 3, "acc", 0)), QStringList({"ki", "ko", "j", "i"}));
        QCOMPARE(loopNames(lv.loopsAt(spec, 4, "acc", 0)), QStringList({"j", "i", "ki", "ko"}));
        QCOMPARE(loopNames(lv.loopsAt(spec, 1, "C", -1)), QStringList({"ji", "ii", "jo", "io"}));
        QCOMPARE(loopNames(lv.loopsAt(spec, 0, "C", -1)), QStringList({"j", "i"}));
        // Extents: C is 256x256 in 128x128 tiles; acc is computed per C tile (at C.jo).
        auto c = lv.loopsAt(spec, 1, "C", -1);
        QCOMPARE(c[0].extent, qint64(128));
        QCOMPARE(c[2].extent, qint64(2));
        auto acc = lv.loopsAt(spec, 4, "acc", 0);
        QCOMPARE(acc[0].extent, qint64(128)); // j of a C tile
        QCOMPARE(acc[2].extent, qint64(64));  // ki
        QCOMPARE(acc[3].extent, qint64(4));   // ko = 256 / 64
        QVERIFY(acc[2].rvar && acc[3].rvar && !acc[0].rvar);

        // A new vectorize on acc's pure definition: its loops are j, i; not ko, ki (the split's).
        auto s2 = inserted(spec, 2, vectorizeOn("acc", -1, "j"));
        QCOMPARE(lv.choices(s2, 2, "var"), QStringList({"j", "i"}));
        QString why = lv.check(s2, 2, "var", "ko");
        QVERIFY2(why.contains("'ko' is not a loop of acc") && why.contains("j, i"),
                 qPrintable(why));
        // On the update before the split: the reduction loop k needs atomic first.
        auto s3 = inserted(spec, 2, vectorizeOn("acc", 0, "j"));
        QCOMPARE(lv.choices(s3, 2, "var"), QStringList({"j", "i"}));
        QVERIFY(lv.check(s3, 2, "var", "k").contains("atomic"));
        // fuse's and tile's two loops are different loops.
        QVERIFY(!lv.choices(spec, 0, "y").contains("j"));
        // compute_at: the Funcs that read acc, and their loops at that point.
        QCOMPARE(lv.choices(spec, 1, "at_func"), QStringList({"C"}));
        QCOMPARE(lv.choices(spec, 1, "at_loop"), QStringList({"ji", "ii", "jo", "io"}));
        QVERIFY(lv.check(spec, 1, "at_loop", "ko").contains("not a loop of C"));
        QVERIFY(lv.check(spec, 1, "at_func", "A").contains("does not read acc"));
        // A stage's at= loops are the ones of acc.update(0) after the reorder.
        QVERIFY(lv.choices(spec, 4, "at_loop").contains("ko"));
        QVERIFY(lv.choices(spec, 4, "at_loop").contains("root"));
        // The whole hand schedule is legal.
        for (int i = 0; i < int(spec.directives.size()); ++i) {
            auto p = lv.problems(spec, i);
            QVERIFY2(
                p.isEmpty(),
                qPrintable(QString("directive %1: %2").arg(i).arg(p.isEmpty() ? "" : p.first())));
        }
    }

    void handSchedulesOfTheSamplesHaveNoRedCell() {
        // What the compiler takes the editor must not mark: every directive of these hand
        // schedules (as tests/backend/test_backend_sample_schedules runs them) passes.
        struct Case {
            const char *generator;
            tessel::ParamMap params;
            const char *arch, *schedule;
        };
        const std::vector<Case> cases = {
            {"gemm",
             {{"M", "256"}, {"N", "512"}, {"K", "1024"}},
             "ascend-like",
             "gemm/schedules/ascend_panel_k256.json"},
            {"gemm",
             {{"M", "128"}, {"N", "256"}, {"K", "256"}},
             "ascend-like",
             "gemm/schedules/ascend_b_once.json"},
            {"gemm",
             {{"M", "128"}, {"N", "256"}, {"K", "256"}, {"dtype", "int8"}},
             "auto-int8",
             "gemm/schedules/auto_int8.json"},
            {"gemm_q8",
             {{"M", "32"}, {"N", "256"}, {"K", "256"}, {"shift", "12"}},
             "ascend-like",
             "gemm_q8/schedules/ascend_fused.json"},
            {"conv2d",
             {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}},
             "ascend-like",
             "conv2d/schedules/ops_ascend_3x3.json"},
            {"conv2d",
             {{"H", "4"}, {"W", "32"}, {"CI", "32"}, {"CO", "128"}, {"K", "3"}, {"stride", "2"}},
             "ascend-like",
             "conv2d/schedules/ops_ascend_3x3_s2.json"},
            {"depthwise",
             {{"H", "4"}, {"W", "6"}, {"C", "128"}},
             "ascend-like",
             "depthwise/schedules/ascend_bands.json"},
            {"pooling",
             {{"H", "4"}, {"W", "6"}, {"C", "128"}, {"op", "max"}, {"dtype", "int8"}},
             "ascend-like",
             "pooling/schedules/ascend_max.json"},
            {"blur",
             {{"W", "128"}, {"H", "16"}},
             "ascend-like",
             "blur/schedules/ascend_fused.json"},
            {"elementwise",
             {{"N", "262144"}, {"op", "chain"}},
             "ascend-like",
             "elementwise/schedules/chain_staged.json"},
            {"softmax", {}, "ascend-like", "softmax/schedules/ascend_reduce.json"},
            {"layernorm", {}, "ascend-like", "layernorm/schedules/ascend_rows.json"},
            {"attention", {}, "ascend-like", "attention/schedules/ascend_flash.json"},
        };
        for (const Case &c : cases) {
            const auto spec =
                tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) + "/samples/" + c.schedule);
            LegalValues lv(tessel::describe_pipeline(c.generator, c.params),
                           tessel::load_arch(c.arch));
            // Every kind's template before the first directive (what the editor decides on
            // selecting it) stays interactive on the longest of them.
            QElapsedTimer clock;
            clock.start();
            for (size_t k = 0; k < tessel::kind_names().size(); ++k) {
                Directive d;
                lv.makeDefault(spec, 0, DirectiveKind(k), QString(), &d);
            }
            qInfo("%s: %d directives, the templates in %lld ms", c.schedule,
                  int(spec.directives.size()), clock.elapsed());
            QVERIFY(clock.elapsed() < 250);
            for (int i = 0; i < int(spec.directives.size()); ++i) {
                auto p = lv.problems(spec, i);
                QVERIFY2(p.isEmpty(),
                         qPrintable(QString("%1 %2 (%3): %4: %5")
                                        .arg(c.schedule)
                                        .arg(i)
                                        .arg(QString::fromStdString(spec.directives[i].id))
                                        .arg(p.isEmpty() ? "" : p.firstKey())
                                        .arg(p.isEmpty() ? "" : p.first())));
            }
        }
    }

    void levelsAnEngineReaches() {
        LegalValues lv = gemmLegal();
        const auto spec = tiledStaged();
        // stage_A (#4) copies A from GM; stage_A0 (#6) copies the L1 copy on.
        QCOMPARE(lv.levelOf(spec, 4, "A"), QString("GM"));
        QCOMPARE(lv.levelOf(spec, 6, "A"), QString("L1"));
        QStringList fromL1 = lv.choices(spec, 6, "level");
        QCOMPARE(fromL1, QStringList({"L0A", "L0B"}));
        QVERIFY(!lv.choices(spec, 4, "level").contains("L0C")); // nothing copies GM -> L0C
        QVERIFY(!lv.choices(spec, 4, "level").contains("GM"));  // stage copies on chip
        QString why = lv.check(spec, 6, "level", "UB");
        QVERIFY2(why.contains("no engine") && why.contains("from L1") && why.contains("L0A, L0B"),
                 qPrintable(why));
        QVERIFY(lv.check(spec, 6, "level", "L3").contains("does not exist"));
        // A tensorized Func's accumulator is where the matrix unit writes.
        QCOMPARE(lv.choices(spec, 8, "level"), QStringList({"L0C"}));
        QVERIFY(lv.check(spec, 8, "level", "UB").contains("tensorized"));
        // tensorize: the updates that are a sum of products; the units the machine has.
        QCOMPARE(lv.choices(spec, 9, "update"), QStringList({"0"}));
        QCOMPARE(lv.choices(spec, 9, "unit"), QStringList({"matrix"}));
    }

    void factorsDivideOrTheTailHandlesIt() {
        LegalValues lv = gemmLegal();
        const auto spec = tiledStaged();
        QCOMPARE(lv.choices(spec, 0, "fx"),
                 QStringList({"1", "2", "4", "8", "16", "32", "64", "128", "256"})); // C's j: 256
        QCOMPARE(lv.choices(spec, 2, "factor").last(), QString("256"));              // k: 256
        // k is acc's reduction loop and acc is tensorized: a remainder would be guarded, and
        // a guarded nest is no matrix product (tessel run: acc then runs as scalar code).
        QString why = lv.check(spec, 2, "factor", "96");
        QVERIFY2(why.contains("does not divide the extent 256 of loop k") &&
                     why.contains("tensorized") && why.contains("divisors: 1, 2, 4"),
                 qPrintable(why));
        QVERIFY(lv.check(spec, 2, "factor", "512").contains("does not divide"));
        QVERIFY(lv.check(spec, 2, "factor", "0").contains("positive"));
        auto guarded = spec;
        guarded.directives[2].tail = "guard_with_if";
        QVERIFY(lv.check(guarded, 2, "factor", "96").contains("tensorized"));
        // C is the output: its last tile shifts inwards, so 96 is legal (tessel run verifies
        // it), a factor over the extent is not.
        QCOMPARE(lv.check(spec, 0, "fx", "96"), QString());
        QVERIFY(lv.check(spec, 0, "fx", "512").contains("larger than the extent 256 of loop j"));
        // A reduction loop takes neither round_up nor shift_inwards; C's pure loops do.
        QVERIFY(!lv.choices(spec, 2, "tail").contains("round_up"));
        QVERIFY(lv.check(spec, 2, "tail", "round_up").contains("not legal"));
        QVERIFY(lv.choices(spec, 0, "tail").contains("round_up"));
        // A new name may not be a loop that exists: split k into ki and ... ki.
        QVERIFY(lv.check(spec, 2, "outer", "ki").contains("two new loops"));
        auto later = inserted(spec, 4, spec.directives[2]);
        QVERIFY(lv.check(later, 4, "var", "k").contains("not a loop")); // k is split already
        // vectorize factors: no factor, or a divisor of the loop.
        auto v = inserted(spec, 2, vectorizeOn("acc", -1, "j"));
        QCOMPARE(lv.choices(v, 2, "factor").first(), QString());
        QVERIFY(lv.choices(v, 2, "factor").contains("16"));
        // acc's pure loops are an inner Func's: a remainder rounds its region up (legal).
        QCOMPARE(lv.check(v, 2, "factor", "48"), QString());
    }

    // ---- the session's model and the widget ----

    void dropDownsOfTheEditorOfferTheLegalLoops() {
        reopen();
        // A vectorize added after acc_at (row 1) on acc: the drop-down has acc's loops
        // at that point, not ko/ki (made later by k_chunks) nor C's tile loops.
        QVERIFY(m_s->lastCompile()->ok);
        tessel::ScheduleSpec s = m_s->schedule()->spec();
        m_s->schedule()->setSchedule(inserted(s, 2, vectorizeOn("acc", -1, "j")), "add vec");
        const int row = m_s->schedule()->rowOf("vec");
        QCOMPARE(row, 2);
        m_s->args()->setRow(row);
        QModelIndex var = m_s->args()->index(fieldRow(m_s->args(), "var"), 1);
        QStringList offered = var.data(DirectiveArgsModel::ChoicesRole).toStringList();
        QCOMPARE(offered, QStringList({"j", "i"}));
        QTRY_VERIFY_WITH_TIMEOUT(idle(), 60000);
    }

    void addTemplatesCompile() {
        // Every kind of the Add menu, after the last directive of tiled_staged and after its
        // first: either the directive Add inserts compiles (the NPU backend included),
        // or Add is disabled with a reason.
        // Also on an empty schedule (nothing selected).
        reopen();
        const auto staged = tiledStaged();
        QStringList enabled, disabled;
        const int last = int(staged.directives.size()) - 1;
        for (auto [base, after] : {std::pair(staged, last), std::pair(staged, 0),
                                   std::pair(staged, 1), std::pair(tessel::ScheduleSpec{}, -1)}) {
            auto select = [this, after = after] {
                if (after < 0) {
                    m_editor->directiveTable()->clearSelection();
                } else {
                    m_editor->directiveTable()->selectRow(after);
                }
            };
            m_s->schedule()->setSchedule(base, "reset");
            select();
            QComboBox *kinds = m_editor->kindBox();
            auto *add = m_editor->findChild<QToolButton *>("add");
            QVERIFY(add);
            // Deciding every kind's template (done at each selection and edit) is interactive.
            QElapsedTimer clock;
            clock.start();
            for (int k = 0; k < kinds->count(); ++k) {
                tessel::DirectiveKind kind;
                Directive d;
                QVERIFY(kindFromName(kinds->itemText(k), &kind));
                m_s->schedule()->templateFor(after + 1, kind, "acc", &d);
            }
            qInfo("after row %d: the %d templates in %lld ms", after, kinds->count(),
                  clock.elapsed());
            QVERIFY(clock.elapsed() < 250);
            for (int k = 0; k < kinds->count(); ++k) {
                kinds->setCurrentIndex(k);
                const QString kind = kinds->itemText(k);
                if (!add->isEnabled()) {
                    QVERIFY2(add->toolTip().startsWith("No " + kind + " is legal here: ") &&
                                 add->toolTip().size() > 30,
                             qPrintable(add->toolTip()));
                    disabled << kind;
                    qInfo("after row %d: %s", after, qPrintable(add->toolTip()));
                    continue;
                }
                select();
                QVERIFY2(m_editor->addDirective(), qPrintable(kind));
                const auto &spec = m_s->schedule()->spec();
                QCOMPARE(int(spec.directives.size()), int(base.directives.size()) + 1);
                const Directive &d = spec.directives[after + 1];
                QCOMPARE(QString(tessel::kind_name(d.kind)), kind);
                tessel::CompileRequest req = m_s->request();
                req.schedule = spec;
                tessel::CompileResult r = tessel::compile(req);
                QVERIFY2(r.ok,
                         qPrintable(QString("Add %1 after row %2: %3; inserted %4")
                                        .arg(kind)
                                        .arg(after)
                                        .arg(firstError(r))
                                        .arg(QString::fromStdString(tessel::schedule_to_json(
                                            tessel::ScheduleSpec{std::vector<Directive>{d}})))));
                // The editor shows no problem on any of its cells.
                QVERIFY(m_s->schedule()->legal().problems(spec, after + 1).isEmpty());
                qInfo("after row %d: Add inserts %s", after, d.describe().c_str());
                enabled << kind;
                m_s->schedule()->setSchedule(base, "reset");
                select();
            }
        }
        // Most kinds have a legal default here; the rest say why (e.g. tensorize: acc is
        // tensorized).
        for (const char *k : {"split", "tile", "reorder", "compute_at", "store_at", "layout"}) {
            QVERIFY2(enabled.contains(k), k);
        }
        QVERIFY2(disabled.contains("tensorize"), qPrintable(disabled.join(",")));
        QTRY_VERIFY_WITH_TIMEOUT(idle(), 60000);
    }

    void anotherKindInPlaceCompilesToo() {
        // Changing a directive's kind in its argument table builds the new kind's arguments
        // as Add does: a layout added at the end becomes a split that compiles, keeping its id.
        reopen();
        auto spec = m_s->schedule()->spec();
        Directive layout;
        layout.id = "late";
        layout.kind = DirectiveKind::Layout;
        layout.func = "acc";
        layout.format = "ND";
        spec.directives.push_back(layout);
        m_s->schedule()->setSchedule(spec, "add layout");
        const int row = m_s->schedule()->rowOf("late");
        QString error;
        QVERIFY2(m_s->schedule()->setField(row, "kind", "split", &error), qPrintable(error));
        const Directive &d = m_s->schedule()->spec().directives[row];
        QCOMPARE(d.kind, DirectiveKind::Split);
        QCOMPARE(d.id, std::string("late"));
        QVERIFY(m_s->schedule()->legal().problems(m_s->schedule()->spec(), row).isEmpty());
        tessel::CompileRequest req = m_s->request();
        tessel::CompileResult r = tessel::compile(req);
        QVERIFY2(r.ok, qPrintable(firstError(r)));
        // A kind with no legal directive there is refused, and says why.
        QVERIFY(!m_s->schedule()->setField(row, "kind", "tensorize", &error));
        QVERIFY2(error.contains("already tensorized"), qPrintable(error));
        QCOMPARE(m_s->schedule()->spec().directives[row].kind, DirectiveKind::Split);
        QTRY_VERIFY_WITH_TIMEOUT(idle(), 60000);
    }

    void anEditInProgressSurvivesAResult() {
        reopen();
        m_w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_w.get()));
        QPointer<QLineEdit> line = typeInto("k_chunks", "factor", "3"); // half of "32"
        QVERIFY2(line, "no editor in the argument table");
        // A compile and a run of the same schedule arrive while the user types.
        QSignalSpy compiled(m_s.get(), &Session::compileFinished);
        QSignalSpy ran(m_s.get(), &Session::runFinished);
        m_s->service()->requestNow(m_s->request());
        QVERIFY(compiled.wait(60000));
        QVERIFY(ran.count() > 0 || ran.wait(60000));
        QTest::qWait(100);
        // The editor is still open with the half-typed text, nothing was committed.
        QVERIFY(line);
        QVERIFY(line->isVisible());
        QCOMPARE(focusedLine(), line.data());
        QCOMPARE(line->text(), QString("3"));
        const int row = m_s->schedule()->rowOf("k_chunks");
        QCOMPARE(m_s->schedule()->spec().directives[row].factors[0], int64_t(64));
        // Another edit elsewhere (the JSON tab, undo, a load) neither closes it.
        auto other = m_s->schedule()->spec();
        other.directives[0].factors = {128, 64};
        m_s->schedule()->setSchedule(other, "elsewhere");
        QVERIFY(line);
        QCOMPARE(focusedLine(), line.data());
        QCOMPARE(line->text(), QString("3"));
        // The user finishes typing and commits.
        QTest::keyClicks(line, "2");
        QTest::keyClick(line, Qt::Key_Return); // the delegate commits on the next event loop turn
        QTRY_COMPARE(m_s->schedule()->spec().directives[row].factors[0], int64_t(32));
        QTRY_VERIFY_WITH_TIMEOUT(idle(), 60000);
    }

    void inTheMainWindowTooAResultLeavesTheEditOpen() {
        // The same in the whole window, where every view takes the result.
        Session s;
        QTemporaryDir dir;
        s.setAutosavePath(dir.filePath("autosave.json"));
        s.setDatabasePath(dir.filePath("tessel.db"));
        s.service()->setDebounceMs(30);
        MainWindow w(&s);
        w.resize(1200, 760);
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QString error;
        QVERIFY2(s.open("gemm", kGemm, "ascend-like", tiledStaged(), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(!s.service()->isBusy(), 60000);
        auto *editor = w.findChild<ScheduleEditor *>();
        QVERIFY(editor);
        editor->directiveTable()->selectRow(s.schedule()->rowOf("k_chunks"));
        QTableView *argsView = editor->argumentTable();
        argsView->setFocus();
        argsView->setCurrentIndex(s.args()->index(fieldRow(s.args(), "factor"), 1));
        if (!editorLine(argsView)) {
            QTest::keyClick(argsView, Qt::Key_F2);
        }
        QPointer<QLineEdit> line = editorLine(argsView);
        QVERIFY2(line, "no editor in the argument table");
        line->selectAll();
        QTest::keyClicks(line, "3");
        QSignalSpy ran(&s, &Session::runFinished);
        w.runAction()->trigger(); // F5: compile and run now
        QVERIFY(ran.wait(60000));
        QTest::qWait(100);
        QVERIFY(line && line->isVisible());
        QCOMPARE(line->text(), QString("3"));
        QCOMPARE(s.schedule()->spec().directives[s.schedule()->rowOf("k_chunks")].factors[0],
                 int64_t(64));
        QTest::keyClick(line, Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(!s.service()->isBusy(), 60000);
    }

    void illegalValuesAreMarkedOnTheirCell() {
        reopen();
        m_w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_w.get()));
        // While typing: a factor that does not divide k's 256 turns the text red and says so.
        QLineEdit *line = typeInto("k_chunks", "factor", "96");
        QVERIFY(line);
        QVERIFY2(line->toolTip().contains("does not divide the extent 256 of loop k"),
                 qPrintable(line->toolTip()));
        QCOMPARE(line->palette().color(QPalette::Text), QColor(Qt::red));
        QTest::keyClick(line, Qt::Key_Escape);
        // A loop name typed by hand that does not exist there: applied (the compiler says
        // the same), its cell red with the reason.
        QVERIFY(typeInto("k_chunks", "var", "kk", Qt::Key_Return));
        QModelIndex var = m_s->args()->index(fieldRow(m_s->args(), "var"), 1);
        QTRY_COMPARE(var.data().toString(), QString("kk"));
        QString tip = var.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("'kk' is not a loop of acc.update(0)") && tip.contains("k, j, i"),
                 qPrintable(tip));
        QCOMPARE(var.data(Qt::ForegroundRole).value<QColor>(), QColor(Qt::red));
        // The directive's row says so too; the others are not marked.
        const int row = m_s->schedule()->rowOf("k_chunks");
        QModelIndex args = m_s->schedule()->index(row, ScheduleModel::ArgsColumn);
        QVERIFY2(args.data(Qt::ToolTipRole).toString().startsWith("var: 'kk' is not a loop"),
                 qPrintable(args.data(Qt::ToolTipRole).toString()));
        QCOMPARE(args.data(Qt::ForegroundRole).value<QColor>(), QColor(Qt::red));
        QVERIFY(m_s->schedule()
                    ->index(0, ScheduleModel::ArgsColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .isEmpty());
        // A value of the wrong type is refused; the cell keeps its value and says why.
        QVERIFY(typeInto("k_chunks", "factor", "abc", Qt::Key_Return));
        QModelIndex factor = m_s->args()->index(fieldRow(m_s->args(), "factor"), 1);
        QTRY_VERIFY(!factor.data(Qt::ToolTipRole).toString().isEmpty());
        QCOMPARE(factor.data().toString(), QString("64"));
        tip = factor.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("'abc' was not applied") && tip.contains("positive integer"),
                 qPrintable(tip));
        QCOMPARE(factor.data(Qt::ForegroundRole).value<QColor>(), QColor(Qt::red));
        // Legal cells are not marked.
        QModelIndex tail = m_s->args()->index(fieldRow(m_s->args(), "tail"), 1);
        QVERIFY(tail.data(Qt::ToolTipRole).toString().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(idle(), 60000);
    }

    void cleanupTestCase() {
        m_w.reset();
        m_s.reset();
    }
};

QTEST_MAIN(TestEditor)
#include "test_ide_editor.moc"
