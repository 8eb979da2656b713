#include "scheduler/Campaign.h"

#include "database/Canonical.h"
#include "database/Postgres.h"
#include "database/WorkQueue.h"
#include "dsl/GeneratorInfo.h"
#include "npu_target/common/Error.h"
#include "scheduler/SearchSpace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tessel::sched {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int64_t to_ms(double s) { return static_cast<int64_t>(std::llround(s * 1000)); }

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::milliseconds(to_ms(s))); }

std::string hostname() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) {
        return "host";
    }
    return buf;
}

std::string db_name(const std::string &db) { return db::is_postgres_url(db) ? db::redact_postgres_url(db) : db; }

// A problem as status lines name it: generator, canonical parameters, arch name and hash.
std::string problem_label(const std::string &generator, const std::string &params_json, const ArchSpec &a) {
    return generator + " " + params_json + " on " + a.name + " (" + a.hash() + ")";
}

// The coordinator's side of the work queue for one problem: a started
// candidate becomes a task (its payload says everything a worker on another
// machine needs to measure and record it), and a finished task comes back as
// the measurement the search records.
class QueueExecutor final : public MeasureExecutor {
public:
    QueueExecutor(db::ScheduleStore &store, int64_t campaign_id, double lease_s, int local_workers, int in_flight,
                  const TuneOptions &t)
        : store_(store), q_(store), campaign_(campaign_id), lease_ms_(to_ms(lease_s)), local_(local_workers),
          fixed_window_(in_flight), seed_(t.seed), timeout_s_(t.measure_timeout_s) {
        if (fixed_window_ > 0) {
            window_ = static_cast<size_t>(fixed_window_);
        }
        beat();
    }

    bool has_capacity() override { return inflight_.size() < window_; }
    size_t in_flight() const override { return inflight_.size(); }
    bool records() const override { return true; }
    int withdrawn() const { return withdrawn_; }

    void start(const Measurement &m, const CompileRequest &req) override {
        auto it = archs_.find(req.arch);
        if (it == archs_.end()) {
            it = archs_.emplace(req.arch, load_arch(req.arch)).first;
        }
        const ArchSpec &a = it->second;
        const std::string params_json = db::params_to_json(req.params);
        json params = json::object();
        for (const auto &[k, v] : req.params) {
            params[k] = v;
        }
        json payload = {{"problem", problem_label(req.generator, params_json, a)},
                        {"generator", req.generator},
                        {"params", params},
                        {"arch", req.arch},
                        {"arch_name", a.name},
                        {"arch_json", a.to_json(-1)},
                        {"arch_hash", a.hash()},
                        {"schedule", json::parse(m.schedule_json)},
                        {"schedule_hash", m.schedule_hash},
                        {"predicted_cycles", m.predicted_cycles},
                        {"note", m.candidate.describe()},
                        {"seed", seed_},
                        {"timeout_s", timeout_s_},
                        {"max_instructions", req.max_instructions},
                        {"max_cycles", req.max_cycles}};
        // The candidate's identity in the campaign: its target, problem and schedule.
        const std::string key = a.hash() + " " + req.generator + " " + params_json + " " + m.schedule_hash;
        q_.enqueue(campaign_, key, payload.dump());
        // Queued now, or earlier by a coordinator of this campaign that was
        // stopped: either way its outcome comes back through the queue.
        std::optional<db::TaskRecord> task = q_.task(campaign_, key);
        if (!task) {
            throw db::DatabaseError("database " + db_name(store_.path()) + ": the task '" + key +
                                    "' vanished right after it was queued");
        }
        inflight_.emplace(task->id, m);
    }

