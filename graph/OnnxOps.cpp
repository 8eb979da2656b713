// ONNX node -> generator and views (graph/OnnxOps.h). The operators' semantics
// are ONNX 1.12's (onnx/defs/*/defs.cc, opsets 11-17 as the backend tests use them).
#include "graph/OnnxOps.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

namespace tessel::graph {

namespace {

using Dims = std::vector<int64_t>;

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
    case ElemType::Float32: return get(float());
    case ElemType::Float64: return get(double());
    case ElemType::Int8: return get(int8_t());
    case ElemType::UInt8: return get(uint8_t());
    case ElemType::Int16: return get(int16_t());
    case ElemType::UInt16: return get(uint16_t());
    case ElemType::Int32: return get(int32_t());
    case ElemType::UInt32: return get(uint32_t());
    case ElemType::Int64: return get(int64_t());
    case ElemType::UInt64: return get(uint64_t());
    case ElemType::Bool: return get(uint8_t());
    case ElemType::Float16: {
        uint16_t h = 0;
        std::memcpy(&h, p, 2);
        const int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
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
        return a && a->kind == OnnxAttribute::Float ? a->f : a && a->kind == OnnxAttribute::Int ? double(a->i) : def;
    }
    int64_t int_attr(const char *name, int64_t def) const {
        const OnnxAttribute *a = node.attribute(name);
        return a && a->kind == OnnxAttribute::Int ? a->i : def;
    }
    // The element type of data input k as a dtype parameter; skips when Tessel has none.
    bool dtype_of_input(size_t k, std::string &dtype) {
        const FileTensor *t = input(k);
        if (!t) {
            return skip("input " + std::to_string(k) + " of " + node.op_type + " is missing");
        }
        dtype = dtype_param_of(t->type);
        if (dtype.empty()) {
            return skip(std::string("element type ") + elem_name(t->type) + " (input '" + input_name(k) +
                        "'): Tessel's kernels take float32, float16, bfloat16, int8, uint8, int16, int32");
        }
        if (t->elements() == 0) {
            return skip("input '" + input_name(k) + "' is empty (" + join_dims(t->dims) + "): no kernel for 0 elements");
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
                return skip(node.op_type + " of " + elem_name(input(0)->type) + " and " + elem_name(input(k)->type) +
                            " inputs: mixed element types are not supported");
            }
            std::string unused;
            if (!dtype_of_input(k, unused)) {
                return false;
            }
        }
        return true;
    }
    bool outputs_single() {
        size_t used = 0;
        for (size_t k = 0; k < node.outputs.size(); k++) {
            if (!node.outputs[k].empty()) {
                used++;
                if (k > 0) {
                    return skip("output " + std::to_string(k) + " ('" + node.outputs[k] + "') of " + node.op_type +
                                " is not supported (only the first output)");
                }
            }
        }
        return used == 1 || skip(node.op_type + " with no output");
    }
};

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
        {"Selu", "onnx_selu", {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}}, false},
        {"Softplus", "onnx_softplus", {}, false},
        {"Softsign", "onnx_softsign", {}, false},
    };
    return ops;
}

