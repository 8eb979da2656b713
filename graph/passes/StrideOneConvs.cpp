// Strided Convs as stride-1 Convs and a Slice (graph/passes/Passes.h). The matrix unit's
// convolution form (scheduler/ConvMatrixForm.cpp) takes stride-1 windows only: the window
// operand of one tap must be a dense row. So a float Conv with dilation 1, group 1 and a
// stride s > 1 becomes:
//  - a 1x1 kernel without padding (ResNet's downsampling shortcut): Slice of the input with
//    step s, then the Conv at stride 1. Exact, and no more work: the Conv reads only the
//    pixels it used before.
//  - any other kernel: the Conv at stride 1 (the same pads), then Slice of its output with
//    step s. Exact (output pixel i of the strided Conv is pixel s i of the stride-1 one), at
//    s^2 times the multiply-adds (4x for ResNet's 3x3/2 and its 7x7/2 stem), which the
//    matrix unit still does far faster than the vector unit does the strided window. A
//    strided matrix form (the DMA subsampling the rows) would remove the waste; not yet.
// Slice's steps need opset 10; older models are left alone.
#include "graph/passes/Passes.h"
#include "graph/passes/Rewrite.h"

namespace tessel::graph {

namespace {

// Slice(in, starts 0, ends, axes 2.., steps) -> a new tensor of `dims`.
GraphNode slice_node(Graph &g, const std::string &name, const std::string &in,
                     const std::string &out, const std::vector<int64_t> &steps,
                     const std::vector<int64_t> &out_spatial) {
    const size_t sr = steps.size();
    std::vector<int64_t> starts(sr, 0), ends(sr), axes(sr);
    for (size_t i = 0; i < sr; i++) {
        ends[i] = (out_spatial[i] - 1) * steps[i] + 1;
        axes[i] = int64_t(2 + i);
    }
    GraphNode s;
    s.name = name;
    s.op_type = "Slice";
    s.inputs = {in, add_int64_constant(g, name + ".starts", starts),
                add_int64_constant(g, name + ".ends", ends),
                add_int64_constant(g, name + ".axes", axes),
                add_int64_constant(g, name + ".steps", steps)};
    s.outputs = {out};
    return s;
}

} // namespace

void stride_one_convs(Graph &g) {
    if (g.opset < 10) {
        return;
    }
    replace_nodes(g, [&](GraphNode &n, std::vector<GraphNode> &nodes) {
        const bool conv = n.op_type == "Conv" && n.domain.empty() && n.inputs.size() >= 2 &&
                          n.int_attr("group", 1) == 1;
        const GraphTensor *x = conv ? &g.tensor(n.inputs[0]) : nullptr;
        const GraphTensor *w = conv ? &g.tensor(n.inputs[1]) : nullptr;
        const size_t sr = x && x->dims.size() >= 3 ? x->dims.size() - 2 : 0;
        const OnnxAttribute *ap = conv ? n.attribute("auto_pad") : nullptr;
        const bool explicit_pads = !ap || ap->s == "NOTSET" || ap->s == "VALID";
        if (!conv || sr == 0 || x->type != ElemType::Float32 || w->dims.size() != sr + 2 ||
            !explicit_pads) {
            return false;
        }
        const std::vector<int64_t> strides = ints_or(n, "strides", sr, 1),
                                   dil = ints_or(n, "dilations", sr, 1);
        std::vector<int64_t> pads = ints_or(n, "pads", 2 * sr, 0);
        if (ap && ap->s == "VALID") {
            pads.assign(2 * sr, 0);
        }
        bool strided = false, dilated = false, one_by_one = true, padded = false;
        for (size_t i = 0; i < sr && strides.size() == sr && dil.size() == sr; i++) {
            strided = strided || strides[i] > 1;
            dilated = dilated || dil[i] != 1;
            one_by_one = one_by_one && w->dims[2 + i] == 1;
        }
        for (int64_t p : pads) {
            padded = padded || p != 0;
        }
        const GraphTensor &y = g.tensor(n.outputs[0]);
        if (!strided || dilated || strides.size() != sr || pads.size() != 2 * sr ||
            y.dims.size() != sr + 2) {
            return false;
        }
        const std::vector<int64_t> out_spatial(y.dims.begin() + 2, y.dims.end());
        drop_attributes(n, {"strides", "auto_pad", "pads"});
        if (padded) {
            n.attributes.push_back(ints_attribute("pads", pads));
        }
        GraphTensor mid;
        mid.type = x->type;
        mid.dims = x->dims;
        if (one_by_one && !padded) {
            // The input's pixels the strided Conv reads, then the Conv at stride 1.
            mid.name = g.fresh_name(n.inputs[0] + ".strided");
            for (size_t i = 0; i < sr; i++) {
                mid.dims[2 + i] = out_spatial[i];
            }
            GraphNode s = slice_node(g, g.fresh_name(n.name + ".subsample"), n.inputs[0], mid.name,
                                     strides, out_spatial);
            n.inputs[0] = mid.name;
            g.tensors[mid.name] = std::move(mid);
            nodes.push_back(std::move(s));
            nodes.push_back(std::move(n));
        } else {
            // The Conv at stride 1, then every s-th pixel of its output.
            mid.name = g.fresh_name(n.outputs[0] + ".stride1");
            mid.dims[1] = y.dims[1];
            for (size_t i = 0; i < sr; i++) {
                mid.dims[2 + i] = x->dims[2 + i] + pads[i] + pads[sr + i] - w->dims[2 + i] + 1;
            }
            const std::string out = n.outputs[0];
            n.outputs[0] = mid.name;
            GraphNode s = slice_node(g, g.fresh_name(n.name + ".subsample"), mid.name, out, strides,
                                     out_spatial);
            g.tensors[mid.name] = std::move(mid);
            nodes.push_back(std::move(n));
            nodes.push_back(std::move(s));
        }
        return true;
    });
}

} // namespace tessel::graph
