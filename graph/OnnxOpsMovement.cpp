// ONNX operators, data movement (graph/OnnxMap.h, docs/onnx.md): Transpose, Slice,
// Pad, Concat, Gather.
#include "graph/OnnxMap.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace tessel::graph::onnx_map {

namespace {

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
        return c.skip("Transpose: perm has " + std::to_string(perm.size()) +
                      " entries for a rank-" + std::to_string(r) + " input");
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
    // Groups in input order give the kernel's input; the permutation maps output group -> input
    // group.
    std::vector<size_t> by_input(groups.size());
    for (size_t g = 0; g < groups.size(); g++) {
        by_input[g] = g;
    }
    std::sort(by_input.begin(), by_input.end(),
              [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
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
    auto given = [&](size_t k) {
        return c.in.size() > k && c.input(k) && !c.input_name(k).empty();
    };
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
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size()) {
        return c.skip("Slice: starts, ends, axes and steps differ in length");
    }
    std::vector<int64_t> start(r, 0), step(r, 1);
    Dims out = in;
    std::set<int64_t> seen;
    for (size_t i = 0; i < starts.size(); i++) {
        int64_t a = axes[i];
        if (!normalise_axis(c, a, in.size(), "Slice: axis")) {
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
    if (count_of(out) == 0) { // nothing to copy: the output's shape is all there is
        c.host_output(0, c.input(0)->type, out, 0);
        c.m.note = "Slice: the output is empty (" + join_dims(out) + "): no kernel";
        return true;
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

// ---- Pad (opset 11+: pads and constant_value are inputs; before: attributes) ----
// Leading dimensions without padding are merged (their elements never mix).

bool map_pad(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"mode", "pads", "value"}) || !c.dtype_of_input(0, dtype) ||
        !c.outputs_single()) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    const size_t r = in.size();
    std::vector<int64_t> pads;
    double value = 0;
    if (c.opset >= 11) {
        if (!c.int_values(1, pads)) {
            return false;
        }
        if (c.in.size() > 2 && c.input(2) && !c.input_name(2).empty()) {
            if (c.input(2)->elements() != 1) {
                return c.skip("Pad: constant_value must be one element");
            }
            value = element(*c.input(2), 0);
        }
    } else {
        if (const OnnxAttribute *a = c.node.attribute("pads")) {
            pads = a->ints;
        }
        value = c.float_attr("value", 0);
    }
    const OnnxAttribute *ma = c.node.attribute("mode");
    const std::string mode = ma ? ma->s : "constant";
    if (mode != "constant" && mode != "reflect" && mode != "edge") {
        return c.skip("Pad: mode '" + mode + "' is not supported (constant, reflect, edge)");
    }
    if (pads.size() != 2 * r) {
        return c.skip("Pad: pads has " + std::to_string(pads.size()) + " entries for a rank-" +
                      std::to_string(r) + " input (every begin, then every end)");
    }
    Dims out(r);
    for (size_t j = 0; j < r; j++) {
        out[j] = in[j] + pads[j] + pads[r + j];
        if (out[j] < 1) {
            return c.skip("Pad: dimension " + std::to_string(j) + " is cropped to nothing");
        }
        if (mode == "reflect" && (pads[j] >= in[j] || pads[r + j] >= in[j])) {
            return c.skip("Pad: reflect pads of dimension " + std::to_string(j) +
                          " reach beyond its extent " + std::to_string(in[j]));
        }
    }
    // The leading run of unpadded dimensions as one.
    size_t lead = 0;
    while (lead + 1 < r && pads[lead] == 0 && pads[r + lead] == 0) {
        lead++;
    }
    Dims kin, kout, kb, ke;
    if (lead > 0) {
        kin.push_back(count_of(Dims(in.begin(), in.begin() + lead)));
        kout.push_back(kin.back());
        kb.push_back(0);
        ke.push_back(0);
    }
    for (size_t j = lead; j < r; j++) {
        kin.push_back(in[j]);
        kout.push_back(out[j]);
        kb.push_back(pads[j]);
        ke.push_back(pads[r + j]);
    }
    kb.insert(kb.end(), ke.begin(), ke.end());
    c.m.generator = "onnx_pad";
    c.m.params["shape"] = join_dims(kin);
    c.m.params["pads"] = join_list(kb);
    c.m.params["mode"] = mode;
    c.m.params["value"] = number_text(value);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", kin, std::nullopt});
    c.m.outputs.push_back({0, "Y", kout, out});
    return true;
}

// ---- Concat: input i as outer rows of w_i elements ----

bool map_concat(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"axis"}) || !c.outputs_single()) {
        return false;
    }
    if (c.node.inputs.empty()) {
        return c.skip("Concat with no input");
    }
    if (!c.same_dtype_inputs(c.node.inputs.size(), dtype)) {
        return false;
    }
    if (!c.node.attribute("axis")) {
        return c.skip("Concat: the axis attribute is required");
    }
    const Dims &first = c.input(0)->dims;
    int64_t axis = c.int_attr("axis", 0);
    if (!normalise_axis(c, axis, first.size(), "Concat: axis")) {
        return false;
    }
    Dims out = first;
    out[axis] = 0;
    const int64_t outer = count_of(Dims(first.begin(), first.begin() + axis));
    // Rows are cut into blocks of B elements, the largest divisor of every width up to 2048
    // (ops/OnnxConcat.cpp): a block belongs to one input.
    int64_t g = 0;
    for (size_t k = 0; k < c.node.inputs.size(); k++) {
        g = std::gcd(g, count_of(c.input(k)->dims) / outer);
    }
    int64_t B = std::min<int64_t>(g, 2048);
    while (g % B != 0) {
        B--;
    }
    Dims widths;
    for (size_t k = 0; k < c.node.inputs.size(); k++) {
        const Dims &d = c.input(k)->dims;
        for (size_t j = 0; j < first.size(); j++) {
            if (d.size() != first.size() || (int64_t(j) != axis && d[j] != first[j])) {
                return c.skip("Concat: input '" + c.input_name(k) + "' is " + join_dims(d) +
                              ", input '" + c.input_name(0) + "' " + join_dims(first) +
                              ": they differ off the axis");
            }
        }
        out[axis] += d[axis];
        const int64_t w = count_of(d) / outer;
        widths.push_back(w);
        c.m.inputs.push_back(
            {static_cast<int>(k), "X" + std::to_string(k), {outer, w / B, B}, std::nullopt});
    }
    c.m.generator = "onnx_concat";
    c.m.params["outer"] = std::to_string(outer);
    c.m.params["widths"] = join_list(widths);
    c.m.params["block"] = std::to_string(B);
    c.m.params["dtype"] = dtype;
    c.m.outputs.push_back({0, "Y", {outer, count_of(out) / outer / B, B}, out});
    return true;
}