void flat_io(Ctx &c, const Dims &in_dims, const Dims &out_dims) {
    const int64_t n = count_of(in_dims);
    c.m.params["N"] = std::to_string(n);
    c.m.inputs.push_back({0, "X", {n}, std::nullopt});
    c.m.outputs.push_back({0, "Y", {n}, out_dims});
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
        if (std::find_if(known.begin(), known.end(), [&](const char *k) { return a.name == k; }) == known.end()) {
            return c.skip("attribute '" + a.name + "' of " + c.node.op_type + " is not supported");
        }
    }
    std::string dtype;
    if (!c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    const FileTensor &x = *c.input(0);
    const bool is_float = x.type == ElemType::Float32 || x.type == ElemType::Float16 || x.type == ElemType::BFloat16;
    if (!is_float && !op.integers) {
        return c.skip(std::string(op.onnx) + " on " + elem_name(x.type) + ": ONNX defines it on float types");
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
                return c.skip(std::string("Clip's ") + which + " must be one element of the input's type");
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

bool map_broadcast(Ctx &c, const char *generator, size_t min_inputs, size_t max_inputs, bool unidirectional) {
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
    // Multidirectional broadcasting (onnx/docs/Broadcasting.md): shapes aligned at the innermost dimension.
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
                return c.skip("shapes do not broadcast: input '" + c.input_name(k) + "' is " + join_dims(c.input(k)->dims));
            }
            out[d] = std::max(out[d], a[d]);
        }
        aligned.push_back(a);
    }
    if (unidirectional && out != c.input(0)->dims) {
        return c.skip(c.node.op_type + ": the slope " + join_dims(c.input(1)->dims) + " does not broadcast to X " +
                      join_dims(c.input(0)->dims));
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

// ---- views: the shape function, and a copy of the data ----

bool map_view(Ctx &c, const Dims &out_dims, const std::string &what) {
    std::string dtype;
    if (!c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    c.m.generator = "onnx_identity";
    c.m.params["dtype"] = dtype;
    c.m.note = what;
    flat_io(c, c.input(0)->dims, out_dims);
    return true;
}

bool normalise_axis(Ctx &c, int64_t &axis, size_t rank, const char *what) {
    const int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) {
        return c.skip(std::string(what) + " " + std::to_string(axis) + " is outside [-" + std::to_string(r) + ", " +
                      std::to_string(r - 1) + "]");
    }
    axis = axis < 0 ? axis + r : axis;
    return true;
}

bool map_reshape(Ctx &c) {
    std::vector<int64_t> shape;
    if (!c.only_attributes({"allowzero"}) || !c.input(0) || !c.int_values(1, shape)) {
        return c.input(0) ? false : c.skip("Reshape without data");
    }
    const Dims &in = c.input(0)->dims;
    const bool allowzero = c.int_attr("allowzero", 0) != 0;
    Dims out;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); i++) {
        int64_t s = shape[i];
        if (s == 0 && !allowzero) {
            if (i >= in.size()) {
                return c.skip("Reshape: shape[" + std::to_string(i) + "] = 0 copies a dimension the input lacks");
            }
            s = in[i];
        }
        if (s == -1) {
            if (infer >= 0) {
                return c.skip("Reshape: two -1 in the shape");
            }
            infer = static_cast<int>(i);
        } else if (s < 0) {
            return c.skip("Reshape: shape[" + std::to_string(i) + "] = " + std::to_string(s));
        } else {
            known *= s;
        }
        out.push_back(s);
    }
    if (infer >= 0) {
        if (known == 0 || count_of(in) % known != 0) {
            return c.skip("Reshape: cannot infer the -1 dimension of " + join_dims(out) + " for " + join_dims(in));
        }
        out[infer] = count_of(in) / known;
    }
    if (count_of(out) != count_of(in)) {
        return c.skip("Reshape: " + join_dims(in) + " has " + std::to_string(count_of(in)) + " elements, shape " +
                      join_dims(out) + " " + std::to_string(count_of(out)));
    }
    return map_view(c, out, "a view (Reshape to " + join_dims(out) + "): the kernel copies the data");
}

bool map_flatten(Ctx &c) {
    if (!c.only_attributes({"axis"}) || !c.input(0)) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    int64_t axis = c.int_attr("axis", 1);
    const int64_t r = static_cast<int64_t>(in.size());
    if (axis < -r || axis > r) {
        return c.skip("Flatten: axis " + std::to_string(axis) + " outside [-r, r]");
    }
    axis = axis < 0 ? axis + r : axis;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < r; d++) {
        (d < axis ? outer : inner) *= in[d];
    }
    return map_view(c, {outer, inner}, "a view (Flatten at axis " + std::to_string(axis) + "): the kernel copies the data");
}

