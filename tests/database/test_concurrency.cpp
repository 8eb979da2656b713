// Several writers at once (SQLite: WAL + busy timeout + BEGIN IMMEDIATE;
// PostgreSQL: a server, row locks and ON CONFLICT) and writers killed with
// SIGKILL mid-write: nothing committed is lost, nothing is corrupt, on both
// backends.
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/Schema.h"

#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

using namespace tessel::db;
using namespace tessel::db::test;

namespace {

/** Runs `body` in a child process; returns its pid. The child exits 0 on
 * success, 1 after printing an exception. */
template <typename F>
pid_t spawn(F body) {
    pid_t pid = ::fork();
    if (pid == 0) {
        int rc = 0;
        try {
            body();
        } catch (const std::exception &e) {
            fprintf(stderr, "child %d: %s\n", ::getpid(), e.what());
            rc = 1;
        }
        ::_exit(rc);
    }
    return pid;
}

std::string new_uid_for_test(int round, int i) {
    return "round" + std::to_string(round) + "-result" + std::to_string(i);
}

class Concurrency : public ::testing::TestWithParam<std::string> {
protected:
    /** A fresh database of the test's backend: a file path or a URL. */
    std::string fresh(const std::string &label) {
        dir = fresh_dir(label + "_" + GetParam());
        std::string skip;
        std::string db = fresh_db(GetParam(), dir.string(), "tessel", &skip);
        if (db.empty()) {
            skip_reason = skip;
        }
        return db;
    }
    std::filesystem::path dir;
    std::string skip_reason;
};

#define FRESH_OR_SKIP(var, label)                                                                                    \
    std::string var = fresh(label);                                                                                  \
    if (var.empty()) {                                                                                               \
        GTEST_SKIP() << skip_reason;                                                                                 \
    }

TEST_P(Concurrency, FourProcessesWrite500ResultsEachWithoutLoss) {
    FRESH_OR_SKIP(path, "four_writers");
    if (GetParam() == "sqlite") {
        ScheduleStore::open(path); // created and migrated; closed before forking
    } // on PostgreSQL the four writers' first opens race to migrate
    std::vector<pid_t> kids;
    for (int w = 0; w < 4; w++) {
        kids.push_back(spawn([&, w] {
            ScheduleStore s = ScheduleStore::open(path);
            for (int i = 0; i < 500; i++) {
                RunRecord r = make_run(w * 1000 + i % 50, 1000 + i); // shared and new schedules
                r.result.tool_version = "worker" + std::to_string(w);
                s.record_run(r);
            }
        }));
    }
    for (pid_t k : kids) {
        int status = 0;
        ASSERT_EQ(::waitpid(k, &status, 0), k);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed (see stderr)";
    }
    ScheduleStore s = ScheduleStore::open(path);
    EXPECT_EQ(s.connection().query_int("SELECT count(*) FROM results"), 2000);
    for (int w = 0; w < 4; w++) {
        Statement q = s.connection().prepare("SELECT count(*) FROM results WHERE tool_version = ?");
        q.bind(1, "worker" + std::to_string(w));
        ASSERT_TRUE(q.step());
        EXPECT_EQ(q.get_int(0), 500);
    }
    EXPECT_EQ(s.schedules().size(), 200u);
    EXPECT_EQ(s.generators().size(), 1u);
}

TEST_P(Concurrency, TwoThreadsWithOwnConnections) {
    FRESH_OR_SKIP(path, "two_threads");
    ScheduleStore::open(path);
    auto work = [&](int w) {
        ScheduleStore s = ScheduleStore::open(path);
        for (int i = 0; i < 200; i++) {
            s.record_run(make_run(i % 7, 100 + w * 1000 + i));
        }
    };
    std::thread t1(work, 0), t2(work, 1);
    t1.join();
    t2.join();
    ScheduleStore s = ScheduleStore::open(path);
    EXPECT_EQ(s.results().size(), 400u);
    EXPECT_EQ(s.schedules().size(), 7u);
}

TEST_P(Concurrency, SigkillMidWriteLosesNoCommittedResult) {
    FRESH_OR_SKIP(path, "sigkill");
    ScheduleStore::open(path);
    std::mt19937 rng(12345);
    std::set<std::string> committed;
    for (int round = 0; round < 20; round++) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        pid_t kid = spawn([&] {
            ::close(fds[0]);
            ScheduleStore s = ScheduleStore::open(path);
            for (int i = 0;; i++) {
                RunRecord r = make_run(i % 13, 1000 + i);
                r.result.uid = new_uid_for_test(round, i);
                r.result.error_text = std::string(static_cast<size_t>(i % 5) * 1000, 'x'); // vary page use
                s.record_run(r);
                // Reported only after COMMIT returned.
                std::string line = r.result.uid + "\n";
                if (::write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
                    ::_exit(2);
                }
            }
        });
        ::close(fds[1]);
        // The kill comes 2-60 ms after the writer's first commit, not after its start: how
        // long opening the store takes (a PostgreSQL connection, a sanitizer build, a loaded
        // machine) must not decide whether a round writes anything (at most 60 s waited).
        std::string text;
        char buf[4096];
        ssize_t n;
        pollfd pf{fds[0], POLLIN, 0};
        while (text.find('\n') == std::string::npos && ::poll(&pf, 1, 60000) > 0 &&
               (n = ::read(fds[0], buf, sizeof buf)) > 0) {
            text.append(buf, static_cast<size_t>(n));
        }
        ASSERT_NE(text.find('\n'), std::string::npos) << "round " << round << ": the writer committed nothing in 60 s";
        std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(2000, 60000)(rng)));
        ::kill(kid, SIGKILL);
        int status = 0;
        ::waitpid(kid, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
            text.append(buf, static_cast<size_t>(n));
        }
        ::close(fds[0]);
        for (size_t p = 0, q; (q = text.find('\n', p)) != std::string::npos; p = q + 1) {
            committed.insert(text.substr(p, q - p));
        }
        ScheduleStore s = ScheduleStore::open(path);
        if (GetParam() == "sqlite") {
            Statement ic = s.connection().prepare("PRAGMA integrity_check");
            ASSERT_TRUE(ic.step());
            ASSERT_EQ(ic.get_text(0), "ok") << "round " << round;
        }
        std::set<std::string> present;
        for (const auto &r : s.results()) {
            present.insert(r.uid);
        }
        for (const auto &uid : committed) {
            ASSERT_TRUE(present.count(uid)) << "committed result " << uid << " lost in round " << round;
        }
    }
    EXPECT_GE(committed.size(), 20u) << "every round commits at least once before its kill";
}

INSTANTIATE_TEST_SUITE_P(Backends, Concurrency, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

} // namespace
