// ONNX operators, reductions and normalisations (graph/OnnxMap.h, docs/onnx.md):
// ReduceMean, ReduceSum, ReduceMax, ReduceMin, Softmax, LogSoftmax,
// LayerNormalization. Each is viewed with neighbouring dimensions merged that
// the operator treats alike (all reduced or all kept; before the axis, the axis,
// after it), which moves no element and gives the vector unit the longest rows.
#include "graph/OnnxMap.h"

#include <algorithm>

namespace tessel::graph::onnx_map {

namespace {

bool is_float(const std::string &dtype) {
    return dtype == "fp32" || dtype == "fp16" || dtype == "bf16";
}

bool floats_only(Ctx &c, const std::string &dtype) {
    return is_float(dtype) || c.skip(c.node.op_type + " of " + elem_name(c.input(0)->type) +
                                     ": supported for float types only");
}

// A copy of input 0 with the ONNX output shape `out` (a reduction over nothing).
bool copy_of_input(Ctx &c, const std::string &dtype, const Dims &out, const std::string &why) {
    c.m.generator = "onnx_identity";
    c.m.params["dtype"] = dtype;
    c.m.note = why;
    flat_io(c, c.input(0)->dims, out);
    return true;
}

// The kernel `generator` of one input X viewed as `view` (params shape, dtype) and one
// output Y viewed as `out_view` (ONNX shape `out`).
bool one_in_one_out(Ctx &c, const char *generator, const std::string &dtype, const Dims &view, const Dims &out_view,
                    const Dims &out) {
    c.m.generator = generator;
    c.m.params["shape"] = join_dims(view);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", view, std::nullopt});
    c.m.outputs.push_back({0, "Y", out_view, out});
    return true;
}

// ---- ReduceMean / ReduceSum / ReduceMax / ReduceMin ----
// axes: the attribute, ReduceSum's input 1 from opset 13 (the others' from opset 18,
// beyond the suite's 17); none (or an empty input) reduces every axis unless
// noop_with_empty_axes; keepdims (1) keeps the reduced dimensions as 1.

bool map_reduce(Ctx &c, const char *generator, int64_t axes_input_from, bool float_types) {
    std::string dtype;
    if (!c.only_attributes({"axes", "keepdims", "noop_with_empty_axes"}) || !c.dtype_of_input(0, dtype) ||
        !c.outputs_single() || (float_types && !floats_only(c, dtype))) {
        return false;
    }
    std::vector<int64_t> axes;
    bool given = false;
    if (!axes_of(c, axes, given, axes_input_from)) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    const bool keepdims = c.int_attr("keepdims", 1) != 0;
    if (axes.empty() && (c.int_attr("noop_with_empty_axes", 0) != 0 || in.empty())) {
        return copy_of_input(c, dtype, in, "no axis reduced (noop_with_empty_axes): a copy");
    }
    std::vector<bool> reduced(in.size(), axes.empty());
    for (int64_t a : axes) {
        if (!normalise_axis(c, a, in.size(), (c.node.op_type + ": axis").c_str())) {
            return false;
        }
        if (reduced[a]) {
            return c.skip(c.node.op_type + ": axis " + std::to_string(a) + " given twice");
        }
        reduced[a] = true;
    }
    Dims out;
    for (size_t d = 0; d < in.size(); d++) {
        if (!reduced[d] || keepdims) {
            out.push_back(reduced[d] ? 1 : in[d]);
        }
    }
    // The view: extent-1 dimensions dropped, neighbours that are both reduced or both kept merged.
    Dims view, kept;
    std::string axes_text;
    std::vector<bool> view_reduced;
    for (size_t d = 0; d < in.size(); d++) {
        if (in[d] == 1) {
            continue;
        }
        if (!view.empty() && view_reduced.back() == reduced[d]) {
            view.back() *= in[d];
        } else {
            view.push_back(in[d]);
            view_reduced.push_back(reduced[d]);
        }
    }
    for (size_t v = 0; v < view.size(); v++) {
        if (view_reduced[v]) {
            axes_text += (axes_text.empty() ? "" : ";") + std::to_string(v);
        }
        kept.push_back(view_reduced[v] ? 1 : view[v]); // the kernel's output: the view, reduced dimensions 1
    }
    if (axes_text.empty()) {
        return copy_of_input(c, dtype, out, "every reduced dimension has extent 1: a copy");
    }
    c.m.params["axes"] = axes_text;
    return one_in_one_out(c, generator, dtype, view, kept, out);
}

// ---- Softmax / LogSoftmax ----
// Opset 13: along `axis` (default -1), viewed as OUTER x A x INNER (INNER omitted when 1).
// Opsets 11-12: the input coerced to 2-D at `axis` (default 1), each row's softmax: OUTER x A.

bool map_softmax(Ctx &c, const char *generator) {
    std::string dtype;
    if (!c.only_attributes({"axis"}) || !c.dtype_of_input(0, dtype) || !c.outputs_single() ||
        !floats_only(c, dtype)) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    if (in.empty()) {
        return c.skip(c.node.op_type + " of a scalar: the input needs a dimension to normalise along");
    }
    int64_t axis = c.int_attr("axis", c.opset >= 13 ? -1 : 1);
    if (!normalise_axis(c, axis, in.size(), (c.node.op_type + ": axis").c_str())) {
        return false;
    }
    const int64_t outer = count_of(Dims(in.begin(), in.begin() + axis));
    const int64_t along = c.opset >= 13 ? in[axis] : count_of(Dims(in.begin() + axis, in.end()));
    const int64_t inner = c.opset >= 13 ? count_of(Dims(in.begin() + axis + 1, in.end())) : 1;
    Dims view = {outer, along};
    if (inner > 1) {
        view.push_back(inner);
    }
    return one_in_one_out(c, generator, dtype, view, view, in);
}

// ---- LayerNormalization (opset 17) ----
// Normalised over the dimensions from `axis` (default -1) on: OUTER x N. Scale and B
// (optional) have the shape of those dimensions. The optional outputs Mean and
// InvStdDev (fp32, OUTER values, the normalised dimensions kept as 1) are kernels of
// their own on the same X (onnx_layernorm's `output`).

bool map_layernorm(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"axis", "epsilon", "stash_type"}) || !c.dtype_of_input(0, dtype) ||
        !floats_only(c, dtype)) {
        return false;
    }
    if (c.int_attr("stash_type", 1) != 1) {
        return c.skip("LayerNormalization: stash_type " + std::to_string(c.int_attr("stash_type", 1)) +
                      " is not supported (the statistics are computed in float32, stash_type 1)");
    }
    const Dims &in = c.input(0)->dims;
    int64_t axis = c.int_attr("axis", -1);
    if (in.empty() || !normalise_axis(c, axis, in.size(), "LayerNormalization: axis")) {
        return in.empty() ? c.skip("LayerNormalization of a scalar") : false;
    }
    const int64_t outer = count_of(Dims(in.begin(), in.begin() + axis));
    const int64_t n = count_of(Dims(in.begin() + axis, in.end()));
    const Dims norm_dims(in.begin() + axis, in.end());
    const bool bias = c.in.size() > 2 && c.input(2) && !c.input_name(2).empty();
    for (size_t k = 1; k < (bias ? 3u : 2u); k++) {
        std::string t;
        if (!c.dtype_of_input(k, t)) {
            return false;
        }
        if (t != dtype) {
            return c.skip("LayerNormalization: input '" + c.input_name(k) + "' is " + elem_name(c.input(k)->type) +
                          ", X is " + elem_name(c.input(0)->type));
        }
        // The normalised dimensions, leading 1s aside (no other broadcasting).
        auto strip = [](Dims d) {
            d.erase(d.begin(), std::find_if(d.begin(), d.end(), [](int64_t x) { return x != 1; }));
            return d;
        };
        const Dims &d = c.input(k)->dims;
        if (strip(d) != strip(norm_dims)) {
            return c.skip("LayerNormalization: input '" + c.input_name(k) + "' is " + join_dims(d) +
                          ", not the normalised dimensions " + join_dims(norm_dims) + " (broadcasting is not supported)");
        }
    }
    if (c.node.outputs.empty() || c.node.outputs[0].empty()) {
        return c.skip("LayerNormalization without its output Y");
    }
    const Dims view = {outer, n};
    Dims stat_dims(in.begin(), in.begin() + axis);
    stat_dims.resize(in.size(), 1);
    auto kernel = [&](const std::string &output) {
        OnnxMapping k;
        k.generator = "onnx_layernorm";
        k.params["shape"] = join_dims(view);
        k.params["epsilon"] = number_text(c.float_attr("epsilon", 1e-5));
        k.params["output"] = output;
        k.params["dtype"] = dtype;
        k.inputs.push_back({0, "X", view, std::nullopt});
        if (output == "Y") {
            k.params["bias"] = bias ? "true" : "false";
            k.inputs.push_back({1, "Scale", {n}, std::nullopt});
            if (bias) {
                k.inputs.push_back({2, "B", {n}, std::nullopt});
            }
            k.outputs.push_back({0, "Y", view, in});
        } else {
            k.outputs.push_back({output == "Mean" ? 1 : 2, output, {outer, 1}, stat_dims});
        }
        return k;
    };
    c.m = kernel("Y");
    for (size_t k = 1; k < c.node.outputs.size() && k < 3; k++) {
        if (!c.node.outputs[k].empty()) {
            c.m.more.push_back(kernel(k == 1 ? "Mean" : "InvStdDev"));
        }
    }
    if (!c.m.more.empty()) {
        c.m.note = std::to_string(c.m.more.size()) + " more kernel" + (c.m.more.size() > 1 ? "s" : "") +
                   " for the optional output" + (c.m.more.size() > 1 ? "s" : "");
    }
    return true;
}

} // namespace

void add_reduce_ops(OpTable &t) {
    t.push_back({"ReduceMean", [](Ctx &c) { return map_reduce(c, "onnx_reduce_mean", 18, true); }});
    t.push_back({"ReduceSum", [](Ctx &c) { return map_reduce(c, "onnx_reduce_sum", 13, false); }});
    t.push_back({"ReduceMax", [](Ctx &c) { return map_reduce(c, "onnx_reduce_max", 18, false); }});
    t.push_back({"ReduceMin", [](Ctx &c) { return map_reduce(c, "onnx_reduce_min", 18, false); }});
    t.push_back({"Softmax", [](Ctx &c) { return map_softmax(c, "onnx_softmax"); }});
    t.push_back({"LogSoftmax", [](Ctx &c) { return map_softmax(c, "onnx_logsoftmax"); }});
    t.push_back({"LayerNormalization", map_layernorm});
}

} // namespace tessel::graph::onnx_map
