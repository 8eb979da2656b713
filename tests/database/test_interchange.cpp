// Export -> import round trips, and merging databases with overlapping records.
#include "DbTestUtil.h"

#include "database/Interchange.h"

#include <nlohmann/json.hpp>

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

TEST(Interchange, ExportImportIntoFreshDbGivesSameContents) {
    auto dir = fresh_dir("roundtrip");
    ScheduleStore a = ScheduleStore::open((dir / "a.db").string());
    fill(a);
    std::string exported = export_json(a);
    ScheduleStore b = ScheduleStore::open((dir / "b.db").string());
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

TEST(Interchange, MergeDeduplicatesOverlapAndKeepsResultsPerTarget) {
    auto dir = fresh_dir("merge");
    ScheduleStore a = ScheduleStore::open((dir / "a.db").string());
    ScheduleStore b = ScheduleStore::open((dir / "b.db").string());
    fill(a);
    import_json(b, export_json(a)); // b starts as a copy of a ...
    b.record_run(make_run(1, 290));            // ... then both go on tuning: same schedule, new result
    b.record_run(make_run(9, 120, true, kArchB)); // a new schedule on the other target
    a.record_run(make_run(7, 250));
    std::string b_before = read_bytes(dir / "b.db");

    ImportStats st = merge_database(a, (dir / "b.db").string());
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
    ImportStats again = merge_database(a, (dir / "b.db").string());
    EXPECT_EQ(again.results + again.schedules, 0);
    EXPECT_EQ(read_bytes(dir / "b.db"), b_before);
}

TEST(Interchange, UnverifiedWinsOnMerge) {
    auto dir = fresh_dir("unverified");
    ScheduleStore a = ScheduleStore::open((dir / "a.db").string());
    int64_t id = a.record_run(make_run(1, 100));
    ScheduleStore b = ScheduleStore::open((dir / "b.db").string());
    import_json(b, export_json(a));
    b.mark_unverified(b.results().at(0).id, "wrong after re-verification");
    ImportStats st = merge_database(a, (dir / "b.db").string());
    EXPECT_EQ(st.downgraded, 1);
    EXPECT_FALSE(a.results().at(0).verified);
    EXPECT_EQ(a.results().at(0).id, id);
    EXPECT_EQ(a.results().at(0).error_text, "wrong after re-verification");
}

TEST(Interchange, ErrorNotAnInterchangeDocument) {
    auto dir = fresh_dir("badjson");
    ScheduleStore a = ScheduleStore::open((dir / "a.db").string());
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

TEST(Interchange, ErrorMalformedDocumentAddsNothing) {
    auto dir = fresh_dir("malformed");
    ScheduleStore a = ScheduleStore::open((dir / "a.db").string());
    fill(a);
    nlohmann::json doc = nlohmann::json::parse(export_json(a));
    doc["results"][2]["schedule_hash"] = "ffffffffffffffff";
    ScheduleStore b = ScheduleStore::open((dir / "b.db").string());
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

TEST(Interchange, ErrorMergeMissingFile) {
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
