#ifndef TESSEL_GRAPH_GRAPHIMPORT_H
#define TESSEL_GRAPH_GRAPHIMPORT_H

// model.onnx -> the graph IR (graph/Graph.h), through ONNX's own tools in
// Debian's libonnx: the checker (onnx::checker::check_model) and shape
// inference (onnx::shape_inference::InferShapes, strict, with data
// propagation so Shape -> Gather -> Concat -> Reshape chains get static
// shapes). Opsets 11-17. Every tensor must end with a static shape: a graph
// input's symbolic dimension is given with --input-shape. Halide-free.
//
// Errors are UserErrors naming the file and the node or tensor: a file that
// does not parse (truncated), an opset outside 11-17, a symbolic input
// dimension without --input-shape, an --input-shape that names no input or
// disagrees with the model, the checker's refusal, a shape inference
// conflict, an output whose shape inference leaves unknown.

#include "graph/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel::graph {

struct ImportOptions {
    /** --input-shape NAME=1x3x224x224: the static shape of a graph input. */
    std::map<std::string, std::vector<int64_t>> input_shapes;
};

/** Adds one `NAME=D0xD1x...` to `o` (a malformed one is a UserError quoting it). */
void add_input_shape(ImportOptions &o, const std::string &spec);

/** Reads, checks and shape-infers `path` and builds its graph. */
Graph import_onnx_graph(const std::string &path, const ImportOptions &o = {});

/** The opsets the import accepts. */
constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 17;

/** The nodes of `g` Tessel has no kernel for (op type not in
 * supported_onnx_ops(), or another domain; views need none), as "NAME (OP)". */
std::vector<std::string> unsupported_nodes(const Graph &g);
/** A UserError listing every unsupported node at once, if there is one. */
void check_supported(const Graph &g);

} // namespace tessel::graph

#endif
