// Conv padding as its own node (graph/passes/Passes.h). A float Conv with non-zero pads
// (explicit or auto_pad SAME_*) becomes Pad (constant 0, the same pads on the spatial
// dimensions) followed by the same Conv (strides, dilations, group kept) without pads: the
// unpadded Conv's input is a tensor the kernel stages directly. A stride-1 ungrouped one then
// takes the automatic scheduler's convolution form on the matrix unit
// (scheduler/ConvMatrixForm.cpp: per tap, a tile of weights times a row of input); any other
// (a depthwise Conv) the vector form, banded by rows, which a padded input (read at clamped
// rows, staged whole) does not allow at a large image. The price is the padded copy's round trip
// through GM, the Pad kernel's; a DMA that pads as it loads would remove it (not modelled yet).
#include "graph/passes/Passes.h"
#include "graph/passes/Rewrite.h"

#include <algorithm>

namespace tessel::graph {

namespace {

// The Conv's pads (begin per spatial dimension, then end), auto_pad resolved; empty when
// they cannot be known here.
std::vector<int64_t> conv_pads(const GraphNode &n, const GraphTensor &x, const GraphTensor &w) {
    const size_t sr = x.dims.size() - 2;
    const OnnxAttribute *ap = n.attribute("auto_pad");
    const std::string mode = ap ? ap->s : "NOTSET";
    std::vector<int64_t> pads(2 * sr, 0);
    if (mode == "NOTSET") {
        if (const OnnxAttribute *a = n.attribute("pads")) {
            if (a->ints.size() != 2 * sr) {
                return {};
            }
            pads = a->ints;
        }
    } else if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
        const std::vector<int64_t> st = ints_or(n, "strides", sr, 1),
                                   dl = ints_or(n, "dilations", sr, 1);
        if (st.size() != sr || dl.size() != sr) {
            return {};
        }
        for (size_t i = 0; i < sr; i++) {
            // ONNX: the output is ceil(in / stride); the pads make up the window's reach.
            const int64_t in = x.dims[2 + i], out = (in + st[i] - 1) / st[i];
            const int64_t span = dl[i] * (w.dims[2 + i] - 1) + 1;
            const int64_t total = std::max<int64_t>(0, (out - 1) * st[i] + span - in);
            const int64_t small = total / 2;
            pads[i] = mode == "SAME_UPPER" ? small : total - small;
            pads[sr + i] = total - pads[i];
        }
    } else if (mode != "VALID") {
        return {};
    }
    return pads;
}

} // namespace

void split_conv_padding(Graph &g) {
    replace_nodes(g, [&](GraphNode &n, std::vector<GraphNode> &out) {
        if (n.op_type != "Conv" || !n.domain.empty() || n.inputs.size() < 2) {
            return false;
        }
        const GraphTensor &x = g.tensor(n.inputs[0]), &w = g.tensor(n.inputs[1]);
        std::vector<int64_t> pads;
        if (x.type == ElemType::Float32 && x.dims.size() >= 3 && w.dims.size() == x.dims.size()) {
            pads = conv_pads(n, x, w);
        }
        const bool any =
            std::count_if(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }) > 0;
        if (!any || std::count_if(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
            return false;
        }
        const size_t r = x.dims.size(), sr = r - 2;
        // ONNX Pad's pads: every dimension's begin, then every end (N and C: 0).
        std::vector<int64_t> all(2 * r, 0);
        GraphTensor padded;
        padded.name = g.fresh_name(n.inputs[0] + ".padded");
        padded.type = x.type;
        padded.dims = x.dims;
        for (size_t i = 0; i < sr; i++) {
            all[2 + i] = pads[i];
            all[r + 2 + i] = pads[sr + i];
            padded.dims[2 + i] += pads[i] + pads[sr + i];
        }
        GraphNode pad;
        pad.name = g.fresh_name(n.name + ".pad");
        pad.op_type = "Pad";
        pad.inputs = {n.inputs[0]};
        pad.outputs = {padded.name};
        if (g.opset >= 11) {
            pad.inputs.push_back(add_int64_constant(g, n.name + ".pads", all));
        } else {
            pad.attributes.push_back(ints_attribute("pads", all));
        }
        n.inputs[0] = padded.name;
        g.tensors[padded.name] = std::move(padded);
        drop_attributes(n, {"auto_pad", "pads"});
        out.push_back(std::move(pad));
        out.push_back(std::move(n));
        return true;
    });
}

} // namespace tessel::graph
