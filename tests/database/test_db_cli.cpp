// `tessel db ...` end to end on the built program: each subcommand's output,
// exit codes (0 ok, 1 user error with the message on stderr, 2 bad usage), and
// --db / TESSEL_DB selecting the file.
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/Interchange.h"
#include "database/WorkQueue.h"

#include <cstdio>
#include <regex>
#include <sys/wait.h>

using namespace tessel::db;
using namespace tessel::db::test;

namespace {

struct Result {
    int code = -1;
    std::string out, err;
};

Result tessel_cli(const std::string &args, const std::string &env = "") {
    // One file per process: ctest runs the tests of this file in parallel processes.
    std::string err_file = testing::TempDir() + "tessel_db_cli_stderr_" + std::to_string(::getpid()) + ".txt";
    std::string cmd = env + " " + std::string(TESSEL_BIN) + " " + args + " 2>" + err_file;
    Result r;
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) {
        return r;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
        r.out.append(buf, n);
    }
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = read_bytes(err_file);
    return r;
}

bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

/** The records every CLI test starts from. */
void fill_cli_db(const std::string &db) {
    ScheduleStore s = ScheduleStore::open(db);
    s.record_run(make_run(16, 900));
    RunRecord child = make_run(32, 400);
    child.parent_schedule_id = 1;
    child.note = "bigger tile";
    s.record_run(child);
    s.record_run(make_run(64, 100, false));
    s.record_run(make_run(32, 300, true, kArchB));
}

class DbCli : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fresh_dir(std::string("cli_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        db = (dir / "tessel.db").string();
        fill_cli_db(db);
    }
    std::filesystem::path dir;
    std::string db;
};

TEST_F(DbCli, ListShowsSchedules) {
    Result r = tessel_cli("db list --db " + db);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "id  hash")) << r.out;
    EXPECT_TRUE(has(r.out, "bigger tile")) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
}

TEST_F(DbCli, DbFileFromEnvironment) {
    Result r = tessel_cli("db list", "TESSEL_DB=" + db);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "bigger tile")) << r.out;
}

TEST_F(DbCli, ShowPrintsSpecAndResultsPerTarget) {
    Result r = tessel_cli("db --db " + db + " show 2");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "parent: #1")) << r.out;
    EXPECT_TRUE(has(r.out, "\"size\": 32")) << r.out;
    EXPECT_TRUE(has(r.out, "on ascend-like")) << r.out;
    EXPECT_TRUE(has(r.out, "on gemmini-like")) << r.out;
    EXPECT_TRUE(has(r.out, "results (2):")) << r.out;
}

TEST_F(DbCli, BestResolvesDefaultParamsAndIsTargetAware) {
    Result r = tessel_cli("db best -g gemm -p M=256 --arch ascend-like --db " + db);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "best for gemm (K=256,M=256,N=256,dtype=fp16) on ascend-like")) << r.out;
    EXPECT_TRUE(has(r.out, "sim 400")) << r.out << " (the 100-cycle result is unverified)";
    Result b = tessel_cli("db best -g gemm --arch gemmini-like --db " + db);
    EXPECT_EQ(b.code, 0) << b.err;
    EXPECT_TRUE(has(b.out, "sim 300")) << b.out;
}

TEST_F(DbCli, HistoryAndCompare) {
    Result h = tessel_cli("db history -g gemm --arch ascend-like --db " + db);
    EXPECT_EQ(h.code, 0) << h.err;
    EXPECT_TRUE(has(h.out, "3 result(s)")) << h.out;
    EXPECT_TRUE(has(h.out, "UNVERIFIED")) << h.out;
    Result c = tessel_cli("db compare 1 2 --arch ascend-like --db " + db);
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_TRUE(has(c.out, "gemm (K=256,M=256,N=256,dtype=fp16): 900 vs 400 cycles")) << c.out;
}

