// Views as metadata (graph/passes/Passes.h): Reshape, Flatten, Squeeze,
// Unsqueeze, Identity, inference Dropout and a Cast to the input's own type do
// not move data in a row-major buffer, so their output is an alias of their input's storage with another
// shape, and the node needs no kernel (the memory plan gives both one buffer).
#include "graph/passes/Passes.h"

namespace tessel::graph {

namespace {

bool is_view_op(const Graph &g, const GraphNode &n) {
    if (!n.domain.empty() || n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty() || n.outputs[0].empty()) {
        return false;
    }
    const std::string &op = n.op_type;
    if (op == "Dropout") {
        // Inference: no mask read, and training_mode (input 2) absent or a constant false.
        if (n.outputs.size() > 1 && !n.outputs[1].empty() && !g.tensor(n.outputs[1]).consumers.empty()) {
            return false;
        }
        if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
            const GraphTensor &t = g.tensor(n.inputs[2]);
            return t.value && t.value->data.size() == 1 && t.value->data[0] == 0;
        }
        return true;
    }
    if (op == "Cast") { // to its own type (ONNX's function bodies write them): the same bytes
        const GraphTensor &in = g.tensor(n.inputs[0]), &out = g.tensor(n.outputs[0]);
        return in.type == out.type && in.dims == out.dims;
    }
    return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity";
}

} // namespace

void mark_views(Graph &g) {
    for (GraphNode &n : g.nodes) {
        if (n.view || !is_view_op(g, n)) {
            continue;
        }
        GraphTensor &out = g.tensor(n.outputs[0]);
        const GraphTensor &in = g.tensor(n.inputs[0]);
        if (in.type != out.type || in.elements() != out.elements() || in.constant()) {
            continue;
        }
        n.view = true;
        out.alias_of = in.name;
    }
}

} // namespace tessel::graph
