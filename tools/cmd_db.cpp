// tessel db list | show | best | history | compare | export | import | merge | verify |
// campaign status: the schedule database from the command line (database/ScheduleStore.h,
// database/WorkQueue.h), a SQLite file or a postgresql:// URL.
#include "tools/Commands.h"

#include "npu_target/common/InputFile.h"

#include "database/Canonical.h"
#include "database/Interchange.h"
#include "database/ScheduleStore.h"
#include "database/WorkQueue.h"
#include "dsl/GeneratorInfo.h"
#include "npu_target/common/Error.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace tessel::cli {

namespace {

using namespace tessel::db;

DbVerifier &verifier() {
    static DbVerifier v;
    return v;
}

struct DbOptions {
    std::string db;         // --db FILE ("" = default_path())
    std::string generator;  // -g
    std::string params;     // -p K=V,...
    std::string arch;       // --arch NAME_OR_HASH
    int64_t id = 0, id_b = 0;
    std::string file;
    std::string campaign; // db campaign status [NAME]
    bool json = false;
};

template <typename T>
std::string opt_text(const std::optional<T> &v) {
    if (!v) {
        return "-";
    }
    std::ostringstream os;
    os << *v;
    return os.str();
}

std::string pct(const std::optional<double> &v) {
    if (!v) {
        return "-";
    }
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << *v * 100 << "%";
    return os.str();
}

/** -p K=V,... as canonical params JSON; a registered generator's defaults fill
 * the parameters not given (results are stored with resolved parameters). */
std::string params_json_for(const std::string &generator, const std::string &text) {
    ParamMap given = parse_params(text);
    for (const auto &g : list_generators()) {
        if (g.name == generator) {
            return params_to_json(resolve_params(g, given));
        }
    }
    return params_to_json(given);
}

void print_result_row(const ResultRecord &r) {
    std::cout << "  #" << r.id << "  " << r.created << "  schedule " << r.schedule_hash << "  "
              << (r.verified ? "verified" : "UNVERIFIED") << "  sim " << opt_text(r.simulated_cycles) << "  pred "
              << opt_text(r.predicted_cycles) << "  t_phys " << opt_text(r.t_phys_cycles) << "  eff "
              << pct(r.efficiency) << "  max_err " << opt_text(r.max_error) << "  compile_ms "
              << opt_text(r.compile_ms);
    if (!r.error_text.empty()) {
        std::cout << "  error: " << r.error_text;
    }
    std::cout << "\n";
}

std::string pretty(const std::string &json_text) { return nlohmann::json::parse(json_text).dump(2); }

int run_list(ScheduleStore &s) {
    auto all = s.list();
    if (all.empty()) {
        std::cout << "no schedules in " << s.path() << "\n";
        return 0;
    }
    std::cout << "id  hash              origin   results  verified  best_cycles  created                   note\n";
    for (const auto &x : all) {
        std::cout << std::left << std::setw(4) << x.schedule.id << std::setw(18) << x.schedule.hash << std::setw(9)
                  << x.schedule.origin << std::setw(9) << x.results << std::setw(10) << x.verified_results
                  << std::setw(13) << opt_text(x.best_simulated_cycles) << std::setw(26) << x.schedule.created
                  << x.schedule.note << "\n";
    }
    return 0;
}

int run_show(ScheduleStore &s, int64_t id) {
    auto d = s.show(id);
    if (!d) {
        user_error("db show: no schedule with id ", id, " in ", s.path(), " (tessel db list shows the ids)");
    }
    const ScheduleRecord &r = d->schedule;
    std::cout << "schedule #" << r.id << "  hash " << r.hash << "  origin " << r.origin << "  created " << r.created
              << "\n";
    if (r.parent_id) {
        std::cout << "parent: #" << *r.parent_id << "\n";
    }
    if (!r.note.empty()) {
        std::cout << "note: " << r.note << "\n";
    }
    std::cout << pretty(r.spec_json) << "\n";
    std::cout << "results (" << d->results.size() << "):\n";
    for (const auto &x : d->results) {
        std::cout << "  " << x.generator << " (" << params_to_text(x.params_json) << ") on " << x.arch_name << " ("
                  << x.arch_hash << ")\n  ";
        print_result_row(x);
    }
    return 0;
}

int run_best(ScheduleStore &s, const DbOptions &o) {
    TargetRecord t = s.find_target(o.arch);
    std::string params = params_json_for(o.generator, o.params);
    auto best = s.best(o.generator, params, t.arch_hash);
    if (!best) {
        user_error("db best: no verified result for ", o.generator, " (", params_to_text(params), ") on ", t.name,
                   " (", t.arch_hash, ") in ", s.path());
    }
    auto d = s.show(best->schedule_id);
    std::cout << "best for " << o.generator << " (" << params_to_text(params) << ") on " << t.name << " ("
              << t.arch_hash << "): schedule #" << best->schedule_id << " " << best->schedule_hash << "\n";
    print_result_row(*best);
    std::cout << pretty(d->schedule.spec_json) << "\n";
    return 0;
}

int run_history(ScheduleStore &s, const DbOptions &o) {
    TargetRecord t = s.find_target(o.arch);
    std::string params = params_json_for(o.generator, o.params);
    auto rows = s.history(o.generator, params, t.arch_hash);
    std::cout << o.generator << " (" << params_to_text(params) << ") on " << t.name << " (" << t.arch_hash
              << "): " << rows.size() << " result(s)\n";
    for (const auto &r : rows) {
        print_result_row(r);
    }
    return 0;
}

int run_compare(ScheduleStore &s, const DbOptions &o) {
    TargetRecord t = s.find_target(o.arch);
    for (int64_t id : {o.id, o.id_b}) {
        if (!s.show(id)) {
            user_error("db compare: no schedule with id ", id, " in ", s.path());
        }
    }
    auto rows = s.compare(o.id, o.id_b, t.arch_hash);
    std::cout << "schedule #" << o.id << " vs #" << o.id_b << " on " << t.name << " (" << t.arch_hash << ")\n";
    for (const auto &row : rows) {
        std::cout << row.generator << " (" << params_to_text(row.params_json) << "): " << opt_text(row.a ? row.a->simulated_cycles : std::nullopt)
                  << (row.a && !row.a->verified ? " (unverified)" : "") << " vs "
                  << opt_text(row.b ? row.b->simulated_cycles : std::nullopt)
                  << (row.b && !row.b->verified ? " (unverified)" : "") << " cycles\n";
    }
    return 0;
}

void print_stats(const char *verb, const ImportStats &st) {
    std::cout << verb << ": " << st.generators << " generator(s), " << st.instances << " instance(s), " << st.targets
              << " target(s), " << st.schedules << " schedule(s), " << st.results << " result(s) added";
    if (st.downgraded) {
        std::cout << "; " << st.downgraded << " result(s) marked unverified";
    }
    std::cout << "\n";
}

int run_verify(ScheduleStore &s, const DbOptions &o) {
    if (!verifier()) {
        user_error("db verify: not available in this build (the compile/simulate path is not wired to the database)");
    }
    std::optional<std::string> arch_hash;
    if (!o.arch.empty()) {
        arch_hash = s.find_target(o.arch).arch_hash;
    }
    std::map<int64_t, TargetRecord> targets;
    for (const auto &t : s.targets()) {
        targets[t.id] = t;
    }
    int checked = 0, failed = 0;
    for (const auto &r : s.results()) {
        if (!r.verified || (arch_hash && r.arch_hash != *arch_hash)) {
            continue;
        }
        auto d = s.show(r.schedule_id);
        DbVerifyRequest req{r.generator, r.params_json, targets.at(r.target_id).arch_json, d->schedule.spec_json};
        checked++;
        if (auto reason = verifier()(req)) {
            s.mark_unverified(r.id, "db verify: " + *reason);
            failed++;
            std::cout << "result #" << r.id << " (schedule " << r.schedule_hash << ") no longer verifies: " << *reason
                      << "\n";
        }
    }
    std::cout << "db verify: " << checked << " result(s) re-run, " << failed << " marked unverified\n";
    return failed ? 1 : 0;
}

int run_campaign_status(ScheduleStore &s, const DbOptions &o) {
    WorkQueue q(s);
    auto all = q.campaigns(o.campaign);
    if (all.empty()) {
        if (!o.campaign.empty()) {
            user_error("db campaign status: no tuning campaign '", o.campaign, "' in ", s.path());
        }
        std::cout << "no tuning campaigns in " << s.path() << "\n";
        return 0;
    }
    for (const auto &c : all) {
        const CampaignStatus &st = c.status;
        std::cout << "campaign #" << c.id << " " << c.name << ": " << st.queued + st.running + st.done + st.failed
                  << " task(s): " << st.queued << " queued, " << st.running << " running, " << st.done << " done, "
                  << st.failed << " failed\n";
        std::cout << "  coordinator: "
                  << (c.closed ? "finished (the campaign is closed)"
                      : c.coordinator_alive ? "running"
                                            : "not running (its lease expired: rerun its tessel tune to resume)")
                  << "\n";
        for (const ProblemSummary &p : q.problems(c.id)) {
            if (p.problem.empty()) {
                continue; // tasks queued without a problem (not by tessel tune)
            }
            const CampaignStatus &ps = p.status;
            std::cout << "  problem " << p.problem << ": " << ps.queued << " queued, " << ps.running << " running, "
                      << ps.done << " done, " << ps.failed << " failed; ";
            if (p.best) {
                std::cout << "best so far " << opt_text(p.best->simulated_cycles) << " cycles (schedule "
                          << p.best->schedule_hash << ")\n";
            } else {
                std::cout << "no verified result yet\n";
            }
        }
        if (c.best) {
            std::cout << "  best so far: schedule " << c.best->schedule_hash << ", " << opt_text(c.best->simulated_cycles)
                      << " cycles: " << c.best->generator << " (" << params_to_text(c.best->params_json) << ") on "
                      << c.best->arch_name << " (" << c.best->arch_hash << ")\n";
        }
    }
    return 0;
}

int run_db(const std::string &which, const DbOptions &o) {
    ScheduleStore s = ScheduleStore::open(o.db.empty() ? ScheduleStore::default_path() : o.db);
    if (which == "list") {
        return run_list(s);
    }
    if (which == "show") {
        return run_show(s, o.id);
    }
    if (which == "best") {
        return run_best(s, o);
    }
    if (which == "history") {
        return run_history(s, o);
    }
    if (which == "compare") {
        return run_compare(s, o);
    }
    if (which == "export") {
        write_output_file(o.file, export_json(s) + "\n", "db export file");
        std::cout << "exported " << s.schedules().size() << " schedule(s), " << s.results().size()
                  << " result(s) to " << o.file << "\n";
        return 0;
    }
    if (which == "import") {
        std::string text = read_input_file(o.file, "db import file", 1ull << 30);
        print_stats(("imported " + o.file).c_str(), import_json(s, text));
        return 0;
    }
    if (which == "campaign") {
        return run_campaign_status(s, o);
    }
    if (which == "merge") {
        print_stats(("merged " + o.file).c_str(), merge_database(s, o.file));
        return 0;
    }
    return run_verify(s, o);
}

} // namespace