    std::vector<Measurement> collect(int wait_ms) override {
        beat();
        std::vector<Measurement> out;
        std::vector<int64_t> ids;
        for (const auto &f : inflight_) {
            ids.push_back(f.first);
        }
        std::map<int64_t, db::TaskRecord> found;
        for (db::TaskRecord &t : q_.tasks_by_id(ids)) {
            found.emplace(t.id, std::move(t));
        }
        const int64_t now = stopped_ ? q_.now_ms() : 0;
        for (int64_t id : ids) {
            auto f = found.find(id);
            Measurement &m = inflight_.at(id);
            if (f == found.end()) { // withdrawn by another coordinator of the campaign
                inflight_.erase(id);
                continue;
            }
            const db::TaskRecord &t = f->second;
            if (t.state == "done" && t.result_id) {
                fill_from_result(m, *t.result_id);
            } else if (t.state == "failed") {
                m.verified = false;
                m.efficiency = 0;
                m.error = "task failed on a worker: " + t.error_text;
            } else if (stopped_ && t.state == "running" && t.lease_expires_ms < now - lease_ms_ &&
                       q_.withdraw(id, lease_ms_)) {
                // Nobody has held it for a lease past its expiry: no worker is left to measure it.
                withdrawn_++;
                inflight_.erase(id);
                continue;
            } else {
                continue;
            }
            out.push_back(std::move(m));
            inflight_.erase(id);
        }
        if (fixed_window_ == 0 && since(sized_at_) > 1) {
            sized_at_ = Clock::now();
            // Room for every worker to have one task running and one waiting.
            window_ = std::max<size_t>(8, 2 * static_cast<size_t>(q_.workers(campaign_) + local_));
        }
        if (out.empty() && !inflight_.empty()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 100)));
        }
        return out;
    }

    void stop() override {
        stopped_ = true;
        for (auto it = inflight_.begin(); it != inflight_.end();) {
            if (q_.withdraw(it->first)) {
                withdrawn_++;
                it = inflight_.erase(it);
            } else {
                ++it;
            }
        }
    }

private:
    void beat() {
        if (beaten_ && since(beat_at_) < std::max(0.05, lease_ms_ / 3000.0)) {
            return;
        }
        q_.coordinator_heartbeat(campaign_, lease_ms_);
        beat_at_ = Clock::now();
        beaten_ = true;
    }

    void fill_from_result(Measurement &m, int64_t result_id) {
        std::optional<db::ResultRecord> r = store_.result(result_id);
        if (!r) {
            m.error = "task done but its result " + std::to_string(result_id) + " is missing";
            return;
        }
        m.verified = r->verified && r->simulated_cycles.has_value();
        m.cycles = r->simulated_cycles.value_or(0);
        m.t_phys_cycles = r->t_phys_cycles.value_or(0);
        m.efficiency = m.verified ? r->efficiency.value_or(0) : 0;
        m.max_error = r->max_error.value_or(0);
        m.compile_ms = r->compile_ms.value_or(0);
        m.error = r->error_text;
    }

    db::ScheduleStore &store_;
    db::WorkQueue q_;
    int64_t campaign_;
    int64_t lease_ms_;
    int local_;
    int fixed_window_;
    uint64_t seed_;
    double timeout_s_;
    std::map<std::string, ArchSpec> archs_;
    std::map<int64_t, Measurement> inflight_;
    size_t window_ = 8;
    bool stopped_ = false, beaten_ = false;
    int withdrawn_ = 0;
    Clock::time_point beat_at_, sized_at_ = Clock::now();
};

// Local workers of a coordinator: `argv` run as child processes.
std::vector<pid_t> start_local_workers(const std::vector<std::string> &argv, int n) {
    std::vector<pid_t> pids;
    if (n <= 0 || argv.empty()) {
        return pids;
    }
    std::vector<char *> args;
    for (const std::string &a : argv) {
        args.push_back(const_cast<char *>(a.c_str()));
    }
    args.push_back(nullptr);
    std::fflush(nullptr);
    for (int i = 0; i < n; i++) {
        const pid_t pid = fork();
        if (pid < 0) {
            throw UserError(std::string("tune: cannot start a local worker: ") + std::strerror(errno));
        }
        if (pid == 0) {
            execv(args[0], args.data());
            std::fprintf(stderr, "tessel: error: tune: cannot run %s: %s\n", args[0], std::strerror(errno));
            _exit(1);
        }
        pids.push_back(pid);
    }
    return pids;
}

} // namespace

