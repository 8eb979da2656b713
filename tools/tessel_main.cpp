#include "tools/Commands.h"

#include "dsl/GeneratorInfo.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <filesystem>
#include <new>

#include <iostream>

using namespace tessel;

namespace {

int report(const char *kind, const std::string &what) {
    std::cout.flush();
    std::cerr << "tessel: " << kind << what << "\n";
    return 1;
}

} // namespace

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
    commands.push_back(cli::add_tune_worker_command(app, global));
    commands.push_back(cli::add_db_command(app, global));
    commands.push_back(cli::add_export_command(app, global));
    commands.push_back(cli::add_onnx_test_command(app, global));
    commands.push_back(cli::add_model_command(app, global));

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
    // Every failure ends here as exit 1 with one message: the user's input being
    // wrong (UserError names the file, field or directive), the machine refusing
    // (memory, disk), or a Tessel bug (said so). A signal or exit 3 is never how
    // tessel reports a bad input.
    try {
        for (const auto &lib : global.generator_libs) {
            load_generator_library(lib);
        }
        for (auto &c : commands) {
            if (c.app->parsed()) {
                int rc = c.run();
                check_stdout("the output");
                return rc;
            }
        }
    } catch (const UserError &e) {
        return report("error: ", e.what());
    } catch (const std::bad_alloc &) {
        return report("error: ", "out of memory (the input asks for more than this machine can allocate; "
                                 "check the shapes and the arch's memory sizes)");
    } catch (const std::filesystem::filesystem_error &e) {
        return report("error: ", e.what());
    } catch (const InternalError &e) {
        return report("", std::string(e.what()) + " (a Tessel bug: please report it with the command line)");
    } catch (const std::exception &e) {
        return report("error: ", e.what());
    }
    return 2;
}
