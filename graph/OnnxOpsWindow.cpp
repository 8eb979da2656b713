// ONNX operators, windows and resampling: MaxPool, AveragePool, GlobalMaxPool,
// GlobalAveragePool, Resize, Upsample (graph/OnnxMap.h, docs/onnx.md). The mapping resolves ONNX's auto_pad and
// ceil_mode into explicit pads and the output shape (onnx/defs/nn/defs.cc, as the
// reference implementation of the backend tests computes them); the generators
// (ops/OnnxPool.cpp) take pads, strides, dilations and the output's extents.
#include "graph/OnnxMap.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tessel::graph::onnx_map {

namespace {

// An ints attribute with `n` entries, or `def` repeated when it is absent.
bool ints_attr(Ctx &c, const char *name, size_t n, int64_t def, Dims &out) {
    const OnnxAttribute *a = c.node.attribute(name);
    if (!a) {
        out.assign(n, def);
        return true;
    }
    out = a->ints;
    if (out.size() != n) {
        return c.skip(c.node.op_type + ": " + name + " has " + std::to_string(out.size()) + " entries for " +
                      std::to_string(n) + (n == 1 ? " spatial dimension" : " spatial dimensions"));
    }
    return true;
}

// MaxPool and AveragePool: the input N x C x D1.. (1 to 3 spatial dimensions).
bool map_pool(Ctx &c, bool is_max) {
    std::string dtype;
    if (is_max ? !c.only_attributes({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
                                     "strides"})
               : !c.only_attributes({"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"})) {
        return false;
    }
    if (is_max && c.node.outputs.size() > 1 && !c.node.outputs[1].empty()) {
        return c.skip("MaxPool's Indices output (int64 flat indices) is not supported");
    }
    if (!c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    if (!is_max && dtype != "fp32" && dtype != "fp16" && dtype != "bf16") {
        return c.skip("AveragePool of " + dtype + ": ONNX defines it on floating-point tensors");
    }
    const Dims &in = c.input(0)->dims;
    if (in.size() < 3 || in.size() > 5) {
        return c.skip(c.node.op_type + " of a rank-" + std::to_string(in.size()) +
                      " input: 1 to 3 spatial dimensions are supported");
    }
    const size_t D = in.size() - 2;
    const OnnxAttribute *ks = c.node.attribute("kernel_shape");
    if (!ks || ks->ints.size() != D) {
        return c.skip(c.node.op_type + ": kernel_shape must have one entry per spatial dimension (" +
                      std::to_string(D) + ")");
    }
    const Dims k = ks->ints;
    Dims s, dil, pads;
    if (!ints_attr(c, "strides", D, 1, s) || !ints_attr(c, "dilations", D, 1, dil) ||
        !ints_attr(c, "pads", 2 * D, 0, pads)) {
        return false;
    }
    const OnnxAttribute *ap = c.node.attribute("auto_pad");
    const std::string auto_pad = ap ? ap->s : "NOTSET";
    const bool ceil_mode = c.int_attr("ceil_mode", 0) != 0;
    if (c.int_attr("storage_order", 0) != 0) {
        return c.skip("MaxPool: storage_order 1 (it only orders the Indices output)");
    }
    Dims out_dims = {in[0], in[1]}, out(D), pb(D), pe(D);
    for (size_t j = 0; j < D; j++) {
        const int64_t S = in[2 + j];
        if (k[j] < 1 || s[j] < 1 || dil[j] < 1) {
            return c.skip(c.node.op_type + ": kernel_shape, strides and dilations must be positive");
        }
        const int64_t eff = (k[j] - 1) * dil[j] + 1; // the window's extent
        if (auto_pad == "NOTSET") {
            pb[j] = pads[j];
            pe[j] = pads[D + j];
            if (pb[j] < 0 || pe[j] < 0) {
                return c.skip(c.node.op_type + ": negative pads");
            }
            const int64_t span = S + pb[j] + pe[j] - eff;
            if (span < 0) {
                return c.skip(c.node.op_type + ": the window (" + std::to_string(eff) +
                              ") is larger than the padded input (" + std::to_string(S + pb[j] + pe[j]) + ")");
            }
            out[j] = (ceil_mode ? (span + s[j] - 1) / s[j] : span / s[j]) + 1;
        } else if (auto_pad == "VALID") {
            if (S < eff) {
                return c.skip(c.node.op_type + ": the window (" + std::to_string(eff) +
                              ") is larger than the input (" + std::to_string(S) + ")");
            }
            pb[j] = pe[j] = 0;
            out[j] = (S - eff) / s[j] + 1;
        } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            out[j] = (S + s[j] - 1) / s[j];
            const int64_t total = std::max<int64_t>(0, (out[j] - 1) * s[j] + eff - S);
            pb[j] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            pe[j] = total - pb[j];
        } else {
            return c.skip(c.node.op_type + ": auto_pad '" + auto_pad + "' is not one ONNX defines");
        }
        // Every window must hold an input element (ONNX asks pads below the kernel).
        if (pb[j] >= eff || (out[j] - 1) * s[j] - pb[j] >= S) {
            return c.skip(c.node.op_type + ": a window of spatial dimension " + std::to_string(j) +
                          " lies entirely in the padding");
        }
        if (dil[j] > 1 && (pb[j] > 0 || (out[j] - 1) * s[j] + (k[j] - 1) * dil[j] - pb[j] > S - 1)) {
            return c.skip("MaxPool: dilations with windows reaching outside the input are not supported");
        }
        out_dims.push_back(out[j]);
    }
    Dims kin = {in[0] * in[1]}, kout = {in[0] * in[1]};
    for (size_t j = 0; j < D; j++) {
        kin.push_back(in[2 + j]);
        kout.push_back(out[j]);
    }
    Dims all_pads = pb;
    all_pads.insert(all_pads.end(), pe.begin(), pe.end());
    c.m.generator = is_max ? "onnx_maxpool" : "onnx_averagepool";
    c.m.params["shape"] = join_dims(kin);
    c.m.params["kernel"] = join_list(k);
    c.m.params["strides"] = join_list(s);
    c.m.params["pads"] = join_list(all_pads);
    c.m.params["out"] = join_dims(out);
    c.m.params["dtype"] = dtype;
    if (is_max) {
        c.m.params["dilations"] = join_list(dil);
    } else {
        c.m.params["count_include_pad"] = std::to_string(c.int_attr("count_include_pad", 0) != 0);
    }
    c.m.inputs.push_back({0, "X", kin, std::nullopt});
    c.m.outputs.push_back({0, "Y", kout, out_dims});
    return true;
}

// GlobalMaxPool and GlobalAveragePool: N x C x D1.. -> N x C x 1.., one row per image.
bool map_global_pool(Ctx &c, bool is_max) {
    std::string dtype;
    if (!c.only_attributes({}) || !c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    if (!is_max && dtype != "fp32" && dtype != "fp16" && dtype != "bf16") {
        return c.skip("GlobalAveragePool of " + dtype + ": ONNX defines it on floating-point tensors");
    }
    const Dims &in = c.input(0)->dims;
    if (in.size() < 3) {
        return c.skip(c.node.op_type + " of a rank-" + std::to_string(in.size()) +
                      " input: it needs N, C and spatial dimensions");
    }
    Dims out_dims = {in[0], in[1]};
    int64_t row = 1;
    for (size_t j = 2; j < in.size(); j++) {
        row *= in[j];
        out_dims.push_back(1);
    }
    const Dims kin = {in[0] * in[1], row}, kout = {in[0] * in[1], 1};
    c.m.generator = is_max ? "onnx_globalmaxpool" : "onnx_globalaveragepool";
    c.m.params["shape"] = join_dims(kin);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", kin, std::nullopt});
    c.m.outputs.push_back({0, "Y", kout, out_dims});
    return true;
}

// Resize (opset 11+: roi, scales, sizes are inputs, an empty name or tensor = absent) and
// Upsample (opset 9: scales an input; nearest = asymmetric coordinates, floor).
bool map_resize(Ctx &c, bool upsample) {
    std::string dtype;
    if (upsample ? !c.only_attributes({"mode"})
                 : !c.only_attributes({"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                                       "extrapolation_value", "mode", "nearest_mode"})) {
        return false;
    }
    if (!c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    if (!upsample && c.opset < 11) {
        return c.skip("Resize before opset 11 (scales as the second input, no roi) is not supported");
    }
    const Dims &in = c.input(0)->dims;
    const size_t r = in.size();
    auto given = [&](size_t k) { return c.input(k) && !c.input_name(k).empty() && c.input(k)->elements() > 0; };
    auto floats = [&](size_t k, std::vector<double> &out) {
        for (int64_t i = 0; i < c.input(k)->elements(); i++) {
            out.push_back(element(*c.input(k), i));
        }
    };
    const size_t scales_at = upsample ? 1 : 2;
    std::vector<double> scales, roi;
    Dims out(r);
    std::string scales_text;
    if (!upsample && given(3)) {
        std::vector<int64_t> sizes;
        if (!c.int_values(3, sizes)) {
            return false;
        }
        if (sizes.size() != r) {
            return c.skip("Resize: sizes has " + std::to_string(sizes.size()) + " entries for a rank-" +
                          std::to_string(r) + " input");
        }
        out = sizes;
    } else if (given(scales_at)) {
        floats(scales_at, scales);
        if (scales.size() != r) {
            return c.skip(c.node.op_type + ": scales has " + std::to_string(scales.size()) + " entries for a rank-" +
                          std::to_string(r) + " input");
        }
        for (size_t j = 0; j < r; j++) {
            if (!(scales[j] > 0)) {
                return c.skip(c.node.op_type + ": scale " + number_text(scales[j]) + " is not positive");
            }
            out[j] = static_cast<int64_t>(std::floor(scales[j] * double(in[j])));
            scales_text += (j ? ";" : "") + number_text(scales[j]);
        }
    } else {
        return c.skip(c.node.op_type + ": neither scales nor sizes is given");
    }
    if (count_of(out) == 0) {
        return c.skip(c.node.op_type + ": the output is empty (" + join_dims(out) + "): no kernel for 0 elements");
    }
    const OnnxAttribute *ma = c.node.attribute("mode");
    const std::string mode = ma ? ma->s : "nearest";
    if (mode != "nearest" && mode != "linear" && mode != "cubic") {
        return c.skip(c.node.op_type + ": mode '" + mode + "' is not supported (nearest, linear, cubic)");
    }
    if (mode != "nearest" && dtype != "fp32" && dtype != "fp16" && dtype != "bf16") {
        return c.skip(c.node.op_type + ": " + mode + " interpolation of " + dtype + " is not supported");
    }
    c.m.generator = "onnx_resize";
    c.m.params["shape"] = join_dims(in);
    c.m.params["out"] = join_dims(out);
    c.m.params["mode"] = mode;
    c.m.params["dtype"] = dtype;
    if (!scales_text.empty()) {
        c.m.params["scales"] = scales_text;
    }
    if (upsample) {
        c.m.params["coordinate_transformation_mode"] = "asymmetric";
        c.m.params["nearest_mode"] = "floor";
    } else {
        const OnnxAttribute *ct = c.node.attribute("coordinate_transformation_mode");
        const OnnxAttribute *nm = c.node.attribute("nearest_mode");
        const std::string ctm = ct ? ct->s : "half_pixel";
        c.m.params["coordinate_transformation_mode"] = ctm;
        c.m.params["nearest_mode"] = nm ? nm->s : "round_prefer_floor";
        c.m.params["cubic_coeff_a"] = number_text(c.float_attr("cubic_coeff_a", -0.75));
        c.m.params["exclude_outside"] = std::to_string(c.int_attr("exclude_outside", 0) != 0);
        c.m.params["extrapolation_value"] = number_text(c.float_attr("extrapolation_value", 0));
        if (ctm == "tf_crop_and_resize") {
            if (!given(1)) {
                return c.skip("Resize: tf_crop_and_resize needs roi");
            }
            floats(1, roi);
            if (roi.size() != 2 * r) {
                return c.skip("Resize: roi has " + std::to_string(roi.size()) + " entries for a rank-" +
                              std::to_string(r) + " input");
            }
            std::string t;
            for (size_t j = 0; j < roi.size(); j++) {
                t += (j ? ";" : "") + number_text(roi[j]);
            }
            c.m.params["roi"] = t;
        }
    }
    c.m.inputs.push_back({0, "X", in, std::nullopt});
    c.m.outputs.push_back({0, "Y", out, out});
    return true;
}

} // namespace

void add_window_ops(OpTable &t) {
    t.push_back({"MaxPool", [](Ctx &c) { return map_pool(c, true); }});
    t.push_back({"AveragePool", [](Ctx &c) { return map_pool(c, false); }});
    t.push_back({"GlobalMaxPool", [](Ctx &c) { return map_global_pool(c, true); }});
    t.push_back({"GlobalAveragePool", [](Ctx &c) { return map_global_pool(c, false); }});
    t.push_back({"Resize", [](Ctx &c) { return map_resize(c, false); }});
    t.push_back({"Upsample", [](Ctx &c) { return map_resize(c, true); }});
}

} // namespace tessel::graph::onnx_map
