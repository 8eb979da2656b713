#ifndef TESSEL_GRAPH_ONNXOPS_H
#define TESSEL_GRAPH_ONNXOPS_H

// One ONNX node -> the generator that computes it (ops/, docs/onnx.md), its
// parameters (the node's attributes, and the values of inputs that act as
// parameters: Clip's min/max, Reshape's shape, Squeeze/Unsqueeze's axes,
// Dropout's ratio and training_mode), and how each tensor is viewed by the
// kernel. Views are metadata: a pointwise operator sees its tensors as their
// flat buffers, a broadcasting one with neighbouring dimensions that broadcast
// alike merged, and Reshape/Flatten/Squeeze/Unsqueeze/Identity/Dropout are the
// shape function here plus a copy (onnx_identity) of the data. Halide-free.
//
// What is not supported is a reason, never an exception: the operator, an
// attribute or its value, an element type, a non-tensor input, all named.

#include "graph/OnnxModel.h"
#include "graph/TensorFile.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::graph {

struct OnnxKernelInput {
    int node_input = 0;          // which node input feeds this kernel input
    std::string name;            // the kernel's input name (X, A, B, ...)
    std::vector<int64_t> dims;   // the kernel's view of it, outermost first (same element count)
    /** Set when the kernel takes the node input converted to another element type
     * (Pow's integer exponent as the base's float32, exact): use it instead. */
    std::optional<FileTensor> converted;
};

struct OnnxKernelOutput {
    int node_output = 0;
    std::string name;                 // the kernel's output name (Y)
    std::vector<int64_t> dims;        // the kernel's view, outermost first
    std::vector<int64_t> onnx_dims;   // the ONNX output shape (the operator's shape function)
};

/** An output whose value the shapes alone determine (an empty tensor; inference Dropout's
 * mask, all true): the runners write it as a constant, with no kernel, as a graph compiler
 * folds it. */
struct OnnxHostOutput {
    int node_output = 0;
    FileTensor value;
};

struct OnnxMapping {
    std::string skip;                      // non-empty: not supported, and why
    std::string generator;                 // e.g. onnx_relu; "" when every output is a host output
    std::map<std::string, std::string> params;
    std::vector<OnnxKernelInput> inputs;   // in the kernel's input order
    std::vector<OnnxKernelOutput> outputs;
    std::string note;                      // e.g. "a view: the kernel copies the data"
    /** Further kernels of the same node, run on the same inputs, each computing other
     * outputs of it (LayerNormalization's optional Mean and InvStdDev: `--schedule auto`
     * bands a pipeline at its first output, so each output is a pipeline of its own). */
    std::vector<OnnxMapping> more;
    std::vector<OnnxHostOutput> host_outputs;
};

/** Maps `node` (of a model at `opset`) given its inputs' tensors (one per node
 * input, nullptr for an omitted optional input): their element types and
 * shapes, and the values of parameter inputs. */
OnnxMapping map_onnx_node(const OnnxNode &node, int64_t opset, const std::vector<const FileTensor *> &inputs);

/** Every ONNX operator map_onnx_node knows, sorted (docs/onnx.md's table). */
std::vector<std::string> supported_onnx_ops();

/** The Tessel dtype parameter ("fp32", "int8", ...) of an element type, or "" when
 * Tessel's kernels do not take it (float64, int64, uint16, uint32, uint64, bool). */
std::string dtype_param_of(ElemType t);

} // namespace tessel::graph

#endif
