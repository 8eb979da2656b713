// The graph IR (graph/Graph.h): links, erasure, the printer.
#include "graph/Graph.h"

#include "npu_target/common/Error.h"

#include <iomanip>
#include <set>
#include <sstream>

namespace tessel::graph {

int64_t GraphTensor::elements() const {
    int64_t n = 1;
    for (int64_t d : dims) {
        n *= d;
    }
    return n;
}

int64_t GraphTensor::bytes() const { return elements() * elem_bytes(type); }

const OnnxAttribute *GraphNode::attribute(const std::string &n) const {
    for (const auto &a : attributes) {
        if (a.name == n) {
            return &a;
        }
    }
    return nullptr;
}

int64_t GraphNode::int_attr(const std::string &n, int64_t def) const {
    const OnnxAttribute *a = attribute(n);
    return a && a->kind == OnnxAttribute::Int ? a->i : def;
}

double GraphNode::float_attr(const std::string &n, double def) const {
    const OnnxAttribute *a = attribute(n);
    return a && a->kind == OnnxAttribute::Float ? a->f : a && a->kind == OnnxAttribute::Int ? double(a->i) : def;
}

GraphTensor &Graph::tensor(const std::string &name) {
    auto it = tensors.find(name);
    if (it == tensors.end()) {
        internal_error("graph: no tensor '", name, "'");
    }
    return it->second;
}

const GraphTensor &Graph::tensor(const std::string &name) const {
    auto it = tensors.find(name);
    if (it == tensors.end()) {
        internal_error("graph: no tensor '", name, "'");
    }
    return it->second;
}

const GraphTensor &Graph::storage_of(const std::string &name) const {
    const GraphTensor *t = &tensor(name);
    for (size_t hops = 0; !t->alias_of.empty(); hops++) {
        if (hops > tensors.size()) {
            internal_error("graph: the views of '", name, "' form a cycle");
        }
        t = &tensor(t->alias_of);
    }
    return *t;
}

void Graph::relink() {
    std::set<std::string> used(inputs.begin(), inputs.end());
    used.insert(outputs.begin(), outputs.end());
    for (const auto &n : nodes) {
        used.insert(n.inputs.begin(), n.inputs.end());
        used.insert(n.outputs.begin(), n.outputs.end());
    }
    for (auto it = tensors.begin(); it != tensors.end();) {
        it = used.count(it->first) ? std::next(it) : tensors.erase(it);
    }
    for (auto &[name, t] : tensors) {
        t.producer = -1;
        t.consumers.clear();
    }
    for (size_t i = 0; i < nodes.size(); i++) {
        for (const std::string &in : nodes[i].inputs) {
            if (!in.empty()) {
                tensor(in).consumers.push_back(static_cast<int>(i));
            }
        }
        for (const std::string &out : nodes[i].outputs) {
            if (!out.empty()) {
                tensor(out).producer = static_cast<int>(i);
            }
        }
    }
}

void Graph::erase_nodes(const std::vector<bool> &erase) {
    std::vector<GraphNode> kept;
    for (size_t i = 0; i < nodes.size(); i++) {
        if (i >= erase.size() || !erase[i]) {
            kept.push_back(std::move(nodes[i]));
        }
    }
    nodes = std::move(kept);
    relink();
}

std::string Graph::fresh_name(const std::string &base) const {
    if (!tensors.count(base)) {
        return base;
    }
    for (int i = 1;; i++) {
        const std::string n = base + "_" + std::to_string(i);
        if (!tensors.count(n)) {
            return n;
        }
    }
}

int Graph::node_index(const std::string &name) const {
    for (size_t i = 0; i < nodes.size(); i++) {
        if (nodes[i].name == name) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int64_t Graph::constant_bytes() const {
    int64_t n = 0;
    for (const auto &[name, t] : tensors) {
        n += t.constant() ? t.bytes() : 0;
    }
    return n;
}

std::string bytes_text(int64_t b) {
    std::ostringstream os;
    os << b << " B";
    if (b >= 1024) {
        os << std::fixed << std::setprecision(2) << " (";
        if (b >= (1 << 20)) {
            os << b / double(1 << 20) << " MiB)";
        } else {
            os << b / 1024.0 << " KiB)";
        }
    }
    return os.str();
}

std::string tensor_type_text(const GraphTensor &t) {
    std::ostringstream os;
    os << elem_name(t.type) << "[";
    for (size_t i = 0; i < t.dims.size(); i++) {
        os << (i ? "x" : "") << t.dims[i];
    }
    os << "]";
    return os.str();
}

namespace {

std::string attribute_text(const OnnxAttribute &a) {
    std::ostringstream os;
    os << std::setprecision(9) << a.name << "=";
    auto list = [&os](const auto &v) {
        os << "[";
        for (size_t i = 0; i < v.size(); i++) {
            os << (i ? "," : "") << v[i];
        }
        os << "]";
    };
    switch (a.kind) {
    case OnnxAttribute::Float: os << a.f; break;
    case OnnxAttribute::Int: os << a.i; break;
    case OnnxAttribute::String: os << "'" << a.s << "'"; break;
    case OnnxAttribute::Floats: list(a.floats); break;
    case OnnxAttribute::Ints: list(a.ints); break;
    case OnnxAttribute::Strings: list(a.strings); break;
    case OnnxAttribute::Tensor: os << (a.tensor ? a.tensor->describe() : "tensor"); break;
    case OnnxAttribute::Other: os << a.type_name; break;
    }
    return os.str();
}

} // namespace

std::string print_graph(const Graph &g, const std::string &title) {
    int constants = 0, views = 0;
    for (const auto &[name, t] : g.tensors) {
        constants += t.constant();
    }
    for (const auto &n : g.nodes) {
        views += n.view;
    }
    std::ostringstream os;
    os << "== graph after " << title << ": " << g.nodes.size() << " nodes (" << views << " views, "
       << g.groups.size() << " fused groups), " << constants << " constants, " << bytes_text(g.constant_bytes())
       << " ==\n";
    for (const std::string &in : g.inputs) {
        os << "  input " << in << " " << tensor_type_text(g.tensor(in)) << "\n";
    }
    for (const auto &n : g.nodes) {
        // Inputs show a constant's type, outputs every type; "-" is an omitted one.
        auto tensors = [&](const std::vector<std::string> &names, bool outputs) {
            for (size_t i = 0; i < names.size(); i++) {
                os << (i ? ", " : "");
                if (names[i].empty()) {
                    os << "-";
                    continue;
                }
                const GraphTensor &t = g.tensor(names[i]);
                os << t.name << (outputs ? " " + tensor_type_text(t) : t.constant() ? " const " + tensor_type_text(t) : "");
            }
        };
        os << "  " << n.name << ": " << (n.domain.empty() ? "" : n.domain + ".") << n.op_type << "(";
        tensors(n.inputs, false);
        os << ") -> ";
        tensors(n.outputs, true);
        if (!n.attributes.empty()) {
            os << " {";
            for (size_t i = 0; i < n.attributes.size(); i++) {
                os << (i ? ", " : "") << attribute_text(n.attributes[i]);
            }
            os << "}";
        }
        if (n.view) {
            os << "  [view of " << g.storage_of(n.outputs[0]).name << "]";
        }
        if (n.group >= 0) {
            os << "  [group " << n.group << "]";
        }
        os << "\n";
    }
    for (size_t i = 0; i < g.groups.size(); i++) {
        const FusedGroup &fg = g.groups[i];
        os << "  group " << i << " " << fg.name << ": " << fg.pattern << " (";
        for (size_t k = 0; k < fg.nodes.size(); k++) {
            os << (k ? ", " : "") << fg.nodes[k];
        }
        os << ")\n";
    }
    for (const std::string &out : g.outputs) {
        const GraphTensor &t = g.tensor(out);
        os << "  output " << out << " " << tensor_type_text(t);
        if (t.constant()) {
            os << " (a constant)";
        }
        os << "\n";
    }
    return os.str();
}

} // namespace tessel::graph
