#include "scheduler/Tuner.h"

#include "database/Canonical.h"
#include "database/ScheduleStore.h"
#include "dsl/Compile.h"
#include "npu_target/common/Error.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tessel::sched {

namespace {

using Clock = std::chrono::steady_clock;

// Measures `req` with tessel::run: the result fields of a Measurement.
void measure_into(const CompileRequest &req, uint64_t seed, Measurement &m) {
    try {
        RunReport r = run(req, seed);
        m.verified = r.verified && r.cycles.has_value();
        m.cycles = r.cycles.value_or(0);
        m.t_phys_cycles = r.t_phys_cycles.value_or(0);
        m.efficiency = r.efficiency.value_or(0);
        m.max_error = r.max_abs_error;
        m.compile_ms = r.compile_ms;
        for (const Diagnostic &d : r.diagnostics) {
            if (d.severity == Diagnostic::Error) {
                m.error += (m.error.empty() ? "" : "; ") + d.message;
            }
        }
        if (!r.verified && m.error.empty()) {
            m.error = "not verified: " + r.comparison;
        }
    } catch (const std::exception &e) { // a failing worker never stops the search
        m.verified = false;
        m.error = std::string("worker failed: ") + e.what();
    }
    if (!m.verified) {
        m.efficiency = 0;
    }
}

std::string format_result(const Measurement &m) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "tessel-measurement 1\n%d %lld %lld %.17g %.17g %.17g\n", m.verified ? 1 : 0,
                  static_cast<long long>(m.cycles), static_cast<long long>(m.t_phys_cycles),
                  std::isfinite(m.efficiency) ? m.efficiency : 0.0,
                  std::isfinite(m.max_error) ? m.max_error : std::numeric_limits<double>::max(),
                  std::isfinite(m.compile_ms) ? m.compile_ms : 0.0);
    return buf + m.error; // the rest is the error text
}

bool parse_result(const std::string &text, Measurement *m) {
    std::istringstream in(text);
    std::string magic, version;
    int verified = 0;
    long long cycles = 0, t_phys = 0;
    if (!(in >> magic >> version >> verified >> cycles >> t_phys >> m->efficiency >> m->max_error >> m->compile_ms) ||
        magic != "tessel-measurement" || version != "1" || in.get() != '\n') {
        return false;
    }
    m->verified = verified != 0;
    m->cycles = cycles;
    m->t_phys_cycles = t_phys;
    std::ostringstream rest;
    rest << in.rdbuf();
    m->error = rest.str();
    return true;
}

// A worker process: forked, it runs `work` and writes the result to a pipe.
struct Worker {
    pid_t pid = -1;
    int fd = -1;
    Clock::time_point start;
    std::string out;
};

// Forks a worker that runs `hook` (when set) and then measures `req`.
bool spawn_worker(const CompileRequest &req, uint64_t seed, const std::function<void()> &hook, Worker *w) {
    int p[2];
    if (pipe(p) != 0) {
        return false;
    }
    std::fflush(nullptr); // nothing buffered is written twice
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child < 0) {
        close(p[0]);
        close(p[1]);
        return false;
    }
    if (child == 0) {
        // A measurement outlives no tuner or tune-worker: killed with its parent
        // (already gone if the parent died before this line).
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(3);
        }
        close(p[0]);
        if (hook) {
            hook();
        }
        Measurement m;
        measure_into(req, seed, m);
        const std::string text = format_result(m);
        size_t off = 0;
        while (off < text.size()) {
            const ssize_t n = write(p[1], text.data() + off, text.size() - off);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                _exit(3);
            }
            off += static_cast<size_t>(n);
        }
        close(p[1]);
        _exit(0); // no destructors or atexit handlers: the parent's database and files are not ours
    }
    close(p[1]);
    w->pid = child;
    w->fd = p[0];
    w->start = Clock::now();
    return true;
}

// Reads what is ready from the worker's pipe (after poll said so); true at its end.
bool read_worker(Worker &w) {
    char buf[4096];
    const ssize_t n = read(w.fd, buf, sizeof buf);
    if (n > 0) {
        w.out.append(buf, static_cast<size_t>(n));
        return false;
    }
    return n == 0 || errno != EINTR; // end of the pipe: the worker exited (or died)
}