void set_db_verifier(DbVerifier v) { verifier() = std::move(v); }

Command add_db_command(CLI::App &root, GlobalOptions &) {
    Command c;
    c.app = root.add_subcommand("db", "The schedule database: list, show, best, history, compare, export, import, "
                                      "merge, verify, campaign status (a file or a postgresql:// URL: --db, else "
                                      "$TESSEL_DB, else $XDG_DATA_HOME/tessel/tessel.db, else "
                                      "~/.local/share/tessel/tessel.db)");
    c.app->require_subcommand(1);
    auto o = std::make_shared<DbOptions>();
    c.app->add_option("--db", o->db, "the database: a file or a postgresql:// URL (default: $TESSEL_DB or the XDG "
                                     "data directory)");
    auto sub = [&](const char *name, const char *help) {
        CLI::App *a = c.app->add_subcommand(name, help);
        a->fallthrough(); // --db may follow the subcommand
        return a;
    };
    auto query_opts = [o](CLI::App *a) {
        a->add_option("-g,--generator", o->generator, "generator name")->required();
        a->add_option("-p,--params", o->params, "problem parameters K=V,K=V (defaults fill the rest)");
        a->add_option("--arch", o->arch, "target: an ArchSpec name or arch hash stored in the database")->required();
    };
    sub("list", "List the stored schedules with their result counts and best verified cycles");
    sub("show", "Show one schedule: its JSON and every result on every target")
        ->add_option("id", o->id, "schedule id (from db list)")
        ->required();
    query_opts(sub("best", "The fastest verified schedule for a generator, parameters and target"));
    query_opts(sub("history", "Every result for a generator, parameters and target, oldest first"));
    CLI::App *cmp = sub("compare", "Two schedules side by side on one target, per problem instance");
    cmp->add_option("a", o->id, "first schedule id")->required();
    cmp->add_option("b", o->id_b, "second schedule id")->required();
    cmp->add_option("--arch", o->arch, "target: an ArchSpec name or arch hash")->required();
    sub("export", "Write every record (with hashes) to an interchange JSON file")
        ->add_option("file", o->file, "output .json")
        ->required();
    sub("import", "Add the records of an interchange JSON file (deduplicated by hashes)")
        ->add_option("file", o->file, "input .json")
        ->required();
    sub("merge", "Add every record of another database, a file or a postgresql:// URL (read-only; deduplicated by "
                 "hashes, results kept per target)")
        ->add_option("file", o->file, "the other database")
        ->required();
    CLI::App *campaign = sub("campaign", "Tuning campaigns in the database's work queue");
    campaign->require_subcommand(1);
    CLI::App *status = campaign->add_subcommand("status", "Each campaign's tasks (queued, running, done, failed) "
                                                          "and its best verified result so far");
    status->fallthrough();
    status->add_option("name", o->campaign, "only this campaign");
    sub("verify", "Re-run stored verified results and mark those that no longer verify")
        ->add_option("--arch", o->arch, "only results on this target");
    CLI::App *db_app = c.app;
    c.run = [o, db_app] {
        std::string which;
        for (CLI::App *a : db_app->get_subcommands()) {
            which = a->get_name();
        }
        try {
            return run_db(which, *o);
        } catch (const DatabaseError &e) {
            throw UserError(e.what());
        }
    };
    return c;
}

} // namespace tessel::cli
