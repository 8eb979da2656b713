#ifndef TESSEL_GRAPH_ONNXMAP_H
#define TESSEL_GRAPH_ONNXMAP_H

// What the ONNX operator families share (graph/OnnxOps.h's implementation, not
// an interface for anything else): the mapping context of one node, the
// attribute and parameter-input readers, and the table each family adds its
// operators to. One file per family: OnnxOpsPointwise.cpp (unary and
// broadcasting), OnnxOpsViews.cpp (Identity, Reshape, Flatten, Squeeze,
// Unsqueeze, Dropout), OnnxOpsMovement.cpp (Transpose, Slice). Halide-free.

#include "graph/OnnxOps.h"

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace tessel::graph::onnx_map {

using Dims = std::vector<int64_t>;

int64_t count_of(const Dims &d);
std::string join_dims(const Dims &d);
// "1;2;3": a list parameter of one value per dimension (ops/OnnxParams.h reads it back).
std::string join_list(const Dims &d);
// A number as a GeneratorParam reads it back exactly (float attributes are float32 in ONNX).
std::string number_text(double v);
// Element i of a tensor of any element type, as a double.
double element(const FileTensor &t, int64_t i);

struct Ctx {
    const OnnxNode &node;
    int64_t opset;
    const std::vector<const FileTensor *> &in;
    OnnxMapping m;

    const FileTensor *input(size_t k) const { return k < in.size() ? in[k] : nullptr; }
    std::string input_name(size_t k) const { return k < node.inputs.size() ? node.inputs[k] : "?"; }

    bool skip(const std::string &why) {
        if (m.skip.empty()) {
            m.skip = why;
        }
        return false;
    }
    // Every attribute must be one the operator's mapping reads.
    bool only_attributes(std::initializer_list<const char *> known) {
        for (const auto &a : node.attributes) {
            bool ok = false;
            for (const char *k : known) {
                ok = ok || a.name == k;
            }
            if (!ok) {
                return skip("attribute '" + a.name + "' of " + node.op_type + " is not supported");
            }
        }
        return true;
    }
    double float_attr(const char *name, double def) const {
        const OnnxAttribute *a = node.attribute(name);
        return a && a->kind == OnnxAttribute::Float ? a->f
               : a && a->kind == OnnxAttribute::Int ? double(a->i)
                                                    : def;
    }
    int64_t int_attr(const char *name, int64_t def) const {
        const OnnxAttribute *a = node.attribute(name);
        return a && a->kind == OnnxAttribute::Int ? a->i : def;
    }
    // The element type of data input k as a dtype parameter; skips when Tessel has none.
    bool dtype_of_input(size_t k, std::string &dtype, bool allow_empty = false) {
        const FileTensor *t = input(k);
        if (!t) {
            return skip("input " + std::to_string(k) + " of " + node.op_type + " is missing");
        }
        dtype = dtype_param_of(t->type);
        if (dtype.empty()) {
            return skip(
                std::string("element type ") + elem_name(t->type) + " (input '" + input_name(k) +
                "'): Tessel's kernels take float32, float16, bfloat16, int8, uint8, int16, int32");
        }
        if (t->elements() == 0 && !allow_empty) {
            return skip("input '" + input_name(k) + "' is empty (" + join_dims(t->dims) +
                        "): no kernel for 0 elements");
        }
        return true;
    }
    // A parameter input (axes, shape): its int64 values.
    bool int_values(size_t k, std::vector<int64_t> &out) {
        const FileTensor *t = input(k);
        if (!t) {
            return skip("input " + std::to_string(k) + " of " + node.op_type + " is missing");
        }
        if (t->type != ElemType::Int64 && t->type != ElemType::Int32) {
            return skip("input '" + input_name(k) + "' of " + node.op_type + " must be int64");
        }
        for (int64_t i = 0; i < t->elements(); i++) {
            out.push_back(static_cast<int64_t>(element(*t, i)));
        }
        return true;
    }
    bool same_dtype_inputs(size_t n, std::string &dtype) {
        if (!dtype_of_input(0, dtype)) {
            return false;
        }
        for (size_t k = 1; k < n; k++) {
            if (!input(k)) {
                return skip("input " + std::to_string(k) + " of " + node.op_type + " is missing");
            }
            if (input(k)->type != input(0)->type) {
                return skip(node.op_type + " of " + elem_name(input(0)->type) + " and " +
                            elem_name(input(k)->type) +
                            " inputs: mixed element types are not supported");
            }
            std::string unused;
            if (!dtype_of_input(k, unused)) {
                return false;
            }
        }
        return true;
    }
    /** Output `k` as a constant of `dims` and `type` whose every element is `fill` (0 or 1
     * bytes-wise: an empty tensor, a bool mask of true): no kernel computes it. */
    void host_output(int k, ElemType type, const Dims &dims, uint8_t fill) {
        OnnxHostOutput h;
        h.node_output = k;
        h.value.type = type;
        h.value.dims = dims;
        h.value.data.assign(size_t(count_of(dims)) * elem_bytes(type), fill);
        m.host_outputs.push_back(std::move(h));
    }
    bool outputs_single() {
        size_t used = 0;
        for (size_t k = 0; k < node.outputs.size(); k++) {
            if (!node.outputs[k].empty()) {
                used++;
                if (k > 0) {
                    return skip("output " + std::to_string(k) + " ('" + node.outputs[k] + "') of " +
                                node.op_type + " is not supported (only the first output)");
                }
            }
        }
        return used == 1 || skip(node.op_type + " with no output");
    }
};

// The kernel sees input 0 and output 0 as flat buffers of N elements (params["N"]).
void flat_io(Ctx &c, const Dims &in_dims, const Dims &out_dims);
// axis in [-rank, rank-1] -> [0, rank-1]; a skip naming `what` otherwise.
bool normalise_axis(Ctx &c, int64_t &axis, size_t rank, const char *what);
// The `axes` of a node: input 1 from `input_from_opset` on (absent: given = false),
// the attribute before.
bool axes_of(Ctx &c, std::vector<int64_t> &axes, bool &given, int64_t input_from_opset = 13);

struct OpEntry {
    const char *onnx;
    std::function<bool(Ctx &)> map;
};
using OpTable = std::vector<OpEntry>;

// Each family adds its operators (OnnxOps.cpp assembles the table).
void add_pointwise_ops(OpTable &t);
void add_view_ops(OpTable &t);
void add_movement_ops(OpTable &t);
void add_matrix_ops(OpTable &t); // OnnxOpsMatrix.cpp: MatMul, Gemm, Conv, ConvTranspose, BatchNormalization
void add_reduce_ops(OpTable &t); // OnnxOpsReduce.cpp: Reduce*, Softmax, LogSoftmax, LayerNormalization
void add_window_ops(OpTable &t); // OnnxOpsWindow.cpp: MaxPool, AveragePool, GlobalMax/AveragePool, Resize, Upsample

} // namespace tessel::graph::onnx_map

#endif
