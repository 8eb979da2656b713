// IDE models on real compile results and run reports (GEMM on ascend-like).
#include "ide/core/ResultModels.h"
#include "ide/core/ScheduleModel.h"
#include "ide/core/SourceLinks.h"

#include <QUndoStack>
#include <QtTest>

#include <memory>

using namespace tessel::ide;

namespace {
QString sourceDir() {
    return QString::fromUtf8(TESSEL_SOURCE_DIR);
}

tessel::CompileRequest gemm(int size, const tessel::ScheduleSpec &s) {
    tessel::CompileRequest req;
    req.generator = "gemm";
    req.params = {{"M", std::to_string(size)}, {"N", std::to_string(size)}, {"K", std::to_string(size)}};
    req.schedule = s;
    req.arch = "ascend-like";
    return req;
}

tessel::ScheduleSpec tiledStaged() {
    return tessel::load_schedule((sourceDir() + "/samples/gemm/schedules/tiled_staged.json").toStdString());
}

QVector<QPair<QString, qint64>> ascendCapacities() {
    QVector<QPair<QString, qint64>> c;
    for (const auto &m : tessel::load_arch("ascend-like").memories) {
        if (!m.off_chip) {
            c.append({QString::fromStdString(m.name), qint64(m.size_bytes)});
        }
    }
    return c;
}
} // namespace

class TestModels : public QObject {
    Q_OBJECT
    std::shared_ptr<const tessel::CompileResult> m_staged;
    std::shared_ptr<const tessel::RunReport> m_run;

private Q_SLOTS:
    void initTestCase() {
        m_staged = std::make_shared<const tessel::CompileResult>(tessel::compile(gemm(128, tiledStaged())));
        QVERIFY(m_staged->ok);
        m_run = std::make_shared<const tessel::RunReport>(tessel::run(gemm(128, tiledStaged()), 1, true));
        QVERIFY(m_run->verified);
        QVERIFY(m_run->sim.has_value());
    }

    void scheduleEditsAreUndoable() {
        QUndoStack undo;
        ScheduleModel m(&undo);
        m.setSchedule(tiledStaged(), "open");
        QCOMPARE(m.rowCount(), 10);
        int row = m.rowOf("k_chunks");
        QCOMPARE(row, 2);
        QVERIFY(m.setField(row, "factor", "32"));
        QCOMPARE(m.spec().directives[row].factors[0], int64_t(32));
        QString error;
        QVERIFY(!m.setField(row, "factor", "0", &error)); // refused, not applied
        QVERIFY(error.contains("positive"));
        QVERIFY(!m.setField(row, "id", "tile_C", &error)); // duplicate id
        QVERIFY(error.contains("already used"));
        m.moveDirective(0, 1);
        QCOMPARE(QString::fromStdString(m.spec().directives[1].id), QString("tile_C"));
        m.removeDirective(9);
        QCOMPARE(m.rowCount(), 9);
        m.insertDirective(0, tessel::DirectiveKind::ComputeRoot, "acc");
        QCOMPARE(m.rowCount(), 10);
        QCOMPARE(m.data(m.index(0, ScheduleModel::KindColumn)).toString(), QString("compute_root"));
        QVERIFY(!m.spec().directives[0].id.empty());
        QCOMPARE(undo.count(), 5); // open, factor, move, remove, insert
        undo.undo();
        undo.undo();
        undo.undo();
        undo.undo();
        QCOMPARE(m.spec(), tiledStaged());
        QVERIFY(m.json().contains("\"k_chunks\""));
        QVERIFY(!m.setScheduleJson("{\"version\": 1, \"directives\": [", &error));
        QVERIFY2(error.contains("JSON tab:1:"), qPrintable(error));
    }

