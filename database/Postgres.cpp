#include "database/Postgres.h"

#include <libpq-fe.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tessel::db {

namespace {

/** libpq's message as one line: the first non-empty line, without severity
 * prefixes ("FATAL:  ", "ERROR:  ", also after libpq's own "...failed: ") and
 * surrounding whitespace. */
std::string one_line(const char *msg) {
    std::string s = msg ? msg : "";
    size_t b = 0;
    while (b < s.size()) {
        size_t e = s.find('\n', b);
        std::string line = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
        size_t first = line.find_first_not_of(" \t");
        if (first != std::string::npos) {
            line = line.substr(first);
            for (const char *prefix : {"FATAL:  ", "ERROR:  "}) {
                for (size_t p; (p = line.find(prefix)) != std::string::npos;) {
                    line.erase(p, std::strlen(prefix));
                }
            }
            return line.substr(0, line.find_last_not_of(" \t\r") + 1);
        }
        if (e == std::string::npos) {
            break;
        }
        b = e + 1;
    }
    return "no message from libpq";
}

void ignore_notice(void *, const char *) {}

class PgStatement : public StatementImpl {
public:
    PgStatement(PgConnection &c, const std::string &sql) : conn_(&c) {
        int n = 0;
        sql_ = number_placeholders(sql, &n);
        params_.resize(static_cast<size_t>(n));
    }
    ~PgStatement() override { PQclear(res_); }
    void bind_int(int i, int64_t v) override { param(i) = std::to_string(v); }
    void bind_double(int i, double v) override;
    void bind_text(int i, const std::string &v) override { param(i) = v; }
    void bind_null(int i) override { param(i).reset(); }
    bool step() override {
        if (!res_) {
            res_ = conn_->run(sql_, params_);
            row_ = -1;
        }
        return ++row_ < PQntuples(res_);
    }
    void reset() override {
        PQclear(res_);
        res_ = nullptr;
        for (auto &p : params_) {
            p.reset();
        }
    }
    bool is_null(int col) const override { return PQgetisnull(res_, row_, col) != 0; }
    int64_t get_int(int col) const override { return std::strtoll(PQgetvalue(res_, row_, col), nullptr, 10); }
    double get_double(int col) const override { return std::strtod(PQgetvalue(res_, row_, col), nullptr); }
    std::string get_text(int col) const override {
        return std::string(PQgetvalue(res_, row_, col), static_cast<size_t>(PQgetlength(res_, row_, col)));
    }

private:
    std::optional<std::string> &param(int i) {
        if (i < 1 || static_cast<size_t>(i) > params_.size()) {
            throw DatabaseError("database " + conn_->path() + ": no parameter " + std::to_string(i) + " in " + sql_);
        }
        return params_[static_cast<size_t>(i - 1)];
    }
    PgConnection *conn_;
    std::string sql_;
    std::vector<std::optional<std::string>> params_;
    PGresult *res_ = nullptr;
    int row_ = -1;
};

void PgStatement::bind_double(int i, double v) {
    if (std::isnan(v)) {
        param(i) = "NaN";
        return;
    }
    if (std::isinf(v)) {
        param(i) = v > 0 ? "Infinity" : "-Infinity";
        return;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%.17g", v); // 17 significant digits: the same double back
    param(i) = buf;
}

} // namespace

std::string redact_postgres_url(const std::string &url) {
    std::string out = url;
    size_t scheme = out.find("://");
    if (scheme != std::string::npos) {
        size_t start = scheme + 3;
        size_t end = out.find_first_of("/?", start);
        std::string authority = out.substr(start, end == std::string::npos ? std::string::npos : end - start);
        size_t at = authority.rfind('@');
        size_t colon = at == std::string::npos ? std::string::npos : authority.find(':');
        if (colon != std::string::npos && colon < at) {
            out.replace(start + colon + 1, at - colon - 1, "***");
        }
    }
    for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
        size_t v = p + std::strlen("password=");
        size_t e = out.find('&', v);
        out.replace(v, e == std::string::npos ? std::string::npos : e - v, "***");
    }
    return out;
}

std::string number_placeholders(const std::string &sql, int *count) {
    std::string out;
    int n = 0;
    char quote = 0;
    for (char c : sql) {
        if (quote) {
            quote = c == quote ? 0 : quote; // a doubled quote closes and reopens: same result
            out += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            out += c;
        } else if (c == '?') {
            out += "$" + std::to_string(++n);
        } else {
            out += c;
        }
    }
    *count = n;
    return out;
}

