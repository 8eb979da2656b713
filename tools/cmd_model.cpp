// tessel model compile: an ONNX model through import, the graph passes and
// the GM memory plan; tessel model run: its kernels on the simulator, verified
// against the model's reference outputs (docs/models.md).
#include "tools/Commands.h"

#include "graph/ModelCompiler.h"
#include "graph/ModelRunner.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

namespace tessel::cli {

namespace {

struct ModelCompileArgs {
    std::string model;
    std::string arch = "ascend-like";
    std::string out_dir;
    std::string emit = "graph,plan";
    std::vector<std::string> dump_after;
    std::vector<std::string> input_shapes;
};

std::set<std::string> split_list(const std::string &s) {
    std::set<std::string> r;
    std::istringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (!item.empty()) {
            r.insert(item);
        }
    }
    return r;
}

int run_compile(const ModelCompileArgs &a) {
    graph::ModelCompileOptions o;
    o.arch = a.arch;
    for (const std::string &s : a.input_shapes) {
        graph::add_input_shape(o.import, s);
    }
    for (const std::string &d : a.dump_after) {
        for (const std::string &n : split_list(d)) {
            o.dump_after.insert(n);
        }
    }
    const std::set<std::string> emit = split_list(a.emit);
    for (const std::string &e : emit) {
        if (e != "graph" && e != "plan") {
            user_error("--emit ", e, ": not something model compile writes (graph, plan)");
        }
    }
    graph::CompiledModel m = graph::compile_model(a.model, o, [](const std::string &text) { std::cout << text; });
    const std::string graph_text = graph::print_graph(m.graph, "all passes");
    const std::string plan_text = graph::print_memory_plan(m.plan);
    if (a.out_dir.empty()) {
        std::cout << (emit.count("graph") ? graph_text : "") << (emit.count("plan") ? plan_text : "");
    } else {
        std::filesystem::create_directories(a.out_dir);
        for (const auto &[what, text] : {std::pair<std::string, std::string>{"graph", graph_text}, {"plan", plan_text}}) {
            if (emit.count(what)) {
                const std::string path = a.out_dir + "/" + what + ".txt";
                write_output_file(path, text, "model " + what);
                std::cout << "wrote " << path << "\n";
            }
        }
    }
    std::cout << a.model << ": " << m.graph.nodes.size() << " nodes, " << m.plan.steps.size() << " kernels ("
              << m.graph.groups.size() << " fused groups); arena peak " << m.plan.arena_peak << " B, lower bound "
              << m.plan.lower_bound << " B; constants " << m.plan.constant_bytes << " B\n";
    return 0;
}

struct ModelRunArgs {
    std::string model;
    std::string arch = "ascend-like";
    std::string data;
    std::vector<std::string> input_shapes;
    double rtol = 1e-3, atol = 1e-4;
    std::string report_json;
};

int run_model_command(const ModelRunArgs &a) {
    graph::ModelRunOptions o;
    o.compile.arch = a.arch;
    for (const std::string &s : a.input_shapes) {
        graph::add_input_shape(o.compile.import, s);
    }
    o.data = a.data;
    o.rtol = a.rtol;
    o.atol = a.atol;
    std::cout << "tessel model run " << a.model << " on " << a.arch
              << ": each kernel compiled with --schedule auto, simulated, checked against Halide's CPU result, "
                 "its output passed to the next on the host (not yet one NPU program)\n";
    size_t n = 0;
    graph::ModelRunResult r = graph::run_model(a.model, o, [&n](const graph::LayerRun &l) {
        std::cout << "  kernel " << n++ << " " << l.node << " (" << l.op << " -> " << l.generator << "): " << l.cycles
                  << " cycles, " << l.seconds << " s" << std::endl;
    });
    std::cout << graph::format_layer_table(r);
    for (const std::string &c : r.comparison) {
        std::cout << c << "\n";
    }
    std::cout << (r.verified ? "PASS" : "FAIL") << " " << a.model << ": " << r.layers.size() << " kernels, "
              << r.total_cycles << " cycles, largest error " << r.max_abs_error << "\n";
    if (!a.report_json.empty()) {
        write_output_file(a.report_json, graph::model_run_json(a.model, o, r), "model run report");
    }
    return r.verified ? 0 : 1;
}

} // namespace

Command add_model_command(CLI::App &root, GlobalOptions &) {
    auto ca = std::make_shared<ModelCompileArgs>();
    Command c;
    c.app = root.add_subcommand("model", "The model compiler: ONNX models on the NPU (docs/models.md)");
    c.app->require_subcommand(1);
    CLI::App *compile = c.app->add_subcommand(
        "compile", "Import an ONNX model, run the graph passes and plan its GM memory; print the graph and the plan");
    compile->add_option("MODEL", ca->model, "model.onnx")->required();
    compile->add_option("--arch", ca->arch, "arch preset or ArchSpec JSON file (its GM alignment)")
        ->capture_default_str();
    compile->add_option("-o,--out", ca->out_dir, "write graph.txt and plan.txt to this directory instead of stdout");
    compile->add_option("--emit", ca->emit, "what to print or write: graph, plan (comma-separated)")
        ->capture_default_str();
    compile->add_option("--dump-after", ca->dump_after,
                        "print the graph after these passes (comma-separated or repeated): " +
                            graph::dump_after_names())
        ->expected(1)
        ->take_all(); // one value per occurrence: the model path after it is not a pass
    compile->add_option("--input-shape", ca->input_shapes,
                        "NAME=D0xD1x...: the static shape of an input the model leaves symbolic (repeatable)")
        ->expected(1)
        ->take_all();
    auto ra = std::make_shared<ModelRunArgs>();
    CLI::App *runc = c.app->add_subcommand(
        "run", "Compile a model and run its kernels in order on the simulator, on the inputs of an ONNX test-data "
               "directory; compare with its outputs and print the per-layer table");
    runc->add_option("MODEL", ra->model, "model.onnx")->required();
    runc->add_option("--arch", ra->arch, "arch preset or ArchSpec JSON file")->capture_default_str();
    runc->add_option("--data", ra->data,
                     "a test_data_set_N directory (input_K.pb, output_K.pb) or the directory holding test_data_set_0/")
        ->required();
    runc->add_option("--input-shape", ra->input_shapes, "NAME=D0xD1x...: as for model compile")
        ->expected(1)
        ->take_all();
    runc->add_option("--rtol", ra->rtol, "relative tolerance for the model's outputs")->capture_default_str();
    runc->add_option("--atol", ra->atol, "absolute tolerance for the model's outputs")->capture_default_str();
    runc->add_option("--report-json", ra->report_json, "write the run (per kernel and totals) as JSON to this file");
    c.run = [ca, compile, ra, runc] {
        if (compile->parsed()) {
            return run_compile(*ca);
        }
        if (runc->parsed()) {
            return run_model_command(*ra);
        }
        return 2;
    };
    return c;
}

} // namespace tessel::cli
