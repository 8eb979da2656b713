// Epilogue fusion (graph/passes/Passes.h): after a Conv, Gemm or MatMul, the
// chain of elementwise nodes that each read only the one before becomes one
// fused group (one generator instance later, one kernel): the anchor's result
// stays on chip while the bias, the residual and the activation are applied,
// and only the group's last output goes to GM.
#include "graph/passes/Passes.h"

#include <set>

namespace tessel::graph {

namespace {

bool is_anchor(const GraphNode &n) {
    return n.domain.empty() && (n.op_type == "Conv" || n.op_type == "Gemm" || n.op_type == "MatMul");
}

bool is_activation(const Graph &g, const GraphNode &n) {
    static const std::set<std::string> ops{"Relu", "HardSwish", "HardSigmoid", "LeakyRelu", "Sigmoid"};
    if (ops.count(n.op_type)) {
        return true;
    }
    if (n.op_type == "Clip") { // min and max constant or absent
        for (size_t k = 1; k < n.inputs.size(); k++) {
            if (!n.inputs[k].empty() && !g.tensor(n.inputs[k]).value) {
                return false;
            }
        }
        return true;
    }
    return false;
}

// What `n` does to `cur` as an epilogue ("Relu", "Add(bias)", "Add(residual)"), or "".
std::string epilogue_of(const Graph &g, const GraphNode &n, const GraphTensor &cur, bool residual_taken) {
    if (!n.domain.empty() || n.view || n.group >= 0 || n.outputs.size() != 1) {
        return "";
    }
    const GraphTensor &out = g.tensor(n.outputs[0]);
    if (out.dims != cur.dims || out.type != cur.type) {
        return ""; // an epilogue keeps the anchor's shape (no broadcast growth)
    }
    if (is_activation(g, n) && n.inputs[0] == cur.name) {
        return n.op_type;
    }
    if (n.op_type == "Add" && n.inputs.size() == 2 && n.inputs[0] != n.inputs[1]) {
        const GraphTensor &other = g.tensor(n.inputs[0] == cur.name ? n.inputs[1] : n.inputs[0]);
        if (other.value) {
            return "Add(bias)";
        }
        if (!residual_taken && other.dims == cur.dims && other.type == cur.type) {
            return "Add(residual)";
        }
    }
    return "";
}

} // namespace

void fuse_epilogues(Graph &g) {
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (!is_anchor(g.nodes[i]) || g.nodes[i].group >= 0 || g.nodes[i].outputs.empty()) {
            continue;
        }
        FusedGroup fg;
        fg.name = g.nodes[i].name;
        fg.nodes.push_back(g.nodes[i].name);
        fg.pattern = g.nodes[i].op_type;
        std::vector<int> members{static_cast<int>(i)};
        bool residual = false;
        const GraphTensor *cur = &g.tensor(g.nodes[i].outputs[0]);
        while (!cur->is_output && cur->consumers.size() == 1) {
            const GraphNode &next = g.nodes[cur->consumers[0]];
            const std::string what = epilogue_of(g, next, *cur, residual);
            if (what.empty()) {
                break;
            }
            residual = residual || what == "Add(residual)";
            fg.nodes.push_back(next.name);
            fg.pattern += "+" + what;
            members.push_back(cur->consumers[0]);
            cur = &g.tensor(next.outputs[0]);
        }
        if (members.size() < 2) {
            continue; // nothing to fuse: the anchor is a kernel of its own
        }
        for (int m : members) {
            g.nodes[m].group = static_cast<int>(g.groups.size());
        }
        g.groups.push_back(std::move(fg));
    }
}

} // namespace tessel::graph
