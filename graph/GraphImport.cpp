// model.onnx -> graph IR (graph/GraphImport.h), with ONNX's checker and shape inference.
#include "graph/GraphImport.h"

#include "graph/OnnxModelProto.h"
#include "graph/OnnxOps.h"
#include "graph/OnnxTensor.h"
#include "graph/passes/Passes.h"
#include "npu_target/common/Error.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace tessel::graph {

namespace {

std::string dims_text(const onnx::TensorShapeProto &s) {
    std::ostringstream os;
    for (int i = 0; i < s.dim_size(); i++) {
        const auto &d = s.dim(i);
        os << (i ? "x" : "") << (d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
    }
    return s.dim_size() ? os.str() : "[] (a scalar)";
}

std::string input_names(const onnx::GraphProto &g, const std::set<std::string> &initializers) {
    std::string r;
    for (const auto &v : g.input()) {
        if (!initializers.count(v.name())) {
            r += (r.empty() ? "" : ", ") + v.name();
        }
    }
    return r.empty() ? "none" : r;
}

// --input-shape: each named graph input gets its static shape.
void apply_input_shapes(onnx::ModelProto &m, const ImportOptions &o, const std::string &path,
                        const std::set<std::string> &initializers) {
    onnx::GraphProto &g = *m.mutable_graph();
    for (const auto &[name, dims] : o.input_shapes) {
        onnx::ValueInfoProto *v = nullptr;
        for (auto &in : *g.mutable_input()) {
            if (in.name() == name && !initializers.count(name)) {
                v = &in;
            }
        }
        if (!v) {
            user_error("--input-shape ", name, "=", shape_text(dims), ": ", path, " has no input '", name,
                       "' (its inputs: ", input_names(g, initializers), ")");
        }
        auto *tt = v->mutable_type()->mutable_tensor_type();
        onnx::TensorShapeProto *s = tt->mutable_shape();
        if (s->dim_size() != 0 && s->dim_size() != static_cast<int>(dims.size())) {
            user_error("--input-shape ", name, "=", shape_text(dims), ": input '", name, "' of ", path, " has rank ",
                       s->dim_size(), " (", dims_text(*s), "), not ", dims.size());
        }
        for (size_t i = 0; i < dims.size(); i++) {
            if (static_cast<int>(i) < s->dim_size() && s->dim(i).has_dim_value() && s->dim(i).dim_value() != dims[i]) {
                user_error("--input-shape ", name, "=", shape_text(dims), ": dimension ", i, " of input '", name,
                           "' is ", s->dim(i).dim_value(), " in ", path, " (", dims_text(*s), ")");
            }
        }
        s->clear_dim();
        for (int64_t d : dims) {
            s->add_dim()->set_dim_value(d);
        }
    }
}

// Every graph input must have a static shape now.
void check_static_inputs(const onnx::GraphProto &g, const std::string &path, const std::set<std::string> &initializers) {
    for (const auto &v : g.input()) {
        if (initializers.count(v.name())) {
            continue;
        }
        if (!v.type().has_tensor_type()) {
            user_error(path, ": input '", v.name(), "' is not a tensor (the model compiler takes tensor inputs)");
        }
        const auto &tt = v.type().tensor_type();
        if (!tt.has_shape()) {
            user_error(path, ": input '", v.name(), "' has no shape: give it with --input-shape ", v.name(),
                       "=D0xD1x...");
        }
        for (int i = 0; i < tt.shape().dim_size(); i++) {
            const auto &d = tt.shape().dim(i);
            if (!d.has_dim_value() || d.dim_value() < 0) {
                const std::string sym = d.has_dim_param() ? "'" + d.dim_param() + "'" : "unnamed";
                user_error(path, ": input '", v.name(), "' has a symbolic dimension ", sym, " (dimension ", i, " of ",
                           dims_text(tt.shape()), "): give its static shape with --input-shape ", v.name(),
                           "=D0xD1x...");
            }
        }
    }
}

// The ValueInfo of every named tensor the model (now shape-inferred) describes.
std::map<std::string, const onnx::ValueInfoProto *> value_infos(const onnx::GraphProto &g) {
    std::map<std::string, const onnx::ValueInfoProto *> r;
    for (const auto &v : g.value_info()) {
        r[v.name()] = &v;
    }
    for (const auto &v : g.input()) {
        r[v.name()] = &v;
    }
    for (const auto &v : g.output()) {
        r[v.name()] = &v;
    }
    return r;
}

// A tensor's type and static shape from its ValueInfo; `who` names where it comes from.
GraphTensor typed_tensor(const std::string &name, const onnx::ValueInfoProto *v, const std::string &path,
                         const std::string &who, bool strict) {
    GraphTensor t;
    t.name = name;
    const bool shaped = v && v->type().has_tensor_type() && v->type().tensor_type().has_shape();
    if (!strict && shaped) {
        for (const auto &d : v->type().tensor_type().shape().dim()) {
            t.shape_known = t.shape_known && d.has_dim_value();
        }
    }
    if (!strict && (!shaped || !t.shape_known)) {
        t.shape_known = false;
        if (v && v->type().has_tensor_type()) {
            t.type = elem_of_onnx(v->type().tensor_type().elem_type()).value_or(ElemType::Float32);
        }
        return t;
    }
    if (!shaped) {
        user_error(path, ": ", who, ": the shape of '", name,
                   "' is not known after ONNX's shape inference (the model compiler needs static shapes)");
    }
    const auto &tt = v->type().tensor_type();
    std::optional<ElemType> e = elem_of_onnx(tt.elem_type());
    if (!e) {
        user_error(path, ": ", who, ": tensor '", name, "' has element type ",
                   onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(tt.elem_type())),
                   " (the model compiler takes numeric tensors)");
    }
    t.type = *e;
    for (int i = 0; i < tt.shape().dim_size(); i++) {
        const auto &d = tt.shape().dim(i);
        if (!d.has_dim_value()) {
            user_error(path, ": ", who, ": tensor '", name, "' has a symbolic dimension ", i, " (",
                       dims_text(tt.shape()), ") after shape inference: its shape depends on data the model "
                       "compiler does not have (give the inputs' shapes with --input-shape)");
        }
        t.dims.push_back(d.dim_value());
    }
    return t;
}

// Unnamed and duplicate node names made unique (OpType_N), in the proto itself.
void name_nodes(onnx::ModelProto &m) {
    std::set<std::string> names;
    for (int i = 0; i < m.graph().node_size(); i++) {
        onnx::NodeProto &n = *m.mutable_graph()->mutable_node(i);
        std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
        while (!names.insert(name).second) {
            name += "_" + std::to_string(i);
        }
        n.set_name(name);
    }
}

void infer_shapes(onnx::ModelProto &m, const std::string &path) {
    try {
        // Strict (a node's inference error is an error), types checked, and data
        // propagation: Shape's result flows through Gather/Concat/Unsqueeze into Reshape.
        onnx::ShapeInferenceOptions opts(true, 1, true);
        onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
    } catch (const std::exception &e) {
        user_error(path, ": shape inference: ", e.what());
    }
}

// The graph of a shape-inferred model; `strict`: every tensor's shape must be static.
Graph build_graph(const onnx::ModelProto &m, const std::string &path, int64_t opset, bool strict) {
    const OnnxModel om = onnx_model_of(m, path);
    const auto infos = value_infos(m.graph());
    Graph g;
    g.path = path;
    g.opset = opset;
    for (const auto &[name, value] : om.initializers) {
        GraphTensor t;
        t.name = name;
        t.type = value.type;
        t.dims = value.dims;
        t.value = value;
        g.tensors[name] = std::move(t);
    }
    for (const OnnxValue &v : om.inputs) {
        auto it = infos.find(v.name);
        GraphTensor t = typed_tensor(v.name, it == infos.end() ? nullptr : it->second, path, "input '" + v.name + "'", strict);
        t.is_input = true;
        g.tensors[v.name] = std::move(t);
        g.inputs.push_back(v.name);
    }
    for (const OnnxNode &n : om.nodes) {
        GraphNode gn;
        gn.name = n.name; // unique: name_nodes
        gn.op_type = n.op_type;
        gn.domain = n.domain;
        gn.inputs = n.inputs;
        gn.outputs = n.outputs;
        gn.attributes = n.attributes;
        const std::string who = "node '" + gn.name + "' (" + n.op_type + ")";
        for (const std::string &out : n.outputs) {
            if (out.empty()) {
                continue;
            }
            auto it = infos.find(out);
            g.tensors[out] = typed_tensor(out, it == infos.end() ? nullptr : it->second, path, who, strict);
        }
        g.nodes.push_back(std::move(gn));
    }
    for (const OnnxValue &v : om.outputs) {
        if (!g.has_tensor(v.name)) {
            user_error(path, ": output '", v.name, "' is neither an input, an initializer nor a node's output");
        }
        g.tensor(v.name).is_output = true;
        g.outputs.push_back(v.name);
    }
    g.relink();
    return g;
}

bool unknown_shapes(const Graph &g) {
    for (const auto &[name, t] : g.tensors) {
        if (!t.shape_known) {
            return true;
        }
    }
    return false;
}

// The nodes fold_constants evaluates on `g` (built from `work`) leave `work`; their
// outputs become initializers (also those no remaining node reads, for their shapes).
void fold_into_initializers(onnx::ModelProto &work, Graph &g) {
    std::vector<GraphTensor> folded;
    fold_constants(g, &folded);
    std::set<std::string> kept;
    for (const GraphNode &n : g.nodes) {
        kept.insert(n.name);
    }
    onnx::GraphProto &gp = *work.mutable_graph();
    std::set<std::string> initializers;
    for (const auto &init : gp.initializer()) {
        initializers.insert(init.name());
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (const auto &n : gp.node()) {
        if (kept.count(n.name())) {
            *nodes.Add() = n;
        }
    }
    gp.mutable_node()->Swap(&nodes);
    // Every computed tensor, read by a remaining node or not: its shape is declared in the model.
    for (const GraphTensor &t : folded) {
        if (!initializers.count(t.name)) {
            *gp.add_initializer() = tensor_to_proto(*t.value);
        }
    }
}

// Every shape `work`'s inference found (its value_info, outputs, folded
// initializers), declared in `m` as value_info (graph outputs: their type).
void declare_shapes(onnx::ModelProto &m, const onnx::ModelProto &work) {
    std::set<std::string> own;
    for (const auto &v : m.graph().input()) {
        own.insert(v.name());
    }
    for (const auto &init : m.graph().initializer()) {
        own.insert(init.name());
    }
    std::map<std::string, onnx::ValueInfoProto> found;
    for (const auto &v : work.graph().value_info()) {
        found[v.name()] = v;
    }
    for (const auto &init : work.graph().initializer()) {
        onnx::ValueInfoProto v;
        v.set_name(init.name());
        auto *tt = v.mutable_type()->mutable_tensor_type();
        tt->set_elem_type(init.data_type());
        auto *shape = tt->mutable_shape();
        for (int64_t d : init.dims()) {
            shape->add_dim()->set_dim_value(d);
        }
        found[init.name()] = v;
    }
    for (auto &out : *m.mutable_graph()->mutable_output()) {
        for (const auto &w : work.graph().output()) {
            if (w.name() == out.name()) {
                *out.mutable_type() = w.type();
            }
        }
        own.insert(out.name());
    }
    m.mutable_graph()->clear_value_info();
    for (const auto &[name, v] : found) {
        if (!own.count(name)) {
            *m.mutable_graph()->add_value_info() = v;
        }
    }
}

} // namespace

void add_input_shape(ImportOptions &o, const std::string &spec) {
    const size_t eq = spec.rfind('=');
    auto bad = [&spec](const std::string &why) {
        user_error("--input-shape '", spec, "': ", why, " (expected NAME=D0xD1x..., e.g. input=1x3x224x224)");
    };
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
        bad("no NAME=SHAPE");
    }
    std::vector<int64_t> dims;
    std::istringstream ds(spec.substr(eq + 1));
    std::string d;
    while (std::getline(ds, d, 'x')) {
        if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos) {
            bad("'" + d + "' is not a dimension");
        }
        dims.push_back(std::stoll(d));
        if (dims.back() == 0) {
            bad("a dimension is 0");
        }
    }
    if (spec.back() == 'x') {
        bad("the shape ends with 'x'");
    }
    const std::string name = spec.substr(0, eq);
    if (o.input_shapes.count(name)) {
        bad("input '" + name + "' is given twice");
    }
    o.input_shapes[name] = dims;
}

