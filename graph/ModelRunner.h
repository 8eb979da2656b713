#ifndef TESSEL_GRAPH_MODELRUNNER_H
#define TESSEL_GRAPH_MODELRUNNER_H

// `tessel model run` (docs/models.md): a compiled model (graph/ModelCompiler.h)
// executed kernel by kernel on the simulator, on the inputs of an ONNX
// test-data directory, and compared with its expected outputs. Each node that
// is not a view becomes its generator (graph/OnnxOps.h) with `--schedule
// auto`, exactly as `tessel onnx-test` runs one node (graph/OnnxKernel.h): it
// is compiled, simulated, checked against Halide's CPU result, and its output
// is fed to the next kernel on the host. Not yet one NPU program: each kernel
// is a launch of its own, and a fused group's nodes still run as one kernel
// each (its plan is what one kernel will do). Views reshape on the host.
// Halide-free.

#include "graph/ModelCompiler.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::graph {

struct ModelRunOptions {
    ModelCompileOptions compile;
    /** A test_data_set_N directory (input_K.pb, output_K.pb), or a directory holding test_data_set_0/. */
    std::string data;
    double rtol = 1e-3;  // |got - want| <= atol + rtol * |want| for the model's outputs
    double atol = 1e-4;
};

struct LayerRun {
    std::string node;          // the node's name
    std::string op;            // its ONNX operator
    int group = -1;            // its fused group, or -1
    std::string generator;     // e.g. onnx_conv
    std::string params;        // K=V,...
    std::string shape;         // its output's shape, "1x64x56x56"
    int64_t cycles = 0;        // simulated (every kernel of the node)
    std::optional<int64_t> t_phys_cycles; // the physical limit
    std::string binding;       // the binding resource
    std::string schedule;      // where the schedule came from
    double seconds = 0;        // compile + simulate + CPU check
};

struct ModelRunResult {
    CompiledModel model;
    std::vector<LayerRun> layers;
    bool verified = false;             // every output within the tolerance
    std::vector<std::string> comparison; // per output: the rule, the result, the largest error
    double max_abs_error = 0;
    int64_t total_cycles = 0;
    int64_t total_t_phys = 0;          // the sum of the kernels' physical limits (where known)
};

/** Runs `path` on `o.data`. A kernel the NPU computes differently from Halide's
 * CPU result, or one that fails to compile, is a UserError naming the node;
 * `each` is called after every kernel. */
ModelRunResult run_model(const std::string &path, const ModelRunOptions &o,
                         const std::function<void(const LayerRun &)> &each = {},
                         const std::function<void(const std::string &)> &dump = {});

/** One kernel of a compiled model, without running it: what `tessel model run` would compile
 * for that node (its generator and parameters; a node of several kernels lists each). */
struct ModelKernel {
    std::string node, op;
    int group = -1;
    std::string generator;
    std::map<std::string, std::string> params;
    std::string params_text;   // K=V,...
    std::string shape;         // the node's output shape
};

/** The kernels of the model at `path` after the model compiler's passes, in graph order
 * (views and host-computed nodes have none). A node that no generator computes is listed
 * with generator "" and the reason in params_text. The data inputs are taken as zeros of
 * their shapes: a mapping depends on shapes and constants, not on the data. */
std::vector<ModelKernel> list_model_kernels(const std::string &path, const ModelCompileOptions &o);

/** The per-layer table: node, op, group, shape, cycles, physical limit, efficiency, binding. */
std::string format_layer_table(const ModelRunResult &r);

/** The run as JSON (`--report-json`): the model, arch, tolerance, verified, the
 * comparisons, the totals, and one object per kernel (the table's columns plus
 * generator, params, schedule, seconds). */
std::string model_run_json(const std::string &path, const ModelRunOptions &o, const ModelRunResult &r);

} // namespace tessel::graph

#endif
