#ifndef TESSEL_GRAPH_GRAPH_H
#define TESSEL_GRAPH_GRAPH_H

// The model compiler's graph IR (docs/models.md): an ONNX model after import
// (graph/GraphImport.h) as plain data, which the graph passes
// (graph/passes/Passes.h) rewrite and the memory planner (graph/MemoryPlan.h)
// places. Tensors are keyed by their ONNX name; every tensor has a static
// shape and an element type, constants carry their data. Nodes are kept in a
// topological order. Halide-free and protobuf-free.

#include "graph/OnnxModel.h"
#include "graph/TensorFile.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::graph {

struct GraphTensor {
    std::string name;
    ElemType type = ElemType::Float32;
    std::vector<int64_t> dims;        // static, outermost first
    /** False only inside the import, for a tensor whose shape ONNX's inference
     * has not resolved yet (it folds constants and infers again). */
    bool shape_known = true;
    std::optional<FileTensor> value;  // set: a constant (an initializer, or folded)
    bool is_input = false;            // a graph input (the caller's data)
    bool is_output = false;           // a graph output
    /** Set by the views pass: this tensor is a view of `alias_of`'s storage
     * (same bytes, another shape); it gets no buffer and no kernel writes it. */
    std::string alias_of;
    // Links, recomputed by Graph::relink() after every rewrite:
    int producer = -1;                // index into Graph::nodes, -1 for inputs and constants
    std::vector<int> consumers;       // indices into Graph::nodes (a node twice if it reads it twice)

    int64_t elements() const;
    int64_t bytes() const;
    bool constant() const { return value.has_value(); }
};

struct GraphNode {
    std::string name;                 // unique (import names unnamed nodes OpType_N)
    std::string op_type;
    std::string domain;               // "" = ONNX's default domain
    std::vector<std::string> inputs;  // tensor names, "" for an omitted optional input
    std::vector<std::string> outputs; // tensor names, "" for an unused optional output
    std::vector<OnnxAttribute> attributes;
    bool view = false;                // the views pass: metadata only, no kernel
    int group = -1;                   // index into Graph::groups when fused

    const OnnxAttribute *attribute(const std::string &n) const;
    int64_t int_attr(const std::string &n, int64_t def) const;
    double float_attr(const std::string &n, double def) const;
};

/** Nodes compiled as one kernel (one generator instance): an anchor (Conv,
 * Gemm, MatMul) and the epilogue nodes fused into it, in order. Only the last
 * node's output leaves the group; the others stay on chip. */
struct FusedGroup {
    std::string name;                 // the anchor's name
    std::vector<std::string> nodes;   // node names, anchor first
    std::string pattern;              // "Conv+Add(bias)+Relu", "MatMul+Add(residual)"
};

struct Graph {
    std::string path;                 // the model file
    int64_t opset = 0;
    std::vector<GraphNode> nodes;     // topological order
    std::map<std::string, GraphTensor> tensors;
    std::vector<std::string> inputs;  // graph inputs in the model's order (input_K.pb is inputs[K])
    std::vector<std::string> outputs; // graph outputs in order (output_K.pb)
    std::vector<FusedGroup> groups;

    GraphTensor &tensor(const std::string &name);
    const GraphTensor &tensor(const std::string &name) const;
    bool has_tensor(const std::string &name) const { return tensors.count(name) > 0; }
    /** The storage a tensor lives in: follows alias_of to the end. */
    const GraphTensor &storage_of(const std::string &name) const;

    /** Recomputes producer and consumers from the nodes, drops tensors no node,
     * input or output names. Passes call it after they erase or add nodes. */
    void relink();
    /** Erases the nodes marked in `erase` (by index), keeping the order; then relink(). */
    void erase_nodes(const std::vector<bool> &erase);
    /** A tensor name not yet used, from `base` ("base", "base_1", ...). */
    std::string fresh_name(const std::string &base) const;

    /** The index of the node called `name`, or -1. */
    int node_index(const std::string &name) const;
    int64_t constant_bytes() const;
};

/** "128 B", "802816 B (784.00 KiB)". */
std::string bytes_text(int64_t bytes);

/** "float32[1x3x224x224]". */
std::string tensor_type_text(const GraphTensor &t);

/** The graph as text, one line per node, after a header naming `title` (the
 * pass that ran): inputs, nodes with their inputs, outputs, attributes, view
 * and group marks, the fused groups, the outputs. Deterministic (the golden
 * form `tessel model compile --dump-after` prints). */
std::string print_graph(const Graph &g, const std::string &title);

} // namespace tessel::graph

#endif
