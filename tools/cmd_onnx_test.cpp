// tessel onnx-test: run ONNX backend tests (model.onnx + test_data_set_N/) on
// the NPU simulator and print ONNX's backend scoreboard (docs/onnx.md).
#include "tools/Commands.h"

#include "graph/OnnxTestRunner.h"
#include "npu_target/common/InputFile.h"

#include <iostream>
#include <memory>

namespace tessel::cli {

namespace {
struct OnnxTestArgs {
    graph::OnnxTestOptions options;
    std::string report;
    std::vector<std::string> paths;
};
} // namespace

Command add_onnx_test_command(CLI::App &root, GlobalOptions &) {
    auto a = std::make_shared<OnnxTestArgs>();
    Command c;
    c.app = root.add_subcommand(
        "onnx-test", "Run ONNX backend tests (single-operator model.onnx + test_data_set_N/) on the NPU and compare "
                     "with their expected outputs");
    c.app->add_option("--arch", a->options.arch, "arch preset or ArchSpec JSON file")->capture_default_str();
    c.app->add_option("--only", a->options.only, "run only the tests whose name matches this regular expression");
    c.app->add_option("--scope", a->options.scope_file,
                      "run only the tests a scope file marks 'in' (e.g. graph/onnx_node_scope.txt)");
    c.app->add_flag("--quick", a->options.quick, "run the first test (by name) of each operator only");
    c.app->add_option("--report", a->report, "write every result as JSON to this file");
    c.app->add_option("--rtol", a->options.rtol, "relative tolerance (ONNX's runner: 1e-3)")->capture_default_str();
    c.app->add_option("--atol", a->options.atol, "absolute tolerance (ONNX's runner: 1e-7)")->capture_default_str();
    c.app->add_option("PATH", a->paths,
                      "a test directory, or a directory of them (e.g. /usr/include/onnx/backend/test/data/node)")
        ->required();
    c.run = [a] {
        const std::vector<std::string> dirs = graph::find_onnx_tests(a->paths);
        std::cout << "tessel onnx-test on " << a->options.arch << ": |got - want| <= " << a->options.atol << " + "
                  << a->options.rtol << " * |want|\n";
        std::vector<std::string> errors;
        auto results = graph::run_onnx_tests(dirs, a->options, [&](const graph::OnnxTestResult &r) {
            std::cout << graph::format_result(r) << std::endl;
            if (r.status == graph::OnnxTestResult::Error) {
                errors.push_back(r.detail);
            }
        });
        std::cout << graph::format_totals(results) << " (" << results.size() << " tests)\n";
        if (!a->report.empty()) {
            write_output_file(a->report, graph::onnx_report_json(results, a->options), "onnx-test report");
        }
        check_stdout("tessel onnx-test");
        for (const std::string &e : errors) {
            std::cerr << "tessel: error: " << e << "\n";
        }
        bool ok = errors.empty();
        for (const auto &r : results) {
            ok = ok && r.status != graph::OnnxTestResult::Fail;
        }
        return ok ? 0 : 1;
    };
    return c;
}

} // namespace tessel::cli
