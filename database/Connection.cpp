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

Transaction::Transaction(Connection &c, Kind kind) : conn_(c) {
    if (conn_.tx_depth_ == 0) {
        conn_.begin(kind == Kind::Write);
        conn_.rollback_only_ = false;
    }
    conn_.tx_depth_++;
}

Transaction::~Transaction() {
    if (done_) {
        return;
    }
    if (--conn_.tx_depth_ == 0) {
        conn_.rollback();
    } else {
        conn_.rollback_only_ = true;
    }
}

void Transaction::commit() {
    done_ = true;
    if (--conn_.tx_depth_ > 0) {
        return;
    }
    if (conn_.rollback_only_) {
        conn_.rollback();
        throw DatabaseError("database " + conn_.path() +
                            ": a step of the transaction failed; the whole transaction was rolled back");
    }
    try {
        conn_.commit();
    } catch (...) {
        conn_.rollback();
        throw;
    }
}

} // namespace tessel::db
