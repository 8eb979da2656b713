// tessel run: compile for the NPU, simulate, run the unscheduled reference on
// the CPU (Halide JIT) on the same random inputs, compare, and print / write the
// run report (the stable JSON other tools read) with cycles, the physical limit
// and the efficiency.
#include "tools/Commands.h"

#include "tools/CompileArgs.h"
#include "npu_target/common/Error.h"

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
};
} // namespace

Command add_run_command(CLI::App &root, GlobalOptions &) {
    auto o = std::make_shared<RunOptions>();
    Command c;
    c.app = root.add_subcommand("run", "Compile for the NPU, simulate, verify against Halide's CPU result, report");
    c.app->add_option("-g,--generator", o->generator, "generator name (see `tessel list`)")->required();
    c.app->add_option("-p,--params", o->params, "generator parameters K=V[,K=V...]");
    c.app->add_option("--schedule", o->schedule, "schedule JSON file (docs/schedule-format.md)");
    c.app->add_option("--arch", o->arch, "arch preset or ArchSpec JSON file")->capture_default_str();
    c.app->add_option("--seed", o->seed, "random seed for the inputs")->capture_default_str();
    c.app->add_option("--report-json", o->report_json, "write the run report (JSON) to this file");
    c.app->add_option("--trace", o->trace, "write the simulator trace (Chrome/Perfetto JSON) to this file");
    c.run = [o] {
        CompileRequest req = make_request(o->generator, o->params, o->schedule, o->arch);
        RunReport rep = run(req, o->seed, !o->trace.empty());
        if (!o->trace.empty() && !rep.trace_json.empty()) {
            std::ofstream t(o->trace);
            t << rep.trace_json;
            if (!t) {
                user_error("cannot write ", o->trace);
            }
        }
        print_diagnostics(rep.diagnostics);
        if (!o->report_json.empty()) {
            std::ofstream f(o->report_json);
            f << run_report_json(rep);
            if (!f) {
                user_error("cannot write ", o->report_json);
            }
        }
        bool error = false;
        for (const auto &d : rep.diagnostics) {
            error = error || d.severity == Diagnostic::Error;
        }
        if (error) {
            return 1;
        }
        std::cout << "tessel run: " << rep.generator << " (" << format_params(rep.params) << ") on " << rep.arch
                  << ", schedule " << rep.schedule_hash << "\n"
                  << "  compile: " << rep.compile_ms << " ms\n"
                  << "  check against Halide's CPU result (seed " << rep.seed
                  << "): " << (rep.verified ? "PASS" : "FAIL") << " (" << rep.comparison << ")\n";
        if (rep.cycles) {
            std::cout << "  cycles: " << *rep.cycles << "   physical limit: " << *rep.t_phys_cycles
                      << " (bound by " << *rep.binding_resource << ")   efficiency: " << *rep.efficiency << "\n"
                      << rep.sim_summary;
        }
        return rep.verified ? 0 : 1;
    };
    return c;
}

} // namespace tessel::cli