TEST_F(DbCli, ExportImportMerge) {
    std::string file = (dir / "out.json").string(), other = (dir / "other.db").string();
    Result e = tessel_cli("db export " + file + " --db " + db);
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_TRUE(has(e.out, "exported 3 schedule(s), 4 result(s)")) << e.out;
    Result i = tessel_cli("db import " + file + " --db " + other);
    EXPECT_EQ(i.code, 0) << i.err;
    EXPECT_TRUE(has(i.out, "1 generator(s), 1 instance(s), 2 target(s), 3 schedule(s), 4 result(s) added")) << i.out;
    ScheduleStore::open(other).record_run(make_run(8, 50));
    Result m = tessel_cli("db merge " + other + " --db " + db);
    EXPECT_EQ(m.code, 0) << m.err;
    EXPECT_TRUE(has(m.out, "0 target(s), 1 schedule(s), 1 result(s) added")) << m.out;
}

TEST_F(DbCli, ErrorShowUnknownId) {
    Result r = tessel_cli("db show 99 --db " + db);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "tessel: error: db show: no schedule with id 99 in " + db + " (tessel db list shows the ids)\n");
}

TEST_F(DbCli, ErrorBestWithoutVerifiedResult) {
    Result r = tessel_cli("db best -g gemm -p M=64 --arch ascend-like --db " + db);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(has(r.err, "tessel: error: db best: no verified result for gemm (K=256,M=64,N=256,dtype=fp16) on "
                           "ascend-like ("))
        << r.err;
}

TEST_F(DbCli, ErrorUnknownArch) {
    Result r = tessel_cli("db history -g gemm --arch nope --db " + db);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(has(r.err, "tessel: error: no target 'nope' in " + db + "; stored targets: ascend-like (")) << r.err;
}

// `db verify` re-runs every verified result through compile -> simulate -> compare;
// the fixture's records are not real schedules, so each verified one is marked
// unverified with the reason.
TEST_F(DbCli, VerifyMarksResultsThatNoLongerVerify) {
    Result r = tessel_cli("db verify --db " + db);
    EXPECT_EQ(r.code, 1) << "some results no longer verify: exit 1\n" << r.err;
    EXPECT_TRUE(has(r.out, "db verify: 3 result(s) re-run, 3 marked unverified")) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "no longer verifies: stored schedule: directive (#0): 'kind' must be a string")) << r.out;
    Result again = tessel_cli("db verify --db " + db);
    EXPECT_EQ(again.code, 0) << again.err;
    EXPECT_TRUE(has(again.out, "db verify: 0 result(s) re-run, 0 marked unverified")) << again.out << again.err;
}

TEST_F(DbCli, ErrorGarbageFileLeftUntouched) {
    std::string bad = (dir / "bad.db").string();
    std::ofstream(bad) << "garbage, not sqlite";
    Result r = tessel_cli("db list --db " + bad);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "tessel: error: " + bad +
                         " is not a SQLite database (its first bytes are not \"SQLite format 3\"); tessel refuses "
                         "to open it and left it untouched\n");
    EXPECT_EQ(read_bytes(bad), "garbage, not sqlite");
}

TEST_F(DbCli, ErrorImportUnreadableFile) {
    Result r = tessel_cli("db import " + (dir / "missing.json").string() + " --db " + db);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "tessel: error: cannot read db import file '" + (dir / "missing.json").string() +
                         "': No such file or directory\n");
}

TEST_F(DbCli, ErrorExportUnwritableFile) {
    Result r = tessel_cli("db export " + (dir / "no" / "such" / "dir.json").string() + " --db " + db);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "tessel: error: cannot write db export file '" + (dir / "no" / "such" / "dir.json").string() +
                         "': '" + (dir / "no" / "such").string() + "' is not a directory\n");
}

/** The same CLI on a PostgreSQL database: `--db URL` and TESSEL_DB=URL. */
class DbCliPostgres : public PgDatabaseTest {
protected:
    void SetUp() override {
        PgDatabaseTest::SetUp();
        if (IsSkipped()) {
            return;
        }
        dir = fresh_dir(std::string("clipg_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fill_cli_db(url);
        sqlite = (dir / "tessel.db").string();
        fill_cli_db(sqlite);
    }
    /** The URL quoted for the shell (it holds ? and &). */
    std::string q(const std::string &u) const { return "'" + u + "'"; }
    std::filesystem::path dir;
    std::string sqlite;
};

TEST_F(DbCliPostgres, DbUrlAndEnvironment) {
    Result r = tessel_cli("db list --db " + q(url));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "bigger tile")) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
    Result e = tessel_cli("db show 2", "TESSEL_DB=" + q(url));
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_TRUE(has(e.out, "parent: #1")) << e.out;
}