    void argumentsOfferLegalChoices() {
        QUndoStack undo;
        ScheduleModel m(&undo);
        m.setSchedule(tiledStaged(), "open");
        m.setLevels({"GM", "L1", "L0A", "L0B", "L0C", "UB"});
        m.setLoops(loopsByFunc(QString::fromStdString(m_staged->loop_nest)));
        m.setFuncs(funcNames(*m_staged));
        QVERIFY(m.choices(m.rowOf("stage_A"), "level").contains("L0A"));
        QStringList atLoops = m.choices(m.rowOf("stage_A"), "at_loop"); // loops of acc
        QVERIFY2(atLoops.contains("ko") && atLoops.contains("ki") && atLoops.contains("k"), qPrintable(atLoops.join(',')));
        QVERIFY(m.choices(m.rowOf("tile_C"), "x").contains("j"));
        QVERIFY(m.choices(0, "func").contains("acc") && m.choices(0, "func").contains("A"));
        DirectiveArgsModel args(&m);
        args.setRow(m.rowOf("stage_A"));
        QCOMPARE(args.rowCount(), 7); // id kind func level at_func at_loop buffers
        QCOMPARE(args.fieldAt(3), QString("level"));
        QVERIFY(args.data(args.index(3, 1), DirectiveArgsModel::ChoicesRole).toStringList().contains("L1"));
        QVERIFY(args.setData(args.index(6, 1), "1"));
        QCOMPARE(m.spec().directives[m.rowOf("stage_A")].buffers, 1);
    }

    void lifetimesPerLevel() {
        LifetimeModel m;
        m.setResult(m_staged, ascendCapacities());
        QCOMPARE(m.rowCount(), 5);
        QCOMPARE(m.levels(), QStringList({"L1", "L0A", "L0B", "L0C"}));
        QCOMPARE(m.highWater("L1"), qint64(65536)); // A and B chunks, 16 KiB x2 each
        QCOMPARE(m.capacity("L0C"), qint64(tessel::load_arch("ascend-like").find_level("L0C")->size_bytes));
        QCOMPARE(m.overflowCount(), 0);
        QVERIFY(m.orderLength() > 0);
        bool sawDouble = false;
        for (int r = 0; r < m.rowCount(); ++r) {
            sawDouble = sawDouble || m.data(m.index(r, 4)).toInt() == 2;
        }
        QVERIFY(sawDouble);
    }

