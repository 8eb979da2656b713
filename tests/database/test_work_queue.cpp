// The tuning work queue (database/WorkQueue.h) on both backends: claims in
// order under a lease, an expired lease claimed again and the old claim
// fenced out, 4 worker processes draining a campaign with every task done
// exactly once, and workers killed with SIGKILL at random moments (at least
// 20 kills) losing nothing and duplicating nothing.
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/WorkQueue.h"

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <signal.h>
#include <sys/wait.h>

using namespace tessel::db;
using namespace tessel::db::test;
using Clock = std::chrono::steady_clock;

namespace {

/** What a worker records for a task: a run whose schedule is the task key. */
RunRecord run_for(const TaskRecord &t) {
    RunRecord r = make_run(static_cast<int>(std::hash<std::string>()(t.key) % 1000), 1000 + t.id);
    r.schedule_json = R"({"version":1,"task":")" + t.key + "\"}";
    return r;
}

class WorkQueueTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        dir = fresh_dir("wq_" + name.substr(0, name.find('/')) + "_" + GetParam());
        std::string skip;
        db = fresh_db(GetParam(), dir.string(), "tessel", &skip);
        if (db.empty()) {
            GTEST_SKIP() << skip;
        }
        store.emplace(ScheduleStore::open(db));
        queue.emplace(*store);
    }
    /** A campaign of `n` tasks. */
    int64_t campaign_of(int n) {
        int64_t c = queue->campaign("gemm x3 presets");
        for (int i = 0; i < n; i++) {
            queue->enqueue(c, "task-" + std::to_string(i), R"({"i":)" + std::to_string(i) + "}");
        }
        return c;
    }
    /** Every task done once, each with its own result row with the task's uid. */
    void expect_done_exactly_once(int64_t c, int n) {
        CampaignStatus st = queue->status(c);
        EXPECT_EQ(st.done, n);
        EXPECT_EQ(st.queued + st.running + st.failed, 0);
        std::set<int64_t> result_ids;
        for (const auto &t : queue->tasks(c)) {
            ASSERT_TRUE(t.result_id) << t.key;
            result_ids.insert(*t.result_id);
        }
        EXPECT_EQ(result_ids.size(), static_cast<size_t>(n)) << "one result per task";
        std::map<std::string, int> uids;
        for (const auto &r : store->results()) {
            uids[r.uid]++;
        }
        EXPECT_EQ(uids.size(), static_cast<size_t>(n)) << "no result outside the tasks, none twice";
        for (const auto &t : queue->tasks(c)) {
            EXPECT_EQ(uids[WorkQueue::result_uid(t.campaign, t.key)], 1) << t.key;
        }
    }
    std::filesystem::path dir;
    std::string db;
    std::optional<ScheduleStore> store;
    std::optional<WorkQueue> queue;
};

/** A worker process: claims and completes until every task of the campaign
 * is finished (waiting out others' leases), sleeping `work_ms` per task (the
 * measurement); writes each completed task id to `fd`. */
pid_t spawn_worker(const std::string &db, int64_t campaign, const std::string &owner, int64_t lease_ms, int work_ms,
                   int fd) {
    pid_t pid = ::fork();
    if (pid != 0) {
        return pid;
    }
    int rc = 0;
    try {
        ScheduleStore s = ScheduleStore::open(db);
        WorkQueue q(s);
        for (;;) {
            auto t = q.claim(campaign, owner, lease_ms);
            if (!t) {
                CampaignStatus st = q.status(campaign);
                if (st.queued + st.running == 0) {
                    break;
                }
                // Leased by others (perhaps dead): wait for their leases.
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                continue;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(work_ms));
            if (q.complete(*t, run_for(*t)) && fd >= 0) {
                std::string line = std::to_string(t->id) + "\n";
                if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
                    ::_exit(2);
                }
            }
        }
    } catch (const std::exception &e) {
        fprintf(stderr, "worker %s: %s\n", owner.c_str(), e.what());
        rc = 1;
    }
    ::_exit(rc);
}

std::vector<int64_t> read_ids(int fd) {
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) {
        text.append(buf, static_cast<size_t>(n));
    }
    std::vector<int64_t> ids;
    for (size_t p = 0, q; (q = text.find('\n', p)) != std::string::npos; p = q + 1) {
        ids.push_back(std::stoll(text.substr(p, q - p)));
    }
    return ids;
}

TEST_P(WorkQueueTest, EnqueueDeduplicatesAndClaimsInOrder) {
    int64_t c = campaign_of(3);
    EXPECT_EQ(queue->campaign("gemm x3 presets"), c);
    EXPECT_FALSE(queue->enqueue(c, "task-1", R"({"i":99})")) << "a queued key is not queued again";
    auto a = queue->claim(c, "w1", 60000), b = queue->claim(c, "w2", 60000);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->key, "task-0");
    EXPECT_EQ(b->key, "task-1");
    EXPECT_EQ(a->state, "running");
    EXPECT_EQ(a->attempts, 1);
    EXPECT_EQ(a->payload_json, R"({"i":0})");
    EXPECT_EQ(a->campaign, "gemm x3 presets");
    EXPECT_GE(a->lease_expires_ms, queue->now_ms() + 50000);
    CampaignStatus st = queue->status(c);
    EXPECT_EQ(st.queued, 1);
    EXPECT_EQ(st.running, 2);
    EXPECT_TRUE(queue->complete(*a, run_for(*a)));
    EXPECT_FALSE(queue->complete(*a, run_for(*a))) << "a result is written once";
    EXPECT_TRUE(queue->fail(*b, "L1 overflow"));
    auto c3 = queue->claim(c, "w1", 60000);
    ASSERT_TRUE(c3);
    EXPECT_EQ(c3->key, "task-2");
    EXPECT_FALSE(queue->claim(c, "w1", 60000)) << "nothing left to claim";
    st = queue->status(c);
    EXPECT_EQ(st.done, 1);
    EXPECT_EQ(st.failed, 1);
    EXPECT_EQ(st.running, 1);
    EXPECT_EQ(queue->tasks(c).at(1).error_text, "L1 overflow");
    EXPECT_EQ(store->results().size(), 1u);
    EXPECT_EQ(store->results().at(0).uid, WorkQueue::result_uid("gemm x3 presets", "task-0"));
}

