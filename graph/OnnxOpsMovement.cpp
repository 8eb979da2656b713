// ONNX operators, data movement (graph/OnnxMap.h, docs/onnx.md).
#include "graph/OnnxMap.h"

#include <algorithm>
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
    if (count_of(out) == 0) {
        return c.skip("Slice: the output is empty (" + join_dims(out) +
                      "): no kernel for 0 elements");
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

} // namespace

void add_movement_ops(OpTable &t) {
    t.push_back({"Transpose", map_transpose});
    t.push_back({"Slice", map_slice});
}

} // namespace tessel::graph::onnx_map
