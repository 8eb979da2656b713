// tessel onnx-test: the ONNX backend test suite through the compile facade.
#include "graph/OnnxTestRunner.h"

#include "dsl/Compile.h"
#include "graph/OnnxKernel.h"
#include "graph/OnnxModel.h"
#include "graph/OnnxOps.h"
#include "graph/TensorFile.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace tessel::graph {

namespace {

std::string join(const std::vector<std::string> &v, const char *sep) {
    std::string r;
    for (size_t i = 0; i < v.size(); i++) {
        r += (i ? sep : "") + v[i];
    }
    return r;
}

std::string params_text(const std::map<std::string, std::string> &p) {
    std::string r;
    for (const auto &[k, v] : p) {
        r += (r.empty() ? "" : ",") + k + "=" + v;
    }
    return r;
}

// The test_data_set_N directories of a test, by N.
std::vector<fs::path> data_sets(const fs::path &dir) {
    std::vector<std::pair<int, fs::path>> found;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        const std::string prefix = "test_data_set_";
        if (e.is_directory(ec) && n.rfind(prefix, 0) == 0 && n.size() > prefix.size() &&
            n.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
            found.emplace_back(std::stoi(n.substr(prefix.size())), e.path());
        }
    }
    std::sort(found.begin(), found.end());
    std::vector<fs::path> r;
    for (auto &f : found) {
        r.push_back(f.second);
    }
    return r;
}

// A tensor of a data set: DIR/input_K.pb (or output_K.pb); missing is a UserError naming it.
FileTensor data_tensor(const fs::path &set, const char *role, size_t k) {
    const fs::path p = set / (std::string(role) + "_" + std::to_string(k) + ".pb");
    std::error_code ec;
    if (!fs::exists(p, ec)) {
        user_error(p.string(), ": missing (the model has ", role == std::string("input") ? "an input" : "an output",
                   " ", k, ", and each test_data_set_N holds ", role, "_K.pb for every one)");
    }
    return read_tensor_file(p.string());
}

bool run_kernel(const OnnxModel &model, const OnnxMapping &m, const std::vector<const FileTensor *> &inputs,
                std::map<std::string, std::string> &origin, const fs::path &set, const OnnxTestOptions &o,
                OnnxTestResult &r, std::optional<int64_t> &cycles);

