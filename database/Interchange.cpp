#include "database/Interchange.h"

#include "database/Canonical.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>

namespace tessel::db {

using nlohmann::json;

namespace {

constexpr int kFormatVersion = 1;

template <typename T>
json opt(const std::optional<T> &v) {
    return v ? json(*v) : json(nullptr);
}

template <typename T>
std::optional<T> get_opt(const json &j, const char *key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return std::nullopt;
    }
    return it->get<T>();
}

std::string get_str(const json &j, const char *key, const std::string &fallback = "") {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? fallback : it->get<std::string>();
}

int64_t count_rows(Connection &c, const char *table) {
    return c.query_int(std::string("SELECT count(*) FROM ") + table); // table names are literals
}

} // namespace

std::string export_json(ScheduleStore &store) {
    // One snapshot for every query: writers may go on meanwhile (a shared
    // server's tuning workers), and a result must not come without its schedule.
    Transaction snapshot(store.connection(), Transaction::Kind::Read);
    json doc = {{"format", "tessel-db"}, {"version", kFormatVersion}};
    std::map<int64_t, GeneratorRecord> gens;
    json jg = json::array();
    for (const auto &g : store.generators()) {
        gens[g.id] = g;
        jg.push_back({{"name", g.name}, {"algorithm_hash", g.algorithm_hash}});
    }
    json ji = json::array();
    for (const auto &i : store.instances()) {
        const GeneratorRecord &g = gens.at(i.generator_id);
        ji.push_back({{"generator", g.name}, {"algorithm_hash", g.algorithm_hash}, {"params", json::parse(i.params_json)}});
    }
    json jt = json::array();
    for (const auto &t : store.targets()) {
        jt.push_back({{"name", t.name}, {"arch_hash", t.arch_hash}, {"arch", json::parse(t.arch_json)}});
    }
    std::map<int64_t, std::string> sched_hash;
    std::vector<ScheduleRecord> scheds = store.schedules();
    for (const auto &s : scheds) {
        sched_hash[s.id] = s.hash;
    }
    json js = json::array();
    for (const auto &s : scheds) {
        js.push_back({{"hash", s.hash},
                      {"spec", json::parse(s.spec_json)},
                      {"parent_hash", s.parent_id ? json(sched_hash.at(*s.parent_id)) : json(nullptr)},
                      {"origin", s.origin},
                      {"note", s.note},
                      {"created", s.created}});
    }
    json jr = json::array();
    std::map<int64_t, InstanceRecord> insts;
    for (const auto &i : store.instances()) {
        insts[i.id] = i;
    }
    for (const auto &r : store.results()) {
        const GeneratorRecord &g = gens.at(insts.at(r.instance_id).generator_id);
        jr.push_back({{"uid", r.uid},
                      {"schedule_hash", r.schedule_hash},
                      {"generator", g.name},
                      {"algorithm_hash", g.algorithm_hash},
                      {"params", json::parse(r.params_json)},
                      {"arch_hash", r.arch_hash},
                      {"predicted_cycles", opt(r.predicted_cycles)},
                      {"simulated_cycles", opt(r.simulated_cycles)},
                      {"t_phys_cycles", opt(r.t_phys_cycles)},
                      {"efficiency", opt(r.efficiency)},
                      {"verified", r.verified},
                      {"max_error", opt(r.max_error)},
                      {"compile_ms", opt(r.compile_ms)},
                      {"l2_hit_bytes", opt(r.l2_hit_bytes)},
                      {"tool_version", r.tool_version},
                      {"error_text", r.error_text},
                      {"created", r.created}});
    }
    doc["generators"] = jg;
    doc["instances"] = ji;
    doc["targets"] = jt;
    doc["schedules"] = js;
    doc["results"] = jr;
    snapshot.commit();
    return doc.dump(1);
}

