// The PostgreSQL backend's own behaviour, on a real throwaway server: URL
// handling, the messages for a bad URL, a server that is down, a connection
// killed mid-transaction and a server stopped mid-run (nothing partial is
// written), refusals (a newer schema, another program's tables, read-only
// opens), and values that must come back exactly as SQLite gives them.
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/Postgres.h"
#include "database/Schema.h"

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

using namespace tessel::db;
using namespace tessel::db::test;

namespace {

std::string open_error(const std::string &url, bool copy = false) {
    try {
        copy ? ScheduleStore::open_copy(url) : ScheduleStore::open(url);
    } catch (const DatabaseError &e) {
        return e.what();
    }
    return "(opened)";
}

/** The database name of a test cluster URL (postgresql:///NAME?...). */
std::string db_name(const std::string &url) {
    size_t b = std::string("postgresql:///").size();
    return url.substr(b, url.find('?') - b);
}

using Postgres = PgDatabaseTest;

TEST(PgUrl, PlaceholdersAreNumberedOutsideQuotes) {
    int n = 0;
    EXPECT_EQ(number_placeholders("SELECT '?', ?, \"a?\", 'it''s ?', ? FROM t", &n),
              "SELECT '?', $1, \"a?\", 'it''s ?', $2 FROM t");
    EXPECT_EQ(n, 2);
}

TEST(PgUrl, PasswordIsRedactedInMessages) {
    EXPECT_EQ(redact_postgres_url("postgresql://me:s3cret@db.example:5432/tessel?sslmode=require&password=x&a=b"),
              "postgresql://me:***@db.example:5432/tessel?sslmode=require&password=***&a=b");
    EXPECT_EQ(redact_postgres_url("postgres://me@db.example/tessel"), "postgres://me@db.example/tessel");
    EXPECT_TRUE(is_postgres_url("postgres://x/y"));
    EXPECT_TRUE(is_postgres_url("postgresql:///tessel?host=/tmp"));
    EXPECT_FALSE(is_postgres_url("/home/u/postgresql://x.db"));
}

TEST(PgErrors, ErrorBadUrl) {
    EXPECT_EQ(open_error("postgresql:///tessel?hots=/tmp"),
              "not a valid PostgreSQL URL: postgresql:///tessel?hots=/tmp: invalid URI query parameter: \"hots\" "
              "(the form is postgresql://[user[:password]@][host][:port]/dbname[?param=value&...])");
    std::string e = open_error("postgresql://me:pw@[::1/tessel");
    EXPECT_EQ(e.rfind("not a valid PostgreSQL URL: postgresql://me:***@[::1/tessel: ", 0), 0u) << e;
}

TEST(PgErrors, ErrorServerDown) {
    auto dir = fresh_dir("pg_down"); // no server listens here
    std::string url = "postgresql:///tessel?host=" + dir.string() + "&port=54329";
    std::string e = open_error(url);
    EXPECT_EQ(e.rfind("cannot connect to the PostgreSQL server of " + url + ": connection to server on socket \"" +
                          dir.string() + "/.s.PGSQL.54329\" failed: No such file or directory",
                      0),
              0u)
        << e;
    EXPECT_NE(e.find("(is the server running, and does the database exist?)"), std::string::npos) << e;
}

TEST_F(Postgres, ErrorDatabaseDoesNotExist) {
    std::string missing = cluster->url("no_such_db");
    std::string e = open_error(missing);
    EXPECT_EQ(e.rfind("cannot connect to the PostgreSQL server of " + missing + ": ", 0), 0u) << e;
    EXPECT_NE(e.find("database \"no_such_db\" does not exist"), std::string::npos) << e;
}

TEST_F(Postgres, ErrorConnectionKilledMidTransactionWritesNothing) {
    ScheduleStore store = ScheduleStore::open(url);
    store.record_run(make_run(1, 100));
    std::string e;
    try {
        Transaction t(store.connection());
        ScheduleRecord s;
        s.spec_json = R"({"directives":[],"version":1})";
        store.upsert_schedule(s);
        cluster->admin_exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                            db_name(url) + "' AND pid <> pg_backend_pid()");
        store.add_result(make_run(2, 200).result);
        t.commit();
    } catch (const DatabaseError &err) {
        e = err.what(); // the Transaction's rollback ran on a dead connection: no crash
    }
    EXPECT_EQ(e.rfind("lost the connection to the PostgreSQL server of " + url + " (", 0), 0u) << e;
    // libpq reports the server's FATAL or the closed socket, whichever it reads first.
    EXPECT_TRUE(e.find("terminating connection due to administrator command") != std::string::npos ||
                e.find("server closed the connection unexpectedly") != std::string::npos)
        << e;
    const std::string tail = "; the transaction in progress was rolled back, nothing of it was written";
    EXPECT_EQ(e.substr(e.size() - std::min(e.size(), tail.size())), tail) << e;
    // The connection stays dead (no crash, the same kind of message).
    EXPECT_THROW(store.results(), DatabaseError);
    ScheduleStore again = ScheduleStore::open(url);
    EXPECT_EQ(again.schedules().size(), 1u) << "the schedule of the killed transaction was not committed";
    EXPECT_EQ(again.results().size(), 1u);
}

