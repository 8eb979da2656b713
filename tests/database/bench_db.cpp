// Database benchmark (docs/BENCHMARKS.md), on either backend:
//   bench_db            SQLite: a file in /tmp
//   bench_db postgres   PostgreSQL: a throwaway cluster with the server's
//                       default durability (fsync on, synchronous_commit on)
//   bench_db URL        PostgreSQL: an existing (empty) database
// Inserting 10,000 results (one transaction each, as tuner workers record
// them), 4 writer processes at once, 90,000 more in one batch, then the
// best-schedule and history queries over 100,000 results.
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/Canonical.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <sys/wait.h>

using namespace tessel::db;
using namespace tessel::db::test;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string params_for(int i) { return R"({"K":"256","M":")" + std::to_string(64 * (1 + i % 10)) + R"(","N":"256"})"; }

RunRecord bench_run(int i) {
    return make_run(i % 500, 1000 + (i * 7919) % 100000, i % 3 != 0, i % 2 ? kArchA : kArchB, params_for(i));
}

/** `writers` processes each recording `each` runs with record_run; returns the wall time in ms. */
double concurrent_writers(const std::string &db, int writers, int each) {
    auto t0 = Clock::now();
    std::vector<pid_t> kids;
    for (int w = 0; w < writers; w++) {
        pid_t pid = ::fork();
        if (pid == 0) {
            int rc = 0;
            try {
                ScheduleStore s = ScheduleStore::open(db);
                for (int i = 0; i < each; i++) {
                    s.record_run(bench_run(1000000 * (w + 1) + i));
                }
            } catch (const std::exception &e) {
                fprintf(stderr, "writer %d: %s\n", w, e.what());
                rc = 1;
            }
            ::_exit(rc);
        }
        kids.push_back(pid);
    }
    for (pid_t k : kids) {
        int status = 0;
        ::waitpid(k, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "a writer failed\n");
        }
    }
    return ms_since(t0);
}

} // namespace

int main(int argc, char **argv) {
    std::string which = argc > 1 ? argv[1] : "sqlite";
    auto dir = fresh_dir("bench");
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
    printf("backend: %s (%s)\n", is_postgres_url(db) ? "PostgreSQL" : "SQLite", db.c_str());
    ScheduleStore s = ScheduleStore::open(db);

    auto t0 = Clock::now();
    for (int i = 0; i < 10000; i++) {
        s.record_run(bench_run(i));
    }
    double each = ms_since(t0);
    printf("insert 10,000 results, one transaction each (record_run): %.0f ms (%.1f us/result)\n", each,
           each * 1000 / 10000);

    double conc = concurrent_writers(db, 4, 2000);
    printf("4 writer processes x 2,000 record_run at once: %.0f ms (%.0f results/s)\n", conc, 8000 / (conc / 1000));

    t0 = Clock::now();
    {
        Transaction t(s.connection());
        for (int i = 0; i < 82000; i++) {
            RunRecord r = bench_run(i);
            int64_t g = s.upsert_generator({0, r.generator, r.algorithm_hash});
            r.result.instance_id = s.upsert_instance(g, r.params_json);
            r.result.target_id = s.upsert_target({0, r.arch_name, r.arch_json, ""});
            ScheduleRecord sr;
            sr.spec_json = r.schedule_json;
            sr.origin = r.origin;
            r.result.schedule_id = s.upsert_schedule(sr);
            s.add_result(r.result);
        }
        t.commit();
    }
    double batch = ms_since(t0);
    printf("insert 82,000 more in one transaction: %.0f ms (%.1f us/result)\n", batch, batch * 1000 / 82000);
    printf("results stored: %lld\n", static_cast<long long>(s.connection().query_int("SELECT count(*) FROM results")));
    if (is_postgres_url(db)) {
        s.connection().exec("ANALYZE"); // what autovacuum would soon do; the plans below assume statistics
    }

    std::string arch = fnv1a64_hex(canonical_json(kArchA, ""));
    std::vector<double> times;
    int64_t found = 0;
    for (int i = 0; i < 200; i++) {
        auto q0 = Clock::now();
        auto b = s.best("gemm", params_for(i), arch);
        times.push_back(ms_since(q0));
        found += b ? 1 : 0;
    }
    std::sort(times.begin(), times.end());
    printf("best() over 100,000 results, 200 queries (%lld found): min %.3f ms, median %.3f ms, max %.3f ms\n",
           static_cast<long long>(found), times.front(), times[times.size() / 2], times.back());
    auto h0 = Clock::now();
    size_t n = s.history("gemm", params_for(1), arch).size();
    printf("history() of one instance on one target (%zu rows): %.2f ms\n", n, ms_since(h0));

    const char *probe = "SELECT r.id FROM results r JOIN schedules s ON s.id = r.schedule_id "
                        "JOIN instances i ON i.id = r.instance_id JOIN generators g ON g.id = i.generator_id "
                        "JOIN targets t ON t.id = r.target_id WHERE r.instance_id = ? AND r.target_id = ? "
                        "AND r.verified = 1 AND r.simulated_cycles IS NOT NULL "
                        "ORDER BY r.simulated_cycles ASC, r.created DESC, r.id DESC LIMIT 1";
    const bool pg = is_postgres_url(db);
    Statement plan = s.connection().prepare(std::string(pg ? "EXPLAIN " : "EXPLAIN QUERY PLAN ") + probe);
    plan.bind(1, int64_t{1}).bind(2, int64_t{1});
    printf("query plan of best()'s per-instance probe:\n");
    while (plan.step()) {
        printf("  %s\n", plan.get_text(pg ? 0 : 3).c_str());
    }
    std::filesystem::remove_all(dir / "tessel.db");
    return 0;
}
