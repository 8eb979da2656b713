// Schema versions and refusals: migrating the v1 fixture (with data), the
// ladder's single transaction, newer-version / non-SQLite / damaged / foreign
// files refused with their messages and left byte-for-byte unchanged.
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/Interchange.h"
#include "database/Postgres.h"
#include "database/Schema.h"

#include <thread>

using namespace tessel::db;
using namespace tessel::db::test;

namespace {

std::string fixture(const std::string &name) { return read_bytes(std::string(TESSEL_DB_FIXTURES) + "/" + name); }

/** Builds a database file from an SQL dump (as an old tessel would have left it). */
void load_dump(const std::filesystem::path &db, const std::string &sql) {
    SqliteConnection c(db.string(), SqliteConnection::Mode::ReadWriteCreate);
    c.exec(sql);
}

std::string open_error(const std::filesystem::path &p) {
    try {
        ScheduleStore::open(p.string());
    } catch (const DatabaseError &e) {
        return e.what();
    }
    return "(opened)";
}

bool has_column(Connection &c, const std::string &table, const std::string &column) {
    Statement s = c.prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid");
    s.bind(1, table);
    while (s.step()) {
        if (s.get_text(0) == column) {
            return true;
        }
    }
    return false;
}

/** The v1 fixture's records after a migration to v2 (both backends). */
void expect_v1_records_migrated(ScheduleStore &store) {
    // Every v1 record survived, and the queries work on them.
    EXPECT_EQ(store.results().size(), 3u);
    EXPECT_EQ(store.schedules().at(1).parent_id, 1);
    auto best = store.best("gemm", R"({"K":256,"M":256,"N":256,"dtype":"fp16"})", "0123456789abcdef");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->uid, "00000000000000000000000000000002");
    EXPECT_EQ(best->simulated_cycles, 50000);
    EXPECT_EQ(best->efficiency, 0.8000000000000000444);
    EXPECT_FALSE(best->l2_hit_bytes);
    EXPECT_EQ(store.history("gemm", R"({"K":"256","M":"256","N":"256","dtype":"fp16"})", "0123456789abcdef")
                  .back()
                  .error_text,
              "stage(A, L1) at C.ko needs 288 KiB with buffers=2; L1 has 256 KiB");
    // The new column is usable after the migration.
    ResultRecord r = store.results().at(0);
    r.uid.clear();
    r.l2_hit_bytes = 4096;
    int64_t id = store.add_result(r);
    EXPECT_EQ(store.results().back().id, id);
    EXPECT_EQ(store.results().back().l2_hit_bytes, 4096);
}

TEST(Schema, MigratesV1FixtureWithData) {
    auto dir = fresh_dir("migrate_v1");
    load_dump(dir / "old.db", fixture("schema_v1.sql"));
    {
        SqliteConnection c((dir / "old.db").string(), SqliteConnection::Mode::ReadOnly);
        ASSERT_EQ(schema_version(c), 1);
        ASSERT_FALSE(has_column(c, "results", "l2_hit_bytes"));
    }
    ScheduleStore store = ScheduleStore::open((dir / "old.db").string());
    EXPECT_EQ(schema_version(store.connection()), kSchemaVersion);
    EXPECT_TRUE(has_column(store.connection(), "results", "l2_hit_bytes"));
    EXPECT_EQ(store.connection().query_int(
                  "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'results_compare'"),
              1);
    expect_v1_records_migrated(store);
}

TEST(Schema, MigratesV2FixtureWithData) {
    auto dir = fresh_dir("migrate_v2");
    load_dump(dir / "old.db", fixture("schema_v2.sql"));
    ScheduleStore store = ScheduleStore::open((dir / "old.db").string());
    EXPECT_EQ(schema_version(store.connection()), kSchemaVersion);
    EXPECT_EQ(store.connection().query_int("SELECT count(*) FROM tune_tasks"), 0) << "v3's queue tables exist";
    EXPECT_EQ(store.connection().query_int("SELECT count(*) FROM tune_campaigns"), 0);
    ASSERT_EQ(store.results().size(), 4u);
    EXPECT_EQ(store.results().at(3).l2_hit_bytes, 65536);
    auto best = store.best("gemm", R"({"K":"256","M":"256","N":"256","dtype":"fp16"})", "0123456789abcdef");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->simulated_cycles, 48000);
}