// Runs one data set; fills r (status, detail) and returns false when the test is over (skip/fail).
bool run_data_set(const OnnxModel &model, const fs::path &set, const OnnxTestOptions &o, OnnxTestResult &r) {
    const OnnxNode &node = model.nodes[0];
    // What no data can make supported is a skip before the data is read (a string
    // tensor file is not readable at all).
    const std::vector<std::string> known = supported_onnx_ops();
    if (!node.domain.empty() || std::find(known.begin(), known.end(), node.op_type) == known.end()) {
        r.status = OnnxTestResult::Skip;
        r.detail = map_onnx_node(node, model.opset, {}).skip;
        return false;
    }
    for (const OnnxValue &v : model.inputs) {
        if (v.kind == "tensor" && !v.type) {
            r.status = OnnxTestResult::Skip;
            const std::string type = v.onnx_type == 8    ? "STRING"
                                     : v.onnx_type == 14 ? "COMPLEX64"
                                     : v.onnx_type == 15 ? "COMPLEX128"
                                                         : "TensorProto.DataType " + std::to_string(v.onnx_type);
            r.detail = "input '" + v.name + "' is a " + type + " tensor: Tessel's kernels take numbers";
            return false;
        }
    }
    // Graph inputs in order are input_0.pb, input_1.pb, ...; initializers come from the model.
    std::map<std::string, FileTensor> values = model.initializers;
    std::map<std::string, std::string> origin;
    for (size_t k = 0; k < model.inputs.size(); k++) {
        const OnnxValue &v = model.inputs[k];
        if (v.kind != "tensor") {
            r.status = OnnxTestResult::Skip;
            r.detail = "input '" + v.name + "' is a " + v.kind + ": only tensor inputs are supported";
            return false;
        }
        values[v.name] = data_tensor(set, "input", k);
        origin[v.name] = (set / ("input_" + std::to_string(k) + ".pb")).string();
    }
    for (const OnnxValue &v : model.outputs) {
        if (v.kind != "tensor") {
            r.status = OnnxTestResult::Skip;
            r.detail = "output '" + v.name + "' is a " + v.kind + ": only tensor outputs are supported";
            return false;
        }
    }
    std::vector<const FileTensor *> inputs;
    for (const std::string &name : node.inputs) {
        auto it = values.find(name);
        inputs.push_back(name.empty() || it == values.end() ? nullptr : &it->second);
    }
    OnnxMapping m = map_onnx_node(node, model.opset, inputs);
    if (!m.skip.empty()) {
        r.status = OnnxTestResult::Skip;
        r.detail = m.skip;
        return false;
    }
    r.generator = m.generator;
    r.params = params_text(m.params);
    r.view = m.note;
    r.schedule.clear();
    // Outputs the shapes determine (an empty tensor, Dropout's mask): compared exactly.
    for (const OnnxHostOutput &h : m.host_outputs) {
        size_t k = 0;
        while (k < model.outputs.size() && model.outputs[k].name != node.outputs[h.node_output]) {
            k++;
        }
        if (k == model.outputs.size()) {
            continue; // not a graph output: nothing to compare
        }
        const FileTensor want = data_tensor(set, "output", k);
        if (want.dims != h.value.dims || want.type != h.value.type || want.data != h.value.data) {
            r.status = OnnxTestResult::Fail;
            r.detail = "output '" + model.outputs[k].name + "' (a constant of its shape): expected " +
                       want.describe() + ", computed " + h.value.describe() +
                       (want.dims == h.value.dims && want.type == h.value.type ? " with other values" : "");
            return false;
        }
    }
    // The node's kernels: the mapping's (none when every output is a constant), then any
    // further ones for other outputs.
    std::vector<const OnnxMapping *> kernels;
    if (!m.generator.empty()) {
        kernels.push_back(&m);
    }
    for (const OnnxMapping &k : m.more) {
        kernels.push_back(&k);
    }
    std::optional<int64_t> cycles = 0;
    for (const OnnxMapping *k : kernels) {
        if (!run_kernel(model, *k, inputs, origin, set, o, r, cycles)) {
            return false;
        }
    }
    r.status = OnnxTestResult::Pass;
    std::ostringstream os;
    os << "largest error " << r.max_error;
    if (cycles) {
        os << ", " << *cycles << " cycles";
    }
    if (kernels.size() > 1) {
        os << " (" << kernels.size() << " kernels)";
    }
    if (!m.host_outputs.empty()) {
        os << "; " << m.host_outputs.size() << " output" << (m.host_outputs.size() > 1 ? "s" : "")
           << " a constant of " << (m.host_outputs.size() > 1 ? "their" : "its") << " shape, no kernel";
    }
    r.detail = os.str();
    return true;
}

// One kernel of a node on a data set: its inputs, its expected outputs; fills r and returns
// false when the test is over (fail). Adds the kernel's cycles to `cycles`.
bool run_kernel(const OnnxModel &model, const OnnxMapping &m, const std::vector<const FileTensor *> &inputs,
                std::map<std::string, std::string> &origin, const fs::path &set, const OnnxTestOptions &o,
                OnnxTestResult &r, std::optional<int64_t> &cycles) {
    const OnnxNode &node = model.nodes[0];
    OnnxKernelRequest kr = onnx_kernel_request(node, m, inputs, o.arch, [&](const std::string &name) {
        return origin.count(name) ? origin[name] : model.path + " (initializer '" + name + "')";
    });
    CompileRequest &req = kr.request;
    r.schedule += (r.schedule.empty() ? "" : "; ") + kr.schedule;
    for (const OnnxKernelOutput &ko : m.outputs) {
        size_t k = 0;
        while (k < model.outputs.size() && model.outputs[k].name != node.outputs[ko.node_output]) {
            k++;
        }
        if (k == model.outputs.size()) {
            user_error(model.path, ": the node's output '", node.outputs[ko.node_output], "' is not a graph output");
        }
        FileTensor want = data_tensor(set, "output", k);
        const std::string file = (set / ("output_" + std::to_string(k) + ".pb")).string();
        if (want.dims != ko.onnx_dims) {
            r.status = OnnxTestResult::Fail;
            r.detail = "output shape: the expected output is " + shape_text(want.dims) + ", " + node.op_type +
                       "'s shape function gives " + shape_text(ko.onnx_dims);
            return false;
        }
        if (dtype_param_of(want.type).empty()) {
            r.status = OnnxTestResult::Skip;
            r.detail = std::string("output element type ") + elem_name(want.type) + " is not one Tessel's kernels produce";
            return false;
        }
        GivenTensor g;
        g.origin = file;
        g.tensor = viewed_tensor(want, ko.dims, ko.name, file);
        req.expected_outputs.push_back(std::move(g));
    }
    req.expect_rtol = o.rtol;
    req.expect_atol = o.atol;
    RunReport rep = run(req, 1);
    for (const Diagnostic &d : rep.diagnostics) {
        if (d.severity == Diagnostic::Error) {
            r.status = OnnxTestResult::Fail;
            r.detail = "compile/run error: " + d.message;
            return false;
        }
    }
    r.max_error = std::max(r.max_error, rep.expected_max_abs_error);
    if (!rep.verified) {
        r.status = OnnxTestResult::Fail;
        r.detail = "the NPU's result differs from Halide's CPU result: " + rep.comparison;
        return false;
    }
    if (!rep.expected_checked || !rep.expected_verified) {
        r.status = OnnxTestResult::Fail;
        r.detail = rep.expected_comparison.empty() ? std::string("no expected output compared") : rep.expected_comparison;
        return false;
    }
    cycles = cycles && rep.cycles ? std::optional<int64_t>(*cycles + *rep.cycles) : std::nullopt;
    return true;
}

} // namespace