double age_s(const Worker &w) { return std::chrono::duration<double>(Clock::now() - w.start).count(); }

// Reaps a finished (or, with `timeout_s` > 0, killed) worker into `m`.
void reap_worker(Worker &w, double timeout_s, Measurement &m) {
    if (timeout_s > 0) {
        kill(w.pid, SIGKILL);
    }
    close(w.fd);
    int status = 0;
    while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timeout_s > 0) {
        std::ostringstream os;
        os << "worker timed out: no result after " << timeout_s << " s (the per-measurement limit); killed";
        m.error = os.str();
    } else if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        m.error = "worker crashed: killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        m.error = "worker crashed: exited with status " + std::to_string(WEXITSTATUS(status));
    } else if (!parse_result(w.out, &m)) {
        m.error = "worker failed: unreadable result";
    }
    if (!m.verified) {
        m.efficiency = 0;
    }
}

struct Ranked {
    Candidate c;
    double predicted = 0;
};

// The search state; only the tuning thread of the parent process uses it.
class Search {
public:
    Search(const TuneOptions &o, const SearchSpace &space, std::optional<db::ScheduleStore> &store)
        : o_(o), space_(space), store_(store), rng_(o.seed), t0_(Clock::now()) {
        const Problem &p = space.problem();
        params_json_ = db::params_to_json(p.params);
        arch_json_ = p.arch.to_json(-1);
        arch_hash_ = p.arch.hash();
        for (const Candidate &c : space.enumerate()) {
            ranked_.push_back({c, key(c, predict(space, c).cycles)});
        }
        std::stable_sort(ranked_.begin(), ranked_.end(),
                         [](const Ranked &a, const Ranked &b) { return a.predicted < b.predicted; });
        for (const Ranked &r : ranked_) {
            by_hash_[schedule_hash(space.to_spec(r.c))] = r.c;
        }
        res_.space_size = static_cast<int>(ranked_.size());
        if (!ranked_.empty() && o.hopeless_ratio > 0) {
            cutoff_ = ranked_.front().predicted * o.hopeless_ratio;
        }
        load_previous();
    }

    // The measurement loop: up to `jobs` worker processes at a time, each
    // forked for one candidate; it measures with tessel::run and writes the
    // result to a pipe. The parent (this thread only: no other thread of ours
    // runs while it forks) waits on the pipes, kills a worker past its timeout
    // and records whatever happened to it.
    void run_workers() {
        if (o_.executor) {
            run_executor(*o_.executor);
            return;
        }
        struct Running {
            Worker w;
            Candidate c;
        };
        std::vector<Running> running;
        bool exhausted = false;
        const int jobs = std::max(1, o_.jobs);
        for (;;) {
            while (!exhausted && static_cast<int>(running.size()) < jobs && !stop_requested()) {
                std::optional<Candidate> next = next_candidate();
                if (!next) {
                    exhausted = true;
                    break;
                }
                started_++;
                Running r{Worker{}, *next};
                std::function<void()> hook;
                if (o_.worker_hook) {
                    hook = [this, c = *next] { o_.worker_hook(c); };
                }
                if (!spawn_worker(measure_request(r.c), o_.seed, hook, &r.w)) {
                    Measurement m = unmeasured(r.c);
                    m.error = std::string("worker failed: cannot start a worker process: ") + std::strerror(errno);
                    record(m);
                    continue;
                }
                running.push_back(std::move(r));
            }
            if (running.empty()) {
                return;
            }
            // Wait for output, an exit, the earliest timeout, or (every 200 ms) a cancel.
            std::vector<pollfd> fds;
            int wait_ms = 200;
            for (const Running &r : running) {
                fds.push_back({r.w.fd, POLLIN, 0});
                if (o_.measure_timeout_s > 0) {
                    const double left = o_.measure_timeout_s - age_s(r.w);
                    wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(std::ceil(left * 1000))));
                }
            }
            if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
                throw std::runtime_error(std::string("tune: poll: ") + std::strerror(errno));
            }
            std::vector<Running> still;
            for (size_t i = 0; i < running.size(); i++) {
                Running &r = running[i];
                const bool done = (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && read_worker(r.w);
                const bool late = !done && o_.measure_timeout_s > 0 && age_s(r.w) >= o_.measure_timeout_s;
                if (!done && !late) {
                    still.push_back(std::move(r));
                    continue;
                }
                Measurement m = unmeasured(r.c);
                reap_worker(r.w, late ? o_.measure_timeout_s : 0, m);
                record(m);
            }
            running = std::move(still);
        }
    }

    // The measurement loop over an executor (a campaign's work queue): start
    // candidates while it has room, record what comes back; at the budget's
    // end (or a cancel) it tells the executor, which drops what no worker
    // measures yet; then (and at --max, or with no candidate left) it waits
    // for the rest.
    void run_executor(MeasureExecutor &x) {
        bool exhausted = false, stopped = false;
        for (;;) {
            while (!exhausted && !stop_requested() && x.has_capacity()) {
                std::optional<Candidate> next = next_candidate();
                if (!next) {
                    exhausted = true;
                    break;
                }
                started_++;
                x.start(unmeasured(*next), measure_request(*next));
            }
            // Out of time (or cancelled): what no worker has claimed is dropped.
            // --max reached or no candidate left: what is queued is still measured.
            if (!stopped && (elapsed() >= o_.budget_s || (o_.cancel && o_.cancel->load()))) {
                stopped = true;
                x.stop();
            }
            if (x.in_flight() == 0 && (exhausted || stop_requested())) {
                return;
            }
            for (Measurement &m : x.collect(200)) {
                record(m);
            }
        }
    }

    TuneResult finish() {
        res_.elapsed_s = elapsed();
        return std::move(res_);
    }

