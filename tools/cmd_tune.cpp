// tessel tune: search the legal schedules of a problem for the fastest verified
// one (scheduler/Tuner.h, docs/tuner.md), recording every measured candidate in
// the schedule database; prints a progress line and a final report that
// compares the best schedule with the hand schedule from samples/ when there is one.
#include "tools/Commands.h"
#include "tools/SimArgs.h"

#include "database/Postgres.h"
#include "database/ScheduleStore.h"
#include "dsl/Compile.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"
#include "scheduler/Campaign.h"
#include "scheduler/Tuner.h"
#include "tools/Campaigns.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TESSEL_SOURCE_DIR
#define TESSEL_SOURCE_DIR "."
#endif

namespace tessel::cli {

namespace {

struct TuneCliOptions {
    std::string generator, params, arch = "ascend-like", budget = "60s", timeout = "300s", db, out, hand,
        objective = "efficiency";
    std::string samples = std::string(TESSEL_SOURCE_DIR) + "/samples";
    std::string campaign, campaign_name, lease = "30s"; // a tuning campaign (docs/campaigns.md)
    int in_flight = 0;
    int jobs = 1, seeds = 8, max = 0;
    uint64_t seed = 1;
    uint64_t max_instructions = sim::kDefaultMaxInstructions, max_cycles = sim::kDefaultMaxCycles;
    bool random = false, no_db = false, quiet = false;
};

using sched::parse_duration;

bool file_exists(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

// The hand schedules of samples/ for a problem (the best of them is the reference).
std::vector<std::string> hand_schedules(const std::string &generator, const ParamMap &params, const std::string &arch,
                                        const std::string &samples) {
    struct Hand {
        const char *generator, *arch, *file;
    };
    static const Hand kHands[] = {
        {"gemm", "ascend-like", "gemm/schedules/tiled_staged.json"},
        {"gemm", "ascend-like", "gemm/schedules/ascend_panel.json"},
        {"gemm", "ascend-like", "gemm/schedules/ascend_panel_k256.json"},
        {"gemm", "gemmini-like", "gemm/schedules/gemmini_int8.json"},
        {"gemm", "auto-int8", "gemm/schedules/auto_int8.json"},
        {"conv2d", "ascend-like", "conv2d/schedules/ascend_tensorized.json"},
        {"conv2d", "ascend-like", "conv2d/schedules/ops_ascend_3x3.json"},
        {"conv2d", "gemmini-like", "conv2d/schedules/gemmini_int8.json"},
        {"conv2d", "auto-int8", "conv2d/schedules/auto_int8.json"},
        {"softmax", "ascend-like", "softmax/schedules/staged_vector.json"},
        {"softmax", "ascend-like", "softmax/schedules/ascend_reduce.json"},
        {"softmax", "gemmini-like", "softmax/schedules/gemmini_fp32.json"},
        {"softmax", "auto-int8", "softmax/schedules/auto_int8.json"},
    };
    std::vector<std::string> files;
    if (generator == "elementwise" && arch == "ascend-like") {
        auto op = params.find("op");
        files = {op != params.end() && op->second == "add" ? "elementwise/schedules/add_staged.json"
                                                           : "elementwise/schedules/chain_staged.json"};
    }
    for (const Hand &h : kHands) {
        if (generator == h.generator && arch == h.arch) {
            files.push_back(h.file);
        }
    }
    std::vector<std::string> out;
    for (const auto &f : files) {
        if (file_exists(samples + "/" + f)) {
            out.push_back(samples + "/" + f);
        }
    }
    return out;
}

// Ctrl-C stops starting measurements; the running ones finish, are recorded,
// and the report is printed (a second Ctrl-C kills the process).
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
    g_interrupted = true;
    std::signal(SIGINT, SIG_DFL);
}

std::string fmt_eta(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    return buf;
}

int run_tune(const TuneCliOptions &o, const GlobalOptions &g) {
    if (o.generator.empty() && o.campaign.empty()) {
        throw UserError("tune: which problem? give -g/--generator (with -p and --arch) or --campaign FILE");
    }
    if (!o.campaign.empty() && (!o.generator.empty() || !o.params.empty())) {
        // The file names every problem; a -g or -p beside it would be silently ignored.
        throw UserError("tune: --campaign " + o.campaign + " lists its problems (generator, params, arch); -g/-p " +
                        "do not go with it: put the problem in the file, or drop --campaign");
    }
    sched::TuneOptions t;
    t.generator = o.generator;
    t.params = parse_params(o.params);
    t.arch = o.arch;
    t.budget_s = parse_duration("--budget", o.budget);
    t.measure_timeout_s = parse_duration("--timeout", o.timeout);
    t.max_instructions = o.max_instructions;
    t.max_cycles = o.max_cycles;
    t.jobs = std::max(1, o.jobs);
    t.seed = o.seed;
    t.seed_candidates = o.seeds;
    t.max_measurements = o.max;
    t.random_search = o.random;
    t.objective = o.objective;
    t.db_path = o.no_db ? "" : (o.db.empty() ? db::ScheduleStore::default_path() : o.db);
    // A PostgreSQL database or a campaign file: this process coordinates a
    // campaign whose workers measure anywhere (cmd_campaign.cpp).
    if (!o.campaign.empty() || db::is_postgres_url(t.db_path)) {
        if (t.db_path.empty()) {
            throw UserError("tune: a campaign lives in a database: --campaign does not go with --no-db");
        }
        CoordinatorCli c;
        c.campaign_file = o.campaign;
        c.name = o.campaign_name;
        c.out = o.out;
        c.jobs = std::max(0, o.jobs);
        c.lease_s = parse_duration("--lease", o.lease);
        c.in_flight = o.in_flight;
        c.quiet = o.quiet;
        c.generator_libs = g.generator_libs;
        return run_coordinator(t, c);
    }
    const bool tty = isatty(fileno(stderr));
    if (!o.quiet) {
        t.on_progress = [&](const sched::TuneProgress &p) {
            std::fprintf(stderr, "%s[%5.1fs] measured %d (%d failed, %d skipped: already measured)  best efficiency %.3f (%lld cycles)  ETA %s%s",
                         tty ? "\r" : "", p.elapsed_s, p.measured, p.failed, p.skipped, p.best_efficiency,
                         static_cast<long long>(p.best_cycles), fmt_eta(std::max(0.0, p.budget_s - p.elapsed_s)).c_str(),
                         tty ? "   " : "\n");
            std::fflush(stderr);
        };
    }
    std::printf("tessel tune: %s (%s) on %s, budget %.0f s, %d job%s, %s search%s%s\n", o.generator.c_str(),
                o.params.c_str(), o.arch.c_str(), t.budget_s, t.jobs, t.jobs == 1 ? "" : "s",
                o.random ? "random" : "model-seeded evolutionary", t.db_path.empty() ? "" : ", database ",
                (db::is_postgres_url(t.db_path) ? db::redact_postgres_url(t.db_path) : t.db_path).c_str());
    std::fflush(stdout);
    t.cancel = &g_interrupted;
    std::signal(SIGINT, on_sigint);
    sched::TuneResult r = sched::tune(t);
    std::signal(SIGINT, SIG_DFL);
    if (g_interrupted) {
        std::printf("interrupted: the measurements so far are recorded; run the same command to resume\n");
    }
    if (!o.quiet && tty) {
        std::fprintf(stderr, "\n");
    }
    int failed = 0;
    for (const auto &m : r.measured) {
        failed += m.verified ? 0 : 1;
    }
    std::printf("space: %d legal candidates; measured %zu in %.1f s (%d failed to compile or verify), %zu results "
                "loaded from the database, %d candidates skipped as already measured (this run or before)\n",
                r.space_size, r.measured.size(), r.elapsed_s, failed, r.previous.size(), r.skipped);
    if (!r.db_error.empty()) {
        std::printf("warning: recording in the database failed: %s\n", r.db_error.c_str());
    }
    if (!r.best) {
        std::printf("no verified schedule found\n");
        return 1;
    }
    const sched::Measurement &b = *r.best;
    std::printf("best: %s  schedule %s\n  cycles %lld  physical limit %lld  efficiency %.3f  predicted %.0f  %s\n",
                b.candidate.describe().c_str(), b.schedule_hash.c_str(), static_cast<long long>(b.cycles),
                static_cast<long long>(b.t_phys_cycles), b.efficiency, b.predicted_cycles,
                b.from_database ? "(from an earlier run)" : ("(found after " + std::to_string(b.at_seconds) + " s)").c_str());
    std::vector<std::string> hands = o.hand.empty() ? hand_schedules(o.generator, parse_params(o.params), o.arch, o.samples)
                                                    : std::vector<std::string>{o.hand};
    double hand_eff = -1;
    std::string hand_name;
    for (const std::string &f : hands) {
        CompileRequest req;
        req.generator = o.generator;
        req.params = t.params;
        req.arch = o.arch;
        try { // a hand schedule written for other shapes may not apply to these
            req.schedule = load_schedule(f);
        } catch (const std::exception &e) {
            std::printf("hand schedule %s: not applicable (%s)\n", f.c_str(), e.what());
            continue;
        }
        // In a worker process, as the tuner measured its candidates: the same fresh compile state.
        const sched::Measurement h = sched::measure_isolated(req, o.seed, t.measure_timeout_s);
        if (!h.verified) {
            std::printf("hand schedule %s: not verified on these shapes (%s)\n", f.c_str(), h.error.substr(0, 200).c_str());
            continue;
        }
        if (h.efficiency > hand_eff) {
            hand_eff = h.efficiency;
            hand_name = f + " (" + std::to_string(h.cycles) + " cycles)";
        }
    }
    if (hand_eff > 0) {
        std::printf("hand schedule: %s  efficiency %.3f; tuned / hand = %.3f\n", hand_name.c_str(), hand_eff,
                    b.efficiency / hand_eff);
    } else {
        std::printf("hand schedule: none for this problem\n");
    }
    std::printf("schedule JSON:\n%s", b.schedule_json.c_str());
    if (!o.out.empty()) {
        write_output_file(o.out, b.schedule_json, "best schedule");
        std::printf("wrote %s\n", o.out.c_str());
    }
    return 0;
}

} // namespace

Command add_tune_command(CLI::App &root, GlobalOptions &g) {
    auto o = std::make_shared<TuneCliOptions>();
    Command c;
    c.app = root.add_subcommand("tune", "Search legal schedules for the fastest verified one (cost model + simulator), "
                                        "recording every candidate in the schedule database");
    c.app->add_option("-g,--generator", o->generator, "generator name (tessel list)");
    c.app->add_option("-p,--params", o->params, "generator parameters K=V,K=V");
    c.app->add_option("--arch", o->arch, "NPU preset or ArchSpec JSON file")->capture_default_str();
    c.app->add_option("--budget", o->budget, "time budget: 60s, 2m, ...")->capture_default_str();
    c.app->add_option("--jobs", o->jobs, "measurements in parallel (worker processes)")->capture_default_str();
    c.app->add_option("--timeout", o->timeout, "a measurement still running after this is killed and recorded as timed out")
        ->capture_default_str();
    add_run_budget_options(c.app, o->max_instructions, o->max_cycles);
    c.app->add_option("--db", o->db, "schedule database (default: $TESSEL_DB or $XDG_DATA_HOME/tessel/tessel.db)");
    c.app->add_flag("--no-db", o->no_db, "do not record (and do not resume)");
    c.app->add_option("--seed", o->seed, "search and verification seed")->capture_default_str();
    c.app->add_option("--out", o->out, "write the best schedule JSON here");
    c.app->add_option("--seeds", o->seeds, "measure the cost model's best K candidates first")->capture_default_str();
    c.app->add_option("--max", o->max, "stop after this many measurements (0: budget only)")->capture_default_str();
    c.app->add_option("--objective", o->objective, "efficiency (t_phys / cycles) or cycles (fastest, e.g. over more cores)")
        ->check(CLI::IsMember({"efficiency", "cycles"}))
        ->capture_default_str();
    c.app->add_flag("--random", o->random, "random search (the baseline) instead of the model-seeded search");
    c.app->add_option("--hand", o->hand, "hand schedule to compare with (default: the samples' one for the problem)");
    c.app->add_option("--samples", o->samples, "the samples directory")->capture_default_str();
    c.app->add_flag("-q,--quiet", o->quiet, "no progress line");
    c.app->add_option("--campaign", o->campaign, "a campaign file: many problems queued at once for tessel tune-worker "
                                                 "processes anywhere (docs/campaigns.md)");
    c.app->add_option("--campaign-name", o->campaign_name, "the campaign's name (default: the file's, or one made "
                                                           "from the problem); a rerun of a name resumes it");
    c.app->add_option("--lease", o->lease, "a campaign's coordinator lease: workers wait for its tasks while it is "
                                           "renewed (every third of it)")
        ->capture_default_str();
    c.app->add_option("--in-flight", o->in_flight, "a campaign's tasks queued or running at once (0: 8, or two per "
                                                   "busy worker)")
        ->capture_default_str();
    c.run = [o, &g] { return run_tune(*o, g); };
    return c;
}

} // namespace tessel::cli