const char *status_name(OnnxTestResult::Status s) {
    switch (s) {
    case OnnxTestResult::Pass: return "PASS";
    case OnnxTestResult::Fail: return "FAIL";
    case OnnxTestResult::Skip: return "SKIP";
    case OnnxTestResult::Error: return "ERROR";
    }
    return "?";
}

std::vector<std::string> find_onnx_tests(const std::vector<std::string> &paths) {
    std::vector<std::string> out;
    for (const std::string &p : paths) {
        std::error_code ec;
        if (!fs::exists(p, ec)) {
            user_error(p, ": no such test directory");
        }
        if (!fs::is_directory(p, ec)) {
            user_error(p, ": not a directory (a test is a directory holding model.onnx and test_data_set_N/)");
        }
        if (fs::exists(fs::path(p) / "model.onnx", ec)) {
            out.push_back(p);
            continue;
        }
        std::vector<std::string> found;
        for (const auto &e : fs::directory_iterator(p, ec)) {
            if (e.is_directory(ec) && fs::exists(e.path() / "model.onnx", ec)) {
                found.push_back(e.path().string());
            }
        }
        if (found.empty()) {
            user_error(p, ": no ONNX test here (no model.onnx in it or in its subdirectories)");
        }
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

std::vector<std::string> read_onnx_scope(const std::string &path) {
    std::istringstream in(read_input_file(path, "scope file"));
    std::vector<std::string> r;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        n++;
        if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') {
            continue;
        }
        std::istringstream ls(line);
        std::string name, mark, rest;
        ls >> name >> mark;
        std::getline(ls, rest);
        if ((mark != "in" && mark != "out") || rest.find_first_not_of(" \t") == std::string::npos) {
            user_error(path, ":", n, ": expected 'NAME in OPERATOR' or 'NAME out REASON', got '", line, "'");
        }
        if (mark == "in") {
            r.push_back(name);
        }
    }
    return r;
}

