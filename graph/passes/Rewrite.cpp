// Node replacement for the graph passes (graph/passes/Rewrite.h).
#include "graph/passes/Rewrite.h"

#include "graph/passes/HostEval.h"

#include <algorithm>

namespace tessel::graph {

std::string add_int64_constant(Graph &g, const std::string &base,
                               const std::vector<int64_t> &values) {
    GraphTensor t;
    t.name = g.fresh_name(base);
    t.type = ElemType::Int64;
    t.dims = {int64_t(values.size())};
    t.value = tensor_of_ints(ElemType::Int64, t.dims, values);
    t.value->name = t.name;
    const std::string name = t.name;
    g.tensors[name] = std::move(t);
    return name;
}

void replace_nodes(Graph &g,
                   const std::function<bool(GraphNode &, std::vector<GraphNode> &)> &replace) {
    bool changed = false;
    std::vector<GraphNode> nodes;
    for (GraphNode &n : g.nodes) {
        if (replace(n, nodes)) {
            changed = true;
        } else {
            nodes.push_back(std::move(n));
        }
    }
    g.nodes = std::move(nodes);
    if (changed) {
        g.relink();
    }
}

std::vector<int64_t> ints_or(const GraphNode &n, const char *attr, size_t count, int64_t def) {
    const OnnxAttribute *a = n.attribute(attr);
    if (!a || a->ints.empty()) {
        return std::vector<int64_t>(count, def);
    }
    return a->ints;
}

OnnxAttribute ints_attribute(const std::string &name, const std::vector<int64_t> &values) {
    OnnxAttribute a;
    a.name = name;
    a.kind = OnnxAttribute::Ints;
    a.type_name = "INTS";
    a.ints = values;
    return a;
}

void drop_attributes(GraphNode &n, const std::vector<std::string> &drop) {
    n.attributes.erase(std::remove_if(n.attributes.begin(), n.attributes.end(),
                                      [&](const OnnxAttribute &a) {
                                          return std::count(drop.begin(), drop.end(), a.name) > 0;
                                      }),
                       n.attributes.end());
}

} // namespace tessel::graph
