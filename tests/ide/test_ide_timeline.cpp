// The pipe timeline (issue 29, items 2 and 3) on a real run, GEMM 256^3 tiled_staged on
// ascend-like: stalls drawn as stalls (and what they wait for), adjacent bars
// distinguishable, the range selection's numbers (core/TimeRange) against the
// SimReport and against a range worked out by hand, Shift+drag / Esc / click / F on the
// widget; flow arrows (set_flag -> the wait it released), the critical path (on the run and on a
// trace built by hand), Ctrl+F search.
#include "ide/core/Session.h"
#include "ide/core/TimeRange.h"
#include "ide/views/MainWindow.h"
#include "ide/views/TextViews.h"
#include "ide/views/TimelineView.h"

#include <QFile>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

using namespace tessel::ide;
using tessel::isa::Op;
using tessel::sim::TraceEvent;

namespace {
tessel::ScheduleSpec tiledStaged() {
    return tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) +
                                 "/samples/gemm/schedules/tiled_staged.json");
}

/** Two DMA events of one pipe, the second the next DMA after the first, at most `gap`
 * cycles later (only flag instructions between them): back to back for gap = 0. */
struct Adjacent {
    int row = -1, first = -1, second = -1;
};
Adjacent adjacentDmas(const TimelineModel &m, uint64_t gap) {
    for (int row = 0; row < m.pipes().size(); ++row) {
        int prev = -1;
        for (int i : m.eventsOf(row)) {
            const TraceEvent &e = m.event(i);
            if (e.op != Op::DMA) {
                continue;
            }
            if (prev >= 0) {
                const TraceEvent &a = m.event(prev);
                if (e.start >= a.end && e.start - a.end <= gap && a.end > a.start &&
                    e.end > e.start) {
                    return {row, prev, i};
                }
            }
            prev = i;
        }
    }
    return {};
}

/** Over the whole run, summarizeRange says what the SimReport counted: per pipe busy and stall
 * cycles (the front end replayed: its issue slots and full-queue waits; END's issue slot lies
 * past the last cycle), per edge the bytes and transfers. */
void checkWholeRun(const tessel::sim::SimReport &r, const FrontEnd &fe, const TraceMachine &m,
                   size_t &pipes, size_t &edges) {
    const RangeSummary all = summarizeRange(r.trace, 0, r.cycles, m, &fe);
    const RangeSummary plain = summarizeRange(r.trace, 0, r.cycles, m); // no replay
    // A scalar ld/st holds the front end for the memory's latency: a stall here, neither busy
    // nor stall to the simulator.
    std::map<int, uint64_t> latency;
    for (const auto &e : r.trace) {
        if (e.pipe == m.scalarPipe && (e.op == Op::LD || e.op == Op::ST)) {
            latency[e.core] += e.end - e.start - m.issueCycles;
        }
    }
    for (const auto &ps : r.pipes) {
        const PipeRangeStats *p = all.pipe(ps.pipe, ps.core);
        if (!p) {
            QCOMPARE(ps.instructions, uint64_t(0)); // a pipe without events
            continue;
        }
        QCOMPARE(p->busy + p->stall + p->idle, r.cycles);
        if (ps.pipe == m.scalarPipe) {
            QCOMPARE(p->busy, ps.busy_cycles - m.issueCycles);
            QCOMPARE(p->stall, ps.stall_cycles + latency[ps.core]);
            // Without the replay the gaps count as issuing: busy + stall still add up.
            const PipeRangeStats *q = plain.pipe(ps.pipe, ps.core);
            QCOMPARE(q->busy + q->stall,
                     ps.busy_cycles + ps.stall_cycles - m.issueCycles + latency[ps.core]);
        } else {
            QCOMPARE(p->busy, ps.busy_cycles);
            QCOMPARE(p->stall, ps.stall_cycles);
            QCOMPARE(plain.pipe(ps.pipe, ps.core)->busy, ps.busy_cycles);
        }
        ++pipes;
    }
    // The SimReport's edges are summed over the cores; the summary's are per core.
    for (const auto &es : r.edges) {
        double bytes = 0;
        uint64_t transfers = 0;
        for (const EdgeRangeStats &e : all.edges) {
            if (e.src == es.src && e.dst == es.dst) {
                QCOMPARE(QString::fromStdString(e.engine), QString::fromStdString(es.engine));
                bytes += e.bytes;
                transfers += e.transfers;
            }
        }
        if (es.descriptors > 0) {
            ++edges;
        }
        QCOMPARE(bytes, double(es.bytes));
        QCOMPARE(transfers, es.descriptors);
    }
    for (const EdgeRangeStats &e : all.edges) {
        QVERIFY(e.transfers > 0);
    }
}

void compareSummaries(const RangeSummary &got, const RangeSummary &want) {
    QCOMPARE(got.t0, want.t0);
    QCOMPARE(got.t1, want.t1);
    QCOMPARE(got.pipes.size(), want.pipes.size());
    for (size_t i = 0; i < want.pipes.size(); ++i) {
        QCOMPARE(QString::fromStdString(got.pipes[i].pipe),
                 QString::fromStdString(want.pipes[i].pipe));
        QCOMPARE(got.pipes[i].busy, want.pipes[i].busy);
        QCOMPARE(got.pipes[i].stall, want.pipes[i].stall);
        QCOMPARE(got.pipes[i].idle, want.pipes[i].idle);
    }
    QCOMPARE(got.edges.size(), want.edges.size());
    for (size_t i = 0; i < want.edges.size(); ++i) {
        QCOMPARE(got.edges[i].bytes, want.edges[i].bytes);
        QCOMPARE(got.edges[i].transfers, want.edges[i].transfers);
    }
}

/** A trace built by hand (one core, no front-end replay): MTE2 loads A [0, 100) and sets
 * MTE2 -> M; M waits, runs mmad (80 cycles) and sets M -> FIX; FIX waits and writes C (50
 * cycles); MTE2's second load B [101, 151) is off the path; END drains. With `latency` the flag
 * MTE2 -> M fires `latency` cycles after A ends (the data becomes visible late). */