private:
    // What the model ranks by: predicted cycles, times the cores for efficiency
    // (the physical limit of c cores is 1/c of one core's).
    double key(const Candidate &c, double predicted) const {
        return o_.objective == "cycles" ? predicted : predicted * c.cores;
    }

    bool better_result(const Measurement &a, const Measurement &b) const { return better(a, b, o_.objective); }

    double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

    bool stop_requested() const {
        return elapsed() >= o_.budget_s || (o_.cancel && o_.cancel->load()) ||
               (o_.max_measurements > 0 && started_ >= o_.max_measurements);
    }

    void load_previous() {
        if (!store_) {
            return;
        }
        const Problem &p = space_.problem();
        for (const db::ResultRecord &r : store_->history(p.generator, params_json_, arch_hash_)) {
            seen_.insert(r.schedule_hash);
            Measurement m;
            m.schedule_hash = r.schedule_hash;
            m.verified = r.verified && r.simulated_cycles.has_value();
            m.cycles = r.simulated_cycles.value_or(0);
            m.t_phys_cycles = r.t_phys_cycles.value_or(0);
            m.efficiency = r.efficiency.value_or(0);
            m.predicted_cycles = static_cast<double>(r.predicted_cycles.value_or(0));
            m.error = r.error_text;
            m.from_database = true;
            auto it = by_hash_.find(r.schedule_hash);
            if (it != by_hash_.end()) {
                m.candidate = it->second;
            }
            if (auto s = store_->schedule_by_hash(r.schedule_hash)) {
                m.schedule_json = s->spec_json;
            }
            if (m.verified && it != by_hash_.end()) {
                parents_.push_back(m);
            }
            if (m.verified && (!res_.best || better_result(m, *res_.best))) {
                res_.best = m;
            }
            res_.previous.push_back(std::move(m));
        }
        sort_parents();
    }

    void sort_parents() {
        std::stable_sort(parents_.begin(), parents_.end(),
                         [this](const Measurement &a, const Measurement &b) { return better_result(a, b); });
        if (parents_.size() > 8) {
            parents_.resize(8);
        }
    }

    // Marks `c` as taken unless it was measured (this run or before).
    bool take(const Candidate &c) {
        const std::string h = schedule_hash(space_.to_spec(c));
        if (!seen_.insert(h).second) {
            return false;
        }
        return true;
    }

    std::optional<Candidate> next_ranked() {
        while (rank_pos_ < ranked_.size() && ranked_[rank_pos_].predicted <= cutoff_) {
            const Candidate &c = ranked_[rank_pos_++].c;
            if (take(c)) {
                return c;
            }
            res_.skipped++;
        }
        return std::nullopt;
    }

    std::optional<Candidate> next_candidate() {
        if (o_.random_search) {
            for (int i = 0; i < 200; i++) {
                Candidate c = space_.random(rng_);
                if (key(c, predict(space_, c).cycles) <= cutoff_ && take(c)) {
                    return c;
                }
            }
            return next_ranked();
        }
        if (seeded_ < o_.seed_candidates || parents_.empty() || rng_() % 4 == 0) {
            seeded_++;
            if (auto c = next_ranked()) {
                return c;
            }
        }
        // Evolution: mutate one of the best verified results; of the unseen
        // mutants the cost model's favourite is measured.
        for (int round = 0; round < 4 && !parents_.empty(); round++) {
            const size_t k = std::min<size_t>(parents_.size(), 4);
            const Candidate &parent = parents_[std::min(rng_() % k, rng_() % k)].candidate;
            std::optional<Ranked> pick;
            std::set<Candidate> tried;
            for (int i = 0; i < 24; i++) {
                Candidate m = space_.mutate(parent, rng_);
                if (!tried.insert(m).second || seen_.count(schedule_hash(space_.to_spec(m)))) {
                    continue;
                }
                const double pred = key(m, predict(space_, m).cycles);
                if (pred <= cutoff_ && (!pick || pred < pick->predicted)) {
                    pick = Ranked{m, pred};
                }
            }
            if (pick && take(pick->c)) {
                return pick->c;
            }
        }
        return next_ranked();
    }

    // The compile-facade request that measures `c`, with the tuner's simulation budget.
    CompileRequest measure_request(const Candidate &c) const {
        CompileRequest req = request_for(space_, c, o_.arch);
        req.max_instructions = o_.max_instructions;
        req.max_cycles = o_.max_cycles;
        return req;
    }

    // A measurement of `c` with its schedule and prediction but no result yet.
    Measurement unmeasured(const Candidate &c) const {
        Measurement m;
        m.candidate = c;
        const ScheduleSpec spec = space_.to_spec(c);
        m.schedule_json = schedule_to_json(spec);
        m.schedule_hash = schedule_hash(spec);
        m.predicted_cycles = predict(space_, c).cycles;
        return m;
    }

    void record(Measurement &m) {
        m.at_seconds = elapsed();
        if (store_ && !(o_.executor && o_.executor->records())) {
            const Problem &p = space_.problem();
            db::RunRecord rr = tuner_run_record(m, m.candidate.describe(), p.generator, params_json_, p.arch.name,
                                                arch_json_, arch_hash_);
            try {
                store_->record_run(rr);
            } catch (const std::exception &e) { // keep searching; the result is still returned
                db_errors_++;
                if (res_.db_error.empty()) {
                    res_.db_error = e.what();
                }
            }
        }
        if (m.verified) {
            parents_.push_back(m);
            sort_parents();
            if (!res_.best || better_result(m, *res_.best)) {
                res_.best = m;
                res_.best_found_at_s = m.at_seconds;
            }
        } else {
            failed_++;
        }
        res_.measured.push_back(m);
        if (o_.on_progress) {
            TuneProgress pr;
            pr.measured = static_cast<int>(res_.measured.size());
            pr.failed = failed_;
            pr.skipped = res_.skipped;
            pr.best_efficiency = res_.best ? res_.best->efficiency : 0;
            pr.best_cycles = res_.best ? res_.best->cycles : 0;
            pr.elapsed_s = m.at_seconds;
            pr.budget_s = o_.budget_s;
            o_.on_progress(pr);
        }
    }

    const TuneOptions &o_;
    const SearchSpace &space_;
    std::optional<db::ScheduleStore> &store_;
    std::mt19937_64 rng_;
    Clock::time_point t0_;
    std::string params_json_, arch_json_, arch_hash_;
    std::vector<Ranked> ranked_;
    size_t rank_pos_ = 0;
    double cutoff_ = std::numeric_limits<double>::infinity();
    std::map<std::string, Candidate> by_hash_;
    std::set<std::string> seen_;
    std::vector<Measurement> parents_;
    int seeded_ = 0, started_ = 0, failed_ = 0, db_errors_ = 0;
    TuneResult res_;

};

} // namespace

