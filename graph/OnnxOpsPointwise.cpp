// ONNX operators, pointwise: one tensor, and NumPy broadcasting (graph/OnnxMap.h, docs/onnx.md).
#include "graph/OnnxMap.h"

#include <cmath>
#include <cstring>

namespace tessel::graph::onnx_map {

namespace {

// ---- pointwise operators of one tensor ----

struct UnaryOp {
    const char *onnx;
    const char *generator;
    std::vector<std::pair<const char *, double>> attributes; // name, ONNX default
    bool integers;                                           // also on integer tensors
};

const std::vector<UnaryOp> &unary_ops() {
    static const std::vector<UnaryOp> ops = {
        {"Relu", "onnx_relu", {}, true},
        {"LeakyRelu", "onnx_leakyrelu", {{"alpha", 0.01}}, false},
        {"ThresholdedRelu", "onnx_thresholdedrelu", {{"alpha", 1.0}}, false},
        {"Clip", "onnx_clip", {}, true},
        {"Sigmoid", "onnx_sigmoid", {}, false},
        {"HardSigmoid", "onnx_hardsigmoid", {{"alpha", 0.2}, {"beta", 0.5}}, false},
        {"HardSwish", "onnx_hardswish", {}, false},
        {"Tanh", "onnx_tanh", {}, false},
        {"Erf", "onnx_erf", {}, false},
        {"Exp", "onnx_exp", {}, false},
        {"Log", "onnx_log", {}, false},
        {"Sqrt", "onnx_sqrt", {}, false},
        {"Reciprocal", "onnx_reciprocal", {}, false},
        {"Neg", "onnx_neg", {}, true},
        {"Abs", "onnx_abs", {}, true},
        {"Elu", "onnx_elu", {{"alpha", 1.0}}, false},
        {"Selu",
         "onnx_selu",
         {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}},
         false},
        {"Softplus", "onnx_softplus", {}, false},
        {"Softsign", "onnx_softsign", {}, false},
    };
    return ops;
}

bool map_unary(Ctx &c, const UnaryOp &op) {
    std::vector<const char *> known;
    for (const auto &a : op.attributes) {
        known.push_back(a.first);
    }
    if (std::string(op.onnx) == "Clip" && c.opset < 11) {
        known.push_back("min");
        known.push_back("max");
    }
    for (const auto &a : c.node.attributes) {
        if (std::find_if(known.begin(), known.end(), [&](const char *k) { return a.name == k; }) ==
            known.end()) {
            return c.skip("attribute '" + a.name + "' of " + c.node.op_type + " is not supported");
        }
    }
    std::string dtype;
    if (!c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    const FileTensor &x = *c.input(0);
    const bool is_float =
        x.type == ElemType::Float32 || x.type == ElemType::Float16 || x.type == ElemType::BFloat16;
    if (!is_float && !op.integers) {
        return c.skip(std::string(op.onnx) + " on " + elem_name(x.type) +
                      ": ONNX defines it on float types");
    }
    c.m.generator = op.generator;
    c.m.params["dtype"] = dtype;
    for (const auto &a : op.attributes) {
        c.m.params[a.first] = number_text(c.float_attr(a.first, a.second));
    }
    if (std::string(op.onnx) == "Clip") {
        // opset 11+: min and max are inputs 1 and 2 (optional, scalars); before, attributes.
        for (int k = 1; k <= 2; k++) {
            const char *which = k == 1 ? "min" : "max";
            if (c.opset < 11) {
                if (c.node.attribute(which)) {
                    c.m.params[which] = number_text(c.float_attr(which, 0));
                }
                continue;
            }
            const FileTensor *b = c.input(k);
            if (!b || c.input_name(k).empty()) {
                continue;
            }
            if (b->type != x.type || b->elements() != 1) {
                return c.skip(std::string("Clip's ") + which +
                              " must be one element of the input's type");
            }
            c.m.params[which] = number_text(element(*b, 0));
        }
    } else if (c.in.size() > 1) {
        return c.skip(c.node.op_type + " with " + std::to_string(c.in.size()) + " inputs");
    }
    flat_io(c, x.dims, x.dims);
    return true;
}
// ---- broadcasting operators ----

bool map_broadcast(Ctx &c, const char *generator, size_t min_inputs, size_t max_inputs,
                   bool unidirectional) {
    if (!c.only_attributes({})) {
        return false;
    }
    const size_t n = c.in.size();
    if (n < min_inputs || n > max_inputs) {
        return c.skip(c.node.op_type + " with " + std::to_string(n) + " inputs");
    }
    std::string dtype;
    if (!c.same_dtype_inputs(n, dtype) || !c.outputs_single()) {
        return false;
    }
    // Multidirectional broadcasting (onnx/docs/Broadcasting.md): shapes aligned at the innermost
    // dimension.
    size_t rank = 0;
    for (size_t k = 0; k < n; k++) {
        rank = std::max(rank, c.input(k)->dims.size());
    }
    std::vector<Dims> aligned;
    Dims out(rank, 1);
    for (size_t k = 0; k < n; k++) {
        Dims a(rank - c.input(k)->dims.size(), 1);
        a.insert(a.end(), c.input(k)->dims.begin(), c.input(k)->dims.end());
        for (size_t d = 0; d < rank; d++) {
            if (a[d] != out[d] && a[d] != 1 && out[d] != 1) {
                return c.skip("shapes do not broadcast: input '" + c.input_name(k) + "' is " +
                              join_dims(c.input(k)->dims));
            }
            out[d] = std::max(out[d], a[d]);
        }
        aligned.push_back(a);
    }
    if (unidirectional && out != c.input(0)->dims) {
        return c.skip(c.node.op_type + ": the slope " + join_dims(c.input(1)->dims) +
                      " does not broadcast to X " + join_dims(c.input(0)->dims));
    }
    // Neighbouring dimensions where every input is either full or broadcast alike merge
    // (no element moves in memory); dimensions of extent 1 drop.
    std::vector<Dims> views(n);
    Dims out_view;
    std::vector<bool> last_pattern;
    for (size_t d = 0; d < rank; d++) {
        if (out[d] == 1) {
            continue;
        }
        std::vector<bool> pattern(n);
        for (size_t k = 0; k < n; k++) {
            pattern[k] = aligned[k][d] == 1;
        }
        if (!out_view.empty() && pattern == last_pattern) {
            out_view.back() *= out[d];
            for (size_t k = 0; k < n; k++) {
                views[k].back() *= pattern[k] ? 1 : out[d];
            }
        } else {
            out_view.push_back(out[d]);
            for (size_t k = 0; k < n; k++) {
                views[k].push_back(pattern[k] ? 1 : out[d]);
            }
        }
        last_pattern = pattern;
    }
    if (out_view.empty()) {
        out_view = {1};
        for (auto &v : views) {
            v = {1};
        }
    }
    std::string shapes;
    for (size_t k = 0; k < n; k++) {
        shapes += (k ? ";" : "") + join_dims(views[k]);
        c.m.inputs.push_back({int(k), std::string(1, char('A' + k)), views[k], std::nullopt});
    }
    c.m.generator = generator;
    c.m.params["shapes"] = shapes;
    c.m.params["dtype"] = dtype;
    c.m.outputs.push_back({0, "Y", out_view, out});
    return true;
}

// Pow's exponent may have another type than its base (opset 12+). An integer
// exponent of a float32 base is converted to float32 when every value is exact
// there (|y| <= 2^24): the result is the same, and the kernel takes one type.
bool map_pow(Ctx &c) {
    const FileTensor *x = c.input(0), *y = c.input(1);
    if (x && x->type != ElemType::Float32 && x->type != ElemType::Float16 &&
        x->type != ElemType::BFloat16) {
        return c.skip(std::string("Pow of a ") + elem_name(x->type) +
                      " base: supported for float types only");
    }
    const bool integer_exponent = y && (y->type == ElemType::Int8 || y->type == ElemType::UInt8 ||
                                        y->type == ElemType::Int16 || y->type == ElemType::UInt16 ||
                                        y->type == ElemType::Int32 || y->type == ElemType::UInt32 ||
                                        y->type == ElemType::Int64 || y->type == ElemType::UInt64);
    if (!x || x->type != ElemType::Float32 || !integer_exponent) {
        return map_broadcast(c, "onnx_pow", 2, 2, false);
    }
    FileTensor conv;
    conv.name = y->name;
    conv.type = ElemType::Float32;
    conv.dims = y->dims;
    conv.data.resize(static_cast<size_t>(y->elements()) * 4);
    for (int64_t i = 0; i < y->elements(); i++) {
        const double v = element(*y, i);
        if (!(std::fabs(v) <= 16777216.0)) {
            return c.skip("Pow: exponent " + number_text(v) + " (" + elem_name(y->type) +
                          ") is not exact in float32, the base's type");
        }
        const float f = static_cast<float>(v);
        std::memcpy(conv.data.data() + 4 * i, &f, 4);
    }
    std::vector<const FileTensor *> in = c.in;
    in[1] = &conv;
    Ctx c2{c.node, c.opset, in, {}};
    if (!map_broadcast(c2, "onnx_pow", 2, 2, false)) {
        return c.skip(c2.m.skip);
    }
    c.m = c2.m;
    c.m.inputs.at(1).converted = conv;
    c.m.note = std::string("the ") + elem_name(y->type) + " exponent converted to float32 (exact)";
    return true;
}

} // namespace

void add_pointwise_ops(OpTable &t) {
    for (const UnaryOp &u : unary_ops()) {
        t.push_back({u.onnx, [&u](Ctx &c) { return map_unary(c, u); }});
    }
    t.push_back({"Add", [](Ctx &c) { return map_broadcast(c, "onnx_add", 2, 2, false); }});
    t.push_back({"Sub", [](Ctx &c) { return map_broadcast(c, "onnx_sub", 2, 2, false); }});
    t.push_back({"Mul", [](Ctx &c) { return map_broadcast(c, "onnx_mul", 2, 2, false); }});
    t.push_back(
        {"Div", [](Ctx &c) {
             if (c.input(0) && !c.input(0)->dims.empty() && c.input(0)->type != ElemType::UInt8 &&
                 c.input(0)->type != ElemType::Float32 && c.input(0)->type != ElemType::Float16 &&
                 c.input(0)->type != ElemType::BFloat16) {
                 return c.skip(std::string("Div on ") + elem_name(c.input(0)->type) +
                               ": integer division is supported for uint8 only");
             }
             return map_broadcast(c, "onnx_div", 2, 2, false);
         }});
    t.push_back({"Pow", map_pow});
    t.push_back({"PRelu", [](Ctx &c) { return map_broadcast(c, "onnx_prelu", 2, 2, true); }});
    t.push_back({"Max", [](Ctx &c) { return map_broadcast(c, "onnx_max", 1, 8, false); }});
    t.push_back({"Min", [](Ctx &c) { return map_broadcast(c, "onnx_min", 1, 8, false); }});
}

} // namespace tessel::graph::onnx_map
