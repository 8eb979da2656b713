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
};

class WorkQueue {
public:
    explicit WorkQueue(ScheduleStore &store) : store_(store) {}

    /** The campaign named `name`, created if absent; its id. */
    int64_t campaign(const std::string &name);
    /** Queues a task; false when the campaign already has `key` (nothing changes). */
    bool enqueue(int64_t campaign_id, const std::string &key, const std::string &payload_json);
    /** Claims the campaign's oldest claimable task (queued, or running with an
     * expired lease) for `owner` with a lease of `lease_ms`; nullopt when none. */
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

    CampaignStatus status(int64_t campaign_id);
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
