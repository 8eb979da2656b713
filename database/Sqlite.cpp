#include "database/Sqlite.h"

#include <sqlite3.h>

namespace tessel::db {

Connection::Connection(const std::string &path, Mode mode) : path_(path) {
    int flags = SQLITE_OPEN_NOMUTEX;
    switch (mode) {
    case Mode::ReadWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
    case Mode::ReadWrite: flags |= SQLITE_OPEN_READWRITE; break;
    case Mode::ReadOnly: flags |= SQLITE_OPEN_READONLY; break;
    }
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close(db_);
        db_ = nullptr;
        throw DatabaseError("cannot open " + path + ": " + msg, rc);
    }
    sqlite3_extended_result_codes(db_, 0);
}

Connection::~Connection() {
    // Statements are owned by callers and finalized before this runs;
    // sqlite3_close_v2 tolerates any that are not.
    sqlite3_close_v2(db_);
}

void Connection::check(int rc, const std::string &what) const {
    if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) {
        return;
    }
    std::string msg = sqlite3_errmsg(db_);
    if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT) {
        throw DatabaseError(path_ + " is not a Tessel database or is damaged (SQLite: " + msg +
                                "); it was left untouched",
                            rc);
    }
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        throw DatabaseError(path_ + " stayed locked by another writer past the busy timeout (" + what +
                                ")",
                            rc);
    }
    throw DatabaseError("database " + path_ + ": " + msg + " (" + what + ")", rc);
}

void Connection::exec(const std::string &sql) {
    char *err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    sqlite3_free(err);
    check(rc, sql.substr(0, 60));
}

Statement Connection::prepare(const std::string &sql) { return Statement(*this, sql); }

int64_t Connection::query_int(const std::string &sql) {
    Statement s(*this, sql);
    if (!s.step()) {
        throw DatabaseError("database " + path_ + ": no value from " + sql);
    }
    return s.get_int(0);
}

int64_t Connection::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

int Connection::changes() const { return sqlite3_changes(db_); }

void Connection::backup_to(Connection &dest) {
    sqlite3_backup *b = sqlite3_backup_init(dest.db_, "main", db_, "main");
    if (!b) {
        dest.check(sqlite3_errcode(dest.db_), "backup of " + path_);
    }
    int rc = sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        check(rc, "backup");
    }
}

Statement::Statement(Connection &c, const std::string &sql) : conn_(&c), sql_(sql) {
    c.check(sqlite3_prepare_v2(c.handle(), sql.c_str(), -1, &stmt_, nullptr), sql);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement &&o) noexcept : conn_(o.conn_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
    o.stmt_ = nullptr;
}

Statement &Statement::bind(int i, int64_t v) {
    conn_->check(sqlite3_bind_int64(stmt_, i, v), sql_);
    return *this;
}

Statement &Statement::bind(int i, double v) {
    conn_->check(sqlite3_bind_double(stmt_, i, v), sql_);
    return *this;
}

Statement &Statement::bind(int i, const std::string &v) {
    conn_->check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT), sql_);
    return *this;
}

Statement &Statement::bind_null(int i) {
    conn_->check(sqlite3_bind_null(stmt_, i), sql_);
    return *this;
}

bool Statement::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    conn_->check(rc, sql_);
    return false;
}

void Statement::run() {
    while (step()) {
    }
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

int64_t Statement::get_int(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::get_double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::get_text(int col) const {
    const unsigned char *p = sqlite3_column_text(stmt_, col);
    if (!p) {
        return {};
    }
    return std::string(reinterpret_cast<const char *>(p), sqlite3_column_bytes(stmt_, col));
}

std::optional<int64_t> Statement::get_opt_int(int col) const {
    if (is_null(col)) {
        return std::nullopt;
    }
    return get_int(col);
}

std::optional<double> Statement::get_opt_double(int col) const {
    if (is_null(col)) {
        return std::nullopt;
    }
    return get_double(col);
}

std::optional<std::string> Statement::get_opt_text(int col) const {
    if (is_null(col)) {
        return std::nullopt;
    }
    return get_text(col);
}

Transaction::Transaction(Connection &c) : conn_(c) { conn_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
    if (!done_) {
        sqlite3_exec(conn_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

void Transaction::commit() {
    conn_.exec("COMMIT");
    done_ = true;
}

} // namespace tessel::db
