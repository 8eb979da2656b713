#include "database/Schema.h"

#include <cstring>
#include <fstream>
#include <vector>

namespace tessel::db {

namespace {

// Step N takes a database from version N-1 to version N. Never edit a step
// that has shipped: add a new one, and keep a dump of the old schema under
// tests/database/fixtures/ with a test that migrates it.
const char *const kSteps[] = {
    // v1: the five tables and the indexes behind best / history / compare.
    R"sql(
CREATE TABLE generators (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  algorithm_hash TEXT NOT NULL,
  UNIQUE (name, algorithm_hash)
);
CREATE TABLE instances (
  id INTEGER PRIMARY KEY,
  generator_id INTEGER NOT NULL REFERENCES generators (id),
  params_json TEXT NOT NULL,
  UNIQUE (generator_id, params_json)
);
CREATE TABLE targets (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  arch_json TEXT NOT NULL,
  arch_hash TEXT NOT NULL UNIQUE
);
CREATE TABLE schedules (
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  spec_json TEXT NOT NULL,
  parent_id INTEGER REFERENCES schedules (id),
  origin TEXT NOT NULL CHECK (origin IN ('manual', 'tuner', 'default')),
  note TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL
);
CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  schedule_id INTEGER NOT NULL REFERENCES schedules (id),
  instance_id INTEGER NOT NULL REFERENCES instances (id),
  target_id INTEGER NOT NULL REFERENCES targets (id),
  predicted_cycles INTEGER,
  simulated_cycles INTEGER,
  t_phys_cycles INTEGER,
  efficiency REAL,
  verified INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
  max_error REAL,
  compile_ms REAL,
  tool_version TEXT NOT NULL DEFAULT '',
  error_text TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL
);
CREATE INDEX results_best ON results (instance_id, target_id, verified, simulated_cycles, created);
CREATE INDEX results_history ON results (instance_id, target_id, created);
CREATE INDEX schedules_parent ON schedules (parent_id);
)sql",
    // v2: L2 hit bytes from the simulator; an index for comparing two
    // schedules on one target without scanning every result; the best index
    // in the query's own order (cycles up, newest first), so best() reads one
    // index entry instead of sorting every verified result of the instance.
    R"sql(
ALTER TABLE results ADD COLUMN l2_hit_bytes INTEGER;
CREATE INDEX results_compare ON results (schedule_id, target_id, instance_id);
DROP INDEX results_best;
CREATE INDEX results_best_v2 ON results (instance_id, target_id, verified, simulated_cycles, created DESC, id DESC);
)sql",
};
static_assert(sizeof(kSteps) / sizeof(kSteps[0]) == kSchemaVersion, "one step per schema version");

const char *const kOurTables[] = {"generators", "instances", "targets", "schedules", "results"};

} // namespace

int schema_version(Connection &c) { return static_cast<int>(c.query_int("PRAGMA user_version")); }

void check_sqlite_header(const std::string &path) {
    if (path.empty() || path == ":memory:") {
        return;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return; // absent: it will be created
    }
    char head[16] = {};
    in.read(head, sizeof head);
    std::streamsize n = in.gcount();
    if (n == 0) {
        return; // an empty file is an empty database
    }
    static const char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                    'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
    if (n < 16 || std::memcmp(head, kMagic, 16) != 0) {
        throw DatabaseError(path + " is not a SQLite database (its first bytes are not \"SQLite format 3\"); "
                                   "tessel refuses to open it and left it untouched");
    }
}

void migrate(Connection &c, int target) {
    Transaction t(c);
    int v = schema_version(c); // re-read under the write lock: another process may have migrated
    if (v >= target) {
        return;
    }
    for (int step = v; step < target; step++) {
        c.exec(kSteps[step]);
    }
    // PRAGMA takes no parameters; the value is a compile-time integer.
    c.exec("PRAGMA user_version = " + std::to_string(target));
    t.commit();
}

std::unique_ptr<Connection> open_database(const std::string &path, bool read_only) {
    check_sqlite_header(path);
    auto c = std::make_unique<Connection>(path, read_only ? Connection::Mode::ReadOnly
                                                          : Connection::Mode::ReadWriteCreate);
    c->exec("PRAGMA busy_timeout = 30000");
    // The first read: a damaged header fails here (SQLITE_NOTADB), before any write.
    std::vector<std::string> tables;
    {
        Statement s = c->prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
        while (s.step()) {
            tables.push_back(s.get_text(0));
        }
    }
    int v = schema_version(*c);
    if (v > kSchemaVersion) {
        throw DatabaseError(path + " has schema version " + std::to_string(v) + "; this tessel understands up to " +
                            std::to_string(kSchemaVersion) + ": upgrade tessel");
    }
    if (v == 0 && !tables.empty()) {
        std::string list;
        for (const auto &t : tables) {
            list += (list.empty() ? "" : ", ") + t;
        }
        throw DatabaseError(path + " is a SQLite database of another program (tables: " + list +
                            "); tessel refuses to use it and left it untouched");
    }
    if (v > 0) {
        for (const char *t : kOurTables) {
            bool found = false;
            for (const auto &have : tables) {
                found = found || have == t;
            }
            if (!found) {
                throw DatabaseError(path + " has schema version " + std::to_string(v) + " but no table '" + t +
                                    "'; it is not a Tessel database and was left untouched");
            }
        }
    }
    if (read_only) {
        return c;
    }
    if (path != ":memory:" && !path.empty()) {
        c->exec("PRAGMA journal_mode = WAL");
    }
    c->exec("PRAGMA synchronous = NORMAL");
    c->exec("PRAGMA foreign_keys = ON");
    migrate(*c);
    return c;
}

} // namespace tessel::db
