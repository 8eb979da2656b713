#include "database/WorkQueue.h"

#include "database/Canonical.h"

#include <nlohmann/json.hpp>

#include <map>

namespace tessel::db {

namespace {

/** SQL for the database's clock in ms since the epoch. */
std::string now_sql(Backend b) {
    return b == Backend::Postgres ? "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)"
                                  : "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";
}

const char *const kTaskColumns = "t.id, t.campaign_id, c.name, t.task_key, t.payload_json, t.state, t.lease_owner, "
                                 "t.lease_expires_ms, t.attempts, t.result_id, t.error_text";

TaskRecord read_task(const Statement &s) {
    TaskRecord t;
    t.id = s.get_int(0);
    t.campaign_id = s.get_int(1);
    t.campaign = s.get_text(2);
    t.key = s.get_text(3);
    t.payload_json = s.get_text(4);
    t.state = s.get_text(5);
    t.lease_owner = s.get_text(6);
    t.lease_expires_ms = s.get_int(7);
    t.attempts = s.get_int(8);
    t.result_id = s.get_opt_int(9);
    t.error_text = s.get_text(10);
    return t;
}

} // namespace

std::string WorkQueue::result_uid(const std::string &campaign, const std::string &key) {
    return fnv1a64_hex("tune-task\n" + campaign + "\n" + key) + fnv1a64_hex(key + "\n" + campaign + "\ntune-task");
}

int64_t WorkQueue::now_ms() { return store_.connection().query_int("SELECT " + now_sql(store_.backend())); }

int64_t WorkQueue::campaign(const std::string &name) {
    if (name.empty()) {
        throw DatabaseError("a tuning campaign needs a name");
    }
    Connection &c = store_.connection();
    Transaction t(c);
    Statement ins = c.prepare("INSERT INTO tune_campaigns (name, created) VALUES (?, ?) ON CONFLICT (name) DO NOTHING");
    ins.bind(1, name).bind(2, now_utc()).run();
    Statement find = c.prepare("SELECT id FROM tune_campaigns WHERE name = ?");
    find.bind(1, name);
    if (!find.step()) {
        throw DatabaseError("database " + c.path() + ": campaign '" + name + "' vanished while it was created");
    }
    int64_t id = find.get_int(0);
    t.commit();
    return id;
}

bool WorkQueue::enqueue(int64_t campaign_id, const std::string &key, const std::string &payload_json) {
    Connection &c = store_.connection();
    Statement ins = c.prepare("INSERT INTO tune_tasks (campaign_id, task_key, payload_json, created) VALUES (?, ?, ?, ?) "
                              "ON CONFLICT (campaign_id, task_key) DO NOTHING");
    ins.bind(1, campaign_id).bind(2, key).bind(3, canonical_json(payload_json, "the payload of task '" + key + "'"));
    ins.bind(4, now_utc()).run();
    return c.changes() == 1;
}

std::optional<TaskRecord> WorkQueue::claim(int64_t campaign_id, const std::string &owner, int64_t lease_ms) {
    Connection &c = store_.connection();
    const std::string now = now_sql(store_.backend());
    // PostgreSQL: SKIP LOCKED passes over a row another claimer holds, so
    // claimers never queue behind each other; under READ COMMITTED a row
    // claimed and committed meanwhile is re-checked against the WHERE and
    // skipped. SQLite: the write transaction already admits one claimer.
    const std::string lock = store_.backend() == Backend::Postgres ? " FOR UPDATE SKIP LOCKED" : "";
    const std::string which = campaign_id != 0 ? "campaign_id = ? AND " : "";
    Transaction t(c);
    Statement s = c.prepare("UPDATE tune_tasks SET state = 'running', lease_owner = ?, lease_expires_ms = " + now +
                            " + ?, attempts = attempts + 1 WHERE id = (SELECT id FROM tune_tasks WHERE " + which +
                            "(state = 'queued' OR (state = 'running' AND lease_expires_ms < " + now +
                            ")) ORDER BY id LIMIT 1" + lock + ") RETURNING id");
    s.bind(1, owner).bind(2, lease_ms);
    if (campaign_id != 0) {
        s.bind(3, campaign_id);
    }
    if (!s.step()) {
        t.commit();
        return std::nullopt;
    }
    int64_t id = s.get_int(0);
    s.run(); // SQLite finishes the UPDATE's statement only when stepped to the end
    Statement read = c.prepare(std::string("SELECT ") + kTaskColumns +
                               " FROM tune_tasks t JOIN tune_campaigns c ON c.id = t.campaign_id WHERE t.id = ?");
    read.bind(1, id);
    read.step();
    TaskRecord task = read_task(read);
    t.commit();
    return task;
}

void WorkQueue::coordinator_heartbeat(int64_t campaign_id, int64_t lease_ms) {
    Statement s = store_.connection().prepare("UPDATE tune_campaigns SET closed = 0, coordinator_expires_ms = " +
                                              now_sql(store_.backend()) + " + ? WHERE id = ?");
    s.bind(1, lease_ms).bind(2, campaign_id).run();
}

void WorkQueue::close_campaign(int64_t campaign_id) {
    Statement s = store_.connection().prepare("UPDATE tune_campaigns SET closed = 1, coordinator_expires_ms = 0 WHERE id = ?");
    s.bind(1, campaign_id).run();
}

std::optional<int64_t> WorkQueue::find_campaign(const std::string &name) {
    Statement s = store_.connection().prepare("SELECT id FROM tune_campaigns WHERE name = ?");
    s.bind(1, name);
    if (!s.step()) {
        return std::nullopt;
    }
    return s.get_int(0);
}

bool WorkQueue::drained(int64_t campaign_id) {
    Connection &c = store_.connection();
    const std::string which = campaign_id != 0 ? " AND campaign_id = ?" : "";
    Statement busy = c.prepare("SELECT count(*) FROM tune_tasks WHERE state IN ('queued', 'running')" + which);
    if (campaign_id != 0) {
        busy.bind(1, campaign_id);
    }
    busy.step();
    if (busy.get_int(0) > 0) {
        return false;
    }
    Statement live = c.prepare("SELECT count(*) FROM tune_campaigns WHERE closed = 0 AND coordinator_expires_ms >= " +
                               now_sql(store_.backend()) + (campaign_id != 0 ? " AND id = ?" : ""));
    if (campaign_id != 0) {
        live.bind(1, campaign_id);
    }
    live.step();
    return live.get_int(0) == 0;
}

bool WorkQueue::withdraw(int64_t task_id, int64_t expired_for_ms) {
    Connection &c = store_.connection();
    Statement s = c.prepare("DELETE FROM tune_tasks WHERE id = ? AND (state = 'queued' OR (? >= 0 AND state = 'running' "
                            "AND lease_expires_ms < " + now_sql(store_.backend()) + " - ?))");
    s.bind(1, task_id).bind(2, expired_for_ms).bind(3, expired_for_ms).run();
    return c.changes() == 1;
}

std::optional<TaskRecord> WorkQueue::task(int64_t campaign_id, const std::string &key) {
    Statement s = store_.connection().prepare(std::string("SELECT ") + kTaskColumns +
                                              " FROM tune_tasks t JOIN tune_campaigns c ON c.id = t.campaign_id "
                                              "WHERE t.campaign_id = ? AND t.task_key = ?");
    s.bind(1, campaign_id).bind(2, key);
    if (!s.step()) {
        return std::nullopt;
    }
    return read_task(s);
}

int64_t WorkQueue::workers(int64_t campaign_id) {
    Statement s = store_.connection().prepare("SELECT count(DISTINCT lease_owner) FROM tune_tasks WHERE campaign_id = ? "
                                              "AND state = 'running' AND lease_expires_ms >= " +
                                              now_sql(store_.backend()));
    s.bind(1, campaign_id);
    s.step();
    return s.get_int(0);
}

std::vector<TaskRecord> WorkQueue::tasks_by_id(const std::vector<int64_t> &ids) {
    std::vector<TaskRecord> out;
    // In chunks of a fixed size, so the backend prepares one statement text.
    constexpr size_t kChunk = 32;
    std::string marks = "?";
    for (size_t i = 1; i < kChunk; i++) {
        marks += ", ?";
    }
    for (size_t at = 0; at < ids.size(); at += kChunk) {
        Statement s = store_.connection().prepare(std::string("SELECT ") + kTaskColumns +
                                                  " FROM tune_tasks t JOIN tune_campaigns c ON c.id = t.campaign_id "
                                                  "WHERE t.id IN (" + marks + ") ORDER BY t.id ASC");
        for (size_t i = 0; i < kChunk; i++) {
            s.bind(static_cast<int>(i + 1), at + i < ids.size() ? ids[at + i] : int64_t{0});
        }
        while (s.step()) {
            out.push_back(read_task(s));
        }
    }
    return out;
}

bool WorkQueue::heartbeat(const TaskRecord &claimed, int64_t lease_ms) {
    Connection &c = store_.connection();
    Statement s = c.prepare("UPDATE tune_tasks SET lease_expires_ms = " + now_sql(store_.backend()) +
                            " + ? WHERE id = ? AND lease_owner = ? AND attempts = ? AND state = 'running'");
    s.bind(1, lease_ms).bind(2, claimed.id).bind(3, claimed.lease_owner).bind(4, claimed.attempts).run();
    return c.changes() == 1;
}

bool WorkQueue::finish_claim(const TaskRecord &claimed, const std::string &state, const std::string &error) {
    Connection &c = store_.connection();
    Statement s = c.prepare("UPDATE tune_tasks SET state = ?, error_text = ? "
                            "WHERE id = ? AND lease_owner = ? AND attempts = ? AND state = 'running'");
    s.bind(1, state).bind(2, error).bind(3, claimed.id).bind(4, claimed.lease_owner).bind(5, claimed.attempts).run();
    return c.changes() == 1;
}

bool WorkQueue::complete(const TaskRecord &claimed, RunRecord run) {
    Connection &c = store_.connection();
    Transaction t(c);
    // The fence first: a claim that lost the task writes nothing (the
    // Transaction rolls back when we return).
    if (!finish_claim(claimed, "done", "")) {
        return false;
    }
    run.result.uid = result_uid(claimed.campaign, claimed.key);
    int64_t result = store_.record_run(run); // joins this transaction
    Statement link = c.prepare("UPDATE tune_tasks SET result_id = ? WHERE id = ?");
    link.bind(1, result).bind(2, claimed.id).run();
    t.commit();
    return true;
}

bool WorkQueue::fail(const TaskRecord &claimed, const std::string &error) {
    Transaction t(store_.connection());
    bool held = finish_claim(claimed, "failed", error);
    t.commit();
    return held;
}

CampaignStatus WorkQueue::status(int64_t campaign_id) {
    Statement s = store_.connection().prepare(
        "SELECT state, count(*) FROM tune_tasks WHERE campaign_id = ? GROUP BY state ORDER BY state");
    s.bind(1, campaign_id);
    CampaignStatus st;
    while (s.step()) {
        std::string state = s.get_text(0);
        int64_t n = s.get_int(1);
        (state == "queued" ? st.queued : state == "running" ? st.running : state == "done" ? st.done : st.failed) = n;
    }
    return st;
}

std::vector<CampaignSummary> WorkQueue::campaigns(const std::string &name) {
    std::vector<CampaignSummary> out;
    {
        Statement s = store_.connection().prepare(
            "SELECT id, name, closed, CASE WHEN coordinator_expires_ms >= " + now_sql(store_.backend()) +
            " THEN 1 ELSE 0 END FROM tune_campaigns WHERE ? = '' OR name = ? ORDER BY id ASC");
        s.bind(1, name).bind(2, name);
        while (s.step()) {
            CampaignSummary c;
            c.id = s.get_int(0);
            c.name = s.get_text(1);
            c.closed = s.get_int(2) != 0;
            c.coordinator_alive = !c.closed && s.get_int(3) != 0;
            out.push_back(std::move(c));
        }
    }
    for (auto &c : out) {
        c.status = status(c.id);
        Statement b = store_.connection().prepare(
            "SELECT r.id FROM tune_tasks k JOIN results r ON r.id = k.result_id WHERE k.campaign_id = ? "
            "AND r.verified = 1 AND r.simulated_cycles IS NOT NULL "
            "ORDER BY r.simulated_cycles ASC, r.created DESC, r.id DESC LIMIT 1");
        b.bind(1, c.id);
        if (b.step()) {
            c.best = store_.result(b.get_int(0));
        }
    }
    return out;
}

std::vector<ProblemSummary> WorkQueue::problems(int64_t campaign_id) {
    struct Best {
        int64_t id = 0, cycles = 0;
        std::string created;
    };
    std::vector<ProblemSummary> out;
    std::map<std::string, size_t> index;
    std::map<std::string, Best> best;
    {
        Statement s = store_.connection().prepare(
            "SELECT t.payload_json, t.state, r.id, r.verified, r.simulated_cycles, r.created FROM tune_tasks t "
            "LEFT JOIN results r ON r.id = t.result_id WHERE t.campaign_id = ? ORDER BY t.id ASC");
        s.bind(1, campaign_id);
        while (s.step()) {
            std::string problem;
            auto payload = nlohmann::json::parse(s.get_text(0), nullptr, false);
            if (payload.is_object() && payload.contains("problem") && payload["problem"].is_string()) {
                problem = payload["problem"].get<std::string>();
            }
            auto [it, added] = index.emplace(problem, out.size());
            if (added) {
                out.push_back(ProblemSummary{problem, {}, std::nullopt});
            }
            CampaignStatus &st = out[it->second].status;
            const std::string state = s.get_text(1);
            (state == "queued" ? st.queued : state == "running" ? st.running : state == "done" ? st.done : st.failed)++;
            if (state != "done" || s.is_null(2) || s.get_int(3) != 1 || s.is_null(4)) {
                continue;
            }
            // The store's order for best: fewest cycles, then the newest, then the higher id.
            Best b{s.get_int(2), s.get_int(4), s.get_text(5)};
            auto cur = best.find(problem);
            if (cur == best.end() || b.cycles < cur->second.cycles ||
                (b.cycles == cur->second.cycles &&
                 (b.created > cur->second.created || (b.created == cur->second.created && b.id > cur->second.id)))) {
                best[problem] = b;
            }
        }
    }
    for (auto &p : out) {
        auto b = best.find(p.problem);
        if (b != best.end()) {
            p.best = store_.result(b->second.id);
        }
    }
    return out;
}

std::vector<TaskRecord> WorkQueue::tasks(int64_t campaign_id) {
    Statement s = store_.connection().prepare(std::string("SELECT ") + kTaskColumns +
                                              " FROM tune_tasks t JOIN tune_campaigns c ON c.id = t.campaign_id "
                                              "WHERE t.campaign_id = ? ORDER BY t.id ASC");
    s.bind(1, campaign_id);
    std::vector<TaskRecord> out;
    while (s.step()) {
        out.push_back(read_task(s));
    }
    return out;
}

} // namespace tessel::db
