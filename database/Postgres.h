#ifndef TESSEL_DATABASE_POSTGRES_H
#define TESSEL_DATABASE_POSTGRES_H

// The PostgreSQL backend of Connection, over libpq: one PgConnection owns a
// PGconn, statements are prepared on the server once per connection and run
// with text parameters (a `?` placeholder becomes $1, $2, ...). A malformed
// URL, an unreachable server, a server that goes away and every SQL error
// throw DatabaseError naming the database by its URL without the password.

#include "database/Connection.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

struct pg_conn;
struct pg_result;

namespace tessel::db {

/** `url` with any password (user:PASSWORD@ or password=PASSWORD) shown as ***. */
std::string redact_postgres_url(const std::string &url);

/** `sql` with each `?` outside quotes numbered $1, $2, ...; `count` gets how many. */
std::string number_placeholders(const std::string &sql, int *count);

class PgConnection : public Connection {
public:
    /** Connects to the libpq connection URI `url` (postgresql://...): throws
     * DatabaseError for a malformed URL or a server that refuses or is down. */
    explicit PgConnection(const std::string &url);
    ~PgConnection() override;

    Backend backend() const override { return Backend::Postgres; }
    void exec(const std::string &sql) override;
    Statement prepare(const std::string &sql) override;
    int64_t changes() const override { return changes_; }
    void begin(bool write) override;
    void commit() override;
    void rollback() noexcept override;

    /** Runs the prepared form of `numbered_sql` (prepared on first use) with
     * text parameters (nullopt = NULL); the caller owns the result (PQclear). */
    pg_result *run(const std::string &numbered_sql, const std::vector<std::optional<std::string>> &params);

private:
    /** Throws for a failed `res` (cleared) of `what`; returns it otherwise. */
    pg_result *checked(pg_result *res, const std::string &what);
    pg_conn *conn_ = nullptr;
    std::map<std::string, std::string> prepared_; // numbered SQL -> server-side statement name
    int64_t changes_ = 0;
};

} // namespace tessel::db

#endif