// ---- Gather (the indices a parameter input, read from the data set) ----

bool map_gather(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"axis"}) || !c.dtype_of_input(0, dtype) || !c.outputs_single()) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    int64_t axis = c.int_attr("axis", 0);
    if (!normalise_axis(c, axis, in.size(), "Gather: axis")) {
        return false;
    }
    std::vector<int64_t> idx;
    if (!c.int_values(1, idx)) {
        return false;
    }
    if (idx.empty()) {
        return c.skip("Gather: no indices (the output is empty): no kernel for 0 elements");
    }
    const int64_t A = in[axis];
    for (int64_t &i : idx) {
        if (i < -A || i >= A) {
            return c.skip("Gather: index " + std::to_string(i) + " is outside [-" +
                          std::to_string(A) + ", " + std::to_string(A - 1) + "]");
        }
        i = i < 0 ? i + A : i;
    }
    const int64_t outer = count_of(Dims(in.begin(), in.begin() + axis));
    const int64_t inner = count_of(Dims(in.begin() + axis + 1, in.end()));
    Dims out(in.begin(), in.begin() + axis);
    for (int64_t d : c.input(1)->dims) {
        out.push_back(d);
    }
    out.insert(out.end(), in.begin() + axis + 1, in.end());
    const Dims kin = {outer, A, inner};
    c.m.generator = "onnx_gather";
    c.m.params["shape"] = join_dims(kin);
    c.m.params["indices"] = join_list(idx);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", kin, std::nullopt});
    c.m.outputs.push_back({0, "Y", {outer, static_cast<int64_t>(idx.size()), inner}, out});
    return true;
}