TEST(Schema, MigratesV3FixtureWithData) {
    auto dir = fresh_dir("migrate_v3");
    load_dump(dir / "old.db", fixture("schema_v3.sql"));
    {
        SqliteConnection c((dir / "old.db").string(), SqliteConnection::Mode::ReadOnly);
        ASSERT_EQ(schema_version(c), 3);
        ASSERT_FALSE(has_column(c, "tune_campaigns", "closed"));
    }
    ScheduleStore store = ScheduleStore::open((dir / "old.db").string());
    EXPECT_EQ(schema_version(store.connection()), kSchemaVersion);
    EXPECT_TRUE(has_column(store.connection(), "tune_campaigns", "closed"));
    EXPECT_TRUE(has_column(store.connection(), "tune_campaigns", "coordinator_expires_ms"));
    // The v3 campaign is open with no live coordinator; its tasks are kept.
    EXPECT_EQ(store.connection().query_int("SELECT closed + coordinator_expires_ms FROM tune_campaigns WHERE id = 1"), 0);
    EXPECT_EQ(store.connection().query_int("SELECT count(*) FROM tune_tasks WHERE state = 'queued'"), 1);
    EXPECT_EQ(store.connection().query_int("SELECT result_id FROM tune_tasks WHERE task_key = 'k1'"), 4);
    ASSERT_EQ(store.results().size(), 4u);
}

TEST(Schema, FixturesMatchTheirSteps) {
    // Each fixture's tables are exactly what the steps up to its version create
    // today (a changed shipped step would otherwise go unnoticed).
    auto schema_of = [](Connection &c) {
        std::string out;
        Statement s = c.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name");
        while (s.step()) {
            out += s.get_text(0) + "\n";
        }
        return out;
    };
    for (int v : {1, 2, 3}) {
        SqliteConnection fresh(":memory:", SqliteConnection::Mode::ReadWriteCreate);
        migrate(fresh, v);
        SqliteConnection old(":memory:", SqliteConnection::Mode::ReadWriteCreate);
        old.exec(fixture("schema_v" + std::to_string(v) + ".sql"));
        EXPECT_EQ(schema_of(fresh), schema_of(old)) << "schema_v" << v << ".sql";
        EXPECT_EQ(schema_version(old), v);
    }
}

TEST(Schema, FailedMigrationRollsBackEverything) {
    auto dir = fresh_dir("migrate_fail");
    load_dump(dir / "old.db", fixture("schema_v1.sql"));
    {
        // Sabotage: v2 creates results_compare; an index of that name exists.
        SqliteConnection c((dir / "old.db").string(), SqliteConnection::Mode::ReadWrite);
        c.exec("CREATE INDEX results_compare ON results (created)");
    }
    std::string err = open_error(dir / "old.db");
    EXPECT_NE(err.find("index results_compare already exists"), std::string::npos) << err;
    SqliteConnection c((dir / "old.db").string(), SqliteConnection::Mode::ReadOnly);
    EXPECT_EQ(schema_version(c), 1);
    EXPECT_FALSE(has_column(c, "results", "l2_hit_bytes")) << "the ALTER TABLE of the same step was rolled back";
    EXPECT_EQ(c.query_int("SELECT count(*) FROM results"), 3);
}

