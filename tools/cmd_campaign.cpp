// Tuning campaigns from the command line (scheduler/Campaign.h,
// docs/campaigns.md): `tessel tune` as the coordinator of a campaign (a
// PostgreSQL --db, or --campaign FILE on either backend), and `tessel
// tune-worker`, which measures a campaign's tasks on any machine.
#include "tools/Campaigns.h"

#include "database/Postgres.h"
#include "database/ScheduleStore.h"
#include "dsl/GeneratorInfo.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"
#include "scheduler/Campaign.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <csignal>
#include <cstdio>
#include <memory>
#include <unistd.h>

namespace tessel::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int sig) {
    g_stop = true;
    std::signal(sig, SIG_DFL); // a second one ends the process
}

std::string self_exe() {
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) {
        throw UserError("tune: cannot find this program's path (/proc/self/exe) to start local workers; use --jobs 0 "
                        "and start tessel tune-worker by hand");
    }
    return std::string(buf, static_cast<size_t>(n));
}

std::string shown(const std::string &db) { return db::is_postgres_url(db) ? db::redact_postgres_url(db) : db; }

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%gs", s);
    return buf;
}

} // namespace

int run_coordinator(const sched::TuneOptions &base, const CoordinatorCli &c) {
    sched::CampaignOptions o;
    if (!c.campaign_file.empty()) {
        o = sched::load_campaign_file(c.campaign_file, base);
    } else {
        o.problems = {base};
        o.name = sched::default_campaign_name(base);
    }
    if (!c.name.empty()) {
        o.name = c.name;
    }
    o.db = base.db_path;
    o.lease_s = c.lease_s;
    o.in_flight = c.in_flight;
    o.local_workers = c.jobs;
    if (c.jobs > 0) {
        o.worker_argv.push_back(self_exe());
        for (const std::string &lib : c.generator_libs) {
            o.worker_argv.insert(o.worker_argv.end(), {"--generators", lib});
        }
        o.worker_argv.insert(o.worker_argv.end(), {"tune-worker", "--db", o.db, "--campaign", o.name, "--lease",
                                                   seconds_text(c.lease_s)});
        if (c.quiet) {
            o.worker_argv.push_back("--quiet");
        }
    }
    const bool tty = isatty(fileno(stderr));
    if (!c.quiet) {
        o.on_progress = [&o, tty](size_t i, const sched::TuneProgress &p) {
            std::fprintf(stderr, "%s[%5.1fs] problem %zu/%zu: measured %d (%d failed, %d skipped: already measured)  "
                                 "best efficiency %.3f (%lld cycles)%s",
                         tty ? "\r" : "", p.elapsed_s, i + 1, o.problems.size(), p.measured, p.failed, p.skipped,
                         p.best_efficiency, static_cast<long long>(p.best_cycles), tty ? "   " : "\n");
            std::fflush(stderr);
        };
    }
    std::printf("tessel tune: campaign '%s' in %s: %zu problem%s, %d local worker%s%s\n", o.name.c_str(),
                shown(o.db).c_str(), o.problems.size(), o.problems.size() == 1 ? "" : "s", c.jobs,
                c.jobs == 1 ? "" : "s",
                c.jobs == 0 ? " (start tessel tune-worker --db URL on any machine to measure; docs/campaigns.md)" : "");
    std::fflush(stdout);
    g_stop = false;
    o.cancel = &g_stop;
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    sched::CampaignResult r = sched::run_campaign(o);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!c.quiet && tty) {
        std::fprintf(stderr, "\n");
    }
    if (g_stop) {
        std::printf("interrupted: the measurements so far are recorded; run the same command to resume\n");
    }
    int without_best = 0;
    for (size_t i = 0; i < r.problems.size(); i++) {
        const sched::TuneOptions &p = o.problems[i];
        const sched::TuneResult &t = r.problems[i];
        int failed = 0;
        for (const auto &m : t.measured) {
            failed += m.verified ? 0 : 1;
        }
        std::printf("problem %zu: %s (%s) on %s: space %d; measured %zu in %.1f s (%d failed to compile or verify), "
                    "%zu results loaded from the database, %d skipped as already measured\n",
                    i + 1, p.generator.c_str(), format_params(p.params).c_str(), p.arch.c_str(), t.space_size,
                    t.measured.size(), t.elapsed_s, failed, t.previous.size(), t.skipped);
        if (!t.best) {
            std::printf("  no verified schedule found\n");
            without_best++;
            continue;
        }
        const sched::Measurement &b = *t.best;
        std::printf("  best: %s  schedule %s  cycles %lld  efficiency %.3f%s\n", b.candidate.describe().c_str(),
                    b.schedule_hash.c_str(), static_cast<long long>(b.cycles), b.efficiency,
                    b.from_database ? "  (from an earlier run)" : "");
    }
    if (r.withdrawn > 0) {
        std::printf("%d queued task%s withdrawn unmeasured at the end of a budget\n", r.withdrawn,
                    r.withdrawn == 1 ? "" : "s");
    }
    if (o.problems.size() == 1 && r.problems.size() == 1 && r.problems[0].best) {
        const sched::Measurement &b = *r.problems[0].best;
        std::printf("schedule JSON:\n%s", b.schedule_json.c_str());
        if (!c.out.empty()) {
            write_output_file(c.out, b.schedule_json, "best schedule");
            std::printf("wrote %s\n", c.out.c_str());
        }
    }
    return o.problems.size() == 1 && without_best > 0 ? 1 : 0;
}

