// The tuner: within a 10 s budget on a small GEMM it records every measured
// candidate in a temporary database and finds a verified schedule at least as
// good as the naive one; a second run on the same database resumes without
// measuring a schedule again; failures are never chosen.
#include "database/Canonical.h"
#include "database/ScheduleStore.h"
#include "dsl/Compile.h"
#include "scheduler/Tuner.h"
#include "tests/scheduler/SchedTestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <unistd.h>

using namespace tessel;
using namespace tessel::sched;

namespace {

std::string temp_db(const std::string &tag) {
    std::string path = "/tmp/tessel_tuner_" + tag + "_" + std::to_string(getpid()) + ".db";
    std::remove(path.c_str());
    std::remove((path + "-wal").c_str());
    std::remove((path + "-shm").c_str());
    return path;
}

const ParamMap kSmallGemm = {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "fp16"}};

} // namespace

TEST(Tuner, TenSecondsOnASmallGemmRecordsEverythingAndBeatsNaive) {
    const std::string db = temp_db("budget");
    TuneOptions o;
    o.generator = "gemm";
    o.params = kSmallGemm;
    o.budget_s = 10;
    o.jobs = 2;
    o.db_path = db;
    int progress_calls = 0;
    o.on_progress = [&](const TuneProgress &p) {
        progress_calls++;
        EXPECT_EQ(p.measured, progress_calls);
    };
    TuneResult r = tune(o);
    ASSERT_TRUE(r.best.has_value());
    EXPECT_TRUE(r.best->verified);
    EXPECT_GE(r.measured.size(), 8u) << "the seeds at least";
    EXPECT_EQ(progress_calls, static_cast<int>(r.measured.size()));
    EXPECT_LT(r.elapsed_s, 10 + 5.0) << "the budget stops new measurements";
    for (const Measurement &m : r.measured) {
        EXPECT_FALSE(m.verified && !r.best->verified);
        if (m.verified) {
            EXPECT_GE(r.best->efficiency, m.efficiency);
        }
    }

    CompileRequest naive;
    naive.generator = "gemm";
    naive.params = kSmallGemm;
    RunReport n = run(naive, 1);
    ASSERT_TRUE(n.verified && n.efficiency);
    EXPECT_GE(r.best->efficiency, *n.efficiency);
    EXPECT_LT(r.best->cycles, *n.cycles);

    auto store = db::ScheduleStore::open(db);
    const ArchSpec arch = load_arch("ascend-like");
    const std::string params_json = db::params_to_json(make_problem("gemm", kSmallGemm, arch).params);
    std::vector<db::ResultRecord> hist = store.history("gemm", params_json, arch.hash());
    ASSERT_EQ(hist.size(), r.measured.size());
    std::set<std::string> recorded;
    for (const db::ResultRecord &h : hist) {
        recorded.insert(h.schedule_hash);
        EXPECT_TRUE(h.predicted_cycles.has_value());
        EXPECT_EQ(h.tool_version, "tessel-tune 0.1");
        if (h.verified) {
            EXPECT_TRUE(h.simulated_cycles && h.t_phys_cycles && h.efficiency && h.max_error && h.compile_ms);
        } else {
            EXPECT_FALSE(h.error_text.empty());
        }
        auto s = store.schedule_by_hash(h.schedule_hash);
        ASSERT_TRUE(s.has_value());
        EXPECT_EQ(s->origin, "tuner");
    }
    EXPECT_EQ(recorded.size(), hist.size()) << "a schedule was measured twice";
    auto best = store.best("gemm", params_json, arch.hash());
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->simulated_cycles.value_or(0) <= r.best->cycles, true);
    std::remove(db.c_str());
}

TEST(Tuner, ResumeSkipsMeasuredSchedules) {
    const std::string db = temp_db("resume");
    TuneOptions o;
    o.generator = "gemm";
    o.params = kSmallGemm;
    o.arch = "gemmini-like";
    o.params["dtype"] = "int8";
    o.budget_s = 60;
    o.max_measurements = 4;
    o.jobs = 2;
    o.db_path = db;
    TuneResult first = tune(o); // an interrupted run: it stops after four measurements
    ASSERT_EQ(first.measured.size(), 4u);
    TuneResult second = tune(o);
    ASSERT_EQ(second.measured.size(), 4u);
    EXPECT_EQ(second.previous.size(), 4u) << "the first run's results are loaded";
    EXPECT_GE(second.skipped, 1) << "the cost model's favourites were measured by the first run";
    std::set<std::string> a;
    for (const Measurement &m : first.measured) {
        a.insert(m.schedule_hash);
    }
    for (const Measurement &m : second.measured) {
        EXPECT_EQ(a.count(m.schedule_hash), 0u) << m.candidate.describe() << " measured again";
    }
    ASSERT_TRUE(first.best && second.best);
    EXPECT_FALSE(better(*first.best, *second.best)) << "the resumed best is at least the first run's";
    std::remove(db.c_str());
}

TEST(Tuner, FailuresAreNeverChosen) {
    Measurement ok, failed;
    ok.verified = true, ok.efficiency = 0.1, ok.cycles = 1000;
    failed.verified = false, failed.efficiency = 0.9, failed.cycles = 10, failed.error = "not verified";
    EXPECT_TRUE(better(ok, failed));
    EXPECT_FALSE(better(failed, ok));
    Measurement faster = ok;
    faster.efficiency = 0.2;
    EXPECT_TRUE(better(faster, ok));
    // Two cores: twice the physical limit's speed, so fewer cycles at a lower efficiency.
    Measurement split = ok;
    split.efficiency = 0.08, split.cycles = 600;
    EXPECT_TRUE(better(ok, split, "efficiency"));
    EXPECT_TRUE(better(split, ok, "cycles"));
    EXPECT_FALSE(better(failed, split, "cycles"));
}
