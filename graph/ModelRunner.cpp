// tessel model run: a model's kernels in order on the simulator (graph/ModelRunner.h).
#include "graph/ModelRunner.h"

#include "graph/OnnxKernel.h"
#include "graph/OnnxOps.h"
#include "graph/passes/HostEval.h"
#include "npu_target/common/Error.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace tessel::graph {

namespace {

std::string params_of(const std::map<std::string, std::string> &p) {
    std::string r;
    for (const auto &[k, v] : p) {
        r += (r.empty() ? "" : ",") + k + "=" + v;
    }
    return r;
}

// The test_data_set directory `data` names: itself, or its test_data_set_0/.
fs::path data_set(const std::string &data) {
    std::error_code ec;
    if (!fs::is_directory(data, ec)) {
        user_error(data, ": no such directory (--data takes a test_data_set_N directory of input_K.pb and "
                         "output_K.pb, or the directory holding test_data_set_0/)");
    }
    if (fs::exists(fs::path(data) / "input_0.pb", ec)) {
        return data;
    }
    if (fs::is_directory(fs::path(data) / "test_data_set_0", ec)) {
        return fs::path(data) / "test_data_set_0";
    }
    user_error(data, ": no input_0.pb and no test_data_set_0/ in it");
}

FileTensor data_file(const fs::path &set, const char *role, size_t k, const GraphTensor &t) {
    const fs::path p = set / (std::string(role) + "_" + std::to_string(k) + ".pb");
    std::error_code ec;
    if (!fs::exists(p, ec)) {
        user_error(p.string(), ": missing (the model's ", role, " ", k, " is '", t.name, "' ", tensor_type_text(t), ")");
    }
    FileTensor f = read_tensor_file(p.string());
    if (f.dims != t.dims || f.type != t.type) {
        user_error(p.string(), ": ", f.describe(), ", but the model's ", role, " ", k, " '", t.name, "' is ",
                   tensor_type_text(t));
    }
    return f;
}

OnnxNode onnx_node_of(const GraphNode &n) {
    OnnxNode o;
    o.name = n.name;
    o.op_type = n.op_type;
    o.domain = n.domain;
    o.inputs = n.inputs;
    o.outputs = n.outputs;
    o.attributes = n.attributes;
    return o;
}

// Compares `got` with `want` (same shape and type); returns the line and sets ok and the largest error.
std::string compare(const std::string &name, const FileTensor &got, const FileTensor &want, double rtol, double atol,
                    bool &ok, double &max_err) {
    std::ostringstream os;
    os << name << ": ";
    auto g = float_values(got), w = float_values(want);
    if (!g || !w || g->size() != w->size()) {
        ok = false;
        os << "cannot compare " << got.describe() << " with " << want.describe();
        return os.str();
    }
    size_t bad = 0, worst = 0;
    double err = 0;
    for (size_t i = 0; i < g->size(); i++) {
        const double a = (*g)[i], b = (*w)[i];
        if (std::isnan(a) && std::isnan(b)) {
            continue;
        }
        const double e = std::fabs(a - b);
        if (!(e <= atol + rtol * std::fabs(b))) {
            bad++;
        }
        if (!(e <= err)) {
            err = e;
            worst = i;
        }
    }
    max_err = std::max(max_err, err);
    ok = ok && bad == 0;
    os << (bad ? "MISMATCH " : "match ") << "(|got - want| <= " << atol << " + " << rtol << " * |want|: " << bad
       << " of " << g->size() << " outside; largest error " << err << " at element " << worst << ", got "
       << (*g)[worst] << ", want " << (*w)[worst] << ")";
    return os.str();
}

} // namespace

std::vector<ModelKernel> list_model_kernels(const std::string &path, const ModelCompileOptions &o) {
    const CompiledModel model = compile_model(path, o);
    const Graph &g = model.graph;
    std::vector<ModelKernel> out;
    std::map<std::string, FileTensor> zeros; // data tensors as zeros of their shapes
    auto value_of = [&](const std::string &name) -> const FileTensor * {
        const GraphTensor &t = g.tensor(name);
        if (t.value) {
            return &*t.value;
        }
        auto it = zeros.find(name);
        if (it == zeros.end()) {
            FileTensor z;
            z.name = name;
            z.type = t.type;
            z.dims = t.dims;
            z.data.assign(size_t(z.elements()) * size_t(elem_bytes(t.type)), 0);
            it = zeros.emplace(name, std::move(z)).first;
        }
        return &it->second;
    };
    for (const GraphNode &n : g.nodes) {
        if (n.view) {
            continue;
        }
        std::vector<const FileTensor *> inputs;
        for (const std::string &in : n.inputs) {
            inputs.push_back(in.empty() ? nullptr : value_of(in));
        }
        const OnnxMapping m = map_onnx_node(onnx_node_of(n), g.opset, inputs);
        ModelKernel k;
        k.node = n.name;
        k.op = n.op_type;
        k.group = n.group;
        k.shape = shape_text(g.tensor(n.outputs[0]).dims);
        if (!m.skip.empty()) {
            k.params_text = m.skip;
            out.push_back(k);
            continue;
        }
        std::vector<const OnnxMapping *> kernels;
        if (!m.generator.empty()) {
            kernels.push_back(&m);
        }
        for (const OnnxMapping &more : m.more) {
            kernels.push_back(&more);
        }
        for (const OnnxMapping *km : kernels) {
            ModelKernel e = k;
            e.generator = km->generator;
            e.params = km->params;
            e.params_text = params_of(km->params);
            out.push_back(e);
        }
    }
    return out;
}

