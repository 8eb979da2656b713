// The pass list (graph/passes/Passes.h).
#include "graph/passes/Passes.h"

namespace tessel::graph {

const std::vector<GraphPass> &graph_passes() {
    static const std::vector<GraphPass> passes{
        {"fold-constants", "evaluate constant subgraphs (and Shape) on the host", [](Graph &g) { fold_constants(g); }},
        {"eliminate-dead-nodes", "remove nodes no graph output depends on", eliminate_dead_nodes},
        {"fold-batchnorm", "fold BatchNormalization into the Conv before it (else Mul + Add)", fold_batchnorm},
        {"views", "Reshape/Flatten/Squeeze/Unsqueeze/Identity/Dropout as aliases, no kernel", mark_views},
        {"stride-one-convs", "strided Conv as stride-1 Conv + Slice (the matrix unit's form)", stride_one_convs},
        {"split-conv-padding", "padded Conv as Pad + unpadded Conv (stageable: the matrix unit's form)", split_conv_padding},
        {"fuse-epilogues", "Conv/Gemm/MatMul + bias/residual Add + activation as one fused group", fuse_epilogues},
    };
    return passes;
}

std::string graph_pass_names() {
    std::string r;
    for (const GraphPass &p : graph_passes()) {
        r += (r.empty() ? "" : ", ") + std::string(p.name);
    }
    return r;
}

void run_graph_passes(Graph &g, const std::function<void(const std::string &, const Graph &)> &after) {
    for (const GraphPass &p : graph_passes()) {
        p.run(g);
        if (after) {
            after(p.name, g);
        }
    }
}

} // namespace tessel::graph
