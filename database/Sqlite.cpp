#include "database/Sqlite.h"

#include <map>
#include <mutex>

#include <sys/stat.h>

#include <sqlite3.h>

namespace tessel::db {

namespace {

class SqliteStatement : public StatementImpl {
public:
    SqliteStatement(SqliteConnection &c, const std::string &sql) : conn_(&c), sql_(sql) {
        c.check(sqlite3_prepare_v2(c.handle(), sql.c_str(), -1, &stmt_, nullptr), sql);
    }
    ~SqliteStatement() override { sqlite3_finalize(stmt_); }
    void bind_int(int i, int64_t v) override { conn_->check(sqlite3_bind_int64(stmt_, i, v), sql_); }
    void bind_double(int i, double v) override { conn_->check(sqlite3_bind_double(stmt_, i, v), sql_); }
    void bind_text(int i, const std::string &v) override {
        conn_->check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT), sql_);
    }
    void bind_null(int i) override { conn_->check(sqlite3_bind_null(stmt_, i), sql_); }
    bool step() override;
    void reset() override {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }
    bool is_null(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
    int64_t get_int(int col) const override { return sqlite3_column_int64(stmt_, col); }
    double get_double(int col) const override { return sqlite3_column_double(stmt_, col); }
    std::string get_text(int col) const override;

private:
    SqliteConnection *conn_;
    sqlite3_stmt *stmt_ = nullptr;
    std::string sql_;
};

bool SqliteStatement::step() {
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

std::string SqliteStatement::get_text(int col) const {
    const unsigned char *p = sqlite3_column_text(stmt_, col);
    if (!p) {
        return {};
    }
    return std::string(reinterpret_cast<const char *>(p), sqlite3_column_bytes(stmt_, col));
}

} // namespace

namespace {

std::mutex g_open_mu;
std::map<std::pair<uint64_t, uint64_t>, int> g_open_files; // (device, inode) -> connections

} // namespace

bool sqlite_file_in_use(const std::string &path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        return false;
    }
    std::lock_guard<std::mutex> lock(g_open_mu);
    return g_open_files.count({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}) > 0;
}

SqliteConnection::SqliteConnection(const std::string &path, Mode mode) : Connection(path) {
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
    struct stat st;
    if (path != ":memory:" && !path.empty() && stat(path.c_str(), &st) == 0) {
        dev_ = static_cast<uint64_t>(st.st_dev);
        ino_ = static_cast<uint64_t>(st.st_ino);
        std::lock_guard<std::mutex> lock(g_open_mu);
        g_open_files[{dev_, ino_}]++;
        registered_ = true;
    }
}

SqliteConnection::~SqliteConnection() {
    // Statements are owned by callers and finalized before this runs;
    // sqlite3_close_v2 tolerates any that are not.
    sqlite3_close_v2(db_);
    if (registered_) {
        std::lock_guard<std::mutex> lock(g_open_mu);
        auto it = g_open_files.find({dev_, ino_});
        if (it != g_open_files.end() && --it->second == 0) {
            g_open_files.erase(it);
        }
    }
}

void SqliteConnection::check(int rc, const std::string &what) const {
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

void SqliteConnection::exec(const std::string &sql) {
    char *err = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    sqlite3_free(err);
    check(rc, sql.substr(0, 60));
}

Statement SqliteConnection::prepare(const std::string &sql) {
    return Statement(std::make_unique<SqliteStatement>(*this, sql));
}

int64_t SqliteConnection::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

int64_t SqliteConnection::changes() const { return sqlite3_changes(db_); }

void SqliteConnection::backup_to(SqliteConnection &dest) {
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

void SqliteConnection::begin(bool write) { exec(write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED"); }

void SqliteConnection::commit() { exec("COMMIT"); }

void SqliteConnection::rollback() noexcept { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }

} // namespace tessel::db