TEST_F(DbCliPostgres, QueriesPrintWhatSqlitePrints) {
    for (const char *cmd : {"db list", "db show 2", "db best -g gemm -p M=256 --arch ascend-like",
                            "db history -g gemm --arch ascend-like", "db compare 1 2 --arch ascend-like",
                            "db best -g gemm --arch gemmini-like"}) {
        Result a = tessel_cli(std::string(cmd) + " --db " + sqlite), b = tessel_cli(std::string(cmd) + " --db " + q(url));
        EXPECT_EQ(a.code, 0) << cmd << ": " << a.err;
        EXPECT_EQ(b.code, 0) << cmd << ": " << b.err;
        // Timestamps differ (the records were written at different moments): compare without them.
        auto strip = [](const std::string &t) {
            static const std::regex stamp(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
            return std::regex_replace(t, stamp, "TIME");
        };
        EXPECT_EQ(strip(a.out), strip(b.out)) << cmd;
    }
}

TEST_F(DbCliPostgres, MergeExportImportBetweenBackends) {
    std::string pg2 = cluster->create_database("clipg_second"), lite2 = (dir / "second.db").string();
    // SQLite -> PostgreSQL: the PostgreSQL database already holds the same schedules.
    ScheduleStore::open(sqlite).record_run(make_run(8, 50));
    Result m = tessel_cli("db merge " + sqlite + " --db " + q(url));
    EXPECT_EQ(m.code, 0) << m.err;
    EXPECT_TRUE(has(m.out, "0 target(s), 1 schedule(s), 5 result(s) added")) << m.out;
    // PostgreSQL -> PostgreSQL and PostgreSQL -> SQLite into empty databases.
    Result m2 = tessel_cli("db merge " + q(url) + " --db " + q(pg2));
    EXPECT_EQ(m2.code, 0) << m2.err;
    EXPECT_TRUE(has(m2.out, "1 generator(s), 1 instance(s), 2 target(s), 4 schedule(s), 9 result(s) added"))
        << m2.out;
    Result m3 = tessel_cli("db merge " + q(pg2) + " --db " + lite2);
    EXPECT_EQ(m3.code, 0) << m3.err;
    EXPECT_TRUE(has(m3.out, "4 schedule(s), 9 result(s) added")) << m3.out;
    // The three copies export identically.
    std::string e1 = (dir / "pg.json").string(), e2 = (dir / "pg2.json").string(), e3 = (dir / "lite2.json").string();
    EXPECT_EQ(tessel_cli("db export " + e1 + " --db " + q(url)).code, 0);
    EXPECT_EQ(tessel_cli("db export " + e2 + " --db " + q(pg2)).code, 0);
    EXPECT_EQ(tessel_cli("db export " + e3 + " --db " + lite2).code, 0);
    EXPECT_EQ(read_bytes(e2), read_bytes(e3));
    EXPECT_FALSE(read_bytes(e2).empty());
    // Import of an export into PostgreSQL adds nothing new.
    Result i = tessel_cli("db import " + e3 + " --db " + q(url));
    EXPECT_EQ(i.code, 0) << i.err;
    EXPECT_TRUE(has(i.out, "0 generator(s), 0 instance(s), 0 target(s), 0 schedule(s), 0 result(s) added")) << i.out;
}

TEST_F(DbCliPostgres, ErrorBadUrlServerDownNewerSchema) {
    Result bad = tessel_cli("db list --db 'postgresql:///tessel?hots=/tmp'");
    EXPECT_EQ(bad.code, 1);
    EXPECT_EQ(bad.err, "tessel: error: not a valid PostgreSQL URL: postgresql:///tessel?hots=/tmp: invalid URI query "
                       "parameter: \"hots\" (the form is "
                       "postgresql://[user[:password]@][host][:port]/dbname[?param=value&...])\n");
    std::string down = "postgresql:///tessel?host=" + dir.string() + "&port=54329";
    Result d = tessel_cli("db list --db " + q(down));
    EXPECT_EQ(d.code, 1);
    EXPECT_EQ(d.err.rfind("tessel: error: cannot connect to the PostgreSQL server of " + down + ": ", 0), 0u) << d.err;
    Result m = tessel_cli("db merge " + q(down) + " --db " + sqlite);
    EXPECT_EQ(m.code, 1);
    EXPECT_TRUE(has(m.err, "cannot connect to the PostgreSQL server of " + down)) << m.err;
    cluster->admin_exec("UPDATE tessel_schema SET version = 9", url.substr(14, url.find('?') - 14));
    Result n = tessel_cli("db list --db " + q(url));
    EXPECT_EQ(n.code, 1);
    EXPECT_EQ(n.err, "tessel: error: " + url + " has schema version 9; this tessel understands up to 4: upgrade tessel\n");
}

/** A campaign of three tasks: one done (500 cycles), one failed, one queued. */
void fill_campaign(const std::string &db) {
    ScheduleStore s = ScheduleStore::open(db);
    WorkQueue q(s);
    int64_t c = q.campaign("resnet18 x ascend");
    for (const char *k : {"a", "b", "c"}) {
        q.enqueue(c, k, "{}");
    }
    auto a = q.claim(c, "w1", 60000), b = q.claim(c, "w2", 60000);
    q.complete(*a, make_run(7, 500));
    q.fail(*b, "L1 overflow");
}

TEST_F(DbCliPostgres, CampaignStatusOnBothBackends) {
    for (const std::string &where : {q(url), sqlite}) {
        Result none = tessel_cli("db campaign status --db " + where);
        EXPECT_EQ(none.code, 0) << none.err;
        EXPECT_TRUE(has(none.out, "no tuning campaigns in ")) << none.out;
    }
    fill_campaign(url);
    fill_campaign(sqlite);
    for (const std::string &where : {q(url), sqlite}) {
        Result r = tessel_cli("db campaign status --db " + where);
        EXPECT_EQ(r.code, 0) << r.err;
        EXPECT_TRUE(has(r.out, "campaign #1 resnet18 x ascend: 3 task(s): 1 queued, 0 running, 1 done, 1 failed\n"))
            << r.out;
        EXPECT_TRUE(has(r.out, "  best so far: schedule ")) << r.out;
        EXPECT_TRUE(has(r.out, ", 500 cycles: gemm (K=256,M=256,N=256,dtype=fp16) on ascend-like (")) << r.out;
        Result missing = tessel_cli("db campaign status nope --db " + where);
        EXPECT_EQ(missing.code, 1);
        EXPECT_TRUE(has(missing.err, "tessel: error: db campaign status: no tuning campaign 'nope' in ")) << missing.err;
    }
}

TEST_F(DbCli, BadUsageIsTwo) {
    EXPECT_EQ(tessel_cli("db best --db " + db).code, 2);
    EXPECT_EQ(tessel_cli("db").code, 2);
}

} // namespace

