// Cost-model quality (docs/BENCHMARKS.md): draws N distinct random legal
// candidates for a problem, predicts each with the cost model, measures each
// with tessel::run (compile, simulate, verify) on worker threads, and prints
// the Spearman rank correlation between predicted and simulated cycles and the
// mean absolute percentage error, over the verified candidates.
//
//   tessel_bench_cost_model -g gemm -p M=256,N=256,K=256,dtype=fp16 --arch ascend-like -n 200 --jobs 2
//
// With --emit DIR it measures nothing: it writes each candidate's schedule to
// DIR/NNN.json and prints its prediction (to compile and simulate by hand with
// `tessel compile --emit bin` and `tessel sim`, without the CPU reference).
#include "dsl/Compile.h"
#include "scheduler/Tuner.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

using namespace tessel;
using namespace tessel::sched;

namespace {

std::vector<double> ranks(const std::vector<double> &v) {
    std::vector<size_t> idx(v.size());
    for (size_t i = 0; i < v.size(); i++) {
        idx[i] = i;
    }
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < idx.size();) {
        size_t j = i;
        while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) {
            j++;
        }
        for (size_t k = i; k <= j; k++) {
            r[idx[k]] = (static_cast<double>(i) + static_cast<double>(j)) / 2.0; // ties share the mean rank
        }
        i = j + 1;
    }
    return r;
}

double pearson(const std::vector<double> &a, const std::vector<double> &b) {
    const double n = static_cast<double>(a.size());
    double ma = 0, mb = 0;
    for (size_t i = 0; i < a.size(); i++) {
        ma += a[i] / n, mb += b[i] / n;
    }
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < a.size(); i++) {
        sab += (a[i] - ma) * (b[i] - mb), saa += (a[i] - ma) * (a[i] - ma), sbb += (b[i] - mb) * (b[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"cost-model quality: Spearman and MAPE of predicted vs simulated cycles"};
    std::string generator = "gemm", params, arch = "ascend-like";
    int n = 200, jobs = 1;
    uint64_t seed = 1;
    bool verbose = false;
    std::string only, emit;
    app.add_option("-g", generator);
    app.add_option("-p", params);
    app.add_option("--arch", arch);
    app.add_option("-n", n, "random legal candidates");
    app.add_option("--jobs", jobs);
    app.add_option("--seed", seed);
    app.add_flag("-v", verbose, "one line per candidate");
    app.add_option("--only", only, "only candidates of this path (matrix, vector)");
    app.add_option("--emit", emit, "write the candidates' schedules to this directory and their predictions to stdout; no measurement");
    CLI11_PARSE(app, argc, argv);

    const SearchSpace space(make_problem(generator, parse_params(params), load_arch(arch)));
    std::mt19937_64 rng(seed);
    std::vector<Candidate> cands;
    std::set<Candidate> seen;
    for (int attempt = 0; static_cast<int>(cands.size()) < n && attempt < 100 * n; attempt++) {
        Candidate c = space.random(rng);
        if (c.path == Path::Naive || (!only.empty() && only != path_name(c.path))) {
            continue; // naive: hours of simulated scalar code; it is predicted, not measured
        }
        if (seen.insert(c).second) {
            cands.push_back(c);
        }
    }
    if (!emit.empty()) {
        for (size_t i = 0; i < cands.size(); i++) {
            char name[32];
            std::snprintf(name, sizeof name, "%03zu.json", i);
            std::ofstream(emit + "/" + name) << schedule_to_json(space.to_spec(cands[i])) << "\n";
            std::printf("%s %.0f %s\n", name, predict(space, cands[i]).cycles, cands[i].describe().c_str());
        }
        return 0;
    }
    struct Row {
        double pred = 0, sim = 0;
        bool ok = false;
        std::string err;
    };
    std::vector<Row> rows(cands.size());
    std::atomic<size_t> next{0};
    const auto t0 = std::chrono::steady_clock::now();
    auto work = [&] {
        for (size_t i = next++; i < cands.size(); i = next++) {
            rows[i].pred = predict(space, cands[i]).cycles;
            RunReport r = run(request_for(space, cands[i], arch), seed);
            rows[i].ok = r.verified && r.cycles;
            rows[i].sim = static_cast<double>(r.cycles.value_or(0));
            if (!r.diagnostics.empty()) {
                rows[i].err = r.diagnostics.front().message;
            }
        }
    };
    std::vector<std::thread> ts;
    for (int j = 0; j < std::max(1, jobs); j++) {
        ts.emplace_back(work);
    }
    for (auto &t : ts) {
        t.join();
    }
    std::vector<double> p, s;
    double ape = 0;
    int failed = 0;
    for (size_t i = 0; i < rows.size(); i++) {
        if (verbose) {
            std::printf("%-60s predicted %10.0f simulated %10.0f %s\n", cands[i].describe().c_str(), rows[i].pred,
                        rows[i].sim, rows[i].ok ? "" : ("FAILED " + rows[i].err.substr(0, 120)).c_str());
        }
        if (!rows[i].ok) {
            failed++;
            continue;
        }
        p.push_back(rows[i].pred);
        s.push_back(rows[i].sim);
        ape += std::fabs(rows[i].pred - rows[i].sim) / rows[i].sim;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("| %s | %s | %s | %s | %zu | %d | %.3f | %.1f%% | %.0f s |\n", generator.c_str(), params.c_str(),
                arch.c_str(), only.empty() ? "all" : only.c_str(),
                p.size(), failed, pearson(ranks(p), ranks(s)), p.empty() ? 0.0 : 100.0 * ape / static_cast<double>(p.size()),
                secs);
    return 0;
}