ImportStats import_json(ScheduleStore &store, const std::string &json_text) {
    json doc = parse_db_json(json_text, "the interchange document");
    if (!doc.is_object() || doc.value("format", "") != "tessel-db") {
        throw DatabaseError("not a tessel-db interchange document (no \"format\": \"tessel-db\")");
    }
    int version = doc.value("version", 0);
    if (version > kFormatVersion) {
        throw DatabaseError("the interchange document has version " + std::to_string(version) +
                            "; this tessel reads up to " + std::to_string(kFormatVersion) + ": upgrade tessel");
    }
    Connection &c = store.connection();
    const char *const tables[] = {"generators", "instances", "targets", "schedules", "results"};
    int64_t before[5];
    Transaction t(c);
    for (int k = 0; k < 5; k++) {
        before[k] = count_rows(c, tables[k]);
    }
    ImportStats stats;
    try {
        auto instance_of = [&](const json &j) {
            int64_t g = store.upsert_generator({0, j.at("generator").get<std::string>(), get_str(j, "algorithm_hash")});
            return store.upsert_instance(g, j.at("params").dump());
        };
        for (const auto &j : doc.value("generators", json::array())) {
            store.upsert_generator({0, j.at("name").get<std::string>(), get_str(j, "algorithm_hash")});
        }
        for (const auto &j : doc.value("instances", json::array())) {
            instance_of(j);
        }
        std::map<std::string, int64_t> target_ids;
        for (const auto &j : doc.value("targets", json::array())) {
            std::string hash = j.at("arch_hash").get<std::string>();
            target_ids[hash] = store.upsert_target({0, j.at("name").get<std::string>(), j.at("arch").dump(), hash});
        }
        std::map<std::string, int64_t> sched_ids;
        const json scheds = doc.value("schedules", json::array());
        for (const auto &j : scheds) {
            ScheduleRecord s;
            s.hash = j.at("hash").get<std::string>();
            s.spec_json = j.at("spec").dump();
            s.origin = get_str(j, "origin", "manual");
            s.note = get_str(j, "note");
            s.created = get_str(j, "created");
            sched_ids[s.hash] = store.upsert_schedule(s);
        }
        // Parents second: a parent may come after its child in the document.
        Statement set_parent = c.prepare("UPDATE schedules SET parent_id = ? WHERE id = ? AND parent_id IS NULL");
        for (const auto &j : scheds) {
            std::string parent = get_str(j, "parent_hash");
            if (parent.empty()) {
                continue;
            }
            auto p = sched_ids.find(parent);
            std::optional<ScheduleRecord> stored;
            if (p == sched_ids.end() && (stored = store.schedule_by_hash(parent))) {
                p = sched_ids.emplace(parent, stored->id).first;
            }
            if (p == sched_ids.end()) {
                throw DatabaseError("schedule " + j.at("hash").get<std::string>() + " names parent " + parent +
                                    ", which is neither in the document nor in the database");
            }
            set_parent.bind(1, p->second).bind(2, sched_ids.at(j.at("hash").get<std::string>())).run();
            set_parent.reset();
        }
        Statement verified_of = c.prepare("SELECT id, verified FROM results WHERE uid = ?");
        for (const auto &j : doc.value("results", json::array())) {
            ResultRecord r;
            r.uid = j.at("uid").get<std::string>();
            std::string sh = j.at("schedule_hash").get<std::string>(), th = j.at("arch_hash").get<std::string>();
            auto s = sched_ids.find(sh);
            auto tg = target_ids.find(th);
            if (s == sched_ids.end() || tg == target_ids.end()) {
                throw DatabaseError("result " + r.uid + " refers to schedule " + sh + " or target " + th +
                                    ", which the document does not contain");
            }
            r.schedule_id = s->second;
            r.target_id = tg->second;
            r.instance_id = instance_of(j);
            r.predicted_cycles = get_opt<int64_t>(j, "predicted_cycles");
            r.simulated_cycles = get_opt<int64_t>(j, "simulated_cycles");
            r.t_phys_cycles = get_opt<int64_t>(j, "t_phys_cycles");
            r.efficiency = get_opt<double>(j, "efficiency");
            r.verified = j.value("verified", false);
            r.max_error = get_opt<double>(j, "max_error");
            r.compile_ms = get_opt<double>(j, "compile_ms");
            r.l2_hit_bytes = get_opt<int64_t>(j, "l2_hit_bytes");
            r.tool_version = get_str(j, "tool_version");
            r.error_text = get_str(j, "error_text");
            r.created = get_str(j, "created");
            verified_of.bind(1, r.uid);
            bool exists = verified_of.step();
            int64_t id = exists ? verified_of.get_int(0) : 0;
            bool was_verified = exists && verified_of.get_int(1) != 0;
            verified_of.reset();
            if (!exists) {
                store.add_result(r);
            } else if (was_verified && !r.verified) {
                // Unverified wins: a re-verification elsewhere found it wrong.
                store.mark_unverified(id, r.error_text.empty() ? "marked unverified in a merged database" : r.error_text);
                stats.downgraded++;
            }
        }
    } catch (const json::exception &e) {
        throw DatabaseError(std::string("malformed tessel-db interchange document: ") + e.what());
    }
    int64_t *fields[5] = {&stats.generators, &stats.instances, &stats.targets, &stats.schedules, &stats.results};
    for (int k = 0; k < 5; k++) {
        *fields[k] = count_rows(c, tables[k]) - before[k];
    }
    t.commit();
    return stats;
}

ImportStats merge_database(ScheduleStore &store, const std::string &other_path) {
    ScheduleStore other = ScheduleStore::open_copy(other_path);
    return import_json(store, export_json(other));
}

} // namespace tessel::db