// `tessel run --save` records a real run; `db verify` re-runs it and it still verifies.
TEST(DbCliRun, RunSaveThenVerify) {
    auto dir = fresh_dir("cli_run_save");
    std::string db = (dir / "runs.db").string();
    Result r = tessel_cli("run -g gemm -p M=16,N=16,K=16,dtype=int8 --save --note smoke --db " + db);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.err, "tessel run: recorded result 1 in the schedule database")) << r.err;
    Result list = tessel_cli("db list --db " + db);
    EXPECT_TRUE(has(list.out, "default")) << list.out;
    EXPECT_TRUE(has(list.out, "smoke")) << list.out;
    Result v = tessel_cli("db verify --db " + db);
    EXPECT_EQ(v.code, 0) << v.err;
    EXPECT_TRUE(has(v.out, "db verify: 1 result(s) re-run, 0 marked unverified")) << v.out << v.err;
}

// `tessel run --save --db URL`: a real run recorded on the server.
TEST(DbCliRun, RunSaveToPostgres) {
    std::string why;
    PgCluster *cluster = shared_cluster(&why);
    if (!cluster) {
        GTEST_SKIP() << why;
    }
    std::string url = cluster->create_database("cli_run_save");
    Result r = tessel_cli("run -g gemm -p M=16,N=16,K=16,dtype=int8 --save --note smoke --db '" + url + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.err, "tessel run: recorded result 1 in the schedule database")) << r.err;
    Result list = tessel_cli("db list", "TESSEL_DB='" + url + "'");
    EXPECT_TRUE(has(list.out, "smoke")) << list.out;
}