TEST(Schema, ErrorNewerVersionRefused) {
    auto dir = fresh_dir("newer");
    auto path = dir / "tessel.db";
    {
        ScheduleStore::open(path.string());
        SqliteConnection c(path.string(), SqliteConnection::Mode::ReadWrite);
        c.exec("PRAGMA user_version = 7");
    }
    std::string before = read_bytes(path);
    EXPECT_EQ(open_error(path),
              path.string() + " has schema version 7; this tessel understands up to 4: upgrade tessel");
    EXPECT_EQ(read_bytes(path), before);
}

TEST(Schema, ErrorGarbageFileRefusedAndUntouched) {
    auto dir = fresh_dir("garbage");
    auto path = dir / "tessel.db";
    std::string garbage = "this is not a database, it is a shopping list\n";
    for (int i = 0; i < 200; i++) {
        garbage += static_cast<char>((i * 37) & 0xff);
    }
    std::ofstream(path, std::ios::binary) << garbage;
    EXPECT_EQ(open_error(path), path.string() +
                                    " is not a SQLite database (its first bytes are not \"SQLite format 3\"); "
                                    "tessel refuses to open it and left it untouched");
    EXPECT_EQ(read_bytes(path), garbage);
    EXPECT_FALSE(std::filesystem::exists(path.string() + "-wal"));
}

