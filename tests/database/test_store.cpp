// The typed store: dedup by hashes, best / history / compare (target-aware),
// list / show, mark_unverified, default_path; every store test runs on both
// backends (a SQLite file and a database on a throwaway PostgreSQL server).
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/Canonical.h"
#include "database/Schema.h"

#include <cstdlib>

using namespace tessel::db;
using namespace tessel::db::test;

namespace {

class StoreTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        name = name.substr(0, name.find('/'));
        dir = fresh_dir(name + "_" + GetParam());
        std::string skip;
        std::string db = fresh_db(GetParam(), (dir / "sub").string(), "tessel", &skip);
        if (db.empty()) {
            GTEST_SKIP() << skip;
        }
        store.emplace(ScheduleStore::open(db));
    }
    std::filesystem::path dir;
    std::optional<ScheduleStore> store;
    const std::string params = R"({"K":"256","M":"256","N":"256","dtype":"fp16"})";
    std::string arch_a() { return fnv1a64_hex(canonical_json(kArchA, "")); }
    std::string arch_b() { return fnv1a64_hex(canonical_json(kArchB, "")); }
};

TEST_P(StoreTest, OpenCreatesCurrentSchema) {
    EXPECT_EQ(schema_version(store->connection()), kSchemaVersion);
    if (GetParam() == "postgres") {
        EXPECT_EQ(store->backend(), Backend::Postgres);
        EXPECT_EQ(store->connection().query_int("SELECT count(*) FROM tessel_schema"), 1);
        return;
    }
    EXPECT_EQ(store->backend(), Backend::Sqlite);
    EXPECT_TRUE(std::filesystem::exists(dir / "sub" / "tessel.db")) << "parent directories are created";
    Statement s = store->connection().prepare("PRAGMA journal_mode");
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.get_text(0), "wal");
    EXPECT_EQ(store->connection().query_int("PRAGMA busy_timeout"), 30000);
}

TEST_P(StoreTest, UpsertsDeduplicateByKeys) {
    int64_t g1 = store->upsert_generator({0, "gemm", "h1"});
    EXPECT_EQ(store->upsert_generator({0, "gemm", "h1"}), g1);
    EXPECT_NE(store->upsert_generator({0, "gemm", "h2"}), g1);
    // Same params in another key order and as numbers: one instance.
    int64_t i1 = store->upsert_instance(g1, R"({"M":256,"K":"128"})");
    EXPECT_EQ(store->upsert_instance(g1, R"({"K":128, "M":"256"})"), i1);
    EXPECT_EQ(store->instances().at(0).params_json, R"({"K":"128","M":"256"})");
    // Whitespace and key order do not change an arch or schedule hash.
    int64_t t1 = store->upsert_target({0, "ascend-like", kArchA, ""});
    EXPECT_EQ(store->upsert_target({0, "ascend-like", R"({ "memories":[{"name":"GM"}], "clock_hz":1000000000,
        "name":"ascend-like"})", ""}),
              t1);
    EXPECT_EQ(store->targets().at(0).arch_hash, arch_a());
    ScheduleRecord s;
    s.spec_json = R"({"b":1,"a":2})";
    int64_t s1 = store->upsert_schedule(s);
    s.spec_json = R"({"a":2, "b":1})";
    EXPECT_EQ(store->upsert_schedule(s), s1);
    s.hash = "given-hash";
    EXPECT_NE(store->upsert_schedule(s), s1) << "a caller-given hash is the key";
    EXPECT_EQ(store->schedules().size(), 2u);
}

TEST_P(StoreTest, BestIsVerifiedLowestCyclesNewestOnTiesAndTargetAware) {
    store->record_run(make_run(16, 900));
    store->record_run(make_run(32, 500, /*verified=*/false)); // fastest, but wrong
    int64_t tie_old = store->record_run(make_run(64, 700));
    int64_t tie_new = store->record_run(make_run(128, 700));
    store->record_run(make_run(8, 100, true, kArchB)); // another target
    // Same created timestamp is possible within a millisecond: ties then go to the higher id.
    auto best = store->best("gemm", params, arch_a());
    ASSERT_TRUE(best);
    EXPECT_EQ(best->simulated_cycles, 700);
    EXPECT_EQ(best->id, tie_new);
    EXPECT_NE(best->id, tie_old);
    EXPECT_EQ(best->arch_name, "ascend-like");
    EXPECT_EQ(best->generator, "gemm");
    auto best_b = store->best("gemm", params, arch_b());
    ASSERT_TRUE(best_b);
    EXPECT_EQ(best_b->simulated_cycles, 100);
    EXPECT_FALSE(store->best("gemm", R"({"M":"1"})", arch_a()));
    EXPECT_FALSE(store->best("conv", params, arch_a()));
}

