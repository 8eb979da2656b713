// pg_test_cluster start | stop: the ctest fixture around the PostgreSQL tests
// (DbPostgres.StartCluster / DbPostgres.StopCluster): one throwaway cluster in
// TESSEL_PG_TEST_DIR for every test of the run (PgTestServer.h). Without the
// server binaries `start` says so and succeeds: the tests then skip.
#include "PgTestServer.h"

#include <cstdio>
#include <cstring>
#include <exception>

using namespace tessel::db::test;

int main(int argc, char **argv) {
    if (argc != 2 || (std::strcmp(argv[1], "start") != 0 && std::strcmp(argv[1], "stop") != 0)) {
        std::fprintf(stderr, "usage: pg_test_cluster start|stop\n");
        return 2;
    }
    try {
        if (std::strcmp(argv[1], "stop") == 0) {
            PgCluster::stop_and_remove(TESSEL_PG_TEST_DIR);
            std::printf("stopped and removed the test cluster in %s\n", TESSEL_PG_TEST_DIR);
            return 0;
        }
        std::string why = PgCluster::missing_reason();
        if (!why.empty()) {
            std::printf("%s\n", why.c_str());
            return 0;
        }
        auto c = PgCluster::start(TESSEL_PG_TEST_DIR, /*owned=*/false);
        std::printf("test cluster running: %s\n", c->url("postgres").c_str());
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "pg_test_cluster %s: %s\n", argv[1], e.what());
        return 1;
    }
}
