#include "database/Connection.h"

namespace tessel::db {

bool is_postgres_url(const std::string &path_or_url) {
    return path_or_url.rfind("postgresql://", 0) == 0 || path_or_url.rfind("postgres://", 0) == 0;
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

int64_t Connection::query_int(const std::string &sql) {
    Statement s = prepare(sql);
    if (!s.step()) {
        throw DatabaseError("database " + path_ + ": no value from " + sql);
    }
    return s.get_int(0);
}

Transaction::Transaction(Connection &c, Kind kind) : conn_(c) { conn_.begin(kind == Kind::Write); }

Transaction::~Transaction() {
    if (!done_) {
        conn_.rollback();
    }
}

void Transaction::commit() {
    conn_.commit();
    done_ = true;
}

} // namespace tessel::db