ModelRunResult run_model(const std::string &path, const ModelRunOptions &o, const std::function<void(const LayerRun &)> &each,
                         const std::function<void(const std::string &)> &dump) {
    ModelRunResult r;
    r.model = compile_model(path, o.compile, dump);
    const Graph &g = r.model.graph;
    const fs::path set = data_set(o.data);

    std::map<std::string, FileTensor> values;
    std::map<std::string, std::string> origin;
    for (const auto &[name, t] : g.tensors) {
        if (t.value) {
            values[name] = *t.value;
        }
    }
    for (size_t k = 0; k < g.inputs.size(); k++) {
        values[g.inputs[k]] = data_file(set, "input", k, g.tensor(g.inputs[k]));
        origin[g.inputs[k]] = (set / ("input_" + std::to_string(k) + ".pb")).string();
    }
    auto origin_of = [&](const std::string &name) {
        auto it = origin.find(name);
        return it != origin.end() ? it->second : path + " (tensor '" + name + "')";
    };

    for (const GraphNode &n : g.nodes) {
        if (n.view) { // another shape of the same bytes
            FileTensor v = values.at(n.inputs[0]);
            v.dims = g.tensor(n.outputs[0]).dims;
            values[n.outputs[0]] = std::move(v);
            continue;
        }
        const auto start = std::chrono::steady_clock::now();
        const OnnxNode node = onnx_node_of(n);
        std::vector<const FileTensor *> inputs;
        for (const std::string &in : n.inputs) {
            inputs.push_back(in.empty() ? nullptr : &values.at(in));
        }
        const OnnxMapping m = map_onnx_node(node, g.opset, inputs);
        if (!m.skip.empty()) {
            user_error(path, ": node '", n.name, "' (", n.op_type, "): ", m.skip);
        }
        LayerRun layer;
        layer.node = n.name;
        layer.op = n.op_type;
        layer.group = n.group;
        layer.generator = m.generator;
        layer.params = params_of(m.params);
        layer.shape = shape_text(g.tensor(n.outputs[0]).dims);
        for (const OnnxHostOutput &h : m.host_outputs) { // a constant of its shape
            FileTensor v = h.value;
            v.name = n.outputs[h.node_output];
            values[n.outputs[h.node_output]] = std::move(v);
        }
        std::vector<const OnnxMapping *> kernels;
        if (!m.generator.empty()) {
            kernels.push_back(&m);
        }
        for (const OnnxMapping &more : m.more) {
            kernels.push_back(&more);
        }
        bool phys_known = true;
        int64_t phys = 0;
        for (const OnnxMapping *k : kernels) {
            OnnxKernelRequest kr = onnx_kernel_request(node, *k, inputs, o.compile.arch, origin_of);
            kr.request.keep_outputs = true;
            layer.schedule += (layer.schedule.empty() ? "" : "; ") + kr.schedule;
            RunReport rep = run(kr.request, 1);
            for (const Diagnostic &d : rep.diagnostics) {
                if (d.severity == Diagnostic::Error) {
                    user_error(path, ": node '", n.name, "' (", n.op_type, " -> ", k->generator, " ",
                               params_of(k->params), "): ", d.message);
                }
            }
            if (!rep.verified) {
                user_error(path, ": node '", n.name, "' (", n.op_type, " -> ", k->generator, " ", params_of(k->params),
                           "): the NPU's result differs from Halide's CPU result: ", rep.comparison);
            }
            layer.cycles += rep.cycles.value_or(0);
            phys_known = phys_known && rep.t_phys_cycles;
            phys += rep.t_phys_cycles.value_or(0);
            if (rep.binding_resource && layer.binding.empty()) {
                layer.binding = *rep.binding_resource;
            }
            for (const OnnxKernelOutput &ko : k->outputs) {
                const Tensor *out = nullptr;
                for (const Tensor &t : rep.outputs) {
                    out = t.name == ko.name ? &t : out;
                }
                if (!out) {
                    internal_error("model run: kernel ", k->generator, " of node '", n.name, "' has no output '",
                                   ko.name, "'");
                }
                FileTensor f = from_tensor(*out);
                f.dims = ko.onnx_dims;
                values[n.outputs[ko.node_output]] = std::move(f);
            }
        }
        if (phys_known) {
            layer.t_phys_cycles = phys;
            r.total_t_phys += phys;
        }
        r.total_cycles += layer.cycles;
        layer.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        r.layers.push_back(layer);
        if (each) {
            each(r.layers.back());
        }
    }

    r.verified = true;
    for (size_t k = 0; k < g.outputs.size(); k++) {
        const GraphTensor &t = g.tensor(g.outputs[k]);
        const FileTensor want = data_file(set, "output", k, t);
        r.comparison.push_back(compare((set / ("output_" + std::to_string(k) + ".pb")).string() + " ('" + t.name +
                                           "')",
                                       values.at(t.name), want, o.rtol, o.atol, r.verified, r.max_abs_error));
    }
    return r;
}