    void cycleLifetimesFromTracedAccesses() {
        // Synthetic: X and Y share L1 [0, 512) (disjoint scopes), Z is double-buffered at 1024.
        tessel::ArchSpec arch = tessel::load_arch("ascend-like");
        int l1 = -1, ub = -1;
        for (size_t i = 0; i < arch.memories.size(); ++i) {
            l1 = arch.memories[i].name == "L1" ? int(i) : l1;
            ub = arch.memories[i].name == "UB" ? int(i) : ub;
        }
        QVERIFY(l1 >= 0 && ub >= 0);
        auto lifetime = [](const char *name, int64_t offset, int copies, const char *dir) {
            tessel::BufferLifetime l;
            l.name = name;
            l.level = "L1";
            l.offset = offset;
            l.bytes = 512;
            l.buffers = copies;
            l.directive = dir;
            return l;
        };
        std::vector<tessel::BufferLifetime> ls = {lifetime("X", 0, 1, "sx"), lifetime("Y", 0, 1, "sy"),
                                                  lifetime("Z", 1024, 2, "sz")};
        std::vector<tessel::isa::Provenance> prov = {{}, {"sx", "", ""}, {"sy", "", ""}, {"sz", "", ""}, {"mm", "", ""}};
        tessel::sim::SimReport trace;
        auto event = [&trace](uint64_t start, uint64_t end, uint32_t p, int level, uint64_t lo, uint64_t hi, bool write) {
            tessel::sim::TraceEvent e;
            e.start = start;
            e.end = end;
            e.prov = p;
            trace.add_event(e, {tessel::sim::TraceAccess(level, lo, hi, write)});
        };
        event(5, 8, 3, l1, 1024, 1536, true);   // Z copy 0 written
        event(8, 12, 4, l1, 1024, 1536, false); // ... read
        event(9, 11, 3, l1, 1536, 2048, true);  // Z copy 1 written
        event(10, 20, 1, l1, 0, 512, true);     // X (by its directive; Y shares the bytes)
        event(12, 15, 4, l1, 1536, 2048, false);
        event(13, 16, 3, l1, 1024, 1536, true); // Z copy 0 overwritten: its second interval
        event(30, 40, 2, l1, 0, 512, true);     // Y
        event(50, 60, 4, ub, 0, 4096, false);   // another level: nobody's
        auto c = cycleLifetimes(ls, trace, prov, arch);
        QCOMPARE(c.size(), size_t(3));
        QVERIFY(c[0].used && c[1].used && c[2].used);
        QCOMPARE(std::make_pair(c[0].first, c[0].last), std::make_pair(int64_t(10), int64_t(20)));
        QCOMPARE(std::make_pair(c[1].first, c[1].last), std::make_pair(int64_t(30), int64_t(40)));
        QCOMPARE(std::make_pair(c[2].first, c[2].last), std::make_pair(int64_t(5), int64_t(16)));
        QCOMPARE(c[2].accesses, 5);
        using Spans = std::vector<std::pair<int64_t, int64_t>>;
        QCOMPARE(c[2].copies, (Spans{{5, 16}, {9, 15}}));
        QCOMPARE(c[2].live[0], (Spans{{5, 12}, {13, 16}}));
        QCOMPARE(c[2].live[1], (Spans{{9, 15}}));
        // A read of the shared bytes by another directive is both buffers' use.
        event(70, 80, 4, l1, 0, 256, false);
        c = cycleLifetimes(ls, trace, prov, arch);
        QCOMPARE(c[0].last, int64_t(80));
        QCOMPARE(c[1].last, int64_t(80));

        // A real run: every buffer of the staged GEMM is used within the run, A's L1
        // chunk from the first stage_A DMA on, and both copies of each double buffer.
        // 256^3: 4 tiles of 128x128 and 4 k chunks each, so every copy is reused.
        auto compiled = std::make_shared<const tessel::CompileResult>(tessel::compile(gemm(256, tiledStaged())));
        auto run = std::make_shared<const tessel::RunReport>(tessel::run(gemm(256, tiledStaged()), 1, true));
        QVERIFY(compiled->ok && run->verified && run->sim);
        LifetimeModel m;
        m.setResult(compiled, ascendCapacities());
        QVERIFY(m.cycleLifetimes().empty());
        m.setRun(run, arch);
        QCOMPARE(m.runCycles(), qint64(*run->cycles));
        QCOMPARE(m.cycleLifetimes().size(), m.lifetimes().size());
        int64_t firstStageA = -1;
        for (const auto &e : run->sim->trace) {
            if (e.op == tessel::isa::Op::DMA && run->provenance[e.prov].directive_id == "stage_A") {
                firstStageA = firstStageA < 0 ? int64_t(e.start) : std::min(firstStageA, int64_t(e.start));
            }
        }
        QVERIFY(firstStageA >= 0);
        for (size_t i = 0; i < m.lifetimes().size(); ++i) {
            const auto &l = m.lifetimes()[i];
            const CycleLifetime &cl = m.cycleLifetimes()[i];
            QVERIFY2(cl.used, l.name.c_str());
            QVERIFY(0 <= cl.first && cl.first < cl.last && cl.last <= m.runCycles());
            if (l.directive == "stage_A") {
                QCOMPARE(cl.first, firstStageA);
            }
            if (l.buffers == 2) {
                QVERIFY2(cl.copies[1].first > cl.copies[0].first, l.name.c_str()); // copy 0 is filled first
                QVERIFY2(cl.live[0].size() >= 2 && cl.live[1].size() >= 2, l.name.c_str()); // refilled: intervals
                QVERIFY(cl.live[1].front().first < cl.live[0].back().first); // the copies alternate
            }
        }
        QCOMPARE(m.data(m.index(0, 9)).toLongLong(), qlonglong(m.cycleLifetimes()[0].first));
    }

    void overflowIsFlaggedWithItsDirective() {
        tessel::Schedule s;
        s.func("acc").compute_root().id("acc_root");
        auto r = std::make_shared<const tessel::CompileResult>(tessel::compile(gemm(256, s.spec())));
        QVERIFY(!r->ok);
        DiagnosticsModel d;
        d.setCompile(r);
        QVERIFY(d.errorCount() >= 1);
        QCOMPARE(d.rows()[0].directive, QString("acc_root"));
        QVERIFY(d.rows()[0].message.contains("does not fit in UB"));
        LifetimeModel m;
        m.setResult(r, ascendCapacities());
        QCOMPARE(m.overflowCount(), 1);
        QCOMPARE(m.data(m.index(0, 0), OverflowRole).toBool(), true);
        QCOMPARE(m.data(m.index(0, 0), DirectiveRole).toString(), QString("acc_root"));
        QVERIFY(m.highWater("UB") > m.capacity("UB"));
    }

