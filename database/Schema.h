#ifndef TESSEL_DATABASE_SCHEMA_H
#define TESSEL_DATABASE_SCHEMA_H

// The schema of the schedule database and its migration ladder, for both
// backends: SQLite keeps the schema version in PRAGMA user_version, PostgreSQL
// in the one-row table tessel_schema. migrate() runs every step from the
// database's version up to kSchemaVersion inside one transaction, so a
// database is either fully at the old version or fully at the new one. Each
// step has a SQLite and a PostgreSQL text (types, identity columns and text
// collation differ; the tables, columns, keys and indexes are the same).
// docs/database.md describes the tables.

#include "database/Sqlite.h"

#include <memory>
#include <string>

namespace tessel::db {

/** The newest schema this program understands. */
constexpr int kSchemaVersion = 4;

/** Throws DatabaseError if `path` exists, is not empty and does not start with
 * the SQLite header; reads the file only (it is never written). */
void check_sqlite_header(const std::string &path);

/** Opens `path` as a Tessel SQLite database: refuses non-SQLite files, files
 * of other programs and newer schema versions with a message, sets WAL mode,
 * the busy timeout and foreign keys, then migrates to kSchemaVersion (unless
 * read_only). */
std::unique_ptr<SqliteConnection> open_sqlite(const std::string &path, bool read_only = false);

/** Connects to the PostgreSQL database `url`: refuses a database whose tables
 * clash with ours and newer schema versions with a message, then migrates to
 * kSchemaVersion. read_only: nothing is migrated or written (every transaction
 * of the session is READ ONLY) and the database must be at kSchemaVersion. */
std::unique_ptr<Connection> open_postgres(const std::string &url, bool read_only = false);

/** open_postgres for a postgresql:// or postgres:// URL, else open_sqlite. */
std::unique_ptr<Connection> open_database(const std::string &path_or_url, bool read_only = false);

/** Runs the ladder from the current version to `target` in one transaction
 * (on PostgreSQL under an advisory lock, so concurrent openers migrate once). */
void migrate(Connection &c, int target = kSchemaVersion);

/** The schema version stored in `c` (0 for an empty database). */
int schema_version(Connection &c);

} // namespace tessel::db

#endif