std::string format_layer_table(const ModelRunResult &r) {
    std::ostringstream os;
    os << std::left << std::setw(4) << "#" << std::setw(44) << "node" << std::setw(20) << "op" << std::setw(6)
       << "group" << std::setw(18) << "shape" << std::right << std::setw(11) << "cycles" << std::setw(11)
       << "limit" << std::setw(7) << "eff" << "  binding\n";
    for (size_t i = 0; i < r.layers.size(); i++) {
        const LayerRun &l = r.layers[i];
        std::string node = l.node.size() > 42 ? "..." + l.node.substr(l.node.size() - 39) : l.node;
        os << std::left << std::setw(4) << i << std::setw(44) << node << std::setw(20) << l.op << std::setw(6)
           << (l.group >= 0 ? std::to_string(l.group) : "-") << std::setw(18) << l.shape << std::right
           << std::setw(11) << l.cycles << std::setw(11)
           << (l.t_phys_cycles ? std::to_string(*l.t_phys_cycles) : "?") << std::setw(7);
        if (l.t_phys_cycles && l.cycles > 0) {
            os << std::fixed << std::setprecision(3) << double(*l.t_phys_cycles) / l.cycles;
        } else {
            os << "?";
        }
        os << "  " << l.binding << "\n";
    }
    os << "total: " << r.layers.size() << " kernels, " << r.total_cycles << " cycles, the kernels' physical limits sum to "
       << r.total_t_phys << " cycles";
    if (r.total_cycles > 0) {
        os << std::fixed << std::setprecision(3) << " (efficiency " << double(r.total_t_phys) / r.total_cycles << ")";
    }
    os << "\n";
    return os.str();
}

std::string model_run_json(const std::string &path, const ModelRunOptions &o, const ModelRunResult &r) {
    nlohmann::ordered_json j;
    j["model"] = path;
    j["arch"] = o.compile.arch;
    j["data"] = o.data;
    j["rtol"] = o.rtol;
    j["atol"] = o.atol;
    j["verified"] = r.verified;
    j["max_abs_error"] = r.max_abs_error;
    j["comparison"] = r.comparison;
    j["kernels"] = r.layers.size();
    j["total_cycles"] = r.total_cycles;
    j["total_t_phys_cycles"] = r.total_t_phys;
    j["arena_peak_bytes"] = r.model.plan.arena_peak;
    j["arena_lower_bound_bytes"] = r.model.plan.lower_bound;
    j["constant_bytes"] = r.model.plan.constant_bytes;
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const LayerRun &l : r.layers) {
        nlohmann::ordered_json x;
        x["node"] = l.node;
        x["op"] = l.op;
        x["group"] = l.group;
        x["generator"] = l.generator;
        x["params"] = l.params;
        x["shape"] = l.shape;
        x["cycles"] = l.cycles;
        x["t_phys_cycles"] = l.t_phys_cycles ? nlohmann::ordered_json(*l.t_phys_cycles) : nlohmann::ordered_json();
        x["efficiency"] = l.t_phys_cycles && l.cycles > 0 ? nlohmann::ordered_json(double(*l.t_phys_cycles) / l.cycles)
                                                         : nlohmann::ordered_json();
        x["binding"] = l.binding;
        x["schedule"] = l.schedule;
        x["seconds"] = l.seconds;
        layers.push_back(x);
    }
    j["layers"] = layers;
    return j.dump(2) + "\n";
}

} // namespace tessel::graph
