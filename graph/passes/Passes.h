#ifndef TESSEL_GRAPH_PASSES_PASSES_H
#define TESSEL_GRAPH_PASSES_PASSES_H

// The graph passes of the model compiler (docs/models.md), one per file in
// graph/passes/ as the NPU backend's are in npu_target/passes/: each takes
// the graph IR (graph/Graph.h) and rewrites it in place, and the graph can be
// printed after each one (`tessel model compile --dump-after PASS|all`).
// Halide-free: a pass decides what is a kernel and what is metadata; how a
// kernel runs is the kernel level's business.

#include "graph/Graph.h"

#include <functional>
#include <string>
#include <vector>

namespace tessel::graph {

/** Evaluates nodes whose inputs are all constants (and Shape, whose result
 * the static shapes give) on the host, replacing their outputs with constant
 * tensors: Constant, Shape, Gather, Concat, Cast, Unsqueeze, Squeeze,
 * Reshape, Flatten, Identity, Dropout, Add, Sub, Mul, Div, ConstantOfShape,
 * Transpose (PyTorch's exporter transposes Linear weights), Size, Neg, 1-D Slice. PyTorch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape
 * chains become Reshape of a constant shape. (FoldConstants.cpp) `folded`, if
 * given, receives every tensor computed (the import declares their shapes). */
void fold_constants(Graph &g, std::vector<GraphTensor> *folded = nullptr);

/** Removes nodes none of whose outputs reaches a graph output, and the
 * tensors only they used. (EliminateDeadNodes.cpp) */
void eliminate_dead_nodes(Graph &g);

/** BatchNormalization (inference form) after a Conv that only it reads, with
 * constant parameters: folded into the Conv's weights and bias. Any other
 * BatchNormalization with constant parameters becomes Mul and Add by
 * per-channel constants. (FoldBatchNorm.cpp) */
void fold_batchnorm(Graph &g);

/** Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference Dropout and a
 * Cast to the input's own element type become views: the output is an alias of the input's storage (another shape
 * of the same bytes), with no kernel. (Views.cpp) */
void mark_views(Graph &g);

/** Epilogues fused into their producer: a Conv, Gemm or MatMul followed by a
 * chain of Add of a constant (bias), Add of a tensor of the same shape (a
 * residual, once), Relu, Clip, HardSwish, HardSigmoid, LeakyRelu or Sigmoid,
 * each the only reader of the one before, becomes a fused group, compiled as
 * one kernel; its intermediates never go to GM. (FuseEpilogues.cpp) */
void fuse_epilogues(Graph &g);

/** A strided float Conv (dilation 1, group 1) as a stride-1 Conv and a Slice with the stride as
 * its step: of the input before a 1x1 unpadded Conv (exact, no extra work), else of the
 * stride-1 Conv's output (exact, s^2 the multiply-adds). Opset 10 and later.
 * (StrideOneConvs.cpp) */
void stride_one_convs(Graph &g);

/** A float Conv with padding becomes Pad (zeros) then the unpadded Conv, whose input the
 * matrix unit's convolution form (stride 1, group 1) or the vector form's row bands (a
 * depthwise Conv) can stage directly. (SplitConvPadding.cpp) */
void split_conv_padding(Graph &g);

struct GraphPass {
    const char *name;   // as --dump-after names it
    const char *what;   // one line for --help and docs
    void (*run)(Graph &);
};

/** The passes in the order the model compiler runs them. */
const std::vector<GraphPass> &graph_passes();

/** The pass names, comma-separated ("fold-constants, ..."). */
std::string graph_pass_names();

/** Runs every pass in order, calling `after(pass name, graph)` after each. */
void run_graph_passes(Graph &g, const std::function<void(const std::string &, const Graph &)> &after = {});

} // namespace tessel::graph

#endif
