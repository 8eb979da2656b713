#ifndef TESSEL_TOOLS_COMMANDS_H
#define TESSEL_TOOLS_COMMANDS_H

// The `tessel` command-line program: each subcommand lives in its own file and
// registers itself here. A command's run function returns the exit code
// (0 success, 1 user error); UserErrors thrown from it are printed by main and
// give 1; bad usage (CLI11 parse errors) gives 2.

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::cli {

struct Command {
    CLI::App *app = nullptr;
    std::function<int()> run;
};

/** Options every command shares. */
struct GlobalOptions {
    std::vector<std::string> generator_libs; // --generators lib.so (repeatable)
};

Command add_list_command(CLI::App &root, GlobalOptions &g);
Command add_demo_command(CLI::App &root, GlobalOptions &g);
Command add_arch_command(CLI::App &root, GlobalOptions &g);
Command add_asm_command(CLI::App &root, GlobalOptions &g);
Command add_disasm_command(CLI::App &root, GlobalOptions &g);
Command add_isa_command(CLI::App &root, GlobalOptions &g);
Command add_compile_command(CLI::App &root, GlobalOptions &g);
Command add_run_command(CLI::App &root, GlobalOptions &g);
Command add_bench_command(CLI::App &root, GlobalOptions &g);
Command add_sim_command(CLI::App &root, GlobalOptions &g);
Command add_tune_command(CLI::App &root, GlobalOptions &g);
Command add_tune_worker_command(CLI::App &root, GlobalOptions &g);

Command add_db_command(CLI::App &root, GlobalOptions &g);
Command add_export_command(CLI::App &root, GlobalOptions &g);
Command add_onnx_test_command(CLI::App &root, GlobalOptions &g);
Command add_model_command(CLI::App &root, GlobalOptions &g);

/** `tessel db verify` re-runs each stored verified result through this hook;
 * the lead wires it to the compile/simulate/verify path with set_db_verifier()
 * (e.g. in main, before parsing). Until then `db verify` fails with "db verify:
 * not available in this build". The hook returns nullopt when the schedule
 * still verifies on the arch, else the reason it no longer does (stored in the
 * result's error text). */
struct DbVerifyRequest {
    std::string generator;
    std::string params_json;   // canonical: {"K":"256","M":"256"} (resolved)
    std::string arch_json;     // canonical ArchSpec JSON (parse_arch reads it)
    std::string schedule_json; // canonical ScheduleSpec JSON
};
using DbVerifier = std::function<std::optional<std::string>(const DbVerifyRequest &)>;
void set_db_verifier(DbVerifier v);
/** The verifier main installs: compile, simulate and compare with tessel::run (cmd_run.cpp). */
DbVerifier make_db_verifier();

} // namespace tessel::cli

#endif
