// tessel run: compile for the NPU, simulate, run the unscheduled reference on
// the CPU (Halide JIT) on the same random inputs (or the given ones, --inputs),
// compare (and with --expect, compare the NPU's outputs with the expected ones),
// and print / write the run report (the stable JSON other tools read) with
// cycles, the physical limit and the efficiency.
#include "tools/Commands.h"

#include "tools/CompileArgs.h"
#include "tools/SimArgs.h"
#include "tools/TensorArgs.h"
#include "database/Canonical.h"
#include "database/ScheduleStore.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"
#include "npu_target/sim/Simulator.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>

namespace tessel::cli {

namespace {
struct RunOptions {
    std::string generator;
    std::string params;
    std::string schedule;
    std::string arch = "ascend-like";
    uint64_t seed = 1;
    std::string report_json;
    std::string trace;
    bool save = false;
    std::string db;
    std::string note;
    std::vector<std::string> skip_passes;
    uint64_t max_instructions = sim::kDefaultMaxInstructions;
    uint64_t max_cycles = sim::kDefaultMaxCycles;
    uint64_t max_trace_events = sim::kDefaultMaxTraceEvents;
    TensorArgs tensors; // --inputs, --expect, --rtol, --atol, --save-outputs (docs/tensors.md)
};

// Records a run in the schedule database (`tessel run --save`).
int64_t save_run(const CompileRequest &req, const RunReport &rep, const std::string &db, const std::string &note) {
    ArchSpec arch = load_arch(req.arch);
    ScheduleSpec spec = req.schedule;
    spec.assign_ids();
    db::RunRecord r;
    r.generator = rep.generator;
    r.params_json = db::params_to_json(rep.params);
    r.arch_name = arch.name;
    r.arch_json = arch.to_json(-1);
    r.schedule_json = schedule_to_json(spec);
    r.schedule_hash = schedule_hash(spec);
    r.origin = req.schedule.directives.empty() ? "default" : "manual";
    r.note = note;
    r.result.simulated_cycles = rep.cycles;
    r.result.t_phys_cycles = rep.t_phys_cycles;
    r.result.efficiency = rep.efficiency;
    r.result.verified = rep.verified;
    r.result.max_error = rep.max_abs_error;
    r.result.compile_ms = rep.compile_ms;
    if (rep.sim) {
        r.result.l2_hit_bytes = rep.sim->l2_hit_bytes;
    }
    r.result.tool_version = "tessel 0.1.0";
    for (const auto &d : rep.diagnostics) {
        if (d.severity == Diagnostic::Error) {
            r.result.error_text += (r.result.error_text.empty() ? "" : "\n") + d.message;
        }
    }
    try {
        db::ScheduleStore store = db::ScheduleStore::open(db.empty() ? db::ScheduleStore::default_path() : db);
        return store.record_run(r);
    } catch (const db::DatabaseError &e) {
        user_error(e.what());
    }
}
} // namespace

DbVerifier make_db_verifier() {
    return [](const DbVerifyRequest &v) -> std::optional<std::string> {
        // The facade takes an arch preset or file: the stored JSON goes to a temporary file.
        std::string path = (std::filesystem::temp_directory_path() /
                            ("tessel_verify_arch_" + std::to_string(::getpid()) + ".json"))
                               .string();
        {
            std::ofstream f(path);
            f << v.arch_json;
        }
        CompileRequest req;
        req.generator = v.generator;
        req.arch = path;
        try {
            nlohmann::json params = nlohmann::json::parse(v.params_json);
            for (auto it = params.begin(); it != params.end(); ++it) {
                req.params[it.key()] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
            }
            req.schedule = parse_schedule(v.schedule_json, "stored schedule");
        } catch (const std::exception &e) { // a record this tessel cannot read any more
            std::remove(path.c_str());
            return std::string(e.what());
        }
        RunReport rep = run(req, 1);
        std::remove(path.c_str());
        if (rep.verified) {
            return std::nullopt;
        }
        for (const auto &d : rep.diagnostics) {
            if (d.severity == Diagnostic::Error) {
                return d.message;
            }
        }
        return "the NPU result no longer matches the CPU reference: " + rep.comparison;
    };
}

Command add_run_command(CLI::App &root, GlobalOptions &) {
    auto o = std::make_shared<RunOptions>();
    Command c;
    c.app = root.add_subcommand("run", "Compile for the NPU, simulate, verify against Halide's CPU result, report");
    c.app->add_option("-g,--generator", o->generator, "generator name (see `tessel list`)")->required();
    c.app->add_option("-p,--params", o->params, "generator parameters K=V[,K=V...]");
    c.app->add_option("--schedule", o->schedule, "schedule JSON file (docs/schedule-format.md), or `auto` (docs/autoschedule.md)");
    c.app->add_option("--arch", o->arch, "arch preset or ArchSpec JSON file")->capture_default_str();
    c.app->add_option("--seed", o->seed, "random seed for the inputs")->capture_default_str();
    c.app->add_option("--report-json", o->report_json, "write the run report (JSON) to this file");
    c.app->add_option("--trace", o->trace, "stream the simulator trace (Chrome/Perfetto JSON) to this file as it runs");
    add_budget_options(c.app, o->max_instructions, o->max_cycles, o->max_trace_events);
    add_tensor_options(c.app, o->tensors, true);
    c.app->add_flag("--save", o->save, "record the schedule and its result in the schedule database");
    c.app->add_option("--db", o->db, "the database file for --save (default: $TESSEL_DB or the XDG data directory)");
    c.app->add_option("--note", o->note, "a note stored with the schedule (--save)");
    c.app->add_option("--skip-pass", o->skip_passes, "leave out this optimisation pass (e.g. ring_panels) to measure what it gains");
    c.run = [o] {
        CompileRequest req = make_request(o->generator, o->params, o->schedule, o->arch);
        req.skip_passes = o->skip_passes;
        req.max_instructions = o->max_instructions;
        req.max_cycles = o->max_cycles;
        req.max_trace_events = o->max_trace_events;
        req.trace_file = o->trace;
        req.given_inputs = load_tensor_args(o->tensors.inputs, graph::TensorRole::Input);
        req.expected_outputs = load_tensor_args(o->tensors.expect, graph::TensorRole::Output);
        req.expect_rtol = o->tensors.rtol;
        req.expect_atol = o->tensors.atol;
        req.keep_outputs = !o->tensors.save_dir.empty();
        if (o->schedule.empty()) {
            std::cerr << "tessel: note: no --schedule: " << o->generator
                      << " runs with Halide's default placement, scalar code on the NPU's scalar unit (slow); "
                         "--schedule auto derives an NPU schedule from the pipeline and the arch\n";
        }
        RunReport rep = run(req, o->seed);
        print_diagnostics(rep.diagnostics);
        if (!o->report_json.empty()) {
            write_output_file(o->report_json, run_report_json(rep), "run report");
        }
        bool error = false;
        for (const auto &d : rep.diagnostics) {
            error = error || d.severity == Diagnostic::Error;
        }
        if (o->save) {
            int64_t id = save_run(req, rep, o->db, o->note);
            std::cerr << "tessel run: recorded result " << id << " in the schedule database\n";
        }
        if (error) {
            return 1;
        }
        std::cout << "tessel run: " << rep.generator << " (" << format_params(rep.params) << ") on " << rep.arch
                  << ", schedule " << rep.schedule_hash << "\n"
                  << "  compile: " << rep.compile_ms << " ms\n"
                  << "  check against Halide's CPU result ("
                  << (rep.inputs_given ? std::string("given inputs") : "seed " + std::to_string(rep.seed))
                  << "): " << (rep.verified ? "PASS" : "FAIL") << " (" << rep.comparison << ")\n";
        if (rep.expected_checked) {
            std::cout << "  check against the expected outputs: " << (rep.expected_verified ? "PASS" : "FAIL") << " ("
                      << rep.expected_comparison << ")\n";
        }
        if (rep.cycles) {
            std::cout << "  cycles: " << *rep.cycles << "   physical limit: " << *rep.t_phys_cycles
                      << " (bound by " << *rep.binding_resource << ")   efficiency: " << *rep.efficiency << "\n"
                      << rep.sim_summary;
            if (rep.roofline) {
                std::cout << roofline_points_text(*rep.roofline);
            }
        }
        if (!o->trace.empty() && rep.sim) {
            std::cout << "trace: " << o->trace << " (" << rep.sim->trace_recorded << " events; open in ui.perfetto.dev)\n";
        }
        if (rep.expected_checked && !rep.expected_verified) { // exit 1 says why on stderr too
            std::cerr << "tessel run: the NPU's outputs do not match --expect: " << rep.expected_comparison << "\n";
        }
        save_outputs(rep.outputs, o->tensors);
        check_stdout("tessel run");
        return rep.verified && (!rep.expected_checked || rep.expected_verified) ? 0 : 1;
    };
    return c;
}

} // namespace tessel::cli