    void timelineFromTheTrace() {
        TimelineModel t;
        t.setReport(m_run);
        QCOMPARE(t.rowCount(), int(m_run->sim->trace.size()));
        QVERIFY(t.pipes().contains("MTE2"));
        QVERIFY(t.pipes().contains("M"));
        QVERIFY(t.pipes().indexOf("M") < t.pipes().indexOf("MTE2"));
        QCOMPARE(t.cycles(), qint64(*m_run->cycles));
        int mte2 = t.pipes().indexOf("MTE2");
        QVERIFY(!t.eventsOf(mte2).isEmpty());
        int first = t.eventsOf(mte2).first();
        const auto &e = t.event(first);
        QCOMPARE(t.eventAt(mte2, (e.start + e.end) / 2.0), first);
        QCOMPARE(t.eventAt(mte2, double(t.cycles()) * 10), -1);
        bool dmaFromStage = false;
        for (int i : t.eventsOf(mte2)) {
            if (t.event(i).op == tessel::isa::Op::DMA) {
                dmaFromStage = t.directiveOf(i) == "stage_A" || t.directiveOf(i) == "stage_B";
                QCOMPARE(QString::fromStdString(t.event(i).src), QString("GM"));
                break;
            }
        }
        QVERIFY(dmaFromStage);
        // Selecting the tensorize directive highlights the matrix instructions it made (issue 29:
        // they were attributed to the k_chunks split the MMAD sits in, so nothing lit up).
        int mmads = 0;
        for (int i : t.eventsOf(t.pipes().indexOf("M"))) {
            if (t.event(i).op == tessel::isa::Op::MMAD) {
                ++mmads;
                QCOMPARE(t.directiveOf(i), QString("mmad"));
            }
        }
        QVERIFY(mmads > 0);
        QVERIFY(t.idleCycles(t.pipes().indexOf("M")) > 0); // the matrix unit waits for data
        QVERIFY(t.idleCycles(t.pipes().indexOf("M")) < t.cycles());
    }

    void metricsShowTheRun() {
        MetricsModel m;
        m.setCompile(m_staged);
        QCOMPARE(m.value("compile"), QString("ok"));
        QVERIFY(m.value("cycles").isEmpty());
        m.setReport(m_run);
        QCOMPARE(m.value("cycles"), QString::number(*m_run->cycles));
        QCOMPARE(m.value("verified"), QString("yes"));
        QVERIFY(!m.value("busy % MTE2").isEmpty());
        QVERIFY(m.value("bytes MTE2 GM->L1").startsWith("65536 ")); // A and B: 2 x 128 x 128 x fp16
    }

    void tilingFollowsTheSchedule() {
        TilingModel m;
        m.setResult(m_staged, tiledStaged());
        QCOMPARE(m.rowCount(), 5);
        QCOMPARE(m.outputTile(), qMakePair(qint64(128), qint64(128)));
        QCOMPARE(m.tileDirective(), QString("tile_C"));
        QVector<int> a = m.footprintsOf("A");
        QCOMPARE(a.size(), 2);
        QCOMPARE(QString::fromStdString(m.buffers()[a[0]].level), QString("L1"));
        QCOMPARE(QString::fromStdString(m.buffers()[a[1]].level), QString("L0A"));
    }