namespace {

struct WorkerCli {
    std::string db, campaign, lease = "30s";
    int jobs = 1, reconnects = 5;
    bool wait = false, quiet = false;
};

int run_tune_worker(const WorkerCli &w) {
    sched::WorkerOptions o;
    o.db = w.db.empty() ? db::ScheduleStore::default_path() : w.db;
    o.campaign = w.campaign;
    o.jobs = w.jobs;
    o.lease_s = sched::parse_duration("--lease", w.lease);
    o.wait = w.wait;
    o.reconnects = w.reconnects;
    if (!w.quiet) {
        o.log = [](const std::string &line) { std::fprintf(stderr, "tune-worker %s\n", line.c_str()); };
    }
    g_stop = false;
    o.stop = &g_stop;
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    sched::WorkerStats s = sched::run_worker(o);
    auto pct = [&s](double q) {
        return s.claim_ms.empty() ? 0.0 : s.claim_ms[std::min(s.claim_ms.size() - 1, static_cast<size_t>(q * s.claim_ms.size()))];
    };
    std::printf("tune-worker: %d measured, %d failed, %d given up (claim lost), %d reconnect%s; %zu claims, "
                "p50 %.2f ms, p99 %.2f ms; %s\n",
                s.measured, s.failed, s.fenced, s.reconnected, s.reconnected == 1 ? "" : "s", s.claim_ms.size(),
                pct(0.5), pct(0.99), g_stop ? "stopped by a signal" : "the campaign is drained");
    return 0;
}

} // namespace

Command add_tune_worker_command(CLI::App &root, GlobalOptions &) {
    auto w = std::make_shared<WorkerCli>();
    Command c;
    c.app = root.add_subcommand("tune-worker", "Measure the candidates of tuning campaigns from the schedule database's "
                                               "work queue (on any machine that has the generators; docs/campaigns.md)");
    c.app->add_option("--db", w->db, "the campaign's database: a postgresql:// URL (or a SQLite file on this machine; "
                                     "default: $TESSEL_DB)");
    c.app->add_option("--campaign", w->campaign, "only this campaign (default: every campaign)");
    c.app->add_option("--jobs", w->jobs, "measurements at once")->capture_default_str();
    c.app->add_option("--lease", w->lease, "a claim's lease, renewed every third of it; a worker silent this long "
                                           "loses its task to another")
        ->capture_default_str();
    c.app->add_flag("--wait", w->wait, "keep waiting for tasks when the campaigns are drained (stop with a signal)");
    c.app->add_option("--reconnects", w->reconnects, "a lost connection is re-opened this many times in a row before "
                                                     "the worker exits 1")
        ->capture_default_str();
    c.app->add_flag("-q,--quiet", w->quiet, "no event lines");
    c.run = [w] { return run_tune_worker(*w); };
    return c;
}

} // namespace tessel::cli