OnnxTestResult run_onnx_test(const std::string &dir, const OnnxTestOptions &o) {
    const auto start = std::chrono::steady_clock::now();
    OnnxTestResult r;
    r.dir = dir;
    r.name = fs::path(dir).filename().string();
    if (r.name.empty()) {
        r.name = fs::path(dir).parent_path().filename().string();
    }
    try {
        const std::string model_path = (fs::path(dir) / "model.onnx").string();
        OnnxModel model = read_onnx_model(model_path);
        if (model.nodes.size() != 1) {
            std::vector<std::string> ops;
            for (const auto &n : model.nodes) {
                ops.push_back(n.op_type);
            }
            if (ops.size() > 4) {
                ops.resize(4);
                ops.push_back("...");
            }
            user_error(model_path, ": the model has ", model.nodes.size(), " nodes (", join(ops, ", "),
                       "); tessel onnx-test runs single-operator models");
        }
        r.op_type = model.nodes[0].op_type;
        const std::vector<fs::path> sets = data_sets(dir);
        if (sets.empty()) {
            user_error((fs::path(dir) / "test_data_set_0").string(),
                       ": missing (a test's inputs and expected outputs are in test_data_set_N/)");
        }
        for (const fs::path &set : sets) {
            if (!run_data_set(model, set, o, r)) {
                break;
            }
        }
    } catch (const UserError &e) {
        r.status = OnnxTestResult::Error;
        r.detail = e.what();
    } catch (const InternalError &e) {
        // A Tessel bug on a supported operator: this test fails, the run goes on.
        r.status = OnnxTestResult::Fail;
        r.detail = std::string(e.what()) + " (a Tessel bug)";
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

std::vector<OnnxTestResult> run_onnx_tests(const std::vector<std::string> &dirs, const OnnxTestOptions &o,
                                           const std::function<void(const OnnxTestResult &)> &each) {
    std::vector<std::string> selected;
    std::regex only;
    if (!o.only.empty()) {
        try {
            only = std::regex(o.only);
        } catch (const std::regex_error &e) {
            user_error("--only '", o.only, "': not a regular expression (", e.what(), ")");
        }
    }
    std::set<std::string> scope;
    if (!o.scope_file.empty()) {
        for (const std::string &n : read_onnx_scope(o.scope_file)) {
            scope.insert(n);
        }
    }
    std::set<std::string> ops_seen;
    for (const std::string &d : dirs) {
        const std::string name = fs::path(d).filename().string();
        if (!o.only.empty() && !std::regex_search(name, only)) {
            continue;
        }
        if (!o.scope_file.empty() && !scope.count(name)) {
            continue;
        }
        if (o.quick) {
            // The first test of each operator (a model that cannot be read is kept: it is reported).
            std::string op;
            try {
                OnnxModel m = read_onnx_model((fs::path(d) / "model.onnx").string());
                op = m.nodes.size() == 1 ? m.nodes[0].op_type : "";
            } catch (const UserError &) {
            }
            if (!op.empty() && !ops_seen.insert(op).second) {
                continue;
            }
        }
        selected.push_back(d);
    }
    std::vector<OnnxTestResult> results;
    for (const std::string &d : selected) {
        results.push_back(run_onnx_test(d, o));
        if (each) {
            each(results.back());
        }
    }
    return results;
}

std::string format_result(const OnnxTestResult &r) {
    std::ostringstream os;
    os << status_name(r.status) << " " << r.name;
    if (!r.op_type.empty()) {
        os << " (" << r.op_type;
        if (!r.generator.empty()) {
            os << " -> " << r.generator << " " << r.params;
        }
        os << ")";
    }
    os << ": " << r.detail;
    return os.str();
}

std::string format_totals(const std::vector<OnnxTestResult> &rs) {
    int n[4] = {0, 0, 0, 0};
    for (const auto &r : rs) {
        n[r.status]++;
    }
    std::ostringstream os;
    os << n[OnnxTestResult::Pass] << " passed, " << n[OnnxTestResult::Fail] << " failed, "
       << n[OnnxTestResult::Skip] << " skipped";
    if (n[OnnxTestResult::Error]) {
        os << ", " << n[OnnxTestResult::Error] << " errors";
    }
    return os.str();
}

std::string onnx_report_json(const std::vector<OnnxTestResult> &rs, const OnnxTestOptions &o) {
    nlohmann::ordered_json j;
    j["arch"] = o.arch;
    j["rtol"] = o.rtol;
    j["atol"] = o.atol;
    j["quick"] = o.quick;
    j["only"] = o.only;
    j["scope"] = o.scope_file;
    int n[4] = {0, 0, 0, 0};
    nlohmann::ordered_json tests = nlohmann::ordered_json::array();
    for (const auto &r : rs) {
        n[r.status]++;
        nlohmann::ordered_json t;
        t["name"] = r.name;
        t["operator"] = r.op_type;
        t["status"] = status_name(r.status);
        t["detail"] = r.detail;
        t["max_error"] = r.max_error;
        t["generator"] = r.generator;
        t["params"] = r.params;
        t["schedule"] = r.schedule;
        t["view"] = r.view;
        t["seconds"] = r.seconds;
        tests.push_back(t);
    }
    j["passed"] = n[OnnxTestResult::Pass];
    j["failed"] = n[OnnxTestResult::Fail];
    j["skipped"] = n[OnnxTestResult::Skip];
    j["errors"] = n[OnnxTestResult::Error];
    j["tests"] = tests;
    return j.dump(2) + "\n";
}

} // namespace tessel::graph