TEST_P(WorkQueueTest, ExpiredLeaseIsClaimedAgainAndTheOldClaimIsFenced) {
    int64_t c = campaign_of(1);
    const int64_t lease = 300;
    auto a = queue->claim(c, "worker-a", lease);
    ASSERT_TRUE(a);
    EXPECT_FALSE(queue->claim(c, "worker-b", lease)) << "a live lease is not claimable";
    EXPECT_TRUE(queue->heartbeat(*a, lease)) << "the owner extends its lease";
    auto t0 = Clock::now();
    std::optional<TaskRecord> b;
    while (!(b = queue->claim(c, "worker-b", 60000)) && Clock::now() - t0 < std::chrono::seconds(5)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    double waited_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    ASSERT_TRUE(b) << "the expired lease was never claimed again";
    EXPECT_LE(waited_ms, lease + 1000) << "claimed again within the lease time plus a second";
    EXPECT_GE(waited_ms, lease - 50) << "not before the lease expired";
    EXPECT_EQ(b->id, a->id);
    EXPECT_EQ(b->attempts, 2);
    // The first worker comes back late: fenced out, nothing written.
    EXPECT_FALSE(queue->heartbeat(*a, lease));
    EXPECT_FALSE(queue->complete(*a, run_for(*a)));
    EXPECT_TRUE(store->results().empty());
    EXPECT_TRUE(queue->complete(*b, run_for(*b)));
    expect_done_exactly_once(c, 1);
}

TEST_P(WorkQueueTest, FourProcessesDrainACampaignExactlyOnce) {
    const int n = 200;
    int64_t c = campaign_of(n);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::vector<pid_t> kids;
    for (int w = 0; w < 4; w++) {
        kids.push_back(spawn_worker(db, c, "worker-" + std::to_string(w), 60000, 0, fds[1]));
    }
    ::close(fds[1]);
    std::vector<int64_t> done = read_ids(fds[0]);
    ::close(fds[0]);
    for (pid_t k : kids) {
        int status = 0;
        ASSERT_EQ(::waitpid(k, &status, 0), k);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a worker failed (see stderr)";
    }
    std::set<int64_t> unique(done.begin(), done.end());
    EXPECT_EQ(done.size(), static_cast<size_t>(n)) << "each completion reported once";
    EXPECT_EQ(unique.size(), static_cast<size_t>(n));
    for (const auto &t : queue->tasks(c)) {
        EXPECT_EQ(t.attempts, 1) << t.key << ": no lease expired, so no task was claimed twice";
    }
    expect_done_exactly_once(c, n);
}

TEST_P(WorkQueueTest, WorkersKilledAtRandomMomentsLoseNothing) {
    const int n = 150, kills_wanted = 20;
    const int64_t lease = 250;
    int64_t c = campaign_of(n);
    std::mt19937 rng(2027);
    std::vector<pid_t> kids;
    int spawned = 0, kills = 0;
    auto spawn = [&] { kids.push_back(spawn_worker(db, c, "worker-" + std::to_string(spawned++), lease, 40, -1)); };
    for (int w = 0; w < 4; w++) {
        spawn();
    }
    auto t0 = Clock::now();
    while (kills < kills_wanted && queue->status(c).done < n && Clock::now() - t0 < std::chrono::seconds(60)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 90)(rng)));
        size_t victim = std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng);
        ::kill(kids[victim], SIGKILL);
        int status = 0;
        ::waitpid(kids[victim], &status, 0);
        kids.erase(kids.begin() + static_cast<std::ptrdiff_t>(victim));
        kills += WIFSIGNALED(status) ? 1 : 0; // a worker that found the campaign finished exits on its own
        spawn();
    }
    EXPECT_GE(kills, kills_wanted) << "the campaign finished before enough kills: make the work longer";
    // The survivors finish the campaign, taking over the killed workers' tasks
    // as their leases expire.
    for (pid_t k : kids) {
        int status = 0;
        ::waitpid(k, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a worker failed (see stderr)";
    }
    expect_done_exactly_once(c, n);
    int64_t reclaimed = 0;
    for (const auto &t : queue->tasks(c)) {
        reclaimed += t.attempts > 1 ? 1 : 0;
    }
    EXPECT_GT(reclaimed, 0) << "some killed worker's task was claimed again";
}

INSTANTIATE_TEST_SUITE_P(Backends, WorkQueueTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

} // namespace
