#ifndef TESSEL_TESTS_DATABASE_PGTESTSERVER_H
#define TESSEL_TESTS_DATABASE_PGTESTSERVER_H

// A real, throwaway PostgreSQL 15 cluster for the database tests: initdb in a
// temporary directory, served on a Unix socket in that directory only (no TCP
// port), stopped and deleted at the end. As root, initdb and pg_ctl run as the
// `postgres` user through runuser (initdb refuses root) and the directory is
// handed to that user; otherwise they run as the current user.
//
// One cluster serves every test: under ctest the fixture tests
// DbPostgres.StartCluster / DbPostgres.StopCluster (pg_test_cluster.cpp) start
// it in TESSEL_PG_TEST_DIR and stop it at the end, also when tests fail; a
// test binary run by hand starts its own there-or-beside on first use and stops
// it when the process exits. Each test gets its own database on it.

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace tessel::db::test {

class PgCluster {
public:
    /** The PostgreSQL server binaries (initdb, pg_ctl). */
    static std::string bin_dir();
    /** "" when the server binaries are present, else why the tests skip. */
    static std::string missing_reason();

    /** Creates and starts a cluster in `dir` (removed first if it exists);
     * `owned`: stopped and deleted when the PgCluster is destroyed. Unless
     * `durable`, the server runs with fsync off (a throwaway cluster need not
     * survive an OS crash; a killed client or server loses nothing committed). */
    static std::unique_ptr<PgCluster> start(const std::string &dir, bool owned = true, bool durable = false);
    /** A cluster already running in `dir` (one this process does not own), or nullptr. */
    static std::unique_ptr<PgCluster> attach(const std::string &dir);
    /** Stops the cluster in `dir` (if running) and deletes the directory. */
    static void stop_and_remove(const std::string &dir);
    ~PgCluster();

    /** pg_ctl stop -m immediate / start again on the same data (the tests of a server going away). */
    void stop_server();
    void start_server();

    /** The URL of database `name` on this cluster. */
    std::string url(const std::string &name) const;
    /** A new empty database (its name made unique from `hint`); returns its URL. */
    std::string create_database(const std::string &hint);
    /** Runs SQL as the superuser on database `name` ("postgres" by default). */
    void admin_exec(const std::string &sql, const std::string &name = "postgres") const;
    const std::string &dir() const { return dir_; }

private:
    PgCluster(std::string dir, bool owned, bool durable = false)
        : dir_(std::move(dir)), owned_(owned), durable_(durable) {}
    std::string dir_;
    bool owned_;
    bool durable_;
};

/** The cluster shared by this process (see above), or nullptr with `why`
 * filled when the server binaries are absent. */
PgCluster *shared_cluster(std::string *why);

/** The database tests' two backends: a fresh SQLite file in `dir` or a fresh
 * database on the shared cluster, by name ("sqlite" / "postgres"). Returns ""
 * with `skip` filled when PostgreSQL is wanted and not available. */
std::string fresh_db(const std::string &backend, const std::string &dir, const std::string &label,
                     std::string *skip);

/** A test with its own fresh database on the shared cluster (`url`);
 * skipped with the reason when the server binaries are absent. */
class PgDatabaseTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        cluster = shared_cluster(&why);
        if (!cluster) {
            GTEST_SKIP() << why;
        }
        url = cluster->create_database(::testing::UnitTest::GetInstance()->current_test_info()->name());
    }
    PgCluster *cluster = nullptr;
    std::string url;
};

} // namespace tessel::db::test

#endif
