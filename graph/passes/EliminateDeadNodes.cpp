// Dead-node elimination (graph/passes/Passes.h): a node is live when one of
// its outputs is a graph output or is read by a live node; the others go.
#include "graph/passes/Passes.h"

#include <set>

namespace tessel::graph {

void eliminate_dead_nodes(Graph &g) {
    std::set<std::string> needed(g.outputs.begin(), g.outputs.end());
    std::vector<bool> erase(g.nodes.size(), true);
    for (size_t i = g.nodes.size(); i-- > 0;) {
        const GraphNode &n = g.nodes[i];
        for (const std::string &out : n.outputs) {
            if (!out.empty() && needed.count(out)) {
                erase[i] = false;
            }
        }
        if (!erase[i]) {
            needed.insert(n.inputs.begin(), n.inputs.end());
        }
    }
    g.erase_nodes(erase);
}

} // namespace tessel::graph