// ---- Split (opset 13+: split is input 1; before: the attribute) into the outputs,
// equal parts when no split is given; the view OUTER x A x INNER around the axis ----

bool map_split(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"axis", "split"}) || !c.dtype_of_input(0, dtype, true)) {
        return false;
    }
    const Dims &in = c.input(0)->dims;
    int64_t axis = c.int_attr("axis", 0);
    if (!normalise_axis(c, axis, in.size(), "Split: axis")) {
        return false;
    }
    const size_t n = c.node.outputs.size();
    std::vector<int64_t> split;
    if (c.opset >= 13 && c.node.inputs.size() > 1 && !c.node.inputs[1].empty()) {
        if (!c.int_values(1, split)) {
            return false;
        }
    } else if (const OnnxAttribute *a = c.node.attribute("split")) {
        split = a->ints;
    } else {
        if (n == 0 || in[axis] % int64_t(n) != 0) {
            return c.skip(
                "Split of " + std::to_string(in[axis]) + " into " + std::to_string(n) +
                " equal parts: not a divisor (opsets 11-17 need equal parts without split)");
        }
        split.assign(n, in[axis] / int64_t(n));
    }
    int64_t total = 0;
    for (int64_t s : split) {
        if (s < 0) {
            return c.skip("Split: a piece of " + std::to_string(s) + " elements");
        }
        total += s;
    }
    if (split.size() != n || total != in[axis]) {
        return c.skip("Split: " + std::to_string(split.size()) + " pieces summing to " +
                      std::to_string(total) + " for " + std::to_string(n) +
                      " outputs and an axis of " + std::to_string(in[axis]));
    }
    if (n > 16) {
        return c.skip("Split into " + std::to_string(n) + " outputs (at most 16)");
    }
    const int64_t outer = count_of(Dims(in.begin(), in.begin() + axis));
    const int64_t inner = count_of(Dims(in.begin() + axis + 1, in.end()));
    // Empty pieces (a piece of 0, or an empty input) are constants of their shape; the kernel
    // cuts the others, its sizes the non-empty pieces in order.
    std::vector<int64_t> sizes;
    for (size_t k = 0; k < n; k++) {
        if (c.node.outputs[k].empty()) {
            return c.skip("Split: output " + std::to_string(k) + " is omitted");
        }
        Dims od = in;
        od[axis] = split[k];
        if (count_of(od) == 0) {
            c.host_output(int(k), c.input(0)->type, od, 0);
            continue;
        }
        c.m.outputs.push_back({int(k), "Y" + std::to_string(sizes.size()),
                               {outer, split[k], inner}, od});
        sizes.push_back(split[k]);
    }
    if (sizes.empty()) {
        c.m.note = "Split: every piece is empty: no kernel";
        return true;
    }
    c.m.generator = "onnx_split";
    c.m.params["shape"] = join_dims({outer, in[axis], inner});
    c.m.params["sizes"] = join_list(sizes);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", {outer, in[axis], inner}, std::nullopt});
    return true;
}

} // namespace

void add_movement_ops(OpTable &t) {
    t.push_back({"Transpose", map_transpose});
    t.push_back({"Slice", map_slice});
    t.push_back({"Pad", map_pad});
    t.push_back({"Concat", map_concat});
    t.push_back({"Gather", map_gather});
    t.push_back({"Split", map_split});
}

} // namespace tessel::graph::onnx_map
