#include "tools/Commands.h"

#include "dsl/GeneratorInfo.h"
#include "npu_target/common/Error.h"

#include <iostream>

using namespace tessel;

int main(int argc, char **argv) {
    CLI::App app{"tessel: a Halide-derived algorithm/schedule language for NPUs.\n"
                 "Compile generator programs with schedules-as-data, simulate them on a\n"
                 "cycle-approximate NPU, verify them against Halide's CPU result."};
    app.require_subcommand(1);
    cli::GlobalOptions global;
    app.add_option("--generators", global.generator_libs,
                   "shared library with users' generators (repeatable)");

    cli::set_db_verifier(cli::make_db_verifier());
    std::vector<cli::Command> commands;
    commands.push_back(cli::add_list_command(app, global));
    commands.push_back(cli::add_demo_command(app, global));
    commands.push_back(cli::add_arch_command(app, global));
    commands.push_back(cli::add_asm_command(app, global));
    commands.push_back(cli::add_disasm_command(app, global));
    commands.push_back(cli::add_isa_command(app, global));
    commands.push_back(cli::add_compile_command(app, global));
    commands.push_back(cli::add_run_command(app, global));
    commands.push_back(cli::add_bench_command(app, global));
    commands.push_back(cli::add_sim_command(app, global));
    commands.push_back(cli::add_tune_command(app, global));
    commands.push_back(cli::add_db_command(app, global));
    commands.push_back(cli::add_export_command(app, global));

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        app.exit(e);
        return 2;
    }
    try {
        for (const auto &lib : global.generator_libs) {
            load_generator_library(lib);
        }
        for (auto &c : commands) {
            if (c.app->parsed()) {
                return c.run();
            }
        }
    } catch (const UserError &e) {
        std::cerr << "tessel: error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "tessel: " << e.what() << "\n";
        return 3;
    }
    return 2;
}
