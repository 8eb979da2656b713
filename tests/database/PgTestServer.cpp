#include "PgTestServer.h"

#include "database/Postgres.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <pwd.h>
#include <unistd.h>

namespace tessel::db::test {

namespace fs = std::filesystem;

namespace {

// The socket is DIR/.s.PGSQL.<port>; each cluster has its own DIR, so one
// port number serves them all.
constexpr int kPort = 54329;

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

/** Runs a server program as the postgres user when we are root (initdb
 * refuses root), else as ourselves; throws with its log when it fails. */
void run_server_tool(const std::string &args, const std::string &log) {
    std::string cmd = (::geteuid() == 0 ? "runuser -u postgres -- " : "") + PgCluster::bin_dir() + "/" + args +
                      " >" + log + " 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc != 0) {
        throw std::runtime_error("test PostgreSQL: `" + cmd + "` failed (status " + std::to_string(rc) +
                                 "):\n" + slurp(log));
    }
}

} // namespace

std::string PgCluster::bin_dir() {
    const char *env = std::getenv("TESSEL_PG_BIN");
    return env && *env ? env : "/usr/lib/postgresql/15/bin";
}

std::string PgCluster::missing_reason() {
    for (const char *tool : {"initdb", "pg_ctl", "postgres"}) {
        if (::access((bin_dir() + "/" + tool).c_str(), X_OK) != 0) {
            return "the PostgreSQL 15 server binaries are not installed (no " + bin_dir() + "/" + tool +
                   "; `make deps` installs postgresql-15): PostgreSQL backend tests skipped";
        }
    }
    if (::geteuid() == 0 && !::getpwnam("postgres")) {
        return "running as root and there is no `postgres` user to run initdb as: PostgreSQL backend tests skipped";
    }
    return "";
}

std::unique_ptr<PgCluster> PgCluster::start(const std::string &dir, bool owned, bool durable) {
    stop_and_remove(dir);
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all);
    if (::geteuid() == 0) {
        const struct passwd *pw = ::getpwnam("postgres");
        if (!pw || ::chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
            throw std::runtime_error("test PostgreSQL: cannot hand " + dir + " to the postgres user");
        }
    }
    run_server_tool("initdb -D " + dir + "/data -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync",
                    dir + "/initdb.log");
    std::unique_ptr<PgCluster> c(new PgCluster(dir, owned, durable));
    c->start_server();
    return c;
}

std::unique_ptr<PgCluster> PgCluster::attach(const std::string &dir) {
    if (!fs::exists(fs::path(dir) / "data" / "postmaster.pid")) {
        return nullptr;
    }
    std::unique_ptr<PgCluster> c(new PgCluster(dir, false));
    try {
        PgConnection probe(c->url("postgres"));
    } catch (const std::exception &) {
        return nullptr;
    }
    return c;
}

void PgCluster::stop_and_remove(const std::string &dir) {
    if (fs::exists(fs::path(dir) / "data" / "postmaster.pid")) {
        try {
            run_server_tool("pg_ctl -D " + dir + "/data -m immediate -w stop", dir + "/stop.log");
        } catch (const std::exception &) {
            // Not running after all (a stale pid file): removing the directory is enough.
        }
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
}

PgCluster::~PgCluster() {
    if (owned_) {
        stop_and_remove(dir_);
    }
}

void PgCluster::stop_server() { run_server_tool("pg_ctl -D " + dir_ + "/data -m immediate -w stop", dir_ + "/stop.log"); }

void PgCluster::start_server() {
    const std::string fast = durable_ ? "" : " -c fsync=off -c full_page_writes=off";
    run_server_tool("pg_ctl -D " + dir_ + "/data -l " + dir_ + "/server.log -w -t 60 -o \"-k " + dir_ + " -p " +
                        std::to_string(kPort) + " -c listen_addresses=''" + fast + "\" start",
                    dir_ + "/pg_ctl.log");
}

std::string PgCluster::url(const std::string &name) const {
    return "postgresql:///" + name + "?host=" + dir_ + "&port=" + std::to_string(kPort) + "&user=postgres";
}

std::string PgCluster::create_database(const std::string &hint) {
    static int counter = 0;
    std::string name = "t";
    for (char ch : hint) {
        if (name.size() < 40) {
            name += std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '_';
        }
    }
    name += "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
    admin_exec("CREATE DATABASE " + name);
    return url(name);
}

void PgCluster::admin_exec(const std::string &sql, const std::string &name) const {
    PgConnection c(url(name));
    c.exec(sql);
}

PgCluster *shared_cluster(std::string *why) {
    static std::unique_ptr<PgCluster> cluster;
    static std::string failure;
    static bool tried = false;
    if (!tried) {
        tried = true;
        failure = PgCluster::missing_reason();
        if (failure.empty()) {
            cluster = PgCluster::attach(TESSEL_PG_TEST_DIR);
            if (!cluster) {
                // Not under ctest's fixture: this process's own, stopped at exit.
                cluster = PgCluster::start(std::string(TESSEL_PG_TEST_DIR) + "-" + std::to_string(::getpid()));
            }
        }
    }
    if (!cluster && why) {
        *why = failure;
    }
    return cluster.get();
}

std::string fresh_db(const std::string &backend, const std::string &dir, const std::string &label,
                     std::string *skip) {
    if (backend == "sqlite") {
        return (fs::path(dir) / (label + ".db")).string();
    }
    PgCluster *c = shared_cluster(skip);
    return c ? c->create_database(label) : "";
}

} // namespace tessel::db::test