double parse_duration(const std::string &what, const std::string &text) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception &) {
        throw UserError(what + " " + text + ": expected a duration such as 60s, 2m or 90");
    }
    const std::string unit = text.substr(used);
    const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" || unit == "min" ? 60 : unit == "h" ? 3600 : 0;
    if (scale == 0) {
        throw UserError(what + " " + text + ": unknown unit '" + unit + "' (use s, m or h)");
    }
    if (!(v >= 0) || !std::isfinite(v)) {
        throw UserError(what + " " + text + ": a duration must be a finite number of seconds, 0 or more");
    }
    return v * scale;
}

std::string default_campaign_name(const TuneOptions &o) {
    const ArchSpec a = load_arch(o.arch);
    const Problem p = make_problem(o.generator, o.params, a);
    return "tune " + problem_label(p.generator, db::params_to_json(p.params), a);
}

CampaignResult run_campaign(const CampaignOptions &o) {
    if (o.problems.empty()) {
        throw UserError("tune: the campaign '" + o.name + "' has no problems");
    }
    if (o.in_flight < 0 || o.in_flight > 100000) {
        throw UserError("tune: --in-flight must be 0 (automatic) to 100000, got " + std::to_string(o.in_flight));
    }
    if (!(o.lease_s >= 0.3)) {
        throw UserError("tune: --lease must be at least 0.3 s");
    }
    for (size_t i = 0; i < o.problems.size(); i++) { // every problem is checked before anything is queued
        const TuneOptions &p = o.problems[i];
        try {
            make_problem(p.generator, p.params, load_arch(p.arch));
        } catch (const UserError &e) {
            if (o.problems.size() == 1) {
                throw;
            }
            throw UserError("tune: campaign '" + o.name + "', problem " + std::to_string(i + 1) + " (" + p.generator +
                            " on " + p.arch + "): " + e.what());
        }
    }
    std::optional<db::ScheduleStore> store;
    try {
        store.emplace(db::ScheduleStore::open(o.db));
    } catch (const db::DatabaseError &e) {
        throw UserError(std::string("tune: ") + e.what());
    }
    db::WorkQueue q(*store);
    const int64_t id = q.campaign(o.name);
    const int64_t lease_ms = to_ms(o.lease_s);
    q.coordinator_heartbeat(id, lease_ms);
    std::vector<pid_t> local = start_local_workers(o.worker_argv, o.local_workers);
    CampaignResult res;
    for (size_t i = 0; i < o.problems.size(); i++) {
        if (o.cancel && o.cancel->load()) {
            break;
        }
        TuneOptions t = o.problems[i];
        t.db_path = o.db;
        t.cancel = o.cancel;
        if (o.on_progress) {
            t.on_progress = [&o, i](const TuneProgress &p) { o.on_progress(i, p); };
        }
        QueueExecutor x(*store, id, o.lease_s, o.local_workers, o.in_flight, t);
        t.executor = &x;
        res.problems.push_back(tune(t));
        res.withdrawn += x.withdrawn();
    }
    q.close_campaign(id);
    for (pid_t pid : local) { // they exit once the campaign is drained
        while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    return res;
}

CampaignOptions load_campaign_file(const std::string &path, const TuneOptions &base) {
    std::ifstream in(path);
    if (!in) {
        throw UserError("tune --campaign " + path + ": cannot read the file: " + std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    json doc = json::parse(text.str(), nullptr, false);
    const std::string where = "campaign file " + path;
    if (doc.is_discarded() || !doc.is_object()) {
        throw UserError(where + ": not a JSON object (see docs/campaigns.md for the format)");
    }
    static const char *const kTop[] = {"name", "defaults", "problems"};
    static const char *const kFields[] = {"generator", "params", "arch", "preset", "budget", "max",
                                          "timeout", "seed", "seeds", "objective", "random"};
    auto check_keys = [](const json &obj, const std::string &at, const char *const *known, size_t n) {
        for (const auto &kv : obj.items()) {
            if (std::find(known, known + n, kv.key()) == known + n) {
                std::string list;
                for (size_t i = 0; i < n; i++) {
                    list += (i ? ", " : "") + std::string(known[i]);
                }
                throw UserError(at + ": unknown field '" + kv.key() + "' (the fields are " + list + ")");
            }
        }
    };
    check_keys(doc, where, kTop, 3);
    CampaignOptions c;
    c.name = std::filesystem::path(path).stem().string();
    if (doc.contains("name")) {
        if (!doc["name"].is_string() || doc["name"].get<std::string>().empty()) {
            throw UserError(where + ": \"name\" must be a non-empty string");
        }
        c.name = doc["name"].get<std::string>();
    }
    if (!doc.contains("problems") || !doc["problems"].is_array() || doc["problems"].empty()) {
        throw UserError(where + ": \"problems\" must be a non-empty list of problems");
    }
    // A field of a problem, else of "defaults": applied to `t`; `at` names it in errors.
    auto apply = [&](const json &obj, const std::string &at, TuneOptions &t, std::vector<std::string> &archs) {
        check_keys(obj, at, kFields, sizeof kFields / sizeof kFields[0]);
        auto str = [&](const char *k) {
            if (!obj[k].is_string()) {
                throw UserError(at + ": \"" + k + "\" must be a string");
            }
            return obj[k].get<std::string>();
        };
        auto count = [&](const char *k) {
            if (!obj[k].is_number_integer() || obj[k].get<int64_t>() < 0 || obj[k].get<int64_t>() > 1000000000) {
                throw UserError(at + ": \"" + k + "\" must be a whole number, 0 or more");
            }
            return obj[k].get<int64_t>();
        };
        auto seconds = [&](const char *k) {
            if (obj[k].is_number()) {
                return parse_duration(at + " \"" + k + "\"", std::to_string(obj[k].get<double>()));
            }
            return parse_duration(at + " \"" + k + "\"", str(k));
        };
        if (obj.contains("generator")) {
            t.generator = str("generator");
        }
        if (obj.contains("params")) {
            const json &p = obj["params"];
            if (p.is_string()) {
                t.params = parse_params(p.get<std::string>());
            } else if (p.is_object()) {
                t.params.clear();
                for (const auto &kv : p.items()) {
                    if (!kv.value().is_string() && !kv.value().is_number_integer()) {
                        throw UserError(at + ": parameter '" + kv.key() + "' must be a string or an integer");
                    }
                    t.params[kv.key()] = kv.value().is_string() ? kv.value().get<std::string>() : kv.value().dump();
                }
            } else {
                throw UserError(at + ": \"params\" must be \"K=V,K=V\" or an object");
            }
        }
        for (const char *k : {"arch", "preset"}) {
            if (!obj.contains(k)) {
                continue;
            }
            archs.clear();
            if (obj[k].is_array()) {
                for (const json &a : obj[k]) {
                    if (!a.is_string()) {
                        throw UserError(at + ": \"" + k + "\" must be a name or a list of names");
                    }
                    archs.push_back(a.get<std::string>());
                }
            } else {
                archs.push_back(str(k));
            }
            if (archs.empty()) {
                throw UserError(at + ": \"" + k + "\" lists no arch");
            }
        }
        if (obj.contains("budget")) {
            t.budget_s = seconds("budget");
        }
        if (obj.contains("timeout")) {
            t.measure_timeout_s = seconds("timeout");
        }
        if (obj.contains("max")) {
            t.max_measurements = static_cast<int>(count("max"));
        }
        if (obj.contains("seeds")) {
            t.seed_candidates = static_cast<int>(count("seeds"));
        }
        if (obj.contains("seed")) {
            t.seed = static_cast<uint64_t>(count("seed"));
        }
        if (obj.contains("objective")) {
            t.objective = str("objective");
            if (t.objective != "efficiency" && t.objective != "cycles") {
                throw UserError(at + ": \"objective\" must be efficiency or cycles, got '" + t.objective + "'");
            }
        }
        if (obj.contains("random")) {
            if (!obj["random"].is_boolean()) {
                throw UserError(at + ": \"random\" must be true or false");
            }
            t.random_search = obj["random"].get<bool>();
        }
    };
    TuneOptions defaults = base;
    std::vector<std::string> default_archs{base.arch};
    if (doc.contains("defaults")) {
        if (!doc["defaults"].is_object()) {
            throw UserError(where + ": \"defaults\" must be an object");
        }
        apply(doc["defaults"], where + " defaults", defaults, default_archs);
    }
    for (size_t i = 0; i < doc["problems"].size(); i++) {
        const json &p = doc["problems"][i];
        const std::string at = where + " problem " + std::to_string(i + 1);
        if (!p.is_object()) {
            throw UserError(at + ": a problem must be an object");
        }
        TuneOptions t = defaults;
        std::vector<std::string> archs = default_archs;
        apply(p, at, t, archs);
        if (t.generator.empty()) {
            throw UserError(at + ": no \"generator\"");
        }
        for (const std::string &a : archs) {
            t.arch = a;
            c.problems.push_back(t);
        }
    }
    return c;
}

// ---------------------------------------------------------------- the worker

namespace {

// What the worker threads share.
struct WorkerShared {
    std::mutex mu;
    WorkerStats stats;
    std::string fatal; // the first thread's reason to give up
    std::atomic<bool> quit{false};
    std::map<std::string, std::string> arch_files; // arch hash -> a file with its JSON (this process's)
};

class WorkerThread {
public:
    WorkerThread(const WorkerOptions &o, WorkerShared &sh, int slot, int64_t campaign_id)
        : o_(o), sh_(sh), campaign_(campaign_id), lease_ms_(to_ms(o.lease_s)),
          owner_(hostname() + ":" + std::to_string(getpid()) + "/" + std::to_string(slot)) {}

    void run() {
        while (!stopping()) {
            std::optional<db::TaskRecord> task;
            bool drained = false;
            double claim_ms = 0;
            if (!with_db([&](db::WorkQueue &q) {
                    const auto t0 = Clock::now();
                    task = q.claim(campaign_, owner_, lease_ms_);
                    claim_ms = since(t0) * 1000;
                    drained = !task && !o_.wait && q.drained(campaign_);
                })) {
                return;
            }
            {
                std::lock_guard<std::mutex> lock(sh_.mu);
                sh_.stats.claim_ms.push_back(claim_ms);
            }
            if (drained) {
                return;
            }
            if (!task) {
                sleep_s(o_.poll_s);
                continue;
            }
            process(*task);
        }
    }

private:
    bool stopping() const { return sh_.quit.load() || (o_.stop && o_.stop->load()); }

    void log(const std::string &line) {
        if (o_.log) {
            o_.log(owner_ + ": " + line);
        }
    }

    // Opens the connection if it is closed (a reconnection when the last
    // attempt failed).
    void ensure_store() {
        if (store_) {
            return;
        }
        store_.emplace(db::ScheduleStore::open(o_.db));
        if (failures_ > 0) {
            std::lock_guard<std::mutex> lock(sh_.mu);
            sh_.stats.reconnected++;
            log("reconnected to " + db_name(o_.db));
        }
    }

    // Counts a failed database call; false (with the reason in sh_.fatal and
    // every thread told to quit) when it is one more than o_.reconnects in a row.
    bool failed_call(const db::DatabaseError &e) {
        store_.reset();
        failures_++;
        if (failures_ <= o_.reconnects) {
            return true;
        }
        std::lock_guard<std::mutex> lock(sh_.mu);
        if (sh_.fatal.empty()) {
            sh_.fatal = std::string(e.what()) + "; gave up after " + std::to_string(o_.reconnects) +
                        " reconnection attempt" + (o_.reconnects == 1 ? "" : "s") +
                        " (the tasks this worker held are claimed again when their leases expire)";
        }
        sh_.quit = true;
        return false;
    }

    // Runs `fn` on a working connection, reconnecting up to o_.reconnects
    // times in a row (heartbeats' failures count too); false when it gives up
    // or another thread did.
    template <typename Fn>
    bool with_db(Fn &&fn) {
        for (;;) {
            if (sh_.quit.load()) {
                return false;
            }
            try {
                ensure_store();
                db::WorkQueue q(*store_);
                fn(q);
                failures_ = 0;
                return true;
            } catch (const db::DatabaseError &e) {
                if (!failed_call(e)) {
                    return false;
                }
                const double wait = std::min(5.0, 0.5 * std::pow(2.0, failures_ - 1));
                log(std::string(e.what()) + "; reconnecting in " + std::to_string(wait).substr(0, 3) + " s (attempt " +
                    std::to_string(failures_) + " of " + std::to_string(o_.reconnects) + ")");
                sleep_s(wait);
            }
        }
    }

    void count(int WorkerStats::*field) {
        std::lock_guard<std::mutex> lock(sh_.mu);
        sh_.stats.*field += 1;
    }

    // The arch the request names: the preset or file the coordinator used when
    // it is the same machine description here, else the task's JSON in a file.
    std::string arch_for(const json &p) {
        const std::string hash = p.at("arch_hash").get<std::string>();
        const std::string given = p.at("arch").get<std::string>();
        try {
            if (load_arch(given).hash() == hash) {
                return given;
            }
        } catch (const std::exception &) { // not on this machine: use the task's copy
        }
        std::lock_guard<std::mutex> lock(sh_.mu);
        auto it = sh_.arch_files.find(hash);
        if (it != sh_.arch_files.end()) {
            return it->second;
        }
        const std::string file = (std::filesystem::temp_directory_path() /
                                  ("tessel-worker-" + std::to_string(getpid()) + "-" + hash + ".json"))
                                     .string();
        std::ofstream out(file);
        out << p.at("arch_json").get<std::string>();
        if (!out) {
            throw UserError("cannot write the task's arch to " + file);
        }
        sh_.arch_files[hash] = file;
        return file;
    }

    void process(const db::TaskRecord &task) {
        CompileRequest req;
        json p;
        std::string why;
        try {
            p = json::parse(task.payload_json);
            req.generator = p.at("generator").get<std::string>();
            for (const auto &kv : p.at("params").items()) {
                req.params[kv.key()] = kv.value().get<std::string>();
            }
            find_generator(req.generator); // a generator library this machine lacks fails here
            req.arch = arch_for(p);
            req.schedule = parse_schedule(p.at("schedule").dump(), "task " + task.key);
            if (schedule_hash(req.schedule) != p.at("schedule_hash").get<std::string>()) {
                why = "the schedule's hash here is " + schedule_hash(req.schedule) + ", the coordinator's " +
                      p.at("schedule_hash").get<std::string>() + " (are the worker and the coordinator the same tessel?)";
            }
            req.max_instructions = p.at("max_instructions").get<uint64_t>();
            req.max_cycles = p.at("max_cycles").get<uint64_t>();
        } catch (const std::exception &e) {
            why = e.what();
        }
        if (!why.empty()) {
            bool held = false;
            with_db([&](db::WorkQueue &q) { held = q.fail(task, "this worker (" + owner_ + ") cannot measure it: " + why); });
            count(&WorkerStats::failed);
            log("task " + std::to_string(task.id) + " failed: " + why + (held ? "" : " (the claim was lost)"));
            return;
        }
        auto beat_at = Clock::now();
        bool lost = false;
        const double beat_s = std::max(0.05, o_.lease_s / 3);
        auto keep_going = [&]() {
            if (sh_.quit.load()) {
                return false;
            }
            if (since(beat_at) < beat_s) {
                return true;
            }
            beat_at = Clock::now();
            try {
                ensure_store();
                if (!db::WorkQueue(*store_).heartbeat(task, lease_ms_)) {
                    lost = true; // the lease expired and another worker has the task
                    return false;
                }
                failures_ = 0;
            } catch (const db::DatabaseError &e) { // measure on; the result is written once the server is back
                log(std::string("heartbeat: ") + e.what());
                return failed_call(e);
            }
            return true;
        };
        Measurement m = measure_isolated(req, p.at("seed").get<uint64_t>(), p.at("timeout_s").get<double>(), keep_going);
        if (lost || sh_.quit.load()) {
            count(&WorkerStats::fenced);
            log("task " + std::to_string(task.id) + ": the claim was lost; its measurement is not recorded here");
            return;
        }
        m.predicted_cycles = p.at("predicted_cycles").get<double>();
        const db::RunRecord rr = tuner_run_record(m, p.at("note").get<std::string>(), req.generator,
                                                  db::params_to_json(req.params), p.at("arch_name").get<std::string>(),
                                                  p.at("arch_json").get<std::string>(),
                                                  p.at("arch_hash").get<std::string>());
        bool held = false;
        if (!with_db([&](db::WorkQueue &q) { held = q.complete(task, rr); })) {
            return;
        }
        count(held ? &WorkerStats::measured : &WorkerStats::fenced);
        if (!held) {
            log("task " + std::to_string(task.id) + ": finished after its claim was lost; not recorded here");
        }
    }

    const WorkerOptions &o_;
    WorkerShared &sh_;
    int64_t campaign_;
    int64_t lease_ms_;
    std::string owner_;
    std::optional<db::ScheduleStore> store_;
    int failures_ = 0; // failed database calls in a row
};

} // namespace

WorkerStats run_worker(const WorkerOptions &o) {
    if (o.jobs < 1 || o.jobs > 256) {
        throw UserError("tune-worker: --jobs must be 1 to 256, got " + std::to_string(o.jobs));
    }
    if (!(o.lease_s >= 0.3)) {
        throw UserError("tune-worker: --lease must be at least 0.3 s");
    }
    int64_t campaign_id = 0;
    try {
        db::ScheduleStore store = db::ScheduleStore::open(o.db);
        if (!o.campaign.empty()) {
            std::optional<int64_t> id = db::WorkQueue(store).find_campaign(o.campaign);
            if (!id) {
                throw UserError("tune-worker: no tuning campaign '" + o.campaign + "' in " + db_name(o.db) +
                                " (start its coordinator, tessel tune, first)");
            }
            campaign_id = *id;
        }
    } catch (const db::DatabaseError &e) {
        throw UserError(std::string("tune-worker: ") + e.what());
    }
    WorkerShared sh;
    std::vector<std::thread> threads;
    std::vector<std::unique_ptr<WorkerThread>> workers;
    for (int i = 0; i < o.jobs; i++) {
        workers.push_back(std::make_unique<WorkerThread>(o, sh, i, campaign_id));
    }
    for (auto &w : workers) {
        threads.emplace_back([&w] { w->run(); });
    }
    for (std::thread &t : threads) {
        t.join();
    }
    for (const auto &f : sh.arch_files) {
        std::remove(f.second.c_str());
    }
    if (!sh.fatal.empty()) {
        throw UserError("tune-worker: " + sh.fatal);
    }
    std::sort(sh.stats.claim_ms.begin(), sh.stats.claim_ms.end());
    return sh.stats;
}

} // namespace tessel::sched
