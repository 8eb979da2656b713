// Database benchmark (docs/BENCHMARKS.md): inserting 10,000 results (one
// transaction each, as tuner workers record them, and in one batch), then the
// best-schedule query over 100,000 results with the planner's plan printed.
#include "DbTestUtil.h"

#include "database/Canonical.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace tessel::db;
using namespace tessel::db::test;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string params_for(int i) { return R"({"K":"256","M":")" + std::to_string(64 * (1 + i % 10)) + R"(","N":"256"})"; }

} // namespace

int main() {
    auto dir = fresh_dir("bench");
    ScheduleStore s = ScheduleStore::open((dir / "tessel.db").string());

    auto t0 = Clock::now();
    for (int i = 0; i < 10000; i++) {
        s.record_run(make_run(i % 500, 1000 + (i * 7919) % 100000, i % 3 != 0, i % 2 ? kArchA : kArchB, params_for(i)));
    }
    double each = ms_since(t0);
    printf("insert 10,000 results, one transaction each (record_run): %.0f ms (%.1f us/result)\n", each,
           each * 1000 / 10000);

    t0 = Clock::now();
    {
        Transaction t(s.connection());
        for (int i = 0; i < 90000; i++) {
            RunRecord r = make_run(i % 500, 1000 + (i * 7919) % 100000, i % 3 != 0, i % 2 ? kArchA : kArchB,
                                   params_for(i));
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
    printf("insert 90,000 more in one transaction: %.0f ms (%.1f us/result)\n", ms_since(t0), ms_since(t0) * 1000 / 90000);
    printf("results stored: %lld\n", static_cast<long long>(s.connection().query_int("SELECT count(*) FROM results")));

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

    Statement plan = s.connection().prepare(
        "EXPLAIN QUERY PLAN SELECT r.id FROM results r JOIN schedules s ON s.id = r.schedule_id "
        "JOIN instances i ON i.id = r.instance_id JOIN generators g ON g.id = i.generator_id "
        "JOIN targets t ON t.id = r.target_id WHERE r.instance_id = ? AND r.target_id = ? "
        "AND r.verified = 1 AND r.simulated_cycles IS NOT NULL "
        "ORDER BY r.simulated_cycles ASC, r.created DESC, r.id DESC LIMIT 1");
    plan.bind(1, int64_t{1}).bind(2, int64_t{1});
    printf("query plan of best()'s per-instance probe:\n");
    while (plan.step()) {
        printf("  %s\n", plan.get_text(3).c_str());
    }
    std::filesystem::remove_all(dir);
    return 0;
}
