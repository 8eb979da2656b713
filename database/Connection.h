#ifndef TESSEL_DATABASE_CONNECTION_H
#define TESSEL_DATABASE_CONNECTION_H

// The interface every backend of the schedule database implements: a
// Connection runs SQL and prepares Statements; a Statement binds values only
// through `?` placeholders (1-based) and steps through rows; a Transaction
// rolls back unless committed. ScheduleStore writes its queries once against
// this interface, so SQLite (Sqlite.h, the embedded default) and PostgreSQL
// (Postgres.h, a shared server) run the same SQL and give the same results;
// only the DDL and where the schema version lives differ (Schema.cpp).
// Every failure throws DatabaseError; nothing returns a bool a caller could
// forget to check.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace tessel::db {

/** A database failure: a refused file or URL, a SQL error, a constraint, a
 * lost server. `code` is the SQLite result code (0 when the error is Tessel's
 * own or PostgreSQL's). */
class DatabaseError : public std::runtime_error {
public:
    DatabaseError(const std::string &msg, int code = 0) : std::runtime_error(msg), code(code) {}
    int code;
};

enum class Backend { Sqlite, Postgres };

/** True for a PostgreSQL connection URI (postgresql://... or postgres://...):
 * what `--db`, $TESSEL_DB and the IDE accept besides a SQLite file path. */
bool is_postgres_url(const std::string &path_or_url);

/** One backend's prepared statement (implemented by Sqlite.cpp and Postgres.cpp). */
class StatementImpl {
public:
    virtual ~StatementImpl() = default;
    virtual void bind_int(int i, int64_t v) = 0;
    virtual void bind_double(int i, double v) = 0;
    virtual void bind_text(int i, const std::string &v) = 0;
    virtual void bind_null(int i) = 0;
    virtual bool step() = 0;
    virtual void reset() = 0;
    virtual bool is_null(int col) const = 0;
    virtual int64_t get_int(int col) const = 0;
    virtual double get_double(int col) const = 0;
    virtual std::string get_text(int col) const = 0;
};

/** A prepared statement: a movable handle over the backend's StatementImpl. */
class Statement {
public:
    explicit Statement(std::unique_ptr<StatementImpl> impl) : impl_(std::move(impl)) {}

    // Binding, 1-based; an empty optional binds NULL.
    Statement &bind(int i, int64_t v) {
        impl_->bind_int(i, v);
        return *this;
    }
    Statement &bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
    Statement &bind(int i, double v) {
        impl_->bind_double(i, v);
        return *this;
    }
    Statement &bind(int i, const std::string &v) {
        impl_->bind_text(i, v);
        return *this;
    }
    Statement &bind(int i, const char *v) { return bind(i, std::string(v)); }
    Statement &bind_null(int i) {
        impl_->bind_null(i);
        return *this;
    }
    template <typename T>
    Statement &bind(int i, const std::optional<T> &v) {
        return v ? bind(i, *v) : bind_null(i);
    }

    /** Advances; true while a row is available. */
    bool step() { return impl_->step(); }
    /** Runs a statement that returns no rows. */
    void run() {
        while (step()) {
        }
    }
    /** Back to before the first step, with the bindings cleared. */
    void reset() { impl_->reset(); }

    bool is_null(int col) const { return impl_->is_null(col); }
    int64_t get_int(int col) const { return impl_->get_int(col); }
    double get_double(int col) const { return impl_->get_double(col); }
    std::string get_text(int col) const { return impl_->get_text(col); }
    std::optional<int64_t> get_opt_int(int col) const;
    std::optional<double> get_opt_double(int col) const;
    std::optional<std::string> get_opt_text(int col) const;

private:
    std::unique_ptr<StatementImpl> impl_;
};

class Connection {
public:
    virtual ~Connection() = default;
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    virtual Backend backend() const = 0;
    /** Runs SQL without results (several statements allowed). */
    virtual void exec(const std::string &sql) = 0;
    virtual Statement prepare(const std::string &sql) = 0;
    /** Rows changed by the last INSERT/UPDATE/DELETE. */
    virtual int64_t changes() const = 0;
    /** The value of a single-value query such as "SELECT count(*) FROM results". */
    int64_t query_int(const std::string &sql);
    /** What messages call the database: a file path, or a URL without its password. */
    const std::string &path() const { return path_; }

    // Used by Transaction. A write transaction takes the write lock up front
    // where the backend has one (SQLite's BEGIN IMMEDIATE), so two writers wait
    // instead of deadlocking on a read-to-write upgrade; a read transaction
    // sees one snapshot of the database for all its queries.
    virtual void begin(bool write) = 0;
    virtual void commit() = 0;
    /** Never throws (runs from destructors, also on a lost connection). */
    virtual void rollback() noexcept = 0;

protected:
    explicit Connection(std::string path) : path_(std::move(path)) {}
    std::string path_;

private:
    friend class Transaction;
    int tx_depth_ = 0;           // Transactions open on this connection
    bool rollback_only_ = false; // an inner Transaction ended without commit
};

/** BEGIN ... COMMIT; rolls back in the destructor unless committed. A
 * Transaction opened while another is open on the connection joins it: its
 * commit() does nothing and the outer one commits; an inner one that ends
 * without commit() dooms the outer one (its commit() rolls back and throws),
 * so a caught error inside cannot leave half of the outer work committed. */
class Transaction {
public:
    enum class Kind { Write, Read };
    explicit Transaction(Connection &c, Kind kind = Kind::Write);
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
