#ifndef TESSEL_GRAPH_ONNXMODEL_H
#define TESSEL_GRAPH_ONNXMODEL_H

// An ONNX model (model.onnx) as plain data: read with Debian's libonnx
// (onnx::ModelProto), the reader the model compiler (issue 24) grows from.
// So far it keeps what single-operator models need: the graph's nodes with
// their attributes, the graph's inputs and outputs (element type, shape) and
// its initializers. Halide-free; protobuf stays in the .cpp.

#include "graph/TensorFile.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel::graph {

struct OnnxAttribute {
    enum Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Other };
    std::string name;
    Kind kind = Other;
    double f = 0;
    int64_t i = 0;
    std::string s;
    std::vector<double> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    std::optional<FileTensor> tensor;  // a TENSOR attribute's value (Constant's `value`)
    std::string tensor_error;          // why `tensor` is not set for a TENSOR attribute
    std::string type_name; // ONNX's AttributeType name (FLOAT, INTS, GRAPH, ...)
};

/** A graph input or output. */
struct OnnxValue {
    std::string name;
    std::string kind = "tensor";       // tensor, sequence, optional, map, sparse_tensor, unknown
    std::optional<ElemType> type;      // for tensors of a numeric type ONNX defines
    int32_t onnx_type = 0;             // TensorProto.DataType as written
    bool has_shape = false;
    std::vector<int64_t> dims;         // outermost first; -1 for a symbolic dimension
};

struct OnnxNode {
    std::string name;
    std::string op_type;
    std::string domain;                // "" = the default ONNX domain
    std::vector<std::string> inputs;   // "" for an omitted optional input
    std::vector<std::string> outputs;
    std::vector<OnnxAttribute> attributes;
    /** The attribute called `name`, or nullptr. */
    const OnnxAttribute *attribute(const std::string &name) const;
};

struct OnnxModel {
    std::string path;
    int64_t opset = 0;                 // the default domain's opset version
    std::vector<OnnxNode> nodes;
    std::vector<OnnxValue> inputs;     // graph inputs that are not initializers
    std::vector<OnnxValue> outputs;
    std::map<std::string, FileTensor> initializers;
};

/** Reads `path`. Every problem is a UserError naming the file: unreadable,
 * "PATH: not an ONNX model: the protobuf does not parse (N bytes; ...)",
 * no graph, an initializer that is not a valid tensor. */
OnnxModel read_onnx_model(const std::string &path);

/** "3x4x5", "[] (a scalar)"; -1 as "?". */
std::string shape_text(const std::vector<int64_t> &dims);

} // namespace tessel::graph

#endif
