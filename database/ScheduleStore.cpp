#include "database/ScheduleStore.h"

#include "database/Canonical.h"
#include "database/Schema.h"

#include <cstdlib>
#include <filesystem>
#include <map>

namespace tessel::db {

namespace fs = std::filesystem;

namespace {

const char *const kResultSelect =
    "SELECT r.id, r.uid, r.schedule_id, r.instance_id, r.target_id, r.predicted_cycles, r.simulated_cycles, "
    "r.t_phys_cycles, r.efficiency, r.verified, r.max_error, r.compile_ms, r.l2_hit_bytes, r.tool_version, "
    "r.error_text, r.created, s.hash, g.name, i.params_json, t.name, t.arch_hash "
    "FROM results r "
    "JOIN schedules s ON s.id = r.schedule_id "
    "JOIN instances i ON i.id = r.instance_id "
    "JOIN generators g ON g.id = i.generator_id "
    "JOIN targets t ON t.id = r.target_id ";

ResultRecord read_result(const Statement &s) {
    ResultRecord r;
    r.id = s.get_int(0);
    r.uid = s.get_text(1);
    r.schedule_id = s.get_int(2);
    r.instance_id = s.get_int(3);
    r.target_id = s.get_int(4);
    r.predicted_cycles = s.get_opt_int(5);
    r.simulated_cycles = s.get_opt_int(6);
    r.t_phys_cycles = s.get_opt_int(7);
    r.efficiency = s.get_opt_double(8);
    r.verified = s.get_int(9) != 0;
    r.max_error = s.get_opt_double(10);
    r.compile_ms = s.get_opt_double(11);
    r.l2_hit_bytes = s.get_opt_int(12);
    r.tool_version = s.get_text(13);
    r.error_text = s.get_text(14);
    r.created = s.get_text(15);
    r.schedule_hash = s.get_text(16);
    r.generator = s.get_text(17);
    r.params_json = s.get_text(18);
    r.arch_name = s.get_text(19);
    r.arch_hash = s.get_text(20);
    return r;
}

const char *const kScheduleSelect =
    "SELECT id, hash, spec_json, parent_id, origin, note, created FROM schedules ";

ScheduleRecord read_schedule(const Statement &s) {
    ScheduleRecord r;
    r.id = s.get_int(0);
    r.hash = s.get_text(1);
    r.spec_json = s.get_text(2);
    r.parent_id = s.get_opt_int(3);
    r.origin = s.get_text(4);
    r.note = s.get_text(5);
    r.created = s.get_text(6);
    return r;
}

std::optional<int64_t> find_id(Connection &c, const std::string &sql, const std::string &arg) {
    Statement s = c.prepare(sql);
    s.bind(1, arg);
    if (!s.step()) {
        return std::nullopt;
    }
    return s.get_int(0);
}

std::string env_or_empty(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

} // namespace

ScheduleStore::ScheduleStore(std::unique_ptr<Connection> c, std::string path) : conn_(std::move(c)), path_(std::move(path)) {}
ScheduleStore::ScheduleStore(ScheduleStore &&) noexcept = default;
ScheduleStore &ScheduleStore::operator=(ScheduleStore &&) noexcept = default;
ScheduleStore::~ScheduleStore() = default;

std::string ScheduleStore::default_path() {
    std::string p = env_or_empty("TESSEL_DB");
    if (!p.empty()) {
        return p;
    }
    std::string xdg = env_or_empty("XDG_DATA_HOME");
    if (!xdg.empty()) {
        return (fs::path(xdg) / "tessel" / "tessel.db").string();
    }
    std::string home = env_or_empty("HOME");
    if (home.empty()) {
        throw DatabaseError("cannot locate tessel.db: neither TESSEL_DB, XDG_DATA_HOME nor HOME is set; pass --db FILE");
    }
    return (fs::path(home) / ".local" / "share" / "tessel" / "tessel.db").string();
}

ScheduleStore ScheduleStore::open(const std::string &path) {
    if (is_postgres_url(path)) {
        std::unique_ptr<Connection> c = open_postgres(path);
        std::string shown = c->path();
        return ScheduleStore(std::move(c), shown);
    }
    if (path != ":memory:") {
        fs::path parent = fs::path(path).parent_path();
        std::error_code ec;
        if (!parent.empty() && !fs::exists(parent, ec)) {
            fs::create_directories(parent, ec);
            if (ec) {
                throw DatabaseError("cannot create the directory " + parent.string() + " for " + path + ": " +
                                    ec.message());
            }
        }
    }
    return ScheduleStore(open_sqlite(path), path);
}

ScheduleStore ScheduleStore::open_copy(const std::string &path) {
    if (is_postgres_url(path)) {
        std::unique_ptr<Connection> c = open_postgres(path, true);
        std::string shown = c->path();
        return ScheduleStore(std::move(c), shown);
    }
    if (path != ":memory:" && !fs::exists(path)) {
        throw DatabaseError("cannot open " + path + ": no such file");
    }
    std::unique_ptr<SqliteConnection> src = open_sqlite(path, true);
    auto mem = std::make_unique<SqliteConnection>(":memory:", SqliteConnection::Mode::ReadWriteCreate);
    src->backup_to(*mem);
    migrate(*mem);
    return ScheduleStore(std::move(mem), path);
}

int64_t ScheduleStore::find_or_insert(const std::string &select_sql, const std::function<void(Statement &)> &bind_key,
                                      const std::string &insert_sql, const std::function<void(Statement &)> &bind_row) {
    // Look first: a known key inserts nothing (on PostgreSQL a conflicting
    // INSERT would still use up an identity value, leaving gaps in the ids).
    auto find = [&]() -> std::optional<int64_t> {
        Statement s = conn_->prepare(select_sql);
        bind_key(s);
        if (!s.step()) {
            return std::nullopt;
        }
        return s.get_int(0);
    };
    if (std::optional<int64_t> id = find()) {
        return *id;
    }
    Statement ins = conn_->prepare(insert_sql);
    bind_row(ins);
    ins.run(); // ON CONFLICT DO NOTHING: a concurrent writer may have inserted the key since
    if (std::optional<int64_t> id = find()) {
        return *id;
    }
    throw DatabaseError("database " + path_ + ": the row just written is missing (" + insert_sql.substr(0, 40) + ")");
}

int64_t ScheduleStore::upsert_generator(const GeneratorRecord &g) {
    if (g.name.empty()) {
        throw DatabaseError("a generator record needs a name");
    }
    auto key = [&](Statement &s) { s.bind(1, g.name).bind(2, g.algorithm_hash); };
    return find_or_insert("SELECT id FROM generators WHERE name = ? AND algorithm_hash = ?", key,
                          "INSERT INTO generators (name, algorithm_hash) VALUES (?, ?) "
                          "ON CONFLICT (name, algorithm_hash) DO NOTHING",
                          key);
}

int64_t ScheduleStore::upsert_instance(int64_t generator_id, const std::string &params_json) {
    std::string p = canonical_params(params_json);
    auto key = [&](Statement &s) { s.bind(1, generator_id).bind(2, p); };
    return find_or_insert("SELECT id FROM instances WHERE generator_id = ? AND params_json = ?", key,
                          "INSERT INTO instances (generator_id, params_json) VALUES (?, ?) "
                          "ON CONFLICT (generator_id, params_json) DO NOTHING",
                          key);
}

int64_t ScheduleStore::upsert_target(const TargetRecord &t) {
    std::string arch = canonical_json(t.arch_json, "the arch JSON of target '" + t.name + "'");
    std::string hash = t.arch_hash.empty() ? fnv1a64_hex(arch) : t.arch_hash;
    return find_or_insert(
        "SELECT id FROM targets WHERE arch_hash = ?", [&](Statement &s) { s.bind(1, hash); },
        "INSERT INTO targets (name, arch_json, arch_hash) VALUES (?, ?, ?) ON CONFLICT (arch_hash) DO NOTHING",
        [&](Statement &s) { s.bind(1, t.name).bind(2, arch).bind(3, hash); });
}

int64_t ScheduleStore::upsert_schedule(const ScheduleRecord &s) {
    if (s.origin != "manual" && s.origin != "tuner" && s.origin != "default") {
        throw DatabaseError("schedule origin must be manual, tuner or default, not '" + s.origin + "'");
    }
    std::string spec = canonical_json(s.spec_json, "the schedule JSON");
    std::string hash = s.hash.empty() ? fnv1a64_hex(spec) : s.hash;
    return find_or_insert(
        "SELECT id FROM schedules WHERE hash = ?", [&](Statement &st) { st.bind(1, hash); },
        "INSERT INTO schedules (hash, spec_json, parent_id, origin, note, created) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
        [&](Statement &ins) {
            ins.bind(1, hash).bind(2, spec).bind(3, s.parent_id).bind(4, s.origin).bind(5, s.note);
            ins.bind(6, s.created.empty() ? now_utc() : s.created);
        });
}

int64_t ScheduleStore::add_result(const ResultRecord &r) {
    std::string uid = r.uid.empty() ? new_uid() : r.uid;
    return find_or_insert(
        "SELECT id FROM results WHERE uid = ?", [&](Statement &s) { s.bind(1, uid); },
        "INSERT INTO results (uid, schedule_id, instance_id, target_id, predicted_cycles, simulated_cycles, "
        "t_phys_cycles, efficiency, verified, max_error, compile_ms, l2_hit_bytes, tool_version, error_text, created) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid) DO NOTHING",
        [&](Statement &ins) {
            ins.bind(1, uid).bind(2, r.schedule_id).bind(3, r.instance_id).bind(4, r.target_id);
            ins.bind(5, r.predicted_cycles).bind(6, r.simulated_cycles).bind(7, r.t_phys_cycles);
            ins.bind(8, r.efficiency).bind(9, r.verified ? 1 : 0).bind(10, r.max_error).bind(11, r.compile_ms);
            ins.bind(12, r.l2_hit_bytes).bind(13, r.tool_version).bind(14, r.error_text);
            ins.bind(15, r.created.empty() ? now_utc() : r.created);
        });
}

int64_t ScheduleStore::record_run(const RunRecord &run) {
    Transaction t(*conn_);
    int64_t g = upsert_generator({0, run.generator, run.algorithm_hash});
    int64_t inst = upsert_instance(g, run.params_json);
    int64_t target = upsert_target({0, run.arch_name, run.arch_json, run.arch_hash});
    ScheduleRecord s;
    s.hash = run.schedule_hash;
    s.spec_json = run.schedule_json;
    s.parent_id = run.parent_schedule_id;
    s.origin = run.origin;
    s.note = run.note;
    int64_t sched = upsert_schedule(s);
    ResultRecord r = run.result;
    r.schedule_id = sched;
    r.instance_id = inst;
    r.target_id = target;
    int64_t id = add_result(r);
    t.commit();
    return id;
}

std::vector<ResultRecord> ScheduleStore::query_results(const std::string &where_order,
                                                       const std::function<void(Statement &)> &bind) {
    Statement s = conn_->prepare(std::string(kResultSelect) + where_order);
    bind(s);
    std::vector<ResultRecord> out;
    while (s.step()) {
        out.push_back(read_result(s));
    }
    return out;
}

std::optional<ResultRecord> ScheduleStore::best(const std::string &generator, const std::string &params_json,
                                                const std::string &arch_hash) {
    std::string p = canonical_params(params_json);
    // One indexed probe per (instance, target): a generator name may have
    // several algorithm hashes, and a join over them would make SQLite sort
    // every verified result instead of reading the first index entry.
    std::optional<int64_t> target = find_id(*conn_, "SELECT id FROM targets WHERE arch_hash = ?", arch_hash);
    if (!target) {
        return std::nullopt;
    }
    Statement inst = conn_->prepare("SELECT i.id FROM instances i JOIN generators g ON g.id = i.generator_id "
                                    "WHERE g.name = ? AND i.params_json = ? ORDER BY i.id ASC");
    inst.bind(1, generator).bind(2, p);
    std::optional<ResultRecord> best;
    while (inst.step()) {
        int64_t instance_id = inst.get_int(0);
        auto rows = query_results("WHERE r.instance_id = ? AND r.target_id = ? AND r.verified = 1 "
                                  "AND r.simulated_cycles IS NOT NULL "
                                  "ORDER BY r.simulated_cycles ASC, r.created DESC, r.id DESC LIMIT 1",
                                  [&](Statement &s) { s.bind(1, instance_id).bind(2, *target); });
        if (rows.empty()) {
            continue;
        }
        const ResultRecord &r = rows.front();
        if (!best || *r.simulated_cycles < *best->simulated_cycles ||
            (*r.simulated_cycles == *best->simulated_cycles &&
             (r.created > best->created || (r.created == best->created && r.id > best->id)))) {
            best = r;
        }
    }
    return best;
}

std::vector<ResultRecord> ScheduleStore::history(const std::string &generator, const std::string &params_json,
                                                 const std::string &arch_hash) {
    std::string p = canonical_params(params_json);
    return query_results("WHERE g.name = ? AND i.params_json = ? AND t.arch_hash = ? ORDER BY r.created ASC, r.id ASC",
                         [&](Statement &s) { s.bind(1, generator).bind(2, p).bind(3, arch_hash); });
}

std::vector<ComparisonRow> ScheduleStore::compare(int64_t schedule_a, int64_t schedule_b,
                                                  const std::string &arch_hash) {
    auto rows = query_results("WHERE r.schedule_id IN (?, ?) AND t.arch_hash = ? "
                              "ORDER BY g.name ASC, i.params_json ASC, r.created ASC, r.id ASC",
                              [&](Statement &s) { s.bind(1, schedule_a).bind(2, schedule_b).bind(3, arch_hash); });
    // Keep per (instance, schedule) the best verified result, else the newest.
    auto better = [](const ResultRecord &cand, const ResultRecord &cur) {
        bool cv = cand.verified && cand.simulated_cycles, uv = cur.verified && cur.simulated_cycles;
        if (cv != uv) {
            return cv;
        }
        if (cv && *cand.simulated_cycles != *cur.simulated_cycles) {
            return *cand.simulated_cycles < *cur.simulated_cycles;
        }
        return true; // rows come oldest first: a later one wins ties
    };
    std::vector<ComparisonRow> out;
    std::map<int64_t, size_t> row_of_instance;
    for (const auto &r : rows) {
        auto [it, fresh] = row_of_instance.emplace(r.instance_id, out.size());
        if (fresh) {
            out.push_back({r.generator, r.params_json, std::nullopt, std::nullopt});
        }
        ComparisonRow &row = out[it->second];
        std::optional<ResultRecord> &slot = r.schedule_id == schedule_a ? row.a : row.b;
        if (!slot || better(r, *slot)) {
            slot = r;
        }
    }
    return out;
}

std::vector<ScheduleSummary> ScheduleStore::list() {
    Statement s = conn_->prepare(
        "SELECT s.id, s.hash, s.spec_json, s.parent_id, s.origin, s.note, s.created, "
        "(SELECT count(*) FROM results r WHERE r.schedule_id = s.id), "
        "(SELECT count(*) FROM results r WHERE r.schedule_id = s.id AND r.verified = 1), "
        "(SELECT min(r.simulated_cycles) FROM results r WHERE r.schedule_id = s.id AND r.verified = 1) "
        "FROM schedules s ORDER BY s.id ASC");
    std::vector<ScheduleSummary> out;
    while (s.step()) {
        ScheduleSummary sum;
        sum.schedule = read_schedule(s);
        sum.results = s.get_int(7);
        sum.verified_results = s.get_int(8);
        sum.best_simulated_cycles = s.get_opt_int(9);
        out.push_back(std::move(sum));
    }
    return out;
}

std::optional<ScheduleDetail> ScheduleStore::show(int64_t schedule_id) {
    Statement s = conn_->prepare(std::string(kScheduleSelect) + "WHERE id = ?");
    s.bind(1, schedule_id);
    if (!s.step()) {
        return std::nullopt;
    }
    ScheduleDetail d;
    d.schedule = read_schedule(s);
    d.results = query_results("WHERE r.schedule_id = ? ORDER BY r.created ASC, r.id ASC",
                              [&](Statement &st) { st.bind(1, schedule_id); });
    return d;
}

void ScheduleStore::mark_unverified(int64_t result_id, const std::string &reason) {
    Statement s = conn_->prepare(
        "UPDATE results SET verified = 0, error_text = CASE WHEN error_text = '' THEN ? ELSE error_text || '; ' || ? END "
        "WHERE id = ?");
    s.bind(1, reason).bind(2, reason).bind(3, result_id).run();
    if (conn_->changes() == 0) {
        throw DatabaseError("no result with id " + std::to_string(result_id) + " in " + path_);
    }
}

std::vector<GeneratorRecord> ScheduleStore::generators() {
    Statement s = conn_->prepare("SELECT id, name, algorithm_hash FROM generators ORDER BY id ASC");
    std::vector<GeneratorRecord> out;
    while (s.step()) {
        out.push_back({s.get_int(0), s.get_text(1), s.get_text(2)});
    }
    return out;
}

std::vector<InstanceRecord> ScheduleStore::instances() {
    Statement s = conn_->prepare("SELECT id, generator_id, params_json FROM instances ORDER BY id ASC");
    std::vector<InstanceRecord> out;
    while (s.step()) {
        out.push_back({s.get_int(0), s.get_int(1), s.get_text(2)});
    }
    return out;
}

std::vector<TargetRecord> ScheduleStore::targets() {
    Statement s = conn_->prepare("SELECT id, name, arch_json, arch_hash FROM targets ORDER BY id ASC");
    std::vector<TargetRecord> out;
    while (s.step()) {
        out.push_back({s.get_int(0), s.get_text(1), s.get_text(2), s.get_text(3)});
    }
    return out;
}

std::vector<ScheduleRecord> ScheduleStore::schedules() {
    Statement s = conn_->prepare(std::string(kScheduleSelect) + "ORDER BY id ASC");
    std::vector<ScheduleRecord> out;
    while (s.step()) {
        out.push_back(read_schedule(s));
    }
    return out;
}

std::vector<ResultRecord> ScheduleStore::results() {
    return query_results("ORDER BY r.id ASC", [](Statement &) {});
}

std::optional<ResultRecord> ScheduleStore::result(int64_t id) {
    auto rows = query_results("WHERE r.id = ?", [&](Statement &s) { s.bind(1, id); });
    if (rows.empty()) {
        return std::nullopt;
    }
    return rows.front();
}

std::optional<ScheduleRecord> ScheduleStore::schedule_by_hash(const std::string &hash) {
    Statement s = conn_->prepare(std::string(kScheduleSelect) + "WHERE hash = ?");
    s.bind(1, hash);
    if (!s.step()) {
        return std::nullopt;
    }
    return read_schedule(s);
}

TargetRecord ScheduleStore::find_target(const std::string &name_or_hash) {
    std::vector<TargetRecord> all = targets(), hits;
    for (const auto &t : all) {
        if (t.arch_hash == name_or_hash || t.name == name_or_hash) {
            hits.push_back(t);
        }
    }
    if (hits.size() == 1) {
        return hits.front();
    }
    std::string known;
    for (const auto &t : all) {
        known += (known.empty() ? "" : ", ") + t.name + " (" + t.arch_hash + ")";
    }
    if (hits.empty()) {
        throw DatabaseError("no target '" + name_or_hash + "' in " + path_ + "; stored targets: " +
                            (known.empty() ? "none" : known));
    }
    std::string which;
    for (const auto &t : hits) {
        which += (which.empty() ? "" : ", ") + t.arch_hash;
    }
    throw DatabaseError("arch name '" + name_or_hash + "' matches " + std::to_string(hits.size()) +
                        " stored targets; give one of their hashes: " + which);
}

} // namespace tessel::db