TEST(Schema, ErrorDamagedSqliteFileRefusedAndUntouched) {
    auto dir = fresh_dir("damaged");
    auto path = dir / "tessel.db";
    {
        ScheduleStore s = ScheduleStore::open(path.string());
        s.record_run(make_run(1, 100));
        s.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    // Keep the magic, wreck the rest of the header (page size, formats).
    std::string bytes = read_bytes(path);
    for (size_t i = 16; i < 100; i++) {
        bytes[i] = static_cast<char>(0xA5);
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    std::string err = open_error(path);
    EXPECT_EQ(err.rfind(path.string() + " is not a Tessel database or is damaged (SQLite: ", 0), 0u) << err;
    EXPECT_NE(err.find("); it was left untouched"), std::string::npos) << err;
    EXPECT_EQ(read_bytes(path), bytes);
}

TEST(Schema, ErrorForeignSqliteDatabaseRefused) {
    auto dir = fresh_dir("foreign");
    auto path = dir / "places.sqlite";
    {
        SqliteConnection c(path.string(), SqliteConnection::Mode::ReadWriteCreate);
        c.exec("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT); CREATE TABLE bookmarks (id INTEGER)");
    }
    std::string before = read_bytes(path);
    EXPECT_EQ(open_error(path), path.string() +
                                    " is a SQLite database of another program (tables: bookmarks, moz_places); "
                                    "tessel refuses to use it and left it untouched");
    EXPECT_EQ(read_bytes(path), before);
}

TEST(Schema, ErrorVersionedButNotOurs) {
    auto dir = fresh_dir("notours");
    auto path = dir / "x.db";
    {
        SqliteConnection c(path.string(), SqliteConnection::Mode::ReadWriteCreate);
        c.exec("CREATE TABLE generators (id INTEGER); PRAGMA user_version = 1");
    }
    EXPECT_EQ(open_error(path), path.string() +
                                    " has schema version 1 but no table 'instances'; it is not a Tessel database "
                                    "and was left untouched");
}

TEST(Schema, ErrorCannotCreateDirectory) {
    auto dir = fresh_dir("nodir");
    std::ofstream(dir / "file") << "x";
    std::string err = open_error(dir / "file" / "sub" / "tessel.db");
    EXPECT_EQ(err.rfind("cannot create the directory " + (dir / "file" / "sub").string() + " for ", 0), 0u) << err;
}

TEST(Schema, ReopenIsIdempotent) {
    auto dir = fresh_dir("reopen");
    auto path = (dir / "tessel.db").string();
    ScheduleStore::open(path).record_run(make_run(1, 100));
    ScheduleStore again = ScheduleStore::open(path);
    EXPECT_EQ(schema_version(again.connection()), kSchemaVersion);
    EXPECT_EQ(again.results().size(), 1u);
}

// The same ladder on PostgreSQL: a database at version 1 (step 1's DDL with
// the v1 fixture's rows) migrates with its data; a failing step rolls the
// whole migration back; concurrent first opens migrate once.

/** The v1 fixture's rows (its INSERT lines are plain SQL both backends run). */
std::string fixture_rows() {
    std::string out, sql = fixture("schema_v1.sql");
    for (size_t p = 0, q; (q = sql.find('\n', p)) != std::string::npos; p = q + 1) {
        std::string line = sql.substr(p, q - p);
        if (line.rfind("INSERT INTO", 0) == 0) {
            out += line + "\n";
        }
    }
    return out;
}

class SchemaPostgres : public PgDatabaseTest {
protected:
    /** The database at schema version 1 holding the v1 fixture's records. */
    void make_v1() {
        PgConnection c(url);
        migrate(c, 1);
        c.exec(fixture_rows());
        // Rows with explicit ids leave the identity sequences behind: catch them up.
        for (const char *t : {"generators", "instances", "targets", "schedules", "results"}) {
            c.exec(std::string("SELECT setval(pg_get_serial_sequence('") + t + "', 'id'), (SELECT max(id) FROM " + t +
                   "))");
        }
    }
    bool pg_has_column(Connection &c, const std::string &table, const std::string &column) {
        Statement s = c.prepare("SELECT count(*) FROM information_schema.columns WHERE table_schema = "
                                "current_schema() AND table_name = ? AND column_name = ?");
        s.bind(1, table).bind(2, column);
        return s.step() && s.get_int(0) == 1;
    }
};

TEST_F(SchemaPostgres, MigratesV1WithData) {
    make_v1();
    {
        PgConnection c(url);
        ASSERT_EQ(schema_version(c), 1);
        ASSERT_FALSE(pg_has_column(c, "results", "l2_hit_bytes"));
    }
    ScheduleStore store = ScheduleStore::open(url);
    EXPECT_EQ(schema_version(store.connection()), kSchemaVersion);
    EXPECT_TRUE(pg_has_column(store.connection(), "results", "l2_hit_bytes"));
    EXPECT_EQ(store.connection().query_int("SELECT count(*) FROM pg_indexes WHERE indexname = 'results_compare'"), 1);
    expect_v1_records_migrated(store);
}

TEST_F(SchemaPostgres, FailedMigrationRollsBackEverything) {
    make_v1();
    PgConnection c(url);
    c.exec("CREATE INDEX results_compare ON results (created)"); // step 2 creates this name
    try {
        ScheduleStore::open(url);
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_NE(std::string(e.what()).find("relation \"results_compare\" already exists"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(schema_version(c), 1);
    EXPECT_FALSE(pg_has_column(c, "results", "l2_hit_bytes")) << "the ALTER TABLE of the same step was rolled back";
    EXPECT_EQ(c.query_int("SELECT count(*) FROM results"), 3);
}

TEST_F(SchemaPostgres, ConcurrentFirstOpensMigrateOnce) {
    std::vector<std::thread> openers;
    std::vector<std::string> errors(4);
    for (int i = 0; i < 4; i++) {
        openers.emplace_back([&, i] {
            try {
                ScheduleStore::open(url).record_run(make_run(i, 100 + i));
            } catch (const std::exception &e) {
                errors[static_cast<size_t>(i)] = e.what();
            }
        });
    }
    for (auto &t : openers) {
        t.join();
    }
    for (const auto &e : errors) {
        EXPECT_EQ(e, "");
    }
    ScheduleStore s = ScheduleStore::open(url);
    EXPECT_EQ(schema_version(s.connection()), kSchemaVersion);
    EXPECT_EQ(s.connection().query_int("SELECT count(*) FROM tessel_schema"), 1);
    EXPECT_EQ(s.results().size(), 4u);
}

} // namespace