CompileRequest request_for(const SearchSpace &space, const Candidate &c, const std::string &arch) {
    CompileRequest req;
    req.generator = space.problem().generator;
    req.params = space.problem().params;
    req.arch = arch;
    req.schedule = space.to_spec(c);
    return req;
}

bool better(const Measurement &a, const Measurement &b, const std::string &objective) {
    if (a.verified != b.verified) {
        return a.verified;
    }
    if (objective == "cycles" && a.cycles != b.cycles) {
        return a.cycles < b.cycles;
    }
    if (a.efficiency != b.efficiency) {
        return a.efficiency > b.efficiency;
    }
    return a.cycles < b.cycles;
}

db::RunRecord tuner_run_record(const Measurement &m, const std::string &note, const std::string &generator,
                               const std::string &params_json, const std::string &arch_name,
                               const std::string &arch_json, const std::string &arch_hash) {
    db::RunRecord rr;
    rr.generator = generator;
    rr.params_json = params_json;
    rr.arch_name = arch_name;
    rr.arch_json = arch_json;
    rr.arch_hash = arch_hash;
    rr.schedule_json = m.schedule_json;
    rr.schedule_hash = m.schedule_hash;
    rr.origin = "tuner";
    rr.note = note;
    rr.result.predicted_cycles = static_cast<int64_t>(m.predicted_cycles);
    if (m.cycles > 0) {
        rr.result.simulated_cycles = m.cycles;
        rr.result.efficiency = m.efficiency;
    }
    if (m.t_phys_cycles > 0) {
        rr.result.t_phys_cycles = m.t_phys_cycles;
    }
    rr.result.verified = m.verified;
    if (m.cycles > 0) {
        rr.result.max_error = m.max_error;
    }
    rr.result.compile_ms = m.compile_ms;
    rr.result.error_text = m.error;
    rr.result.tool_version = "tessel-tune 0.1";
    return rr;
}

