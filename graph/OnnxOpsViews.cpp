// ONNX operators, views: the shape function, and a copy of the data (graph/OnnxMap.h,
// docs/onnx.md).
#include "graph/OnnxMap.h"

#include <set>

namespace tessel::graph::onnx_map {

namespace {

// ---- views: the shape function, and a copy of the data ----

bool map_view(Ctx &c, const Dims &out_dims, const std::string &what) {
    std::string dtype;
    if (!c.dtype_of_input(0, dtype, true) || !c.outputs_single()) {
        return false;
    }
    if (c.input(0)->elements() == 0) { // an empty tensor: its shape is all there is
        c.host_output(0, c.input(0)->type, out_dims, 0);
        c.m.note = what + "; empty (" + join_dims(out_dims) + "): no kernel";
        return true;
    }
    c.m.generator = "onnx_identity";
    c.m.params["dtype"] = dtype;
    c.m.note = what;
    flat_io(c, c.input(0)->dims, out_dims);
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
                return c.skip("Reshape: shape[" + std::to_string(i) +
                              "] = 0 copies a dimension the input lacks");
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
            return c.skip("Reshape: cannot infer the -1 dimension of " + join_dims(out) + " for " +
                          join_dims(in));
        }
        out[infer] = count_of(in) / known;
    }
    if (count_of(out) != count_of(in)) {
        return c.skip("Reshape: " + join_dims(in) + " has " + std::to_string(count_of(in)) +
                      " elements, shape " + join_dims(out) + " " + std::to_string(count_of(out)));
    }
    return map_view(c, out,
                    "a view (Reshape to " + join_dims(out) + "): the kernel copies the data");
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
    return map_view(c, {outer, inner},
                    "a view (Flatten at axis " + std::to_string(axis) +
                        "): the kernel copies the data");
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
            return c.skip("Squeeze: dimension " + std::to_string(a) + " is " +
                          std::to_string(in[a]) + ", not 1");
        }
        drop.insert(a);
    }
    Dims out;
    for (size_t d = 0; d < in.size(); d++) {
        if (given ? !drop.count(int64_t(d)) : in[d] != 1) {
            out.push_back(in[d]);
        }
    }
    return map_view(c, out,
                    "a view (Squeeze to " + join_dims(out) + "): the kernel copies the data");
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
    return map_view(c, out,
                    "a view (Unsqueeze to " + join_dims(out) + "): the kernel copies the data");
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
        return c.skip("Dropout in training mode (training_mode = true, ratio " +
                      number_text(ratio) + "): the output is random; inference Dropout only");
    }
    const std::string what =
        std::string(training ? "training with ratio 0" : "inference") + " Dropout: Y = X, a copy";
    const bool mask = c.node.outputs.size() > 1 && !c.node.outputs[1].empty();
    if (!mask) {
        return map_view(c, c.input(0) ? c.input(0)->dims : Dims{}, what);
    }
    // The mask keeps every element here: all true, a constant of X's shape (no kernel; Tessel's
    // kernels have no bool type, and a graph compiler folds it).
    std::string dtype;
    if (!c.dtype_of_input(0, dtype, true)) {
        return false;
    }
    const Dims &dims = c.input(0)->dims;
    c.host_output(1, ElemType::Bool, dims, 1);
    if (c.node.outputs[0].empty() || c.input(0)->elements() == 0) {
        if (!c.node.outputs[0].empty()) {
            c.host_output(0, c.input(0)->type, dims, 0);
        }
        c.m.note = what + "; the mask all true (a constant)";
        return true;
    }
    c.m.generator = "onnx_identity";
    c.m.params["dtype"] = dtype;
    c.m.note = what + "; the mask all true (a constant, no kernel)";
    flat_io(c, dims, dims);
    return true;
}

} // namespace

void add_view_ops(OpTable &t) {
    t.push_back({"Identity", [](Ctx &c) {
                     return c.only_attributes({}) &&
                            map_view(c, c.input(0) ? c.input(0)->dims : Dims{},
                                     "Identity: Y = X, a copy");
                 }});
    t.push_back({"Reshape", map_reshape});
    t.push_back({"Flatten", map_flatten});
    t.push_back({"Squeeze", map_squeeze});
    t.push_back({"Unsqueeze", map_unsqueeze});
    t.push_back({"Dropout", map_dropout});
}

} // namespace tessel::graph::onnx_map
