// Export -> import round trips, and merging databases with overlapping
// records, between any two backends (SQLite -> SQLite, SQLite -> PostgreSQL,
// PostgreSQL -> SQLite, PostgreSQL -> PostgreSQL); the same records give the
// same hashes, ids and export on both.
#include "DbTestUtil.h"
#include "PgTestServer.h"

#include "database/Interchange.h"

#include <nlohmann/json.hpp>

#include <tuple>

using namespace tessel::db;
using namespace tessel::db::test;

namespace {

/** The contents of a store without row ids: what must survive a round trip. */
std::string contents(ScheduleStore &s) {
    nlohmann::json doc = nlohmann::json::parse(export_json(s));
    // Order-independent: sort every array by its JSON text.
    for (auto &[key, value] : doc.items()) {
        if (value.is_array()) {
            std::vector<std::string> items;
            for (const auto &v : value) {
                items.push_back(v.dump());
            }
            std::sort(items.begin(), items.end());
            value = items;
        }
    }
    return doc.dump(1);
}

void fill(ScheduleStore &s) {
    s.record_run(make_run(1, 300));
    RunRecord child = make_run(2, 200);
    child.parent_schedule_id = s.schedules().at(0).id;
    child.note = "from the IDE";
    child.origin = "manual";
    child.result.l2_hit_bytes = 65536;
    s.record_run(child);
    RunRecord failed = make_run(3, 0, false);
    failed.result.simulated_cycles.reset();
    failed.result.efficiency.reset();
    failed.result.error_text = "L1 overflow";
    s.record_run(failed);
    s.record_run(make_run(2, 150, true, kArchB));
    s.record_run(make_run(1, 80, true, kArchA, R"({"M":"64"})"));
}

/** Everything about a database that a reader could notice: a file's bytes,
 * a server database's whole export. */
std::string fingerprint(const std::string &db) {
    if (is_postgres_url(db)) {
        ScheduleStore s = ScheduleStore::open_copy(db);
        return export_json(s);
    }
    return read_bytes(db);
}

using Pair = std::tuple<std::string, std::string>;

/** Database a on the first backend, database b on the second. */
class Interchange : public ::testing::TestWithParam<Pair> {
protected:
    void SetUp() override {
        std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        name = name.substr(0, name.find('/'));
        dir = fresh_dir(name + "_" + std::get<0>(GetParam()) + "_" + std::get<1>(GetParam()));
        std::string skip;
        a_db = fresh_db(std::get<0>(GetParam()), dir.string(), "a", &skip);
        b_db = a_db.empty() ? "" : fresh_db(std::get<1>(GetParam()), dir.string(), "b", &skip);
        if (b_db.empty()) {
            GTEST_SKIP() << skip;
        }
    }
    std::filesystem::path dir;
    std::string a_db, b_db;
};

TEST_P(Interchange, ExportImportIntoFreshDbGivesSameContents) {
    ScheduleStore a = ScheduleStore::open(a_db);
    fill(a);
    std::string exported = export_json(a);
    ScheduleStore b = ScheduleStore::open(b_db);
    ImportStats st = import_json(b, exported);
    EXPECT_EQ(st.generators, 1);
    EXPECT_EQ(st.instances, 2);
    EXPECT_EQ(st.targets, 2);
    EXPECT_EQ(st.schedules, 3);
    EXPECT_EQ(st.results, 5);
    EXPECT_EQ(contents(b), contents(a));
    EXPECT_EQ(b.schedules().at(1).parent_id, b.schedules().at(0).id);
    // Importing again adds nothing.
    ImportStats again = import_json(b, exported);
    EXPECT_EQ(again.results + again.schedules + again.targets + again.instances + again.generators, 0);
    EXPECT_EQ(contents(b), contents(a));
}

TEST_P(Interchange, MergeDeduplicatesOverlapAndKeepsResultsPerTarget) {
    ScheduleStore a = ScheduleStore::open(a_db);
    ScheduleStore b = ScheduleStore::open(b_db);
    fill(a);
    import_json(b, export_json(a)); // b starts as a copy of a ...
    b.record_run(make_run(1, 290));            // ... then both go on tuning: same schedule, new result
    b.record_run(make_run(9, 120, true, kArchB)); // a new schedule on the other target
    a.record_run(make_run(7, 250));
    std::string b_before = fingerprint(b_db);

    ImportStats st = merge_database(a, b_db);
    EXPECT_EQ(st.generators, 0);
    EXPECT_EQ(st.targets, 0);
    EXPECT_EQ(st.schedules, 1) << "only schedule 9 is new";
    EXPECT_EQ(st.results, 2);
    EXPECT_EQ(a.results().size(), 5u + 1 + 2);
    EXPECT_EQ(a.schedules().size(), 5u);
    // Results stay with their target: the best per target differs.
    std::string params = R"({"K":"256","M":"256","N":"256","dtype":"fp16"})";
    auto ta = a.find_target("ascend-like").arch_hash, tb = a.find_target("gemmini-like").arch_hash;
    EXPECT_EQ(a.best("gemm", params, ta)->simulated_cycles, 200);
    EXPECT_EQ(a.best("gemm", params, tb)->simulated_cycles, 120);
    EXPECT_EQ(a.history("gemm", params, tb).size(), 2u);
    // Merging again is a no-op; the other file was never written.
    ImportStats again = merge_database(a, b_db);
    EXPECT_EQ(again.results + again.schedules, 0);
    EXPECT_EQ(fingerprint(b_db), b_before);
}

TEST_P(Interchange, UnverifiedWinsOnMerge) {
    ScheduleStore a = ScheduleStore::open(a_db);
    int64_t id = a.record_run(make_run(1, 100));
    ScheduleStore b = ScheduleStore::open(b_db);
    import_json(b, export_json(a));
    b.mark_unverified(b.results().at(0).id, "wrong after re-verification");
    ImportStats st = merge_database(a, b_db);
    EXPECT_EQ(st.downgraded, 1);
    EXPECT_FALSE(a.results().at(0).verified);
    EXPECT_EQ(a.results().at(0).id, id);
    EXPECT_EQ(a.results().at(0).error_text, "wrong after re-verification");
}

TEST_P(Interchange, ErrorNotAnInterchangeDocument) {
    ScheduleStore a = ScheduleStore::open(a_db);
    try {
        import_json(a, R"({"generators":[]})");
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_STREQ(e.what(), "not a tessel-db interchange document (no \"format\": \"tessel-db\")");
    }
    try {
        import_json(a, "{oops");
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_EQ(std::string(e.what()).rfind("the interchange document is not valid JSON: ", 0), 0u) << e.what();
    }
    try {
        import_json(a, R"({"format":"tessel-db","version":9})");
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_STREQ(e.what(), "the interchange document has version 9; this tessel reads up to 1: upgrade tessel");
    }
}

TEST_P(Interchange, ErrorMalformedDocumentAddsNothing) {
    ScheduleStore a = ScheduleStore::open(a_db);
    fill(a);
    nlohmann::json doc = nlohmann::json::parse(export_json(a));
    doc["results"][2]["schedule_hash"] = "ffffffffffffffff";
    ScheduleStore b = ScheduleStore::open(b_db);
    try {
        import_json(b, doc.dump());
        FAIL();
    } catch (const DatabaseError &e) {
        std::string uid = doc["results"][2]["uid"];
        EXPECT_EQ(std::string(e.what()), "result " + uid +
                                             " refers to schedule ffffffffffffffff or target " +
                                             doc["results"][2]["arch_hash"].get<std::string>() +
                                             ", which the document does not contain");
    }
    EXPECT_TRUE(b.results().empty());
    EXPECT_TRUE(b.schedules().empty()) << "one transaction: the schedules before the bad result are gone too";
    doc = nlohmann::json::parse(export_json(a));
    doc["schedules"][1]["parent_hash"] = "0000000000000000";
    try {
        import_json(b, doc.dump());
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_NE(std::string(e.what()).find(" names parent 0000000000000000, which is neither in the document nor "
                                             "in the database"),
                  std::string::npos)
            << e.what();
    }
    doc = nlohmann::json::parse(export_json(a));
    doc["targets"][0].erase("arch");
    try {
        import_json(b, doc.dump());
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_EQ(std::string(e.what()).rfind("malformed tessel-db interchange document: ", 0), 0u) << e.what();
    }
}

/** The same records written to both databases, with the fields a database
 * would otherwise make up (uids, timestamps) given. */
void fill_fixed(ScheduleStore &s) {
    for (int i = 0; i < 12; i++) {
        RunRecord r = make_run(i % 5, 1000 - 37 * i, i % 4 != 0, i % 3 ? kArchA : kArchB,
                               i % 2 ? R"({"M":"64","K":"32"})" : R"({"K":"256","M":"256","N":"256","dtype":"fp16"})");
        r.result.uid = "fixed-" + std::to_string(i);
        r.result.created = "2026-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ".000Z";
        r.result.efficiency = 1.0 / (3 + i);
        r.result.l2_hit_bytes = i % 2 ? std::optional<int64_t>(4096 * i) : std::nullopt;
        r.note = "run " + std::to_string(i);
        if (i == 6) {
            r.parent_schedule_id = s.schedules().at(0).id;
        }
        s.record_run(r);
    }
    // Schedule timestamps are filled at insert: pin them too.
    s.connection().exec("UPDATE schedules SET created = '2026-01-01T00:00:00.000Z'");
}

TEST_P(Interchange, SameRecordsGiveTheSameHashesIdsQueriesAndExport) {
    ScheduleStore a = ScheduleStore::open(a_db), b = ScheduleStore::open(b_db);
    fill_fixed(a);
    fill_fixed(b);
    EXPECT_EQ(export_json(a), export_json(b)) << "byte-identical exports";
    ASSERT_EQ(a.schedules().size(), b.schedules().size());
    for (size_t i = 0; i < a.schedules().size(); i++) {
        EXPECT_EQ(a.schedules()[i].hash, b.schedules()[i].hash);
        EXPECT_EQ(a.schedules()[i].id, b.schedules()[i].id);
    }
    EXPECT_EQ(a.targets().at(1).arch_hash, b.targets().at(1).arch_hash);
    std::string p = R"({"K":"256","M":"256","N":"256","dtype":"fp16"})";
    for (const auto &t : a.targets()) {
        EXPECT_EQ(a.best("gemm", p, t.arch_hash)->uid, b.best("gemm", p, t.arch_hash)->uid);
        EXPECT_EQ(a.history("gemm", p, t.arch_hash).size(), b.history("gemm", p, t.arch_hash).size());
        auto ca = a.compare(1, 2, t.arch_hash), cb = b.compare(1, 2, t.arch_hash);
        ASSERT_EQ(ca.size(), cb.size());
        for (size_t i = 0; i < ca.size(); i++) {
            EXPECT_EQ(ca[i].params_json, cb[i].params_json) << "compare's rows in the same order";
            EXPECT_EQ(ca[i].a ? ca[i].a->uid : "", cb[i].a ? cb[i].a->uid : "");
        }
    }
    auto la = a.list(), lb = b.list();
    ASSERT_EQ(la.size(), lb.size());
    for (size_t i = 0; i < la.size(); i++) {
        EXPECT_EQ(la[i].results, lb[i].results);
        EXPECT_EQ(la[i].verified_results, lb[i].verified_results);
        EXPECT_EQ(la[i].best_simulated_cycles, lb[i].best_simulated_cycles);
    }
    // A merged export of the same records is identical: merging b into a adds nothing.
    ImportStats st = merge_database(a, b_db);
    EXPECT_EQ(st.generators + st.instances + st.targets + st.schedules + st.results + st.downgraded, 0);
    EXPECT_EQ(export_json(a), export_json(b));
}

INSTANTIATE_TEST_SUITE_P(Backends, Interchange,
                         ::testing::Combine(::testing::Values("sqlite", "postgres"),
                                            ::testing::Values("sqlite", "postgres")),
                         [](const ::testing::TestParamInfo<Pair> &i) {
                             return std::get<0>(i.param) + "_to_" + std::get<1>(i.param);
                         });

TEST(InterchangeFiles, ErrorMergeMissingFile) {
    auto dir = fresh_dir("merge_missing");
    ScheduleStore a = ScheduleStore::open((dir / "a.db").string());
    try {
        merge_database(a, (dir / "nope.db").string());
        FAIL();
    } catch (const DatabaseError &e) {
        EXPECT_EQ(std::string(e.what()), "cannot open " + (dir / "nope.db").string() + ": no such file");
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "nope.db"));
}

} // namespace
