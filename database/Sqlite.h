#ifndef TESSEL_DATABASE_SQLITE_H
#define TESSEL_DATABASE_SQLITE_H

// The SQLite backend of Connection (in the spirit of Chromium's sql/): a
// SqliteConnection owns a sqlite3*, its statements own prepared sqlite3_stmt*s.
// Failures throw DatabaseError carrying the SQLite message and result code.

#include "database/Connection.h"

#include <cstdint>
#include <string>

struct sqlite3;

namespace tessel::db {

class SqliteConnection : public Connection {
public:
    enum class Mode { ReadWriteCreate, ReadWrite, ReadOnly };
    /** Opens `path` (":memory:" for an in-memory database). */
    SqliteConnection(const std::string &path, Mode mode);
    ~SqliteConnection() override;

    Backend backend() const override { return Backend::Sqlite; }
    void exec(const std::string &sql) override;
    Statement prepare(const std::string &sql) override;
    int64_t changes() const override;
    void begin(bool write) override;
    void commit() override;
    void rollback() noexcept override;

    int64_t last_insert_id() const;
    /** Copies this whole database into `dest` (sqlite3_backup). */
    void backup_to(SqliteConnection &dest);
    sqlite3 *handle() const { return db_; }

    /** Throws DatabaseError for `rc` (not OK/ROW/DONE) naming `what`. */
    void check(int rc, const std::string &what) const;

private:
    sqlite3 *db_ = nullptr;
    bool registered_ = false; // counted in the process's open files (sqlite_file_in_use)
    uint64_t dev_ = 0, ino_ = 0;
};

/** Whether a SqliteConnection of this process has the file `path` open now.
 * Nothing else may then open and close that file: closing any descriptor of a
 * file drops every POSIX lock the process holds on it, SQLite's included (a
 * second connection's header check would otherwise let another process take
 * the database's exclusive lock, checkpoint and delete the WAL under us). */
bool sqlite_file_in_use(const std::string &path);

} // namespace tessel::db

#endif
