// ONNX node -> generator and views (graph/OnnxOps.h). The operators' semantics
// are ONNX 1.12's (onnx/defs/*/defs.cc, opsets 11-17 as the backend tests use them).
// This file: the shared helpers of graph/OnnxMap.h and the table of every family.
#include "graph/OnnxMap.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace tessel::graph {

namespace onnx_map {

int64_t count_of(const Dims &d) {
    int64_t n = 1;
    for (int64_t x : d) {
        n *= x;
    }
    return n;
}

std::string join_dims(const Dims &d) {
    std::ostringstream os;
    for (size_t i = 0; i < d.size(); i++) {
        os << (i ? "x" : "") << d[i];
    }
    return os.str();
}

std::string join_list(const Dims &d) {
    std::string r;
    for (size_t i = 0; i < d.size(); i++) {
        r += (i ? ";" : "") + std::to_string(d[i]);
    }
    return r;
}

// A number as a GeneratorParam reads it back exactly (float attributes are float32 in ONNX).
std::string number_text(double v) {
    std::ostringstream os;
    os << std::setprecision(9) << v;
    return os.str();
}

double element(const FileTensor &t, int64_t i) {
    const uint8_t *p = t.data.data() + i * elem_bytes(t.type);
    auto get = [p](auto v) {
        std::memcpy(&v, p, sizeof v);
        return static_cast<double>(v);
    };
    switch (t.type) {
    case ElemType::Float32:
        return get(float());
    case ElemType::Float64:
        return get(double());
    case ElemType::Int8:
        return get(int8_t());
    case ElemType::UInt8:
        return get(uint8_t());
    case ElemType::Int16:
        return get(int16_t());
    case ElemType::UInt16:
        return get(uint16_t());
    case ElemType::Int32:
        return get(int32_t());
    case ElemType::UInt32:
        return get(uint32_t());
    case ElemType::Int64:
        return get(int64_t());
    case ElemType::UInt64:
        return get(uint64_t());
    case ElemType::Bool:
        return get(uint8_t());
    case ElemType::Float16: {
        uint16_t h = 0;
        std::memcpy(&h, p, 2);
        const int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0    ? std::ldexp(m, -24)
                   : e == 31 ? (m ? NAN : INFINITY)
                             : std::ldexp(m + 1024, e - 25);
        return (h & 0x8000) ? -v : v;
    }
    case ElemType::BFloat16: {
        uint16_t h = 0;
        std::memcpy(&h, p, 2);
        uint32_t bits = uint32_t(h) << 16;
        float f = 0;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    }
    return 0;
}

void flat_io(Ctx &c, const Dims &in_dims, const Dims &out_dims) {
    const int64_t n = count_of(in_dims);
    c.m.params["N"] = std::to_string(n);
    c.m.inputs.push_back({0, "X", {n}, std::nullopt});
    c.m.outputs.push_back({0, "Y", {n}, out_dims});
}

bool normalise_axis(Ctx &c, int64_t &axis, size_t rank, const char *what) {
    const int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) {
        return c.skip(std::string(what) + " " + std::to_string(axis) + " is outside [-" +
                      std::to_string(r) + ", " + std::to_string(r - 1) + "]");
    }
    axis = axis < 0 ? axis + r : axis;
    return true;
}

bool axes_of(Ctx &c, std::vector<int64_t> &axes, bool &given, int64_t input_from_opset) {
    given = false;
    if (c.opset >= input_from_opset) {
        if (c.in.size() > 1 && c.input(1) && !c.input_name(1).empty()) {
            given = true;
            return c.int_values(1, axes);
        }
        return true;
    }
    if (const OnnxAttribute *a = c.node.attribute("axes")) {
        given = true;
        axes = a->ints;
    }
    return true;
}

} // namespace onnx_map

namespace {

using namespace onnx_map;

const OpTable &op_table() {
    static const OpTable table = [] {
        OpTable t;
        add_pointwise_ops(t);
        add_view_ops(t);
        add_movement_ops(t);
        add_matrix_ops(t);
        add_reduce_ops(t);
        add_window_ops(t);
        return t;
    }();
    return table;
}

} // namespace

std::string dtype_param_of(ElemType t) {
    switch (t) {
    case ElemType::Float32:
        return "fp32";
    case ElemType::Float16:
        return "fp16";
    case ElemType::BFloat16:
        return "bf16";
    case ElemType::Int8:
        return "int8";
    case ElemType::UInt8:
        return "uint8";
    case ElemType::Int16:
        return "int16";
    case ElemType::Int32:
        return "int32";
    default:
        return "";
    }
}

std::vector<std::string> supported_onnx_ops() {
    std::vector<std::string> r;
    for (const auto &e : op_table()) {
        r.push_back(e.onnx);
    }
    std::sort(r.begin(), r.end());
    return r;
}

OnnxMapping map_onnx_node(const OnnxNode &node, int64_t opset,
                          const std::vector<const FileTensor *> &inputs) {
    Ctx c{node, opset, inputs, {}};
    if (!node.domain.empty()) {
        c.m.skip = "operator " + node.domain + "." + node.op_type + " (domain '" + node.domain +
                   "') is not supported";
        return c.m;
    }
    for (const auto &e : op_table()) {
        if (node.op_type == e.onnx) {
            if (!e.map(c) && c.m.skip.empty()) {
                c.m.skip = node.op_type + " is not supported in this form";
            }
            if (!c.m.skip.empty()) {
                OnnxMapping s;
                s.skip = c.m.skip;
                return s;
            }
            return c.m;
        }
    }
    c.m.skip = "operator " + node.op_type + " is not supported yet";
    return c.m;
}

} // namespace tessel::graph
