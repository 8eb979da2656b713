// Work-queue benchmark (docs/BENCHMARKS.md): 1, 2, 4 and 8 worker processes
// drain a campaign of cheap tasks (claim, then complete with a result, no
// measurement work), so the database is what is measured, not the 2 cores.
//   bench_queue            SQLite: a file in /tmp, one machine's forked workers
//   bench_queue postgres   PostgreSQL: a throwaway cluster with the server's default durability
//   bench_queue URL        PostgreSQL: an existing database
// Prints per worker count: tasks/s, claim latency p50/p99, and on PostgreSQL
// the peak number of sessions on the database (sampled every 5 ms).
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/WorkQueue.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <sys/wait.h>

using namespace tessel::db;
using namespace tessel::db::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTasks = 2000;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

/** One worker: claims and completes until nothing is left; writes its claim latencies (ms) to `fd`. */
pid_t spawn_worker(const std::string &db, int64_t campaign, int w, int fd) {
    pid_t pid = ::fork();
    if (pid != 0) {
        return pid;
    }
    int rc = 0;
    try {
        ScheduleStore s = ScheduleStore::open(db);
        WorkQueue q(s);
        std::vector<double> lat;
        for (;;) {
            auto t0 = Clock::now();
            auto t = q.claim(campaign, "bench-worker-" + std::to_string(w), 60000);
            lat.push_back(ms_between(t0, Clock::now()));
            if (!t) {
                break;
            }
            RunRecord r = make_run(static_cast<int>(t->id % 50), 1000 + t->id);
            q.complete(*t, r);
        }
        const char *p = reinterpret_cast<const char *>(lat.data());
        size_t left = lat.size() * sizeof(double);
        while (left > 0) {
            ssize_t n = ::write(fd, p, left);
            if (n <= 0) {
                ::_exit(2);
            }
            p += n;
            left -= static_cast<size_t>(n);
        }
    } catch (const std::exception &e) {
        fprintf(stderr, "worker %d: %s\n", w, e.what());
        rc = 1;
    }
    ::_exit(rc);
}

} // namespace

int main(int argc, char **argv) {
    std::string which = argc > 1 ? argv[1] : "sqlite";
    auto dir = fresh_dir("bench_queue");
    std::unique_ptr<PgCluster> cluster;
    std::string db = (dir / "tessel.db").string();
    if (which == "postgres") {
        if (std::string why = PgCluster::missing_reason(); !why.empty()) {
            fprintf(stderr, "%s\n", why.c_str());
            return 1;
        }
        cluster = PgCluster::start((dir / "cluster").string(), true, /*durable=*/true);
        cluster->admin_exec("CREATE DATABASE bench");
        db = cluster->url("bench");
    } else if (is_postgres_url(which)) {
        db = which;
    }
    const bool pg = is_postgres_url(db);
    printf("backend: %s (%s), %d tasks per run\n", pg ? "PostgreSQL" : "SQLite", db.c_str(), kTasks);
    ScheduleStore s = ScheduleStore::open(db);
    WorkQueue q(s);
    printf("workers  tasks/s  claim p50 ms  claim p99 ms  peak sessions\n");
    for (int workers : {1, 2, 4, 8}) {
        int64_t c = q.campaign("bench-" + std::to_string(workers));
        {
            Transaction t(s.connection());
            for (int i = 0; i < kTasks; i++) {
                q.enqueue(c, "task-" + std::to_string(i), "{}");
            }
            t.commit();
        }
        std::atomic<bool> sampling{pg};
        std::atomic<int64_t> peak{0};
        std::thread sampler([&] {
            if (!pg) {
                return;
            }
            ScheduleStore probe = ScheduleStore::open(db);
            while (sampling) {
                int64_t n = probe.connection().query_int(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()");
                peak = std::max<int64_t>(peak, n);
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
        int fds[2];
        if (::pipe(fds) != 0) {
            return 1;
        }
        auto t0 = Clock::now();
        std::vector<pid_t> kids;
        for (int w = 0; w < workers; w++) {
            kids.push_back(spawn_worker(db, c, w, fds[1]));
        }
        ::close(fds[1]);
        std::vector<double> lat;
        double buf[512];
        ssize_t n;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
            lat.insert(lat.end(), buf, buf + n / static_cast<ssize_t>(sizeof(double)));
        }
        ::close(fds[0]);
        for (pid_t k : kids) {
            int status = 0;
            ::waitpid(k, &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "a worker failed\n");
            }
        }
        double wall = ms_between(t0, Clock::now());
        sampling = false;
        sampler.join();
        CampaignStatus st = q.status(c);
        std::sort(lat.begin(), lat.end());
        auto pct = [&](double p) { return lat.empty() ? 0.0 : lat[static_cast<size_t>(p * (lat.size() - 1))]; };
        printf("%7d  %7.0f  %12.2f  %12.2f  %s%s\n", workers, st.done / (wall / 1000), pct(0.50), pct(0.99),
               pg ? std::to_string(peak.load()).c_str() : "-",
               st.done == kTasks ? "" : "  (NOT ALL DONE)");
    }
    return 0;
}