TEST(PgServerStop, ErrorServerStoppedMidRunLosesNothingCommitted) {
    if (std::string why = PgCluster::missing_reason(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    // Its own cluster: stopping the shared one would fail the other tests.
    auto own = PgCluster::start((fresh_dir("pg_stop") / "cluster").string());
    own->admin_exec("CREATE DATABASE stopme");
    std::string url = own->url("stopme");
    ScheduleStore::open(url);
    std::set<std::string> committed;
    std::string error;
    std::atomic<bool> started{false};
    std::thread writer([&] {
        try {
            ScheduleStore s = ScheduleStore::open(url);
            for (int i = 0;; i++) {
                RunRecord r = make_run(i % 7, 1000 + i);
                r.result.uid = "stop-" + std::to_string(i);
                s.record_run(r);
                committed.insert(r.result.uid);
                started = true;
            }
        } catch (const DatabaseError &e) {
            error = e.what();
        }
    });
    while (!started) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    own->stop_server();
    writer.join();
    EXPECT_EQ(error.rfind("lost the connection to the PostgreSQL server of " + url + " (", 0), 0u) << error;
    EXPECT_EQ(open_error(url).rfind("cannot connect to the PostgreSQL server of " + url, 0), 0u);
    own->start_server();
    ScheduleStore s = ScheduleStore::open(url);
    std::set<std::string> present;
    for (const auto &r : s.results()) {
        present.insert(r.uid);
    }
    for (const auto &uid : committed) {
        EXPECT_TRUE(present.count(uid)) << "committed result " << uid << " lost";
    }
    // The run that failed is all or nothing; only a lost COMMIT leaves its outcome unknown.
    bool commit_unknown = error.find("whether the transaction was committed is unknown") != std::string::npos;
    EXPECT_LE(present.size(), committed.size() + (commit_unknown ? 1 : 0));
    EXPECT_GT(committed.size(), 5u);
    EXPECT_EQ(s.connection().query_int("SELECT count(*) FROM results r WHERE NOT EXISTS "
                                       "(SELECT 1 FROM schedules s WHERE s.id = r.schedule_id)"),
              0);
}

TEST_F(Postgres, ErrorNewerSchemaRefusedAndUntouched) {
    ScheduleStore::open(url).record_run(make_run(1, 100));
    cluster->admin_exec("UPDATE tessel_schema SET version = 7", db_name(url));
    std::string want = url + " has schema version 7; this tessel understands up to 4: upgrade tessel";
    EXPECT_EQ(open_error(url), want);
    EXPECT_EQ(open_error(url, true), want);
    PgConnection c(url);
    EXPECT_EQ(schema_version(c), 7);
    EXPECT_EQ(c.query_int("SELECT count(*) FROM results"), 1);
}

TEST_F(Postgres, ErrorTablesOfAnotherProgramRefused) {
    cluster->admin_exec("CREATE TABLE moz_places (id INTEGER)", db_name(url));
    EXPECT_EQ(open_error(url), "(opened)") << "other programs' tables may share the database";
    std::string other = cluster->create_database("clash");
    cluster->admin_exec("CREATE TABLE results (x INTEGER)", db_name(other));
    EXPECT_EQ(open_error(other), other + " already has a table 'results' but no Tessel schema version (table "
                                         "tessel_schema); tessel refuses to use it and left it untouched");
    PgConnection c(other);
    EXPECT_EQ(schema_version(c), 0);
}

TEST_F(Postgres, ReadOnlyOpenWritesNothing) {
    EXPECT_EQ(open_error(url, true), url + " holds no Tessel schedule database yet; it was read only and left "
                                           "untouched");
    {
        PgConnection c(url);
        EXPECT_EQ(schema_version(c), 0) << "nothing was created";
    }
    ScheduleStore::open(url).record_run(make_run(1, 100));
    ScheduleStore ro = ScheduleStore::open_copy(url);
    EXPECT_EQ(ro.results().size(), 1u);
    try {
        ro.record_run(make_run(2, 200));
        FAIL() << "a read-only session wrote";
    } catch (const DatabaseError &e) {
        EXPECT_NE(std::string(e.what()).find("cannot execute INSERT in a read-only transaction"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(ScheduleStore::open(url).results().size(), 1u);
}

TEST_F(Postgres, ValuesComeBackExactly) {
    ScheduleStore store = ScheduleStore::open(url);
    RunRecord r = make_run(1, 9007199254740993); // above 2^53: an int64, not a double
    r.result.efficiency = 0.1 + 0.2;
    r.result.max_error = 1e-300;
    r.result.compile_ms = 12345.678901234567;
    r.result.error_text = "quotes ' \" and ? and $1 and unicode \xc3\xa9\xe2\x9c\x93";
    r.note = "note with ; and --";
    store.record_run(r);
    ResultRecord got = store.results().at(0);
    EXPECT_EQ(got.simulated_cycles, 9007199254740993);
    EXPECT_EQ(got.efficiency, 0.1 + 0.2);
    EXPECT_EQ(got.max_error, 1e-300);
    EXPECT_EQ(got.compile_ms, 12345.678901234567);
    EXPECT_EQ(got.error_text, r.result.error_text);
    EXPECT_FALSE(got.l2_hit_bytes);
    EXPECT_EQ(store.schedules().at(0).note, "note with ; and --");
}

TEST_F(Postgres, IdsHaveNoGapsFromDeduplicatedUpserts) {
    ScheduleStore store = ScheduleStore::open(url);
    for (int i = 0; i < 3; i++) {
        store.record_run(make_run(1, 100 + i)); // the same generator, instance, target, schedule
    }
    store.record_run(make_run(2, 50));
    EXPECT_EQ(store.schedules().at(1).id, 2);
    EXPECT_EQ(store.results().at(3).id, 4);
}

} // namespace
