#ifndef TESSEL_DATABASE_WORKQUEUE_H
#define TESSEL_DATABASE_WORKQUEUE_H

// Tuning campaigns as a work queue in the schedule database (schema v3,
// tables tune_campaigns and tune_tasks): a task is one candidate to measure.
// Workers anywhere claim tasks under a lease kept on the database's clock; a
// heartbeat extends it; a task whose lease expired is claimable again; a
// result is written once, fenced by the claim (owner + attempt number) and
// keyed by a uid derived from the campaign and the task key. On PostgreSQL the
// claim is one UPDATE over SELECT ... FOR UPDATE SKIP LOCKED (claimers never
// wait on each other); on SQLite the same UPDATE runs in a BEGIN IMMEDIATE
// transaction, which serialises claimers (workers of one machine).
// See docs/database.md ("Tuning campaigns: the work queue").

#include "database/ScheduleStore.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::db {

struct TaskRecord {
    int64_t id = 0;
    int64_t campaign_id = 0;
    std::string campaign; // the campaign's name
    std::string key;      // the candidate's identity within the campaign
    std::string payload_json;
    std::string state; // queued | running | done | failed
    std::string lease_owner;
    int64_t lease_expires_ms = 0; // database clock, ms since the epoch
    int64_t attempts = 0;         // claims so far: with the owner, the fence of this claim
    std::optional<int64_t> result_id;
    std::string error_text;
};

struct CampaignStatus {
    int64_t queued = 0, running = 0, done = 0, failed = 0;
};

/** A campaign with its progress and its fastest verified result so far. */
struct CampaignSummary {
    int64_t id = 0;
    std::string name;
    CampaignStatus status;
    std::optional<ResultRecord> best; // over the results of its done tasks
    bool closed = false;              // its coordinator queues nothing more (v4)
    bool coordinator_alive = false;   // open, and its coordinator's lease has not expired
};

/** One problem of a campaign: the tasks whose payload has this "problem" (a
 * string member of the payload JSON; "" for tasks without one). */
struct ProblemSummary {
    std::string problem;
    CampaignStatus status;
    std::optional<ResultRecord> best; // fastest verified result of its done tasks
};

class WorkQueue {
public:
    explicit WorkQueue(ScheduleStore &store) : store_(store) {}

    /** The campaign named `name`, created if absent; its id. */
    int64_t campaign(const std::string &name);
    /** Queues a task; false when the campaign already has `key` (nothing changes). */
    bool enqueue(int64_t campaign_id, const std::string &key, const std::string &payload_json);
    /** Claims the campaign's oldest claimable task (queued, or running with an
     * expired lease) for `owner` with a lease of `lease_ms`; nullopt when none.
     * campaign_id 0: the oldest claimable task of any campaign. */
    std::optional<TaskRecord> claim(int64_t campaign_id, const std::string &owner, int64_t lease_ms);
    /** Extends the claim's lease to `lease_ms` from now; false when the claim
     * no longer holds the task (it expired and another worker took it). */
    bool heartbeat(const TaskRecord &claimed, int64_t lease_ms);
    /** Records `run` as the task's result and marks the task done, in one
     * transaction, if the claim still holds the task; false, with nothing
     * written, when it does not. The result's uid is result_uid(claimed). */
    bool complete(const TaskRecord &claimed, RunRecord run);
    /** Marks the task failed with `error` if the claim still holds it. */
    bool fail(const TaskRecord &claimed, const std::string &error);

    /** The campaign's coordinator is alive for `lease_ms` more (and the campaign
     * open again if it was closed): workers wait for its tasks meanwhile. */
    void coordinator_heartbeat(int64_t campaign_id, int64_t lease_ms);
    /** The coordinator will queue nothing more: once no task is queued or
     * running, the campaign is drained. */
    void close_campaign(int64_t campaign_id);
    /** The id of the campaign named `name`, if there is one. */
    std::optional<int64_t> find_campaign(const std::string &name);
    /** True when no more work will come to a worker of this campaign (0: of
     * any campaign): no task is queued or running, and each campaign is closed
     * or its coordinator's lease has expired. */
    bool drained(int64_t campaign_id);
    /** Removes a task no worker holds: queued, or (expired_for_ms >= 0) running
     * with a lease that expired more than expired_for_ms ago. false, with
     * nothing changed, when a worker holds it or it finished. */
    bool withdraw(int64_t task_id, int64_t expired_for_ms = -1);
    /** The campaign's task with `key`, if there is one. */
    std::optional<TaskRecord> task(int64_t campaign_id, const std::string &key);
    /** Workers holding an unexpired claim on a task of the campaign (distinct owners). */
    int64_t workers(int64_t campaign_id);
    /** The tasks with these ids (those that exist), by id. */
    std::vector<TaskRecord> tasks_by_id(const std::vector<int64_t> &ids);

    CampaignStatus status(int64_t campaign_id);
    /** The campaign's problems in order of their first task, each with its progress and best. */
    std::vector<ProblemSummary> problems(int64_t campaign_id);
    /** Every campaign by id (or the one named `name`), with progress and best so far. */
    std::vector<CampaignSummary> campaigns(const std::string &name = "");
    /** Every task of the campaign, by id. */
    std::vector<TaskRecord> tasks(int64_t campaign_id);
    /** The database's clock in ms since the epoch (leases are on it, not on a worker's). */
    int64_t now_ms();

    /** The uid of a task's result: 32 hex digits from the campaign name and task key. */
    static std::string result_uid(const std::string &campaign, const std::string &key);

private:
    bool finish_claim(const TaskRecord &claimed, const std::string &state, const std::string &error);
    ScheduleStore &store_;
};

} // namespace tessel::db

#endif