Measurement measure_isolated(const CompileRequest &req, uint64_t seed, double timeout_s,
                             const std::function<bool()> &keep_going) {
    Measurement m;
    m.schedule_json = schedule_to_json(req.schedule);
    m.schedule_hash = schedule_hash(req.schedule);
    Worker w;
    if (!spawn_worker(req, seed, nullptr, &w)) {
        m.error = std::string("worker failed: cannot start a worker process: ") + std::strerror(errno);
        return m;
    }
    for (;;) {
        int wait_ms = 200;
        if (timeout_s > 0) {
            wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(std::ceil((timeout_s - age_s(w)) * 1000))));
        }
        pollfd fd{w.fd, POLLIN, 0};
        if (poll(&fd, 1, wait_ms) < 0 && errno != EINTR) {
            throw std::runtime_error(std::string("measure: poll: ") + std::strerror(errno));
        }
        const bool done = (fd.revents & (POLLIN | POLLHUP | POLLERR)) && read_worker(w);
        const bool late = !done && timeout_s > 0 && age_s(w) >= timeout_s;
        if (done || late) {
            reap_worker(w, late ? timeout_s : 0, m);
            return m;
        }
        if (keep_going && !keep_going()) {
            kill(w.pid, SIGKILL);
            close(w.fd);
            while (waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
            }
            m.verified = false;
            m.error = "measurement abandoned: the worker was told to stop";
            return m;
        }
    }
}

TuneResult tune(const TuneOptions &o) {
    if (o.objective != "efficiency" && o.objective != "cycles") {
        throw UserError("tune: objective must be efficiency or cycles, got '" + o.objective + "'");
    }
    const ArchSpec arch = load_arch(o.arch);
    const SearchSpace space(make_problem(o.generator, o.params, arch));
    std::optional<db::ScheduleStore> store;
    if (!o.db_path.empty()) {
        try {
            store.emplace(db::ScheduleStore::open(o.db_path));
        } catch (const db::DatabaseError &e) {
            throw UserError(std::string("tune: ") + e.what());
        }
    }
    Search search(o, space, store);
    search.run_workers();
    return search.finish();
}

} // namespace tessel::sched