TEST_P(StoreTest, BestPrefersNewestOnEqualCyclesByTimestamp) {
    RunRecord newer = make_run(1, 300), older = make_run(2, 300);
    newer.result.created = "2031-01-01T00:00:00.000Z";
    older.result.created = "2030-01-01T00:00:00.000Z";
    int64_t newer_id = store->record_run(newer); // inserted first: the lower id
    store->record_run(older);
    EXPECT_EQ(store->best("gemm", params, arch_a())->id, newer_id);
}

TEST_P(StoreTest, HistoryIsOrderedByCreatedAndTargetAware) {
    RunRecord r1 = make_run(1, 300), r2 = make_run(2, 200), r3 = make_run(3, 100, true, kArchB);
    r1.result.created = "2024-01-02T00:00:00.000Z";
    r2.result.created = "2024-01-01T00:00:00.000Z";
    store->record_run(r1);
    store->record_run(r2);
    store->record_run(r3);
    auto h = store->history("gemm", params, arch_a());
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[0].created, "2024-01-01T00:00:00.000Z");
    EXPECT_EQ(h[1].created, "2024-01-02T00:00:00.000Z");
    EXPECT_EQ(store->history("gemm", params, arch_b()).size(), 1u);
}

TEST_P(StoreTest, CompareTwoSchedulesPerInstance) {
    store->record_run(make_run(1, 300));
    store->record_run(make_run(1, 250));
    store->record_run(make_run(2, 200));
    store->record_run(make_run(2, 100, false));
    store->record_run(make_run(1, 50, true, kArchA, R"({"M":"64"})"));
    store->record_run(make_run(2, 10, true, kArchB)); // other target: not compared
    int64_t a = store->schedules().at(0).id, b = store->schedules().at(1).id;
    auto rows = store->compare(a, b, arch_a());
    ASSERT_EQ(rows.size(), 2u);
    // Rows are ordered by generator then params JSON.
    EXPECT_EQ(rows[0].params_json, R"({"K":"256","M":"256","N":"256","dtype":"fp16"})");
    ASSERT_TRUE(rows[0].a && rows[0].b);
    EXPECT_EQ(rows[0].a->simulated_cycles, 250);
    EXPECT_EQ(rows[0].b->simulated_cycles, 200) << "the unverified 100 does not count";
    EXPECT_EQ(rows[1].params_json, R"({"M":"64"})");
    EXPECT_TRUE(rows[1].a);
    EXPECT_FALSE(rows[1].b);
}

TEST_P(StoreTest, ListShowAndParentLinks) {
    int64_t r1 = store->record_run(make_run(1, 300));
    RunRecord child = make_run(2, 200);
    child.parent_schedule_id = store->schedules().at(0).id;
    child.note = "halved the tile";
    store->record_run(child);
    auto list = store->list();
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].results, 1);
    EXPECT_EQ(list[0].best_simulated_cycles, 300);
    EXPECT_EQ(list[1].schedule.parent_id, list[0].schedule.id);
    EXPECT_EQ(list[1].schedule.note, "halved the tile");
    EXPECT_EQ(list[1].schedule.origin, "tuner");
    auto d = store->show(list[0].schedule.id);
    ASSERT_TRUE(d);
    ASSERT_EQ(d->results.size(), 1u);
    EXPECT_EQ(d->results[0].id, r1);
    EXPECT_EQ(d->results[0].t_phys_cycles, 150);
    EXPECT_FALSE(store->show(999));
}

TEST_P(StoreTest, MarkUnverifiedRemovesFromBest) {
    int64_t fast = store->record_run(make_run(1, 100));
    store->record_run(make_run(2, 200));
    store->mark_unverified(fast, "max error 3 > 0 after simulator fix");
    auto best = store->best("gemm", params, arch_a());
    ASSERT_TRUE(best);
    EXPECT_EQ(best->simulated_cycles, 200);
    auto d = store->show(store->schedules().at(0).id);
    EXPECT_FALSE(d->results.at(0).verified);
    EXPECT_EQ(d->results.at(0).error_text, "max error 3 > 0 after simulator fix");
}

