#ifndef TESSEL_DATABASE_SCHEDULESTORE_H
#define TESSEL_DATABASE_SCHEDULESTORE_H

// The typed store over tessel.db: plain records in, plain records out, no SQL
// outside database/. Halide-free and Qt-free: schedules and architectures are
// stored as canonical JSON text, so the CLI, the tuner and the IDE all use it.
// Every query about results is target-aware (it takes an arch hash).
//
// The database is a SQLite file (the embedded default) or a PostgreSQL
// database on a server, named by a postgresql:// or postgres:// URL; open()
// dispatches on the name, and every operation below runs the same SQL on both
// (database/Connection.h), so both give the same records, ids aside.
//
// Recording a run (what `tessel run --save` and the tuner call):
//   auto store = ScheduleStore::open(ScheduleStore::default_path());
//   RunRecord r; r.generator = "gemm"; r.params_json = ...; r.arch_name = a.name;
//   r.arch_json = a.to_json(-1); r.schedule_json = schedule_to_json(s); ...
//   int64_t result_id = store.record_run(r);

#include "database/Connection.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::db {

struct GeneratorRecord {
    int64_t id = 0;
    std::string name;
    std::string algorithm_hash; // identifies the algorithm (not the schedule); "" if unknown
};

struct InstanceRecord {
    int64_t id = 0;
    int64_t generator_id = 0;
    std::string params_json; // canonical: {"K":"256","M":"256"}
};

struct TargetRecord {
    int64_t id = 0;
    std::string name;      // ArchSpec name, e.g. "ascend-like"
    std::string arch_json; // canonical ArchSpec JSON
    std::string arch_hash; // FNV-1a 64 of arch_json unless given (equals ArchSpec::hash())
};

struct ScheduleRecord {
    int64_t id = 0;
    std::string hash;      // given (dsl's schedule_hash) or FNV-1a 64 of spec_json
    std::string spec_json; // canonical ScheduleSpec JSON
    std::optional<int64_t> parent_id;
    std::string origin = "manual"; // manual | tuner | default
    std::string note;
    std::string created; // ISO 8601 UTC; filled on insert when empty
};

struct ResultRecord {
    int64_t id = 0;
    std::string uid; // identity across databases (merge key); filled on insert when empty
    int64_t schedule_id = 0;
    int64_t instance_id = 0;
    int64_t target_id = 0;
    std::optional<int64_t> predicted_cycles;
    std::optional<int64_t> simulated_cycles;
    std::optional<int64_t> t_phys_cycles;
    std::optional<double> efficiency;
    bool verified = false;
    std::optional<double> max_error;
    std::optional<double> compile_ms;
    std::optional<int64_t> l2_hit_bytes; // schema v2
    std::string tool_version;
    std::string error_text;
    std::string created; // filled on insert when empty
    // Filled by queries (ignored by add_result): the keys the ids stand for.
    std::string schedule_hash;
    std::string generator;
    std::string params_json;
    std::string arch_name;
    std::string arch_hash;
};

/** Everything about one run, for record_run(): upserts the generator, the
 * instance, the target and the schedule, and adds the result, in one transaction. */
struct RunRecord {
    std::string generator;
    std::string algorithm_hash;
    std::string params_json;
    std::string arch_name;
    std::string arch_json;
    std::string arch_hash; // optional
    std::string schedule_json;
    std::string schedule_hash; // optional
    std::optional<int64_t> parent_schedule_id;
    std::string origin = "manual";
    std::string note;
    ResultRecord result; // measurements; ids are filled by record_run
};

struct ScheduleSummary {
    ScheduleRecord schedule;
    int64_t results = 0;
    int64_t verified_results = 0;
    std::optional<int64_t> best_simulated_cycles; // over verified results, any target
};

struct ScheduleDetail {
    ScheduleRecord schedule;
    std::vector<ResultRecord> results; // ordered by created, id
};

/** One problem instance of a comparison: each schedule's best verified result
 * on the target (lowest simulated cycles), else its newest result. */