Graph import_onnx_graph(const std::string &path, const ImportOptions &o) {
    onnx::ModelProto m = read_model_proto(path);
    int64_t opset = 0;
    for (const auto &op : m.opset_import()) {
        if (op.domain().empty() || op.domain() == "ai.onnx") {
            opset = op.version();
        }
    }
    if (opset < kMinOpset || opset > kMaxOpset) {
        user_error(path, ": opset ", opset, " of the default domain: the model compiler reads opsets ", kMinOpset,
                   "-", kMaxOpset, " (convert it with onnx.version_converter)");
    }
    std::set<std::string> initializers;
    for (const auto &init : m.graph().initializer()) {
        initializers.insert(init.name());
    }
    apply_input_shapes(m, o, path, initializers);
    check_static_inputs(m.graph(), path, initializers);
    try {
        onnx::checker::check_model(m);
    } catch (const std::exception &e) {
        user_error(path, ": the ONNX checker refuses the model: ", e.what());
    }
    name_nodes(m);
    infer_shapes(m, path);
    Graph g = build_graph(m, path, opset, false);
    if (!unknown_shapes(g)) {
        return build_graph(m, path, opset, true);
    }
    // ONNX's data propagation does not see through every shape computation PyTorch
    // writes (Shape -> Gather -> Unsqueeze -> Concat -> Reshape): on a copy, fold
    // what is constant, write it back as initializers and infer again until every
    // shape is known; then declare those shapes in the model, whose nodes stay
    // (folding them is the fold-constants pass's job, shown by --dump-after).
    onnx::ModelProto work = m;
    while (unknown_shapes(g)) {
        const int before = work.graph().node_size();
        fold_into_initializers(work, g);
        if (work.graph().node_size() == before) {
            build_graph(m, path, opset, true); // no progress: the strict build names the tensor
            internal_error(path, ": a tensor's shape is unknown but the strict import found none");
        }
        infer_shapes(work, path);
        g = build_graph(work, path, opset, false);
    }
    declare_shapes(m, work);
    return build_graph(m, path, opset, true);
}