struct HandTrace {
    tessel::sim::SimReport report;
    tessel::isa::Program program;
};
HandTrace handTrace(uint64_t latency) {
    using tessel::isa::Pipe;
    HandTrace h;
    auto instr = [&](Op op, Pipe src = Pipe::S, Pipe dst = Pipe::S) {
        tessel::isa::Instr in;
        in.op = op;
        in.src_pipe = uint8_t(src);
        in.dst_pipe = uint8_t(dst);
        h.program.code.push_back(in);
        return uint32_t(h.program.code.size() - 1);
    };
    auto ev = [&](const char *pipe, Op op, uint32_t pc, uint64_t s, uint64_t e) {
        TraceEvent t;
        t.pipe = tessel::sim::Name(pipe);
        t.op = op;
        t.pc = pc;
        t.start = s;
        t.end = e;
        if (op == Op::DMA) {
            t.src = tessel::sim::Name("GM");
            t.dst = tessel::sim::Name("L1");
            t.bytes = 1024;
        }
        h.report.trace.push_back(t);
    };
    const uint64_t r = 100 + latency; // when M may start
    ev("MTE2", Op::DMA, instr(Op::DMA), 0, 100);
    ev("MTE2", Op::SET_FLAG, instr(Op::SET_FLAG, Pipe::MTE2, Pipe::M), 100, 101);
    ev("M", Op::WAIT_FLAG, instr(Op::WAIT_FLAG, Pipe::MTE2, Pipe::M), 0, r);
    ev("MTE2", Op::DMA, instr(Op::DMA), 101, 151);
    ev("M", Op::MMAD, instr(Op::MMAD), r, r + 80);
    ev("M", Op::SET_FLAG, instr(Op::SET_FLAG, Pipe::M, Pipe::FIX), r + 80, r + 81);
    ev("FIX", Op::WAIT_FLAG, instr(Op::WAIT_FLAG, Pipe::M, Pipe::FIX), 0, r + 80);
    ev("FIX", Op::DMA, instr(Op::DMA), r + 80, r + 130);
    ev("S", Op::END, instr(Op::END), 0, r + 130);
    h.report.cycles = r + 130;
    return h;
}

/** The steps as "Kind event via [start, end)" lines, to compare with a path worked out by hand. */
QString pathWords(const CriticalPath &cp) {
    static const char *const kinds[] = {"Busy", "Issue", "Released", "Latency", "Unexplained"};
    QStringList out;
    for (const PathStep &s : cp.steps) {
        out << QString("%1 %2 %3 [%4, %5)")
                   .arg(kinds[int(s.kind)])
                   .arg(s.event)
                   .arg(s.via.empty() ? QString("-") : QString::fromStdString(s.via))
                   .arg(s.start)
                   .arg(s.end);
    }
    return out.join('\n');
}

/** Each step starts where the one before it ends; the per-pipe cycles add up to the length. */
void checkContiguous(const CriticalPath &cp) {
    QVERIFY(!cp.steps.empty());
    for (size_t k = 1; k < cp.steps.size(); ++k) {
        QVERIFY2(cp.steps[k].start == cp.steps[k - 1].end,
                 qPrintable(QString("step %1 starts at %2, the one before ends at %3")
                                .arg(k)
                                .arg(cp.steps[k].start)
                                .arg(cp.steps[k - 1].end)));
        QVERIFY(cp.steps[k].end >= cp.steps[k].start);
    }
    uint64_t sum = 0;
    for (const auto &kv : cp.cycles) {
        sum += kv.second;
    }
    QCOMPARE(sum, cp.length());
}
} // namespace

