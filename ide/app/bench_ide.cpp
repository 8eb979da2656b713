// Edit -> views refreshed, measured through the IDE's own session (issue 7):
// each edit changes a split factor of the schedule in the editor model, then
// waits until the compile result and the run report (simulated, verified) have
// updated every model. Debounce is off so the figure is the work itself.
// Then times the two jobs an edit starts on workers: the cost model's
// prediction and run(), each alone.
//   tessel_ide_bench [--size 512] [--repeat 10]
#include "ide/core/Session.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace tessel::ide;

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    int size = 512, repeat = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--size")) {
            size = std::atoi(argv[i + 1]);
        } else if (!std::strcmp(argv[i], "--repeat")) {
            repeat = std::atoi(argv[i + 1]);
        }
    }
    Session s;
    s.setAutosavePath(QString());
    s.service()->setDebounceMs(0);
    std::string n = std::to_string(size);
    auto spec = tessel::load_schedule(std::string(TESSEL_SOURCE_DIR) + "/samples/gemm/schedules/tiled_staged.json");
    QEventLoop loop;
    QObject::connect(&s, &Session::runFinished, &loop, &QEventLoop::quit);
    QObject::connect(&s, &Session::compileFinished, &loop, [&] {
        if (!s.lastCompile()->ok) {
            loop.quit();
        }
    });
    QString error;
    if (!s.open("gemm", {{"M", n}, {"N", n}, {"K", n}}, "ascend-like", spec, &error)) {
        std::fprintf(stderr, "%s\n", qPrintable(error));
        return 1;
    }
    loop.exec(); // warm-up
    std::vector<double> compileMs, totalMs, modelMs, cycles;
    int row = s.schedule()->rowOf("k_chunks");
    for (int i = 0; i < repeat; ++i) {
        s.schedule()->setField(row, "factor", i % 2 ? "64" : "128");
        loop.exec();
        if (!s.lastRun() || !s.lastRun()->verified) {
            std::fprintf(stderr, "edit %d did not verify\n", i);
            return 1;
        }
        compileMs.push_back(s.lastCompileLatencyMs());
        totalMs.push_back(s.lastRunLatencyMs());
        modelMs.push_back(s.lastModelUpdateMs());
        cycles.push_back(double(*s.lastRun()->cycles));
    }
    auto stats = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return std::vector<double>{v.front(), v[v.size() / 2], v.back()};
    };
    std::printf("GEMM %dx%dx%d fp16, ascend-like, tiled_staged (k_chunks 64 <-> 128), %d edits\n", size, size, size, repeat);
    std::printf("%-44s %9s %9s %9s\n", "", "min ms", "median ms", "max ms");
    auto row3 = [&](const char *name, const std::vector<double> &v) {
        auto st = stats(v);
        std::printf("%-44s %9.1f %9.1f %9.1f\n", name, st[0], st[1], st[2]);
    };
    row3("edit -> compile models updated", compileMs);
    row3("edit -> run models updated (all views)", totalMs);
    row3("model update for the run report (GUI thread)", modelMs);
    std::printf("trace events in the last run: %d, cycles %g\n", s.timeline()->rowCount(), cycles.back());
    // The work that runs beside each edit's run: the cost model's prediction of the
    // schedule (search-space lookup + predict), and run() itself, on this machine now.
    std::vector<double> predictMs, runMs;
    for (int i = 0; i < 3; ++i) {
        QElapsedTimer t;
        t.start();
        ModelPrediction p = predictSchedule(s.request());
        predictMs.push_back(t.nsecsElapsed() / 1e6);
        if (!p.ok) {
            std::fprintf(stderr, "no prediction: %s\n", p.why.c_str());
        }
        t.restart();
        (void)tessel::run(s.request(), 1, true);
        runMs.push_back(t.nsecsElapsed() / 1e6);
    }
    row3("cost-model prediction (worker, beside the run)", predictMs);
    row3("run() alone (compile, simulate, CPU reference)", runMs);
    return 0;
}