    void tilingPlacesBoxesAtTheSelectedTile() {
        // ascend_panel on 256^3: 128x128 tiles of C; A staged as a whole row panel in L1
        // (at io) and in k chunks of 128 in L0A (at ko); B in chunks in L1 and L0B.
        auto spec = tessel::load_schedule((sourceDir() + "/samples/gemm/schedules/ascend_panel.json").toStdString());
        auto r = std::make_shared<const tessel::CompileResult>(tessel::compile(gemm(256, spec)));
        QVERIFY(r->ok);
        TilingModel m;
        m.setResult(r, spec);
        QMap<QString, qint64> values; // without the "$N" Halide adds to a Func built again
        for (auto [loop, v] : m.tileLoopValues(1, 0).asKeyValueRange()) {
            values[QString(loop).remove(QRegularExpression("\\$[0-9]+"))] = v;
        }
        QCOMPARE(values, (QMap<QString, qint64>{{"C.s0.j.jo", 1}, {"C.s0.i.io", 0}})); // column 1, row 0
        QVector<int> a = m.footprintsOf("A"), b = m.footprintsOf("B");
        QCOMPARE(a.size(), 2);
        QCOMPARE(b.size(), 2);
        using Box = TilingModel::Box;
        // Tile (column 0, row 1): A's rows 128..255; the L1 panel holds all of K,
        // L0A the first k chunk, moving along k over ko (2 chunks).
        TilingModel::Footprint panel = m.footprint(a[0], 0, 1);
        QVERIFY(panel.placed);
        QCOMPARE(panel.first, (Box{0, 128, 256, 128}));
        QCOMPARE(panel.span, panel.first);
        QVERIFY(panel.freeLoops.isEmpty());
        TilingModel::Footprint chunk = m.footprint(a[1], 0, 1);
        QVERIFY(chunk.placed);
        QCOMPARE(chunk.first, (Box{0, 128, 128, 128}));
        QCOMPARE(chunk.span, (Box{0, 128, 256, 128}));
        QCOMPARE(chunk.freeLoops, QStringList({"ko x2"}));
        // Tile (column 1, row 0): B's columns 128..255, k chunks down the rows.
        for (int i : b) {
            TilingModel::Footprint f = m.footprint(i, 1, 0);
            QVERIFY(f.placed);
            QCOMPARE(f.first, (Box{128, 0, 128, 128}));
            QCOMPARE(f.span, (Box{128, 0, 128, 256}));
        }
        // The selected tile moves the boxes: column 0 reads B's first columns.
        QCOMPARE(m.footprint(b[0], 0, 1).first, (Box{0, 0, 128, 128}));

        // A split of the rows (softmax: split(out.y, 8), the input staged per 8 rows):
        // the tile is 8 rows of all 256 columns, and tile row 3 reads input rows 24..31.
        tessel::CompileRequest sm;
        sm.generator = "softmax";
        sm.schedule = tessel::load_schedule((sourceDir() + "/samples/softmax/schedules/staged_vector.json").toStdString());
        auto rs = std::make_shared<const tessel::CompileResult>(tessel::compile(sm));
        QVERIFY(rs->ok);
        TilingModel ms;
        ms.setResult(rs, sm.schedule);
        QCOMPARE(ms.outputTile(), qMakePair(qint64(256), qint64(8)));
        QVector<int> in = ms.footprintsOf("in");
        QCOMPARE(in.size(), 1);
        QCOMPARE(ms.footprint(in[0], 0, 3).first, (Box{0, 24, 256, 8}));
    }

    void linesLinkToDirectives() {
        auto tokens = directiveTokens(*m_staged);
        QString asmText = QString::fromStdString(m_staged->asm_text);
        QStringList links = lineDirectives(asmText, tokens, m_staged->program.provenance);
        QStringList lines = asmText.split('\n');
        QCOMPARE(links.size(), lines.size());
        int dma = -1;
        for (int i = 0; i < lines.size(); ++i) {
            if (lines[i].trimmed().startsWith("dma MTE2, L1") && dma < 0) {
                dma = i;
            }
        }
        QVERIFY(dma >= 0);
        QCOMPARE(links[dma], QString("stage_A"));
        QString ir = QString::fromStdString(m_staged->npu_ir_text);
        QStringList irLinks = lineDirectives(ir, tokens, m_staged->program.provenance);
        QStringList irLines = ir.split('\n');
        for (int i = 0; i < irLines.size(); ++i) {
            if (irLines[i].startsWith("buffer A_im_global_wrapper$0_global_wrapper$0:")) {
                QCOMPARE(irLinks[i], QString("stage_A0")); // the longer name wins
            }
        }
        auto loops = loopsByFunc(QString::fromStdString(m_staged->loop_nest));
        QVERIFY(loops.value("acc").contains("ko"));
        QVERIFY(loops.value("C").contains("jo"));
        QVERIFY(!loops.value("acc").contains("rebased"));
    }
};

QTEST_GUILESS_MAIN(TestModels)
#include "test_ide_models.moc"
