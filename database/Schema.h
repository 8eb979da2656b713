#ifndef TESSEL_DATABASE_SCHEMA_H
#define TESSEL_DATABASE_SCHEMA_H

// The schema of tessel.db and its migration ladder. PRAGMA user_version holds
// the schema version; migrate() runs every step from the file's version up to
// kSchemaVersion inside one transaction, so a database is either fully at the
// old version or fully at the new one. docs/database.md describes the tables.

#include "database/Sqlite.h"

#include <memory>
#include <string>

namespace tessel::db {

/** The newest schema this program understands. */
constexpr int kSchemaVersion = 2;

/** Throws DatabaseError if `path` exists, is not empty and does not start with
 * the SQLite header; reads the file only (it is never written). */
void check_sqlite_header(const std::string &path);

/** Opens `path` as a Tessel database: refuses non-SQLite files, files of other
 * programs and newer schema versions with a message, sets WAL mode, the busy
 * timeout and foreign keys, then migrates to kSchemaVersion (unless read_only). */
std::unique_ptr<Connection> open_database(const std::string &path, bool read_only = false);

/** Runs the ladder from the current user_version to `target` in one transaction. */
void migrate(Connection &c, int target = kSchemaVersion);

/** The schema version stored in `c` (PRAGMA user_version). */
int schema_version(Connection &c);

} // namespace tessel::db

#endif
