#ifndef TESSEL_SCHEDULER_CAMPAIGN_H
#define TESSEL_SCHEDULER_CAMPAIGN_H

// Tuning campaigns (docs/campaigns.md): the tuner's search runs in a
// coordinator, its candidates are tasks in the schedule database's work queue
// (database/WorkQueue.h), and workers on any machine (tessel tune-worker)
// claim them under a lease, measure them exactly as the tuner's forked workers
// do (measure_isolated: compile, simulate, verify, with the tuner's timeout and
// simulation budget) and record each result once, fenced by their claim. The
// coordinator reads the results back into the search, so the database ends up
// with the records a local tune writes, and the same best.

#include "scheduler/Tuner.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace tessel::sched {

/** One problem of a campaign: a tuning run's options (generator, params,
 * arch, budget_s, max_measurements, seed, objective, ...). */
struct CampaignOptions {
    std::string name;                 // the campaign (created if new; a rerun of the same name resumes it)
    std::string db;                   // a postgresql:// URL or a SQLite file
    std::vector<TuneOptions> problems; // searched one after another; their tasks share the queue
    double lease_s = 30;              // the coordinator's lease on the campaign (workers wait while it holds)
    // At most this many tasks queued or running at once (0: 8, or two per
    // worker holding a task, whichever is more): fewer keep the evolutionary
    // search closer to its results, more keep many workers busy.
    int in_flight = 0;
    // Workers started here for the campaign (0: coordinate only): each is
    // `worker_argv` (tessel tune-worker ... --campaign NAME) run as a child
    // process; they exit when the campaign is drained.
    int local_workers = 0;
    std::vector<std::string> worker_argv;
    std::function<void(size_t problem, const TuneProgress &)> on_progress;
    const std::atomic<bool> *cancel = nullptr;
};

struct CampaignResult {
    std::vector<TuneResult> problems; // in the order of CampaignOptions::problems
    int withdrawn = 0;                // queued tasks removed unmeasured at a budget's end
};

/** Runs the coordinator: throws UserError for a bad problem or database,
 * db::DatabaseError when the server goes away (nothing queued is lost: a
 * rerun resumes). */
CampaignResult run_campaign(const CampaignOptions &o);

/** The campaign name `tessel tune` uses for a single problem. */
std::string default_campaign_name(const TuneOptions &o);

/** A campaign file (docs/campaigns.md): {"name", "defaults", "problems": [{"generator",
 * "params", "arch" (a name or a list), "budget", "max", ...}]}; `base` gives the
 * options not set in the file. Throws UserError naming the field. */
CampaignOptions load_campaign_file(const std::string &path, const TuneOptions &base);

/** "60s", "2m", "1h" or "90" in seconds; `what` names the option in the error. */
double parse_duration(const std::string &what, const std::string &text);

struct WorkerOptions {
    std::string db;
    std::string campaign; // "" = every campaign
    int jobs = 1;         // measurements at once (a thread and a connection each)
    double lease_s = 30;  // heartbeats every lease/3
    bool wait = false;    // do not exit when drained: wait for new tasks
    int reconnects = 5;   // a lost connection is re-opened this many times in a row, then the worker exits 1
    double poll_s = 0.2;  // how often an idle worker looks for a task
    std::function<void(const std::string &)> log; // one line per event (stderr in the CLI)
    const std::atomic<bool> *stop = nullptr;       // stop claiming; finish and record what is running
};

struct WorkerStats {
    int measured = 0; // results recorded
    int failed = 0;   // tasks marked failed (no measurement possible here)
    int fenced = 0;   // measurements whose claim was lost (another worker has the task)
    int reconnected = 0;
    std::vector<double> claim_ms; // how long each claim took (found a task or not), sorted
};

/** Runs a worker until the campaign is drained (or, with `wait`, until `stop`);
 * throws UserError when the database cannot be reached after the reconnects. */
WorkerStats run_worker(const WorkerOptions &o);

} // namespace tessel::sched

#endif