PgConnection::PgConnection(const std::string &url) : Connection(redact_postgres_url(url)) {
    char *err = nullptr;
    PQconninfoOption *opts = PQconninfoParse(url.c_str(), &err);
    if (!opts) {
        std::string msg = err ? one_line(err) : "out of memory";
        PQfreemem(err);
        throw DatabaseError("not a valid PostgreSQL URL: " + path_ + ": " + msg +
                            " (the form is postgresql://[user[:password]@][host][:port]/dbname[?param=value&...])");
    }
    PQconninfoFree(opts);
    // Defaults the URL may override: dbname comes last, so its values win.
    const char *const keys[] = {"connect_timeout", "application_name", "client_encoding", "dbname", nullptr};
    const char *const values[] = {"10", "tessel", "UTF8", url.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
        std::string msg = conn_ ? one_line(PQerrorMessage(conn_)) : "out of memory";
        PQfinish(conn_);
        conn_ = nullptr;
        throw DatabaseError("cannot connect to the PostgreSQL server of " + path_ + ": " + msg +
                            " (is the server running, and does the database exist?)");
    }
    PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
}

PgConnection::~PgConnection() { PQfinish(conn_); }

PGresult *PgConnection::checked(PGresult *res, const std::string &what) {
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        const char *n = PQcmdTuples(res);
        if (n && *n) {
            changes_ = std::strtoll(n, nullptr, 10);
        }
        return res;
    }
    std::string msg = one_line(res ? PQresultErrorMessage(res) : PQerrorMessage(conn_));
    if (msg == "no message from libpq") {
        msg = one_line(PQerrorMessage(conn_));
    }
    // A lost server: the connection's status says so, or (a server stopped
    // under a session whose status libpq has not updated yet) the error is a
    // connection exception (SQLSTATE class 08), an operator intervention that
    // ends sessions (57P01-57P03), or libpq's own report of a closed socket.
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    const std::string sqlstate = state ? state : "";
    const bool gone = PQstatus(conn_) != CONNECTION_OK || sqlstate.rfind("08", 0) == 0 ||
                      sqlstate.rfind("57P", 0) == 0 ||
                      (sqlstate.empty() && (msg.find("server closed the connection") != std::string::npos ||
                                            msg.find("no connection to the server") != std::string::npos));
    PQclear(res);
    std::string short_what = what.substr(0, 80);
    if (gone) {
        bool commit = what == "COMMIT";
        throw DatabaseError("lost the connection to the PostgreSQL server of " + path_ + " (" + short_what +
                            "): " + msg +
                            (commit ? "; whether the transaction was committed is unknown"
                                    : "; the transaction in progress was rolled back, nothing of it was written"));
    }
    throw DatabaseError("database " + path_ + ": " + msg + " (" + short_what + ")");
}

void PgConnection::exec(const std::string &sql) {
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
        checked(nullptr, sql);
    }
    PQclear(checked(PQexec(conn_, sql.c_str()), sql));
}

Statement PgConnection::prepare(const std::string &sql) { return Statement(std::make_unique<PgStatement>(*this, sql)); }

PGresult *PgConnection::run(const std::string &numbered_sql, const std::vector<std::optional<std::string>> &params) {
    auto it = prepared_.find(numbered_sql);
    if (it == prepared_.end()) {
        std::string name = "tessel_" + std::to_string(prepared_.size() + 1);
        int n = static_cast<int>(params.size());
        PQclear(checked(PQprepare(conn_, name.c_str(), numbered_sql.c_str(), n, nullptr), numbered_sql));
        it = prepared_.emplace(numbered_sql, name).first;
    }
    std::vector<const char *> values;
    for (const auto &p : params) {
        values.push_back(p ? p->c_str() : nullptr);
    }
    return checked(PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(values.size()), values.data(), nullptr,
                                  nullptr, 0),
                   numbered_sql);
}

void PgConnection::begin(bool write) { exec(write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); }

void PgConnection::commit() {
    PGresult *res = checked(PQexec(conn_, "COMMIT"), "COMMIT");
    // COMMIT of a transaction that had failed answers ROLLBACK, not an error.
    bool rolled_back = std::strcmp(PQcmdStatus(res), "ROLLBACK") == 0;
    PQclear(res);
    if (rolled_back) {
        throw DatabaseError("database " + path_ + ": the transaction failed earlier and was rolled back");
    }
}

void PgConnection::rollback() noexcept {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
        PQclear(PQexec(conn_, "ROLLBACK"));
    }
}

} // namespace tessel::db