class TestTimeline : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<Session> m_s;
    TraceMachine m_machine;
    FrontEnd m_fe;

    const tessel::sim::SimReport &sim() const { return *m_s->lastRun()->sim; }
    const TimelineModel &model() const { return *m_s->timeline(); }

    /** The x of cycle `t` in `tv` at its current zoom. */
    static double xOf(const TimelineView &tv, double t) { return tv.timeAxis().mapTimeToX(t); }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_s = std::make_unique<Session>();
        m_s->setAutosavePath(m_dir.filePath("autosave.json"));
        m_s->setDatabasePath(m_dir.filePath("tessel.db"));
        m_s->service()->setDebounceMs(10);
        QString error;
        QVERIFY2(m_s->open("gemm", {{"M", "256"}, {"N", "256"}, {"K", "256"}}, "ascend-like",
                           tiledStaged(), &error),
                 qPrintable(error));
        QElapsedTimer t;
        t.start();
        while ((m_s->service()->isBusy() || !m_s->lastRun()) && t.elapsed() < 60000) {
            QTest::qWait(20);
        }
        QVERIFY(m_s->lastRun() && m_s->lastRun()->sim);
        QVERIFY(m_s->lastRun()->verified);
        QVERIFY(!sim().trace_truncated);
        QVERIFY(sim().trace.size() > 100);
        m_machine = TraceMachine::of(m_s->arch());
        QCOMPARE(QString::fromStdString(m_machine.scalarPipe), QString("S"));
        // The front end's replay needs the program that ran: the session's last compile.
        auto compile = m_s->lastCompile();
        QVERIFY(compile && compile->has_program);
        QCOMPARE(compile->schedule_hash, m_s->lastRun()->schedule_hash);
        m_fe = FrontEnd(sim(), compile->program, m_machine);
        QVERIFY2(m_fe.ok(), m_fe.failure().c_str());
        QVERIFY(m_fe.complete());
    }

    void wholeRunMatchesTheSimReport() {
        const auto &r = sim();
        size_t pipes = 0, edges = 0;
        checkWholeRun(r, m_fe, m_machine, pipes, edges);
        QVERIFY(!QTest::currentTestFailed());
        QVERIFY(pipes >= 5 && edges >= 4);
        QCOMPARE(pipes, size_t(model().pipes().size()));
        // The front end is not "100 % busy": it issues in bursts and waits for full queues.
        const RangeSummary all = summarizeRange(r.trace, 0, r.cycles, m_machine, &m_fe);
        QVERIFY2(all.pipe("S")->busy < r.cycles / 10,
                 qPrintable(QString::number(all.pipe("S")->busy)));
    }

    void otherKernelsAndMachines_data() {
        QTest::addColumn<QString>("generator");
        QTest::addColumn<QString>("arch");
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<QString>("params");
        QTest::addColumn<int>("cores"); // > 1: parallel(C, io, cores) added
        QTest::addColumn<int>(
            "registers"); // > 0: the arch with this many scalar registers (spills)
        static const char *const rows[][5] = {
            {"gemm gemmini int8", "gemm", "gemmini-like", "gemm/schedules/gemmini_int8.json",
             "M=128,N=128,K=128,dtype=int8"},
            {"softmax vector", "softmax", "ascend-like", "softmax/schedules/staged_vector.json",
             "ROWS=256,COLS=256,dtype=fp16"},
            {"conv2d gemmini int8", "conv2d", "gemmini-like", "conv2d/schedules/gemmini_int8.json",
             "H=16,W=16,CI=32,CO=32,dtype=int8"},
            {"conv2d auto-int8", "conv2d", "auto-int8", "conv2d/schedules/auto_int8.json",
             "H=16,W=16,CI=32,CO=32,dtype=int8"},
        };
        for (const auto &r : rows) {
            QTest::newRow(r[0]) << QString(r[1]) << QString(r[2]) << QString(r[3]) << QString(r[4])
                                << 1 << 0;
        }
        QTest::newRow("gemm on 4 cores") << "gemm"
                                         << "ascend-like"
                                         << "gemm/schedules/tiled_staged.json"
                                         << "M=256,N=256,K=256" << 4 << 0;
        QTest::newRow("gemm, 12 registers (spills)") << "gemm"
                                                     << "ascend-like"
                                                     << "gemm/schedules/tiled_staged.json"
                                                     << "M=128,N=128,K=128" << 1 << 12;
        QTest::newRow("gemm as scalar code") << "gemm"
                                             << "ascend-like"
                                             << ""
                                             << "M=8,N=8,K=8" << 1 << 0;
    }

    void otherKernelsAndMachines() {
        // The replay and the whole-run numbers hold beyond GEMM on ascend-like (gemmini-like issues
        // in 4 cycles and has one DMA engine).
        QFETCH(QString, generator);
        QFETCH(QString, arch);
        QFETCH(QString, schedule);
        QFETCH(QString, params);
        QFETCH(int, cores);
        QFETCH(int, registers);
        tessel::CompileRequest req;
        req.generator = generator.toStdString();
        for (const QString &kv : params.split(',')) {
            req.params[kv.section('=', 0, 0).toStdString()] = kv.section('=', 1).toStdString();
        }
        if (!schedule.isEmpty()) { // else no schedule at all: scalar code
            req.schedule = tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) + "/samples/" +
                                                 schedule.toStdString());
        }
        req.arch = arch.toStdString();
        if (cores > 1) {
            tessel::Directive d;
            d.id = "par";
            d.kind = tessel::DirectiveKind::Parallel;
            d.func = "C";
            d.vars = {"io"};
            d.cores = cores;
            req.schedule.directives.push_back(d);
        }
        if (registers > 0) {
            tessel::ArchSpec a = tessel::load_arch(req.arch);
            a.scalar.registers = registers;
            a.name = req.arch + "-" + std::to_string(registers) + "regs";
            QFile f(m_dir.filePath(QString::fromStdString(a.name) + ".json"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(a.to_json()));
            f.close();
            req.arch = f.fileName().toStdString();
        }
        const tessel::CompileResult c = tessel::compile(req);
        QVERIFY(c.ok && c.has_program);
        const tessel::RunReport run = tessel::run(req, 1, true);
        QVERIFY(run.verified && run.sim);
        QCOMPARE(run.schedule_hash, c.schedule_hash);
        const TraceMachine m = TraceMachine::of(tessel::load_arch(req.arch));
        const FrontEnd fe(*run.sim, c.program, m);
        QVERIFY2(fe.ok(), fe.failure().c_str());
        QVERIFY(fe.complete());
        size_t pipes = 0, edges = 0;
        checkWholeRun(*run.sim, fe, m, pipes, edges);
        QVERIFY(!QTest::currentTestFailed());
        QVERIFY(schedule.isEmpty() ? pipes >= 1 : pipes >= 3 && edges >= 2);
        // The critical path: contiguous from cycle 0 to the last event's end.
        const CriticalPath cp = criticalPath(*run.sim, WaitLinks(*run.sim, &c.program), &fe, m);
        checkContiguous(cp);
        QVERIFY(!QTest::currentTestFailed());
        uint64_t last = 0;
        for (const auto &e : run.sim->trace) {
            last = std::max(last, e.end);
        }
        QCOMPARE(cp.end(), last);
        QVERIFY2(cp.start() <= 2, qPrintable(QString::fromStdString(cp.describe())));
        // On these runs every start is matched by a constraint (auto-int8's DMAs wait for
        // outstanding slots: matched by the latency of the transfer that freed one).
        QVERIFY2(cp.unexplained == 0, qPrintable(QString::fromStdString(cp.describe())));
        if (qEnvironmentVariableIsSet("TESSEL_TIMELINE_SAY")) {
            qInfo("%s", cp.describe().c_str());
        }
        if (cores > 1) {
            QCOMPARE(run.sim->cores, cores);
            QCOMPARE(pipes, size_t(cores) * (pipes / size_t(cores))); // every core's pipes
        }
        if (schedule.isEmpty()) {
            // Scalar code: ld/st on S, the memory's latency a stall that says so.
            const auto &t = run.sim->trace;
            auto ld = std::find_if(t.begin(), t.end(), [&](const TraceEvent &e) {
                return (e.op == Op::LD || e.op == Op::ST) && e.end > e.start + m.issueCycles;
            });
            QVERIFY(ld != t.end());
            const EventParts parts = splitEvent(*ld, 0, m);
            QCOMPARE(parts.busy.length(), m.issueCycles);
            QCOMPARE(parts.stall.end, ld->end);
            const WaitLinks links(*run.sim, &c.program);
            const std::string why = links.describe(*run.sim, size_t(ld - t.begin()));
            QVERIFY2(why.find("latency") != std::string::npos, why.c_str());
        }
    }

    void aRangeWorkedOutByHand() {
        const Adjacent adj = adjacentDmas(model(), 0);
        QVERIFY(adj.row >= 0);
        const TraceEvent &a = model().event(adj.first), &b = model().event(adj.second);
        QCOMPARE(a.end, b.start);
        // From the middle of A to the end of B: half of A and all of B, on that pipe nothing else.
        const uint64_t la = a.end - a.start, d = la / 2;
        const RangeSummary s = summarizeRange(sim().trace, a.start + d, b.end, m_machine);
        const PipeRangeStats *p = s.pipe(a.pipe.str());
        QVERIFY(p);
        QCOMPARE(p->busy, (la - d) + (b.end - b.start));
        QCOMPARE(p->stall, uint64_t(0));
        QCOMPARE(p->idle, uint64_t(0));
        const EdgeRangeStats *e = s.edge(a.src.str(), a.dst.str());
        QVERIFY(e);
        double want = double(a.bytes) * double(la - d) / double(la);
        if (b.src == a.src && b.dst == a.dst) {
            want += double(b.bytes);
            QCOMPARE(e->transfers, uint64_t(2));
        }
        QVERIFY2(std::abs(e->bytes - want) < 1e-6,
                 qPrintable(QString("%1 vs %2").arg(e->bytes).arg(want)));
        // A flag wait of a pipe other than S: all stall, nothing busy.
        for (int row = 0; row < model().pipes().size(); ++row) {
            if (model().pipes()[row] == "S") {
                continue;
            }
            for (int i : model().eventsOf(row)) {
                const TraceEvent &w = model().event(i);
                if (w.op == Op::WAIT_FLAG && w.end > w.start + 1) {
                    const RangeSummary ws = summarizeRange(sim().trace, w.start, w.end, m_machine);
                    const PipeRangeStats *wp = ws.pipe(w.pipe.str());
                    QCOMPARE(wp->stall, w.end - w.start);
                    QCOMPARE(wp->busy, uint64_t(0));
                    QCOMPARE(wp->idle, uint64_t(0));
                    return;
                }
            }
        }
        QFAIL("no flag wait longer than a cycle outside S");
    }

    void frontEndWaitsForAFullQueue() {
        // The front end issues ahead until a pipe's queue is full, then waits for room: a replayed
        // stall span on S, made room for by the event D places ahead on that pipe.
        const auto &spans = m_fe.spansOf(0);
        const FrontEnd::Span *wait = nullptr;
        uint64_t issued = 0;
        for (const auto &f : spans) {
            issued += f.issued;
            if (f.stall && !wait && f.end - f.start > 10) {
                wait = &f;
            }
        }
        QVERIFY(wait);
        QVERIFY(wait->blockedBy >= 0);
        const TraceEvent &cause = sim().trace[size_t(wait->blockedBy)];
        QCOMPARE(cause.op == Op::WAIT_FLAG ? cause.end : cause.start, wait->end);
        // Every instruction of the other pipes was issued once.
        uint64_t others = 0;
        for (const auto &e : sim().trace) {
            others += e.pipe != m_machine.scalarPipe;
        }
        QCOMPARE(issued, others);
        const RangeSummary ws =
            summarizeRange(sim().trace, wait->start, wait->end, m_machine, &m_fe);
        QCOMPARE(ws.pipe("S")->stall, wait->end - wait->start);
        QCOMPARE(ws.pipe("S")->busy, uint64_t(0));
        // Drawn and explained.
        TimelineView tv(m_s.get());
        tv.resize(1000, 320);
        m_s->viewState()->zoomTo(double(wait->start), double(wait->end));
        const int row = int(model().pipes().indexOf("S"));
        const QString text = tv.hoverText(
            QPointF(xOf(tv, (wait->start + wait->end) / 2.0), tv.laneOf(row).center().y()));
        if (qEnvironmentVariableIsSet("TESSEL_TIMELINE_SAY")) {
            qInfo("%s", qPrintable(text));
        }
        QVERIFY2(
            text.contains(
                QString("waits for room in the %1 queue").arg(QString::fromStdString(cause.pipe))),
            qPrintable(text));
        m_s->viewState()->resetZoom();
    }

    void arrowsJoinSetFlagToTheWaitItReleased() {
        TimelineView tv(m_s.get());
        tv.resize(1200, 320);
        m_s->viewState()->resetZoom();
        const WaitLinks links(sim(), &m_s->lastCompile()->program);
        // A pipe's wait (not S) that a set_flag released, and a barrier that drained a pipe.
        int wait = -1, barrier = -1;
        for (const auto &[w, l] : links.all()) {
            const TraceEvent &e = sim().trace[w];
            if (e.op == Op::WAIT_FLAG && e.pipe != "S" && l.setEvent >= 0 &&
                (wait < 0 || int(w) < wait)) {
                wait = int(w);
            }
            if (e.op == Op::BARRIER && l.lastEvent >= 0 && (barrier < 0 || int(w) < barrier)) {
                barrier = int(w);
            }
        }
        QVERIFY(wait >= 0);
        QVERIFY(tv.arrows().isEmpty()); // nothing hovered or clicked
        tv.setFocusEvent(wait);
        const QVector<FlowArrow> a = tv.arrows();
        QCOMPARE(a.size(), 1);
        const TraceEvent &w = sim().trace[size_t(wait)];
        const TraceEvent &set = sim().trace[size_t(links.of(size_t(wait))->setEvent)];
        QCOMPARE(a[0].from, int(links.of(size_t(wait))->setEvent));
        QCOMPARE(a[0].to, wait);
        QVERIFY(!a[0].barrier);
        QCOMPARE(a[0].p0.x(), xOf(tv, double(set.end)));
        QCOMPARE(a[0].p1.x(), xOf(tv, double(w.end)));
        const int setRow = int(model().pipes().indexOf(QString::fromStdString(set.pipe)));
        const int waitRow = int(model().pipes().indexOf(QString::fromStdString(w.pipe)));
        QVERIFY(setRow != waitRow);
        QCOMPARE(a[0].p0.y(), tv.laneOf(setRow).center().y());
        QCOMPARE(a[0].p1.y(), tv.laneOf(waitRow).center().y());
        // The set_flag clicked: the same arrow (and any other wait it released).
        tv.setFocusEvent(a[0].from);
        bool found = false;
        for (const FlowArrow &f : tv.arrows()) {
            found |= f.to == wait && f.from == a[0].from;
            if (f.from == a[0].from) {
                QCOMPARE(f.p0.x(), xOf(tv, double(set.end)));
            }
        }
        QVERIFY(found);
        if (barrier >= 0) {
            // A barrier: from the last drained event's end to the end of its wait on S.
            tv.setFocusEvent(barrier);
            const QVector<FlowArrow> b = tv.arrows();
            QVERIFY(!b.isEmpty());
            const TraceEvent &be = sim().trace[size_t(barrier)];
            const TraceEvent &last = sim().trace[size_t(links.of(size_t(barrier))->lastEvent)];
            QVERIFY(b[0].barrier);
            QCOMPARE(b[0].p0.x(), xOf(tv, double(last.end)));
            QCOMPARE(b[0].p1.x(), xOf(tv, double(be.end - m_machine.issueCycles)));
            QCOMPARE(b[0].p1.y(), tv.laneOf(int(model().pipes().indexOf("S"))).center().y());
        }
        // Hovering the wait (zoomed onto it) draws its arrow too.
        tv.setFocusEvent(-1);
        tv.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tv));
        m_s->viewState()->zoomTo(double(w.start), double(w.end));
        QTest::mouseMove(&tv, QPoint(int(xOf(tv, (w.start + w.end) / 2.0)),
                                     int(tv.laneOf(waitRow).center().y())));
        QTRY_VERIFY(!tv.arrows().isEmpty());
        QCOMPARE(tv.arrows()[0].to, wait);
        QTest::mouseMove(&tv, QPoint(2, 2)); // off the lanes: nothing hovered
        QTRY_VERIFY(tv.arrows().isEmpty());
        m_s->viewState()->resetZoom();
        // A: every link (the whole run in view), drawn.
        tv.setFocus();
        QTest::keyClick(&tv, Qt::Key_A);
        QVERIFY(tv.showAllArrows());
        size_t linked = 0;
        for (const auto &[w2, l] : links.all()) {
            linked += l.setEvent >= 0 || (sim().trace[w2].op != Op::WAIT_FLAG && l.lastEvent >= 0);
        }
        QCOMPARE(size_t(tv.arrows().size()), linked);
        QVERIFY(!tv.grab().isNull());
        QTest::keyClick(&tv, Qt::Key_A);
        QVERIFY(!tv.showAllArrows());
    }

    void criticalPathOfTheRun() {
        const WaitLinks links(sim(), &m_s->lastCompile()->program);
        const CriticalPath cp = criticalPath(sim(), links, &m_fe, m_machine);
        checkContiguous(cp);
        QVERIFY(!QTest::currentTestFailed());
        uint64_t last = 0;
        for (const auto &e : sim().trace) {
            last = std::max(last, e.end);
        }
        QCOMPARE(cp.end(), last);
        QVERIFY2(cp.start() <= 2, qPrintable(QString::number(cp.start())));
        if (qEnvironmentVariableIsSet("TESSEL_TIMELINE_SAY")) {
            qInfo("%s (%zu steps)", cp.describe().c_str(), cp.steps.size());
        }
        // Each matched constraint holds in the trace.
        const auto &t = sim().trace;
        std::map<std::string, int> vias;
        for (size_t k = 1; k < cp.steps.size(); ++k) {
            const PathStep &s = cp.steps[k];
            vias[s.via]++;
            if (s.via == "flag" && s.kind == PathStep::Kind::Released &&
                t[size_t(s.event)].op == Op::WAIT_FLAG) {
                const WaitLinks::Link *l = links.of(size_t(s.event));
                QVERIFY(l && l->setEvent >= 0);
            }
            if (s.via == "front end" && s.event >= 0 && s.kind == PathStep::Kind::Busy &&
                s.pipe != "S") {
                QCOMPARE(m_fe.queuedAt(size_t(s.event)), s.start);
            }
            if (s.kind == PathStep::Kind::Busy && s.event >= 0) {
                QVERIFY(s.start >= t[size_t(s.event)].start && s.end <= t[size_t(s.event)].end);
            }
            if (s.via == "pipe" && s.event >= 0 && s.pipe != "S" &&
                (s.kind == PathStep::Kind::Busy || s.kind == PathStep::Kind::Released)) {
                // The previous event of its pipe ends where it starts.
                const TraceEvent &e = t[size_t(s.event)];
                int64_t prev = -1;
                for (int64_t j = s.event - 1; j >= 0 && prev < 0; --j) {
                    if (t[size_t(j)].pipe == e.pipe && t[size_t(j)].core == e.core) {
                        prev = j;
                    }
                }
                QVERIFY(prev >= 0);
                QCOMPARE(t[size_t(prev)].end, e.start);
                QCOMPARE(cp.steps[k - 1].end, e.start);
            }
            QVERIFY(s.kind != PathStep::Kind::Unexplained || s.end > s.start);
        }
        QVERIFY(vias["pipe"] > 0);
        QVERIFY(vias["flag"] + vias["barrier"] > 0); // it crosses pipes
        // GEMM tiled_staged is bound by its GM -> L1 loads: MTE2 has the largest share.
        const auto top =
            std::max_element(cp.cycles.begin(), cp.cycles.end(),
                             [](const auto &a, const auto &b) { return a.second < b.second; });
        QCOMPARE(QString::fromStdString(top->first), QString("MTE2"));
        // The view: C draws it and names the shares; a range's box says its part.
        TimelineView tv(m_s.get());
        tv.resize(1200, 320);
        tv.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tv));
        tv.setFocus();
        QVERIFY(!tv.showCriticalPath());
        const QImage before = tv.grab().toImage();
        QTest::keyClick(&tv, Qt::Key_C);
        QVERIFY(tv.showCriticalPath());
        QCOMPARE(tv.criticalPath().length(), cp.length());
        QVERIFY2(tv.criticalPathText().contains("MTE2 "), qPrintable(tv.criticalPathText()));
        QVERIFY(tv.grab().toImage() != before);
        if (qEnvironmentVariableIsSet("TESSEL_TIMELINE_PATH_PNG")) { // to look at it
            m_s->viewState()->zoomTo(0, double(sim().cycles) / 6);
            tv.setShowAllArrows(true);
            tv.setSelection(qint64(sim().cycles) / 30, qint64(sim().cycles) / 12);
            tv.grab().save(qEnvironmentVariable("TESSEL_TIMELINE_PATH_PNG"));
            tv.setShowAllArrows(false);
            m_s->viewState()->resetZoom();
        }
        tv.setSelection(0, qint64(sim().cycles));
        QVERIFY2(tv.selectionText().contains(
                     QString("critical path in range: %1 cycles").arg(cp.length())),
                 qPrintable(tv.selectionText()));
        tv.clearSelection();
        QTest::keyClick(&tv, Qt::Key_C);
        QVERIFY(!tv.showCriticalPath());
    }

    void criticalPathOfAHandBuiltTrace() {
        for (uint64_t latency : {uint64_t(0), uint64_t(10)}) {
            const HandTrace h = handTrace(latency);
            const WaitLinks links(h.report, &h.program);
            const CriticalPath cp = criticalPath(h.report, links, nullptr, m_machine);
            checkContiguous(cp);
            QVERIFY(!QTest::currentTestFailed());
            // A (MTE2, 0 - 100), [latency], mmad (M), C (FIX): B is off the path.
            QCOMPARE(cp.start(), uint64_t(0));
            QCOMPARE(cp.end(), 230 + latency);
            QCOMPARE(cp.cycles.at("MTE2"), 100 + latency);
            QCOMPARE(cp.cycles.at("M"), uint64_t(80));
            QCOMPARE(cp.cycles.at("FIX"), uint64_t(50));
            QCOMPARE(cp.latency, latency);
            QCOMPARE(cp.unexplained, uint64_t(0));
            // Events: 0 A, 1 set MTE2 -> M, 2 M's wait, 3 B, 4 mmad, 5 set M -> FIX, 6 FIX's wait,
            // 7 C, 8 END. mmad starts when its wait was released by the flag MTE2 -> M (fired as
            // the set_flag ran, or `latency` after A), C when FIX's was; END when C drained.
            const QString want = latency == 0 ? "Busy 0 - [0, 100)\n"
                                                "Released 1 pipe [100, 100)\n"
                                                "Released 2 flag [100, 100)\n"
                                                "Busy 4 pipe [100, 180)\n"
                                                "Released 5 pipe [180, 180)\n"
                                                "Released 6 flag [180, 180)\n"
                                                "Busy 7 pipe [180, 230)\n"
                                                "Released 8 barrier [230, 230)"
                                              : "Busy 0 - [0, 100)\n"
                                                "Latency 0 latency [100, 110)\n"
                                                "Released 2 flag [110, 110)\n"
                                                "Busy 4 pipe [110, 190)\n"
                                                "Released 5 pipe [190, 190)\n"
                                                "Released 6 flag [190, 190)\n"
                                                "Busy 7 pipe [190, 240)\n"
                                                "Released 8 barrier [240, 240)";
            QCOMPARE(pathWords(cp), want);
        }
        // A start nothing explains (the second load 5 cycles after the set_flag, no replay):
        // an Unexplained step, then the pipe predecessor.
        HandTrace h = handTrace(0);
        h.report.trace[3].start = 106; // B
        h.report.trace[3].end = 400;
        h.report.trace[3].stall = tessel::sim::Name("dma_outstanding");
        TraceMachine noLatency = m_machine;
        for (auto &kv : noLatency.engineLatency) {
            kv.second = 0;
        }
        noLatency.l2Latency = 0;
        const CriticalPath cp =
            criticalPath(h.report, WaitLinks(h.report, &h.program), nullptr, noLatency);
        checkContiguous(cp);
        QCOMPARE(cp.end(), uint64_t(400));
        QCOMPARE(cp.start(), uint64_t(0));
        QCOMPARE(cp.unexplained, uint64_t(5));
        QCOMPARE(cp.cycles.at("MTE2"), uint64_t(400));
        QCOMPARE(pathWords(cp), QString("Busy 0 - [0, 100)\n"
                                        "Busy 1 pipe [100, 101)\n"
                                        "Unexplained 3 pipe [101, 106)\n"
                                        "Busy 3 unexplained [106, 400)"));
        // With a 6-cycle latency on the GM -> L1 engine, A's slot freed at 106: B waited for it.
        TraceMachine six = noLatency;
        const std::string engine = six.engineOf("MTE2", "GM", "L1");
        QVERIFY(!engine.empty());
        six.engineLatency[engine] = 6;
        const CriticalPath slot =
            criticalPath(h.report, WaitLinks(h.report, &h.program), nullptr, six);
        checkContiguous(slot);
        QCOMPARE(pathWords(slot), QString("Busy 0 - [0, 100)\n"
                                          "Latency 0 latency [100, 106)\n"
                                          "Busy 3 dma slot [106, 400)"));
        QCOMPARE(slot.unexplained, uint64_t(0));
        QCOMPARE(slot.latency, uint64_t(6));
    }

    void searchWalksTheMmads() {
        MainWindow w(m_s.get());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        TimelineView *tv = w.findChild<TimelineView *>();
        QVERIFY(tv);
        m_s->viewState()->resetZoom();
        tv->setFocus();
        QVERIFY(!tv->searchField()->isVisible());
        QTest::keyClick(tv, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(tv->searchField()->isVisible());
        QVERIFY(tv->searchField()->hasFocus());
        // The code view's own find bar stays closed (its Ctrl+F is scoped to it).
        if (auto *code = w.findChild<QLineEdit *>("codeFind")) {
            QVERIFY(!code->isVisible());
        }
        QTest::keyClicks(tv->searchField(), "mmad");
        std::vector<int> mmads;
        for (int i = 0; i < int(sim().trace.size()); ++i) {
            if (sim().trace[size_t(i)].op == Op::MMAD) {
                mmads.push_back(i);
            }
        }
        QVERIFY(mmads.size() >= 2);
        std::stable_sort(mmads.begin(), mmads.end(),
                         [&](int a, int b) { return sim().trace[a].start < sim().trace[b].start; });
        QCOMPARE(std::vector<int>(tv->searchMatches().begin(), tv->searchMatches().end()), mmads);
        QCOMPARE(tv->currentMatch(), -1);
        auto centred = [&](int i) {
            const TraceEvent &e = sim().trace[size_t(i)];
            const auto &z = m_s->viewState()->zoom();
            return std::abs((z.start + z.end) / 2 - (e.start + e.end) / 2.0) < 1.0 &&
                   z.end - z.start < double(sim().cycles) / 4;
        };
        QTest::keyClick(tv->searchField(), Qt::Key_Return);
        QCOMPARE(tv->currentMatch(), mmads[0]);
        QVERIFY(centred(mmads[0]));
        QTest::keyClick(tv->searchField(), Qt::Key_Return);
        QCOMPARE(tv->currentMatch(), mmads[1]);
        QVERIFY(centred(mmads[1]));
        QCOMPARE(tv->focusEvent(), mmads[1]);
        QTest::keyClick(tv->searchField(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(tv->currentMatch(), mmads[0]);
        QTest::keyClick(tv->searchField(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(tv->currentMatch(), mmads.back()); // wraps
        // Something that matches nothing; then Esc closes it (not the window's Cancel).
        tv->searchField()->setText("no-such-op");
        QVERIFY(tv->searchMatches().isEmpty());
        QTest::keyClick(tv->searchField(), Qt::Key_Escape);
        QVERIFY(!tv->searchField()->isVisible());
        QVERIFY(tv->searchMatches().isEmpty());
        // With the focus in the code view, Ctrl+F is the code view's.
        auto *code = w.findChild<QLineEdit *>("codeFind");
        QVERIFY(code);
        CodeView *text = nullptr;
        for (CodeView *v : w.findChildren<CodeView *>()) {
            text = text ? text : v->isVisible() ? v : nullptr;
        }
        QVERIFY(text);
        {
            text->setFocus();
            QTest::keyClick(text, Qt::Key_F, Qt::ControlModifier);
            QVERIFY(code->isVisible());
            QVERIFY(!tv->searchField()->isVisible());
        }
        m_s->viewState()->resetZoom();
    }

    void escInTheMainWindowClearsTheRange() {
        // The window's Esc (Cancel run) does not take the key from a timeline with a range.
        MainWindow w(m_s.get());
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        TimelineView *tv = w.findChild<TimelineView *>();
        QVERIFY(tv);
        tv->setFocus();
        tv->setSelection(100, 2000);
        QVERIFY(tv->hasSelection());
        QTest::keyClick(tv, Qt::Key_Escape);
        QVERIFY(!tv->hasSelection());
        m_s->viewState()->zoomTo(100, 2000);
        QTest::keyClick(tv, Qt::Key_F);
        QCOMPARE(m_s->viewState()->zoom().end - m_s->viewState()->zoom().start,
                 double(sim().cycles));
    }

    void aTraceThatStopsIsReplayedUpToWhereItStops() {
        // The trace cap keeps the first events recorded: a prefix. The front end is replayed up to
        // its last recorded event, and there it agrees with the whole trace.
        tessel::sim::SimReport cut = sim();
        cut.trace.resize(cut.trace.size() / 2);
        const FrontEnd half(cut, m_s->lastCompile()->program, m_machine);
        QVERIFY2(half.ok(), half.failure().c_str());
        const uint64_t until = half.until(0);
        QVERIFY2(until > sim().cycles / 4 && until < sim().cycles,
                 qPrintable(QString::number(until)));
        QVERIFY(m_fe.until(0) >= sim().cycles - 1);
        const RangeSummary a = summarizeRange(cut.trace, 0, until, m_machine, &half);
        const RangeSummary b = summarizeRange(sim().trace, 0, until, m_machine, &m_fe);
        QCOMPARE(a.pipe("S")->busy, b.pipe("S")->busy);
        QCOMPARE(a.pipe("S")->stall, b.pipe("S")->stall);
        QVERIFY(a.pipe("S")->stall > until / 2);
    }

    void adjacentBarsAreDistinct() {
        TimelineView tv(m_s.get());
        tv.resize(1000, 320);
        // Back to back (MTE1: L1 -> L0A then L1 -> L0B), seen close up; and two GM -> L1 chunks one
        // set_flag apart, seen with the whole run in view (where they used to merge into one
        // block).
        const Adjacent exact = adjacentDmas(model(), 0), near = adjacentDmas(model(), 2);
        QVERIFY(exact.row >= 0 && near.row >= 0);
        for (const Adjacent &adj : {exact, near}) {
            const TraceEvent &a = model().event(adj.first), &b = model().event(adj.second);
            if (adj.first == exact.first) {
                m_s->viewState()->zoomTo(double(a.start) - 2.0 * (a.end - a.start),
                                         double(b.end) + 2.0 * (b.end - b.start));
            } else {
                m_s->viewState()->resetZoom();
            }
            const TimelineBar *ra = nullptr, *rb = nullptr;
            const QVector<TimelineBar> bars = tv.bars(adj.row);
            for (const TimelineBar &bar : bars) {
                if (!bar.stall && bar.event == adj.first) {
                    ra = &bar;
                }
                if (!bar.stall && bar.event == adj.second) {
                    rb = &bar;
                }
            }
            QVERIFY(ra && rb);
            QVERIFY2(ra->rect.width() >= 3, qPrintable(QString::number(ra->rect.width())));
            // A 1 px gap between them, and, for one colour, different shades.
            QVERIFY2(ra->rect.x() + ra->rect.width() < rb->rect.x(),
                     qPrintable(QString("%1 + %2 vs %3")
                                    .arg(ra->rect.x())
                                    .arg(ra->rect.width())
                                    .arg(rb->rect.x())));
            if (a.src == b.src && a.dst == b.dst) {
                QVERIFY(ra->alternate != rb->alternate);
            }
            // And so on the screen: the pixel after the first bar is not either bar's colour.
            const QImage img = tv.grab().toImage();
            const int y = int(ra->rect.center().y());
            const QRgb inA = img.pixel(int(ra->rect.center().x()), y),
                       inB = img.pixel(int(rb->rect.center().x()), y);
            const QRgb gap = img.pixel(int(ra->rect.x() + ra->rect.width()), y);
            QVERIFY(inA != inB);
            QVERIFY(gap != inA && gap != inB);
        }
        m_s->viewState()->resetZoom();
    }

    void stallsAreDrawnAsStalls() {
        TimelineView tv(m_s.get());
        tv.resize(1200, 320);
        m_s->viewState()->resetZoom();
        // A pipe other than S that waits for a flag: a hatched stall span, and its tooltip says for
        // what.
        bool flagWait = false, barrier = false;
        for (int row = 0; row < model().pipes().size() && !(flagWait && barrier); ++row) {
            for (const TimelineBar &bar : tv.bars(row)) {
                if (!bar.stall || bar.derived || bar.rect.width() < 3) {
                    continue;
                }
                const TraceEvent &e = model().event(bar.event);
                // Zoom onto the span so that it is under the mouse alone.
                m_s->viewState()->zoomTo(double(bar.span.start), double(bar.span.end));
                const QString text = tv.hoverText(QPointF(
                    xOf(tv, (bar.span.start + bar.span.end) / 2.0), tv.laneOf(row).center().y()));
                m_s->viewState()->resetZoom();
                if (e.op == Op::WAIT_FLAG && model().pipes()[row] != "S" && !flagWait) {
                    if (qEnvironmentVariableIsSet("TESSEL_TIMELINE_SAY")) {
                        qInfo("%s", qPrintable(text));
                    }
                    QVERIFY2(text.startsWith("stall on") && text.contains("waits for flag") &&
                                 text.contains("set by"),
                             qPrintable(text));
                    flagWait = true;
                }
                if ((e.op == Op::BARRIER || e.op == Op::END) && !barrier) {
                    QCOMPARE(model().pipes()[row], QString("S"));
                    if (qEnvironmentVariableIsSet("TESSEL_TIMELINE_SAY")) {
                        qInfo("%s", qPrintable(text));
                    }
                    QVERIFY2(text.contains("to drain"), qPrintable(text));
                    barrier = true;
                }
                if (flagWait && barrier) {
                    break;
                }
            }
        }
        QVERIFY(flagWait);
        QVERIFY(barrier);
        // The S row is no longer one long busy bar: its stall spans cover what the summary calls
        // stall.
        const int s = int(model().pipes().indexOf("S"));
        uint64_t stallCycles = 0;
        for (const TimelineBar &bar : tv.bars(s)) {
            if (bar.stall) {
                stallCycles += bar.span.length();
            }
        }
        const RangeSummary all = summarizeRange(sim().trace, 0, sim().cycles, m_machine, &m_fe);
        QVERIFY(tv.frontEnd().ok());
        QCOMPARE(stallCycles, all.pipe("S")->stall);
    }

    void shiftDragSelectsARange() {
        TimelineView tv(m_s.get());
        tv.resize(1200, 320);
        tv.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tv));
        m_s->viewState()->resetZoom();
        const double cycles = double(sim().cycles);
        const int row = int(model().pipes().indexOf("MTE2"));
        const int y = int(tv.laneOf(row).center().y());
        const QPoint p0(int(xOf(tv, cycles * 0.2)), y), p1(int(xOf(tv, cycles * 0.55)), y);
        QTest::mousePress(&tv, Qt::LeftButton, Qt::ShiftModifier, p0);
        QTest::mouseMove(&tv, QPoint((p0.x() + p1.x()) / 2, y));
        QTest::mouseMove(&tv, p1);
        QTest::mouseRelease(&tv, Qt::LeftButton, Qt::ShiftModifier, p1);
        QVERIFY(tv.hasSelection());
        const auto sel = tv.selection();
        const double perPixel = 1.0 / tv.timeAxis().scale();
        QVERIFY2(std::abs(double(sel.first) - tv.timeAxis().mapXToTime(p0.x())) <= 1,
                 qPrintable(QString::number(sel.first)));
        QVERIFY(std::abs(double(sel.second) - cycles * 0.55) <= perPixel + 1);
        const RangeSummary want = summarizeRange(sim().trace, uint64_t(sel.first),
                                                 uint64_t(sel.second), m_machine, &m_fe);
        compareSummaries(tv.selectionSummary(), want);
        const PipeRangeStats *mte2 = want.pipe("MTE2");
        QVERIFY(mte2 && mte2->busy > 0);
        const QString text = tv.selectionText();
        QVERIFY2(text.contains(QString("MTE2: busy %1").arg(mte2->busy)), qPrintable(text));
        QVERIFY2(text.contains(QString("cycles %1 - %2").arg(sel.first).arg(sel.second)),
                 qPrintable(text));
        QVERIFY2(text.contains("GM -> L1"), qPrintable(text));
        const QPixmap shot = tv.grab(); // the overlay paints
        QVERIFY(!shot.isNull());
        if (qEnvironmentVariableIsSet("TESSEL_TIMELINE_PNG")) { // to look at it
            shot.save(qEnvironmentVariable("TESSEL_TIMELINE_PNG"));
        }
        // Esc clears it.
        QTest::keyClick(&tv, Qt::Key_Escape);
        QVERIFY(!tv.hasSelection());
        QVERIFY(tv.selectionText().isEmpty());
        // So does a plain click.
        tv.setSelection(10, 200);
        QVERIFY(tv.hasSelection());
        QTest::mouseClick(&tv, Qt::LeftButton, {}, p0);
        QVERIFY(!tv.hasSelection());
        // F and the fit button zoom to the whole run.
        m_s->viewState()->zoomTo(cycles * 0.4, cycles * 0.5);
        QTest::keyClick(&tv, Qt::Key_F);
        QCOMPARE(m_s->viewState()->zoom().start, 0.0);
        QCOMPARE(m_s->viewState()->zoom().end, cycles);
        m_s->viewState()->zoomTo(cycles * 0.4, cycles * 0.5);
        tv.fitButton()->click();
        QCOMPARE(m_s->viewState()->zoom().end - m_s->viewState()->zoom().start, cycles);
    }
};

QTEST_MAIN(TestTimeline)
#include "test_ide_timeline.moc"
