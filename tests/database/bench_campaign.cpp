// Benchmark (not a test): a tuning campaign of the small GEMM's 16 best
// candidates (M=N=K=32 int8 on gemmini-like, about a second each) measured by
// 1, 2, 4, 8 workers: on PostgreSQL (tessel tune --db URL --jobs 0 and N
// tessel tune-worker processes), on SQLite (tessel tune --campaign FILE --jobs
// N: the coordinator's own forked workers) and, for reference, the local tuner
// (tessel tune --jobs N, no queue). Prints measurements/s, the workers' claim
// latency and the peak number of server sessions. Usage:
//   build/tests/bench_campaign [TESSEL_BIN]      (figures in docs/BENCHMARKS.md)
#include "PgTestServer.h"

#include "database/WorkQueue.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tessel::db;
using namespace tessel::db::test;

namespace {

using Clock = std::chrono::steady_clock;

std::string g_bin = TESSEL_BIN;
const char *kProblem = "-g gemm -p M=32,N=32,K=32,dtype=int8 --arch gemmini-like --seeds 16 --max 16";
constexpr int kTasks = 16;

pid_t spawn(const std::string &args, const std::string &log) {
    std::vector<std::string> parts;
    std::istringstream in(args);
    for (std::string a; in >> a;) {
        parts.push_back(a);
    }
    std::vector<char *> argv{g_bin.data()};
    for (auto &p : parts) {
        argv.push_back(p.data());
    }
    argv.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], argv.data());
        _exit(127);
    }
    return pid;
}

int wait_pid(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Row {
    std::string what;
    int workers = 0;
    double seconds = 0;
    int claims = 0;
    double p50 = 0, p99 = 0; // median of the workers' p50, largest of their p99
    int peak_sessions = -1;
};

// The claim figures of every "tune-worker: ..." line in `text`.
void claims_from(const std::string &text, Row &row) {
    std::regex re("(\\d+) claims, p50 ([0-9.]+) ms, p99 ([0-9.]+) ms");
    std::vector<double> p50s;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
        row.claims += std::stoi((*it)[1]);
        p50s.push_back(std::stod((*it)[2]));
        row.p99 = std::max(row.p99, std::stod((*it)[3]));
    }
    if (!p50s.empty()) {
        std::sort(p50s.begin(), p50s.end());
        row.p50 = p50s[p50s.size() / 2];
    }
}

Row run_postgres(PgCluster &cluster, int n) {
    Row row{"PostgreSQL, tune-worker processes", n};
    const std::string url = cluster.create_database("bench_campaign_" + std::to_string(n));
    ScheduleStore monitor = ScheduleStore::open(url);
    const std::string dir = testing::TempDir();
    const pid_t coord = spawn(std::string("tune ") + kProblem + " --jobs 0 -q --in-flight " +
                                  std::to_string(std::max(4, 2 * n)) + " --campaign-name b --db " + url,
                              dir + "bench_coord.log");
    while (!WorkQueue(monitor).find_campaign("b")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const auto t0 = Clock::now();
    std::vector<pid_t> workers;
    for (int i = 0; i < n; i++) {
        workers.push_back(spawn("tune-worker --db " + url + " --campaign b", dir + "bench_w" + std::to_string(i) + ".log"));
    }
    int status = 0;
    while (waitpid(coord, &status, WNOHANG) == 0) {
        const int sessions = static_cast<int>(monitor.connection().query_int(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"));
        row.peak_sessions = std::max(row.peak_sessions, sessions);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    row.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::string logs;
    for (int i = 0; i < n; i++) {
        wait_pid(workers[i]);
        logs += slurp(dir + "bench_w" + std::to_string(i) + ".log");
    }
    claims_from(logs, row);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || slurp(dir + "bench_coord.log").find("measured 16 in") == std::string::npos) {
        std::fprintf(stderr, "coordinator failed:\n%s\n", slurp(dir + "bench_coord.log").c_str());
    }
    return row;
}

Row run_sqlite(int n, bool campaign) {
    Row row{campaign ? "SQLite, the coordinator's forked workers" : "SQLite, local tune (no queue)", n};
    const std::string dir = testing::TempDir();
    const std::string db = dir + "bench_campaign.db", file = dir + "bench_campaign.json";
    std::remove(db.c_str());
    std::remove((db + "-wal").c_str());
    std::remove((db + "-shm").c_str());
    std::ofstream(file) << R"({"name": "b", "problems": [{"generator": "gemm", "params": "M=32,N=32,K=32,dtype=int8",
                               "arch": "gemmini-like", "seeds": 16, "max": 16}]})";
    const auto t0 = Clock::now();
    const std::string args = campaign ? "tune --campaign " + file + " -q --in-flight " + std::to_string(std::max(4, 2 * n)) +
                                            " --jobs " + std::to_string(n) + " --db " + db
                                      : std::string("tune ") + kProblem + " -q --jobs " + std::to_string(n) + " --db " + db;
    const pid_t p = spawn(args, dir + "bench_sqlite.log");
    const int code = wait_pid(p);
    row.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const std::string log = slurp(dir + "bench_sqlite.log");
    claims_from(log, row);
    if (code != 0 || log.find("measured 16 in") == std::string::npos) {
        std::fprintf(stderr, "run failed:\n%s\n", log.c_str());
    }
    return row;
}

} // namespace

int main(int argc, char **argv) {
    if (argc > 1) {
        g_bin = argv[1];
    }
    std::string why;
    PgCluster *cluster = shared_cluster(&why);
    if (!cluster) {
        std::fprintf(stderr, "bench_campaign: no PostgreSQL server: %s\n", why.c_str());
        return 1;
    }
    std::vector<Row> rows;
    for (int n : {1, 2, 4, 8}) {
        rows.push_back(run_postgres(*cluster, n));
        rows.push_back(run_sqlite(n, true));
        rows.push_back(run_sqlite(n, false));
    }
    std::printf("| backend, workers | workers | %d measurements | measurements/s | claims | claim p50 | claim p99 | peak sessions |\n",
                kTasks);
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const Row &r : rows) {
        char p50[32] = "-", p99[32] = "-", peak[32] = "-";
        if (r.claims > 0) {
            std::snprintf(p50, sizeof p50, "%.2f ms", r.p50);
            std::snprintf(p99, sizeof p99, "%.2f ms", r.p99);
        }
        if (r.peak_sessions >= 0) {
            std::snprintf(peak, sizeof peak, "%d", r.peak_sessions);
        }
        std::printf("| %s | %d | %.1f s | %.2f | %d | %s | %s | %s |\n", r.what.c_str(), r.workers, r.seconds,
                    kTasks / r.seconds, r.claims, p50, p99, peak);
    }
    return 0;
}