TEST_P(StoreTest, ErrorMarkUnverifiedOfMissingResult) {
    try {
        store->mark_unverified(42, "x");
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_NE(std::string(e.what()).find("no result with id 42 in "), std::string::npos) << e.what();
    }
}

TEST_P(StoreTest, ErrorBadOriginAndBadJson) {
    ScheduleRecord s;
    s.spec_json = "{}";
    s.origin = "guess";
    EXPECT_THROW(
        {
            try {
                store->upsert_schedule(s);
            } catch (const DatabaseError &e) {
                EXPECT_STREQ(e.what(), "schedule origin must be manual, tuner or default, not 'guess'");
                throw;
            }
        },
        DatabaseError);
    s.origin = "manual";
    s.spec_json = "{not json";
    try {
        store->upsert_schedule(s);
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_EQ(std::string(e.what()).rfind("the schedule JSON is not valid JSON: ", 0), 0u) << e.what();
    }
    try {
        store->upsert_instance(1, "[1,2]");
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_STREQ(e.what(), "params must be a JSON object of name: value, got [1,2]");
    }
}

TEST_P(StoreTest, FindTargetByNameOrHashAndErrors) {
    store->record_run(make_run(1, 100));
    EXPECT_EQ(store->find_target("ascend-like").arch_hash, arch_a());
    EXPECT_EQ(store->find_target(arch_a()).name, "ascend-like");
    try {
        store->find_target("nope");
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_NE(std::string(e.what()).find("no target 'nope' in "), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("stored targets: ascend-like (" + arch_a() + ")"), std::string::npos)
            << e.what();
    }
    // Two archs named alike (a user's edited copy): the name is ambiguous.
    store->upsert_target({0, "ascend-like", R"({"name":"ascend-like","clock_hz":2})", ""});
    try {
        store->find_target("ascend-like");
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_NE(std::string(e.what()).find("arch name 'ascend-like' matches 2 stored targets; give one of their "
                                             "hashes: "),
                  std::string::npos)
            << e.what();
    }
}

TEST_P(StoreTest, InnerTransactionJoinsTheOuterOne) {
    {
        Transaction outer(store->connection());
        store->record_run(make_run(1, 100)); // record_run's own transaction joins
        outer.commit();
    }
    EXPECT_EQ(store->results().size(), 1u);
    try {
        Transaction outer(store->connection());
        store->record_run(make_run(2, 200));
        try {
            Transaction inner(store->connection());
            store->upsert_generator({0, "conv", "c0"});
            throw DatabaseError("a step failed");
        } catch (const DatabaseError &) {
            // swallowed inside the outer transaction: the outer one is doomed anyway
        }
        outer.commit();
        FAIL() << "the doomed outer transaction committed";
    } catch (const DatabaseError &e) {
        EXPECT_NE(std::string(e.what()).find(": a step of the transaction failed; the whole transaction was rolled back"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(store->results().size(), 1u) << "nothing of the doomed transaction was written";
    EXPECT_EQ(store->generators().size(), 1u);
    store->record_run(make_run(3, 300)); // the connection is usable again
    EXPECT_EQ(store->results().size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

TEST(DefaultPath, EnvironmentOrder) {
    ::setenv("TESSEL_DB", "/tmp/x/my.db", 1);
    EXPECT_EQ(ScheduleStore::default_path(), "/tmp/x/my.db");
    ::setenv("TESSEL_DB", "postgresql://db.example/tessel", 1);
    EXPECT_EQ(ScheduleStore::default_path(), "postgresql://db.example/tessel") << "a URL is taken as it is";
    ::unsetenv("TESSEL_DB");
    ::setenv("XDG_DATA_HOME", "/tmp/xdg", 1);
    EXPECT_EQ(ScheduleStore::default_path(), "/tmp/xdg/tessel/tessel.db");
    ::unsetenv("XDG_DATA_HOME");
    ::setenv("HOME", "/home/u", 1);
    EXPECT_EQ(ScheduleStore::default_path(), "/home/u/.local/share/tessel/tessel.db");
}

} // namespace