std::vector<std::string> unsupported_nodes(const Graph &g) {
    const std::vector<std::string> known = supported_onnx_ops();
    std::vector<std::string> r;
    for (const GraphNode &n : g.nodes) {
        if (n.view) {
            continue; // metadata: no kernel
        }
        if (!n.domain.empty()) {
            r.push_back(n.name + " (" + n.domain + "." + n.op_type + ")");
        } else if (!std::binary_search(known.begin(), known.end(), n.op_type)) {
            std::string why;
            for (const OnnxAttribute &a : n.attributes) {
                why = a.tensor_error.empty() ? why : ": " + a.tensor_error; // a Constant not folded
            }
            r.push_back(n.name + " (" + n.op_type + ")" + why);
        }
    }
    return r;
}

void check_supported(const Graph &g) {
    const std::vector<std::string> bad = unsupported_nodes(g);
    if (bad.empty()) {
        return;
    }
    std::set<std::string> ops;
    std::string list;
    for (const std::string &b : bad) {
        list += "\n  " + b;
        ops.insert(b.substr(b.rfind('(') + 1, b.size() - b.rfind('(') - 2));
    }
    std::string op_list;
    for (const std::string &op : ops) {
        op_list += (op_list.empty() ? "" : ", ") + op;
    }
    user_error(g.path, ": ", bad.size(), " node", bad.size() == 1 ? "" : "s", " Tessel has no kernel for (",
               op_list, "; docs/onnx.md lists the operators):", list);
}

} // namespace tessel::graph
