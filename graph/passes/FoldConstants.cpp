// Constant folding (graph/passes/Passes.h): nodes whose inputs are constants,
// and Shape of any tensor (every shape is static after import), evaluated on
// the host; their outputs become constant tensors and the nodes go.
#include "graph/passes/HostEval.h"
#include "graph/passes/Passes.h"

namespace tessel::graph {

void fold_constants(Graph &g, std::vector<GraphTensor> *folded) {
    std::vector<bool> erase(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const GraphNode &n = g.nodes[i];
        // Only the first output is computed: a node using another one stays.
        size_t used_outputs = 0;
        for (size_t k = 1; k < n.outputs.size(); k++) {
            used_outputs += !n.outputs[k].empty() && !g.tensor(n.outputs[k]).consumers.empty();
        }
        if (n.outputs.empty() || n.outputs[0].empty() || used_outputs) {
            continue;
        }
        std::vector<const FileTensor *> inputs;
        std::vector<const GraphTensor *> meta;
        bool all_constant = true;
        for (const std::string &in : n.inputs) {
            const GraphTensor *t = in.empty() ? nullptr : &g.tensor(in);
            meta.push_back(t);
            inputs.push_back(t && t->value ? &*t->value : nullptr);
            all_constant = all_constant && (!t || t->value);
        }
        if (!all_constant && n.op_type != "Shape") {
            continue;
        }
        GraphTensor &out = g.tensor(n.outputs[0]);
        // ConstantOfShape, Slice and Concat size their result from their inputs, which
        // ONNX's inference may not know during import; the others need the inferred shape.
        const bool sizes_itself = n.op_type == "ConstantOfShape" || n.op_type == "Slice" || n.op_type == "Concat";
        if ((!out.shape_known && !sizes_itself) ||
            (n.op_type == "Shape" && (meta.empty() || !meta[0] || !meta[0]->shape_known))) {
            continue; // during import: shape inference has not resolved it yet
        }
        std::optional<FileTensor> v = evaluate_node(n, inputs, meta, out);
        if (!v || v->type != out.type || (out.shape_known && v->dims != out.dims)) {
            continue; // not evaluated here (or shape inference disagrees: the kernel decides)
        }
        out.dims = v->dims;
        out.shape_known = true;
        v->name = out.name;
        out.value = std::move(*v);
        erase[i] = true;
        if (folded) {
            folded->push_back(out);
        }
        // Later nodes see the value at once (the nodes are in topological order).
    }
    g.erase_nodes(erase);
}

} // namespace tessel::graph
