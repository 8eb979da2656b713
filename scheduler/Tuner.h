#ifndef TESSEL_SCHEDULER_TUNER_H
#define TESSEL_SCHEDULER_TUNER_H

// The tuner (docs/tuner.md): seeds with the cost model's best candidates,
// then evolves the best measured ones (mutations ranked by the cost model),
// measuring each candidate with tessel::run (compile, simulate, verify against
// Halide's CPU result) in up to `jobs` worker processes at once (one forked
// per candidate: a crash or a hang ends only that worker; it is recorded with
// the signal or the timeout and the search goes on) within a time budget. Every
// measured candidate is recorded in the schedule database (origin "tuner");
// a candidate that fails to compile or verify is recorded with its error and
// never chosen. A second run on the same problem and database resumes: it
// loads the measured schedule hashes and the best verified result and never
// measures a schedule again.

#include "database/ScheduleStore.h"
#include "dsl/Compile.h"
#include "scheduler/CostModel.h"
#include "scheduler/SearchSpace.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::sched {

struct Measurement {
    Candidate candidate;
    std::string schedule_json;  // canonical
    std::string schedule_hash;
    double predicted_cycles = 0;
    bool verified = false;
    int64_t cycles = 0;         // simulated
    int64_t t_phys_cycles = 0;
    double efficiency = 0;
    double max_error = 0;       // largest |NPU - CPU| difference
    double compile_ms = 0;
    std::string error;          // compile or verification failure
    double at_seconds = 0;      // when it finished, from the start of the tuning run
    bool from_database = false; // a result of an earlier run (resume)
};

struct TuneProgress {
    int measured = 0;            // in this run
    int failed = 0;
    int skipped = 0;             // candidates already in the database
    double best_efficiency = 0;  // over verified results (this run and the database)
    int64_t best_cycles = 0;
    double elapsed_s = 0, budget_s = 0;
};

/** Where the tuner's measurements run when they are not its own forked
 * workers: scheduler/Campaign.h's work queue in the schedule database, whose
 * workers (tessel tune-worker) measure and record anywhere. The tuning thread
 * starts candidates while has_capacity(), and records what collect() returns. */
class MeasureExecutor {
public:
    virtual ~MeasureExecutor() = default;
    /** Whether another candidate may be started now. */
    virtual bool has_capacity() = 0;
    /** Starts measuring `m` (schedule, hash, prediction filled; no result) with `req`. */
    virtual void start(const Measurement &m, const CompileRequest &req) = 0;
    /** Started measurements not yet returned by collect(). */
    virtual size_t in_flight() const = 0;
    /** The measurements that finished (results filled), waiting up to `wait_ms` for one. */
    virtual std::vector<Measurement> collect(int wait_ms) = 0;
    /** No more candidates will be started: drop what nobody measures yet; the
     * rest still comes through collect(). */
    virtual void stop() = 0;
    /** True when the results are already in the schedule database (the tuner must not record them again). */
    virtual bool records() const = 0;
};

struct TuneOptions {
    std::string generator;
    ParamMap params;             // overrides of the generator's defaults
    std::string arch = "ascend-like";
    double budget_s = 60;        // stop starting measurements after this
    int jobs = 1;                // worker processes measuring at once (each forked for one candidate)
    uint64_t seed = 1;           // search randomness and the verification inputs
    std::string db_path;         // "" = do not record (no resume)
    int seed_candidates = 8;     // the cost model's best K measured first
    int max_measurements = 0;    // > 0: stop after this many measurements in this run
    bool random_search = false;  // uniform random legal candidates instead (the baseline)
    // "efficiency" (t_phys / cycles: a split over c cores must be c times faster
    // to win; the model ranks by predicted cycles x cores) or "cycles" (fastest).
    std::string objective = "efficiency";
    // Candidates the model predicts more than this many times slower than its
    // best are never measured (a scalar or tiny-tile schedule of a big problem
    // can take minutes to simulate); 0 = measure anything. Applies to both searches.
    double hopeless_ratio = 20;
    // A worker that has not reported after this many seconds is killed and its
    // candidate recorded as timed out; 0 = no limit.
    double measure_timeout_s = 300;
    // Each measurement's simulation budget (CompileRequest's; 0 = no limit): a
    // candidate past it is recorded with the budget's message, and the search goes on.
    uint64_t max_instructions = sim::kDefaultMaxInstructions;
    uint64_t max_cycles = sim::kDefaultMaxCycles;
    std::function<void(const TuneProgress &)> on_progress; // after each measurement (on the calling thread)
    // Called in the worker process before it measures (tests make a candidate crash or hang).
    std::function<void(const Candidate &)> worker_hook;
    const std::atomic<bool> *cancel = nullptr;
    // When set, candidates are measured by it (a tuning campaign's work queue)
    // instead of forked workers; jobs and worker_hook do not apply.
    MeasureExecutor *executor = nullptr;
};

struct TuneResult {
    std::vector<Measurement> measured;     // this run, in completion order
    std::vector<Measurement> previous;     // loaded from the database
    std::optional<Measurement> best;       // the best verified result (by the objective)
    double best_found_at_s = 0;            // when this run found it (0 when it came from the database)
    int skipped = 0;                       // candidates not measured because the database had them
    int space_size = 0;                    // legal candidates enumerated
    double elapsed_s = 0;
    std::string db_error;                  // the first failure to record a result ("" = none)
};

/** Tunes; throws UserError for a bad generator, parameter, arch or database. */
TuneResult tune(const TuneOptions &o);

/** The compile-facade request that measures `c`: the problem's generator and
 * resolved parameters, `arch` (the preset name or file the problem came from). */
CompileRequest request_for(const SearchSpace &space, const Candidate &c, const std::string &arch);

/** Measures `req` (compile, simulate, verify) in a forked worker process, as the
 * tuner measures a candidate: a fresh compile state every time, and a crash or a
 * run past `timeout_s` (> 0) is the result's error. The candidate and prediction
 * are left empty. */
Measurement measure_isolated(const CompileRequest &req, uint64_t seed, double timeout_s = 0,
                             const std::function<bool()> &keep_going = nullptr);
// keep_going (when set) is called at least every 200 ms while the worker
// process measures; when it returns false the worker is killed and the result's
// error says the measurement was abandoned (a tune-worker whose lease was lost).

/** The schedule database record of a tuner's measurement of a problem (what
 * every tuning run writes, locally or through a campaign's workers). */
db::RunRecord tuner_run_record(const Measurement &m, const std::string &note, const std::string &generator,
                               const std::string &params_json, const std::string &arch_name,
                               const std::string &arch_json, const std::string &arch_hash);

/** Whether `a` is a better result than `b`: verified first, then (objective
 * "efficiency") higher efficiency, then fewer cycles; or (objective "cycles")
 * fewer cycles, then higher efficiency. */
bool better(const Measurement &a, const Measurement &b, const std::string &objective = "efficiency");

} // namespace tessel::sched

#endif