bool axes_of(Ctx &c, std::vector<int64_t> &axes, bool &given) {
    given = false;
    if (c.opset >= 13) {
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

bool map_squeeze(Ctx &c) {
    std::vector<int64_t> axes;
    bool given = false;
    if (!c.only_attributes({"axes"}) || !c.input(0) || !axes_of(c, axes, given)) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    std::set<int64_t> drop;
    for (int64_t a : axes) {
        if (!normalise_axis(c, a, in.size(), "Squeeze: axis")) {
            return false;
        }
        if (in[a] != 1) {
            return c.skip("Squeeze: dimension " + std::to_string(a) + " is " + std::to_string(in[a]) + ", not 1");
        }
        drop.insert(a);
    }
    Dims out;
    for (size_t d = 0; d < in.size(); d++) {
        if (given ? !drop.count(int64_t(d)) : in[d] != 1) {
            out.push_back(in[d]);
        }
    }
    return map_view(c, out, "a view (Squeeze to " + join_dims(out) + "): the kernel copies the data");
}

bool map_unsqueeze(Ctx &c) {
    std::vector<int64_t> axes;
    bool given = false;
    if (!c.only_attributes({"axes"}) || !c.input(0) || !axes_of(c, axes, given)) {
        return false;
    }
    if (!given) {
        return c.skip("Unsqueeze without axes");
    }
    const Dims &in = c.input(0)->dims;
    const size_t rank = in.size() + axes.size();
    std::set<int64_t> ones;
    for (int64_t a : axes) {
        if (!normalise_axis(c, a, rank, "Unsqueeze: axis")) {
            return false;
        }
        if (!ones.insert(a).second) {
            return c.skip("Unsqueeze: axis " + std::to_string(a) + " given twice");
        }
    }
    Dims out;
    size_t next = 0;
    for (size_t d = 0; d < rank; d++) {
        out.push_back(ones.count(int64_t(d)) ? 1 : in[next++]);
    }
    return map_view(c, out, "a view (Unsqueeze to " + join_dims(out) + "): the kernel copies the data");
}

bool map_dropout(Ctx &c) {
    // Inference: Y = X. Opset 12+: ratio and training_mode are inputs 1 and 2; before, ratio
    // is an attribute (and is_test before opset 7). With training_mode true and a ratio
    // other than 0 the output is random; with ratio 0 it is X again.
    if (!c.only_attributes({"seed", "ratio"})) {
        return false;
    }
    double ratio = c.float_attr("ratio", 0.5);
    if (c.opset >= 12 && c.in.size() > 1 && c.input(1) && !c.input_name(1).empty()) {
        if (c.input(1)->elements() != 1) {
            return c.skip("Dropout's ratio must be one element");
        }
        ratio = element(*c.input(1), 0);
    }
    bool training = false;
    if (c.in.size() > 2 && c.input(2) && !c.input_name(2).empty()) {
        if (c.input(2)->elements() != 1) {
            return c.skip("Dropout's training_mode must be one element");
        }
        training = element(*c.input(2), 0) != 0;
    }
    if (training && ratio != 0) {
        return c.skip("Dropout in training mode (training_mode = true, ratio " + number_text(ratio) +
                      "): the output is random; inference Dropout only");
    }
    for (size_t k = 1; k < c.node.outputs.size(); k++) {
        if (!c.node.outputs[k].empty()) {
            return c.skip("Dropout's mask output (bool): Tessel's kernels have no bool type");
        }
    }
    return map_view(c, c.input(0) ? c.input(0)->dims : Dims{},
                    std::string(training ? "training with ratio 0" : "inference") + " Dropout: Y = X, a copy");
}

// Pow's exponent may have another type than its base (opset 12+). An integer
// exponent of a float32 base is converted to float32 when every value is exact
// there (|y| <= 2^24): the result is the same, and the kernel takes one type.
bool map_pow(Ctx &c) {
    const FileTensor *x = c.input(0), *y = c.input(1);
    if (x && x->type != ElemType::Float32 && x->type != ElemType::Float16 && x->type != ElemType::BFloat16) {
        return c.skip(std::string("Pow of a ") + elem_name(x->type) + " base: supported for float types only");
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

// ---- Transpose: extent-1 dimensions dropped, input dimensions that stay
// neighbours in the output merged (no element moves) ----

bool map_transpose(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"perm"}) || !c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    const size_t r = in.size();
    std::vector<int64_t> perm;
    if (const OnnxAttribute *a = c.node.attribute("perm")) {
        perm = a->ints;
    } else {
        for (size_t i = 0; i < r; i++) {
            perm.push_back(static_cast<int64_t>(r - 1 - i));
        }
    }
    std::vector<bool> seen(r, false);
    if (perm.size() != r) {
        return c.skip("Transpose: perm has " + std::to_string(perm.size()) + " entries for a rank-" +
                      std::to_string(r) + " input");
    }
    for (int64_t k : perm) {
        if (k < 0 || k >= int64_t(r) || seen[k]) {
            return c.skip("Transpose: perm is not a permutation");
        }
        seen[k] = true;
    }
    Dims out;
    for (int64_t k : perm) {
        out.push_back(in[k]);
    }
    // The kept input dimensions in output order, then runs k, k+1, ... merged into groups.
    std::vector<int64_t> order;
    for (int64_t k : perm) {
        if (in[k] != 1) {
            order.push_back(k);
        }
    }
    // (k and k + 1 only: a run across a dropped extent-1 dimension is left unmerged, which is
    // correct, only less merged.)
    std::vector<std::vector<int64_t>> groups; // in output order; each a run of input dimensions
    for (int64_t k : order) {
        if (!groups.empty() && groups.back().back() + 1 == k) {
            groups.back().push_back(k);
        } else {
            groups.push_back({k});
        }
    }
    // Groups in input order give the kernel's input; the permutation maps output group -> input group.
    std::vector<size_t> by_input(groups.size());
    for (size_t g = 0; g < groups.size(); g++) {
        by_input[g] = g;
    }
    std::sort(by_input.begin(), by_input.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
    std::vector<size_t> rank_of(groups.size());
    for (size_t j = 0; j < by_input.size(); j++) {
        rank_of[by_input[j]] = j;
    }
    Dims kin, kout;
    std::string perm_text;
    for (size_t j = 0; j < by_input.size(); j++) {
        int64_t n = 1;
        for (int64_t k : groups[by_input[j]]) {
            n *= in[k];
        }
        kin.push_back(n);
    }
    for (size_t g = 0; g < groups.size(); g++) {
        kout.push_back(kin[rank_of[g]]);
        perm_text += (g ? ";" : "") + std::to_string(rank_of[g]);
    }
    if (kin.empty()) {
        kin = kout = {1};
        perm_text = "0";
    }
    c.m.generator = "onnx_transpose";
    c.m.params["shape"] = join_dims(kin);
    c.m.params["perm"] = perm_text;
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", kin, std::nullopt});
    c.m.outputs.push_back({0, "Y", kout, out});
    return true;
}

// ---- Slice (opset 10+: starts, ends, axes, steps are inputs; opset 1: attributes) ----

bool map_slice(Ctx &c) {
    std::string dtype;
    if (!c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    if (c.opset < 10) {
        return c.skip("Slice before opset 10 (starts and ends as attributes) is not supported");
    }
    const Dims &in = c.input(0)->dims;
    const int64_t r = static_cast<int64_t>(in.size());
    std::vector<int64_t> starts, ends, axes, steps;
    if (!c.int_values(1, starts) || !c.int_values(2, ends)) {
        return false;
    }
    auto given = [&](size_t k) { return c.in.size() > k && c.input(k) && !c.input_name(k).empty(); };
    if (given(3) && !c.int_values(3, axes)) {
        return false;
    }
    if (given(4) && !c.int_values(4, steps)) {
        return false;
    }
    if (axes.empty()) {
        for (size_t i = 0; i < starts.size(); i++) {
            axes.push_back(static_cast<int64_t>(i));
        }
    }
    if (steps.empty()) {
        steps.assign(starts.size(), 1);
    }
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
        return c.skip("Slice: starts, ends, axes and steps differ in length");
    }
    std::vector<int64_t> start(r, 0), step(r, 1);
    Dims out = in;
    std::set<int64_t> seen;
    for (size_t i = 0; i < starts.size(); i++) {
        int64_t a = axes[i];
        if (!normalise_axis(c, a, in.size(), "Slice: axis") ) {
            return false;
        }
        if (!seen.insert(a).second) {
            return c.skip("Slice: axis " + std::to_string(a) + " given twice");
        }
        const int64_t dim = in[a], st = steps[i];
        if (st == 0) {
            return c.skip("Slice: a step of 0");
        }
        int64_t b = starts[i], e = ends[i];
        b = b < 0 ? b + dim : b;
        e = e < 0 ? e + dim : e;
        if (st > 0) {
            b = std::clamp<int64_t>(b, 0, dim);
            e = std::clamp<int64_t>(e, 0, dim);
        } else {
            b = std::clamp<int64_t>(b, 0, dim - 1);
            e = std::clamp<int64_t>(e, -1, dim - 1);
        }
        const int64_t n = st > 0 ? (e - b + st - 1) / st : (b - e + (-st) - 1) / (-st);
        out[a] = std::max<int64_t>(n, 0);
        start[a] = b;
        step[a] = st;
    }
    if (count_of(out) == 0) {
        return c.skip("Slice: the output is empty (" + join_dims(out) + "): no kernel for 0 elements");
    }
    std::string starts_text, steps_text;
    for (int64_t d = 0; d < r; d++) {
        starts_text += (d ? ";" : "") + std::to_string(start[d]);
        steps_text += (d ? ";" : "") + std::to_string(step[d]);
    }
    c.m.generator = "onnx_slice";
    c.m.params["shape"] = join_dims(in);
    c.m.params["starts"] = starts_text;
    c.m.params["steps"] = steps_text;
    c.m.params["out"] = join_dims(out);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", in, std::nullopt});
    c.m.outputs.push_back({0, "Y", out, out});
    return true;
}

struct OpEntry {
    const char *onnx;
    std::function<bool(Ctx &)> map;
};

const std::vector<OpEntry> &op_table() {
    static const std::vector<OpEntry> table = [] {
        std::vector<OpEntry> t;
        for (const UnaryOp &u : unary_ops()) {
            t.push_back({u.onnx, [&u](Ctx &c) { return map_unary(c, u); }});
        }
        t.push_back({"Add", [](Ctx &c) { return map_broadcast(c, "onnx_add", 2, 2, false); }});
        t.push_back({"Sub", [](Ctx &c) { return map_broadcast(c, "onnx_sub", 2, 2, false); }});
        t.push_back({"Mul", [](Ctx &c) { return map_broadcast(c, "onnx_mul", 2, 2, false); }});
        t.push_back({"Div", [](Ctx &c) {
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
        t.push_back({"Identity", [](Ctx &c) {
                         return c.only_attributes({}) && map_view(c, c.input(0) ? c.input(0)->dims : Dims{},
                                                                   "Identity: Y = X, a copy");
                     }});
        t.push_back({"Transpose", map_transpose});
        t.push_back({"Slice", map_slice});
        t.push_back({"Reshape", map_reshape});
        t.push_back({"Flatten", map_flatten});
        t.push_back({"Squeeze", map_squeeze});
        t.push_back({"Unsqueeze", map_unsqueeze});
        t.push_back({"Dropout", map_dropout});
        return t;
    }();
    return table;
}

} // namespace

std::string dtype_param_of(ElemType t) {
    switch (t) {
    case ElemType::Float32: return "fp32";
    case ElemType::Float16: return "fp16";
    case ElemType::BFloat16: return "bf16";
    case ElemType::Int8: return "int8";
    case ElemType::UInt8: return "uint8";
    case ElemType::Int16: return "int16";
    case ElemType::Int32: return "int32";
    default: return "";
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

OnnxMapping map_onnx_node(const OnnxNode &node, int64_t opset, const std::vector<const FileTensor *> &inputs) {
    Ctx c{node, opset, inputs, {}};
    if (!node.domain.empty()) {
        c.m.skip = "operator " + node.domain + "." + node.op_type + " (domain '" + node.domain + "') is not supported";
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
