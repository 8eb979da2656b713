#ifndef TESSEL_GRAPH_PASSES_REWRITE_H
#define TESSEL_GRAPH_PASSES_REWRITE_H

// What the graph passes that replace a node by several share (graph/passes/).

#include "graph/Graph.h"

#include <functional>
#include <string>
#include <vector>

namespace tessel::graph {

/** A new int64 constant tensor of `values` (1-D), named from `base`; its name. */
std::string add_int64_constant(Graph &g, const std::string &base,
                               const std::vector<int64_t> &values);

/** Calls `replace(node, out)` for every node in order: it either appends the node's
 * replacement (the node itself, changed, among them) to `out` and returns true, or returns
 * false and leaves `out` alone (the node stays as it is). Relinks the graph if any node was
 * replaced. */
void replace_nodes(Graph &g,
                   const std::function<bool(GraphNode &, std::vector<GraphNode> &)> &replace);

/** `n`'s INTS attribute `attr`, or `count` copies of `def` when it has none. */
std::vector<int64_t> ints_or(const GraphNode &n, const char *attr, size_t count, int64_t def);

/** An INTS attribute named `name` holding `values`. */
OnnxAttribute ints_attribute(const std::string &name, const std::vector<int64_t> &values);

/** `n`'s attributes without those named in `drop`. */
void drop_attributes(GraphNode &n, const std::vector<std::string> &drop);

} // namespace tessel::graph

#endif