struct ComparisonRow {
    std::string generator;
    std::string params_json;
    std::optional<ResultRecord> a, b;
};

class ScheduleStore {
public:
    /** Opens and migrates `path`: a SQLite file (creating parent directories
     * and the file) or a postgresql:// URL (connecting to the server). Throws
     * DatabaseError for a non-SQLite/damaged file, a bad URL, a server that is
     * down, or a newer schema. */
    static ScheduleStore open(const std::string &path);
    /** For reading only (merge and export's "best" read through it): for a
     * file, an in-memory copy migrated to the current schema, the file opened
     * read-only and never changed; for a URL, a session whose transactions
     * are all READ ONLY (the database must be at the current schema). */
    static ScheduleStore open_copy(const std::string &path);
    /** $TESSEL_DB (a file or a URL), else $XDG_DATA_HOME/tessel/tessel.db, else
     * ~/.local/share/tessel/tessel.db. */
    static std::string default_path();

    ScheduleStore(ScheduleStore &&) noexcept;
    ScheduleStore &operator=(ScheduleStore &&) noexcept;
    ~ScheduleStore();

    // Upserts deduplicate: an existing row with the same key keeps its id.
    int64_t upsert_generator(const GeneratorRecord &g);               // key: name + algorithm hash
    int64_t upsert_instance(int64_t generator_id, const std::string &params_json); // key: generator + params
    int64_t upsert_target(const TargetRecord &t);                     // key: arch hash
    int64_t upsert_schedule(const ScheduleRecord &s);                 // key: schedule hash
    /** Adds a result (a new uid unless one is given); returns its id. A result
     * whose uid is already stored is not added again: its id is returned. */
    int64_t add_result(const ResultRecord &r);
    int64_t record_run(const RunRecord &run);

    /** The fastest verified result for (generator, params, arch): lowest
     * simulated cycles, ties to the newest. */
    std::optional<ResultRecord> best(const std::string &generator, const std::string &params_json,
                                     const std::string &arch_hash);
    /** Every result for (generator, params, arch), oldest first. */
    std::vector<ResultRecord> history(const std::string &generator, const std::string &params_json,
                                      const std::string &arch_hash);
    std::vector<ComparisonRow> compare(int64_t schedule_a, int64_t schedule_b, const std::string &arch_hash);
    std::vector<ScheduleSummary> list();
    std::optional<ScheduleDetail> show(int64_t schedule_id);
    /** Sets verified = 0 and records `reason` in the error text; throws if no such result. */
    void mark_unverified(int64_t result_id, const std::string &reason);

    std::vector<GeneratorRecord> generators();
    std::vector<InstanceRecord> instances();
    std::vector<TargetRecord> targets();
    std::vector<ScheduleRecord> schedules();
    /** All results, by id. */
    std::vector<ResultRecord> results();
    std::optional<ResultRecord> result(int64_t id);
    std::optional<ScheduleRecord> schedule_by_hash(const std::string &hash);
    /** Resolves an arch name or hash to a stored target; throws DatabaseError
     * naming the stored targets when none (or several names) match. */
    TargetRecord find_target(const std::string &name_or_hash);

    Connection &connection() { return *conn_; }
    Backend backend() const { return conn_->backend(); }
    /** The file path, or the URL without its password. */
    const std::string &path() const { return path_; }

private:
    ScheduleStore(std::unique_ptr<Connection> c, std::string path);
    /** The id of the row `select_sql` finds, inserting it with `insert_sql`
     * (ON CONFLICT DO NOTHING) first when absent. */
    int64_t find_or_insert(const std::string &select_sql, const std::function<void(Statement &)> &bind_key,
                           const std::string &insert_sql, const std::function<void(Statement &)> &bind_row);
    std::vector<ResultRecord> query_results(const std::string &where_order,
                                            const std::function<void(Statement &)> &bind);
    std::unique_ptr<Connection> conn_;
    std::string path_;
};

} // namespace tessel::db

#endif
