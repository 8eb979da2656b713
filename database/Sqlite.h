#ifndef TESSEL_DATABASE_SQLITE_H
#define TESSEL_DATABASE_SQLITE_H

// A thin RAII layer over the SQLite C API (in the spirit of Chromium's sql/):
// a Connection owns a sqlite3*, a Statement owns a prepared sqlite3_stmt* and
// binds values only through `?` placeholders, a Transaction rolls back unless
// committed. Every failure throws DatabaseError carrying the SQLite message;
// nothing returns a bool a caller could forget to check.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace tessel::db {

/** A database failure: a refused file, a SQL error, a constraint. `code` is the
 * SQLite result code (0 when the error is Tessel's own). */
class DatabaseError : public std::runtime_error {
public:
    DatabaseError(const std::string &msg, int code = 0) : std::runtime_error(msg), code(code) {}
    int code;
};

class Statement;

class Connection {
public:
    enum class Mode { ReadWriteCreate, ReadWrite, ReadOnly };
    /** Opens `path` (":memory:" for an in-memory database). */
    Connection(const std::string &path, Mode mode);
    ~Connection();
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    /** Runs SQL without results (several statements allowed). */
    void exec(const std::string &sql);
    Statement prepare(const std::string &sql);
    /** The value of a single-value query such as "PRAGMA user_version". */
    int64_t query_int(const std::string &sql);
    int64_t last_insert_id() const;
    int changes() const;
    /** Copies this whole database into `dest` (sqlite3_backup). */
    void backup_to(Connection &dest);
    const std::string &path() const { return path_; }
    sqlite3 *handle() const { return db_; }

    /** Throws DatabaseError for `rc` (not OK/ROW/DONE) naming `what`. */
    void check(int rc, const std::string &what) const;

private:
    sqlite3 *db_ = nullptr;
    std::string path_;
};

class Statement {
public:
    Statement(Connection &c, const std::string &sql);
    ~Statement();
    Statement(Statement &&o) noexcept;
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;
    Statement &operator=(Statement &&) = delete;

    // Binding, 1-based like SQLite; an empty optional binds NULL.
    Statement &bind(int i, int64_t v);
    Statement &bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
    Statement &bind(int i, double v);
    Statement &bind(int i, const std::string &v);
    Statement &bind(int i, const char *v) { return bind(i, std::string(v)); }
    Statement &bind_null(int i);
    template <typename T>
    Statement &bind(int i, const std::optional<T> &v) {
        return v ? bind(i, *v) : bind_null(i);
    }

    /** Advances; true while a row is available. */
    bool step();
    /** Runs a statement that returns no rows. */
    void run();
    void reset();

    bool is_null(int col) const;
    int64_t get_int(int col) const;
    double get_double(int col) const;
    std::string get_text(int col) const;
    std::optional<int64_t> get_opt_int(int col) const;
    std::optional<double> get_opt_double(int col) const;
    std::optional<std::string> get_opt_text(int col) const;

private:
    Connection *conn_;
    sqlite3_stmt *stmt_ = nullptr;
    std::string sql_;
};

/** BEGIN IMMEDIATE ... COMMIT; rolls back in the destructor unless committed.
 * IMMEDIATE takes the write lock up front, so two writers wait on the busy
 * timeout instead of deadlocking on a read-to-write upgrade. */
class Transaction {
public:
    explicit Transaction(Connection &c);
    ~Transaction();
    Transaction(const Transaction &) = delete;
    Transaction &operator=(const Transaction &) = delete;
    void commit();

private:
    Connection &conn_;
    bool done_ = false;
};

} // namespace tessel::db

#endif
