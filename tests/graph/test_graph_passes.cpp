// The graph passes (graph/passes/Passes.h), each on a tiny model written from
// C++, each asserting what the pass changes (so each fails without its pass).
#include "graph/GraphImport.h"
#include "graph/passes/HostEval.h"
#include "graph/passes/Passes.h"
#include "tests/graph/ModelBuilder.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tessel;
using namespace tessel::graph;
using tessel::test::ModelBuilder;

namespace {

Graph load(const ModelBuilder &b, const std::string &name) { return import_onnx_graph(b.save(tessel::test::model_dir() + "/" + name)); }

std::vector<std::string> ops(const Graph &g) {
    std::vector<std::string> r;
    for (const auto &n : g.nodes) {
        r.push_back(n.op_type);
    }
    return r;
}

std::vector<double> values(const Graph &g, const std::string &t) {
    EXPECT_TRUE(g.tensor(t).value) << t;
    return g.tensor(t).value ? *float_values(*g.tensor(t).value) : std::vector<double>{};
}

TEST(FoldConstants, PyTorchShapeChainBecomesAConstantShape) {
    Graph g = load(tessel::test::shape_chain(), "chain.onnx");
    EXPECT_EQ(g.nodes.size(), 9u);
    fold_constants(g);
    EXPECT_EQ(ops(g), (std::vector<std::string>{"Reshape", "Relu"}));
    const GraphTensor &shape = g.tensor("shape");
    ASSERT_TRUE(shape.value);
    EXPECT_EQ(*int_values(*shape.value), (std::vector<int64_t>{2, -1}));
    EXPECT_EQ(shape.producer, -1);
    EXPECT_FALSE(g.has_tensor("s")); // the chain's tensors are gone
}

TEST(FoldConstants, ArithmeticOnConstantsIsEvaluated) {
    ModelBuilder b;
    b.input("x", {3}).init("a", {3}, {1, 2, 3}).init("c", {1}, {10}).output("y", 1);
    b.node("Mul", {"a", "c"}, {"ac"});           // [10, 20, 30]
    b.node("Sub", {"ac", "a"}, {"d"});           // [9, 18, 27]
    b.node("Add", {"x", "d"}, {"y"}, "add_x");   // not constant: stays
    Graph g = load(b, "arith.onnx");
    fold_constants(g);
    EXPECT_EQ(ops(g), std::vector<std::string>{"Add"});
    EXPECT_EQ(values(g, "d"), (std::vector<double>{9, 18, 27}));
}

TEST(EliminateDeadNodes, RemovesWhatNoOutputNeeds) {
    ModelBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"}, "live");
    b.node("Sigmoid", {"x"}, {"unused"}, "dead1");
    b.node("Neg", {"unused"}, {"unused2"}, "dead2");
    Graph g = load(b, "dead.onnx");
    EXPECT_EQ(g.nodes.size(), 3u);
    eliminate_dead_nodes(g);
    EXPECT_EQ(ops(g), std::vector<std::string>{"Relu"});
    EXPECT_FALSE(g.has_tensor("unused"));
    EXPECT_FALSE(g.has_tensor("unused2"));
}

// x[1x2x2x2] -> Conv 1x1 (W 2x2x1x1, B) -> BatchNorm -> y; and y -> Relu -> BatchNorm -> z.
ModelBuilder conv_bn() {
    ModelBuilder b;
    b.input("x", {1, 2, 2, 2}).output("z", 4);
    b.init("W", {2, 2, 1, 1}, {1, 2, 3, 4}).init("B", {2}, {0.5f, -1});
    b.init("scale", {2}, {2, 3}).init("bias", {2}, {1, -2}).init("mean", {2}, {0.25f, 1}).init("var", {2}, {3, 8});
    b.init("scale2", {2}, {1, 1}).init("bias2", {2}, {0, 1}).init("mean2", {2}, {1, 0}).init("var2", {2}, {0, 3});
    b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
    ModelBuilder::attr(b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"}, "bn"), "epsilon",
                       1.0f);
    b.node("Relu", {"y"}, {"r"}, "relu");
    ModelBuilder::attr(b.node("BatchNormalization", {"r", "scale2", "bias2", "mean2", "var2"}, {"z"}, "bn2"),
                       "epsilon", 1.0f);
    return b;
}

TEST(FoldBatchNorm, FoldsIntoTheConvWeightsAndBias) {
    Graph g = load(conv_bn(), "conv_bn.onnx");
    fold_batchnorm(g);
    EXPECT_EQ(ops(g), (std::vector<std::string>{"Conv", "Relu", "Mul", "Add"}));
    const GraphNode &conv = g.nodes[0];
    EXPECT_EQ(conv.outputs[0], "y"); // the Conv now writes the BN's output
    // s = scale / sqrt(var + 1) = [1, 1]; W' = W * s[m]; B' = (B - mean) * s + bias
    EXPECT_EQ(values(g, conv.inputs[1]), (std::vector<double>{1, 2, 3, 4}));
    const double s1 = 3 / std::sqrt(9.0f);
    EXPECT_EQ(values(g, conv.inputs[2]), (std::vector<double>{(0.5 - 0.25) * 1 + 1, (-1 - 1) * s1 - 2}));
    // The BN after Relu: Mul by s = 1/sqrt(var2 + 1) and Add of bias2 - mean2 * s, both 2x1x1.
    const GraphNode &mul = g.nodes[2], &add = g.nodes[3];
    EXPECT_EQ(g.tensor(mul.inputs[1]).dims, (std::vector<int64_t>{2, 1, 1}));
    EXPECT_EQ(values(g, mul.inputs[1]), (std::vector<double>{1, 0.5}));
    EXPECT_EQ(values(g, add.inputs[1]), (std::vector<double>{-1, 1}));
    EXPECT_EQ(add.outputs[0], "z");
}

TEST(FoldBatchNorm, ScalesEachOutputChannel) {
    ModelBuilder b;
    b.input("x", {1, 1, 2, 2}).output("y", 4);
    b.init("W", {2, 1, 1, 1}, {1, 1});
    b.init("scale", {2}, {2, 4}).init("bias", {2}, {0, 0}).init("mean", {2}, {0, 0}).init("var", {2}, {0, 0});
    b.node("Conv", {"x", "W"}, {"c"}, "conv"); // no bias: the fold adds one
    ModelBuilder::attr(b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"}, "bn"), "epsilon",
                       1.0f);
    Graph g = load(b, "conv_bn_nobias.onnx");
    fold_batchnorm(g);
    ASSERT_EQ(ops(g), std::vector<std::string>{"Conv"});
    EXPECT_EQ(values(g, g.nodes[0].inputs[1]), (std::vector<double>{2, 4}));
    EXPECT_EQ(values(g, g.nodes[0].inputs[2]), (std::vector<double>{0, 0}));
}

TEST(Views, ReshapeAndFlattenBecomeAliases) {
    ModelBuilder b;
    b.input("x", {2, 3, 4}).init_i64("shape", {2}, {6, 4}).output("y", 2);
    b.node("Relu", {"x"}, {"a"}, "relu");
    b.node("Reshape", {"a", "shape"}, {"r"}, "reshape");
    ModelBuilder::attr(b.node("Flatten", {"r"}, {"f"}, "flatten"), "axis", int64_t(0));
    b.node("Sigmoid", {"f"}, {"y"}, "sigmoid");
    Graph g = load(b, "views.onnx");
    mark_views(g);
    EXPECT_FALSE(g.nodes[0].view);
    EXPECT_TRUE(g.nodes[1].view);
    EXPECT_TRUE(g.nodes[2].view);
    EXPECT_EQ(g.tensor("r").alias_of, "a");
    EXPECT_EQ(g.storage_of("f").name, "a");
    EXPECT_NE(print_graph(g, "views").find("  flatten: Flatten(r) -> f float32[1x24] {axis=0}  [view of a]"),
              std::string::npos)
        << print_graph(g, "views");
}

TEST(Views, CastToItsOwnTypeIsAViewAndNeedsNoKernel) {
    ModelBuilder b;
    b.input("x", {4}).output("y", 1);
    ModelBuilder::attr(b.node("Cast", {"x"}, {"c"}, "cast"), "to", int64_t(onnx::TensorProto::FLOAT));
    b.node("Relu", {"c"}, {"y"}, "relu");
    Graph g = load(b, "cast_view.onnx");
    EXPECT_EQ(unsupported_nodes(g), std::vector<std::string>{"cast (Cast)"});
    mark_views(g);
    EXPECT_TRUE(g.nodes[0].view);
    EXPECT_EQ(g.storage_of("c").name, "x");
    EXPECT_TRUE(unsupported_nodes(g).empty()); // a view has no kernel
}

// x -> Conv1 -> Relu -> r1; Conv2(r1) + r1 -> Relu -> y (a residual block); m = MatMul(y2d, Wm) + bm -> Sigmoid.
ModelBuilder residual_block() {
    ModelBuilder b;
    b.input("x", {1, 2, 3, 3}).output("y", 4).output("m", 4);
    b.init("W1", {2, 2, 1, 1}, {1, 0, 0, 1}).init("W2", {2, 2, 1, 1}, {0, 1, 1, 0});
    b.init("Wm", {3, 2}, {1, 2, 3, 4, 5, 6}).init("bm", {2}, {1, 1});
    b.node("Conv", {"x", "W1"}, {"c1"}, "conv1");
    b.node("Relu", {"c1"}, {"r1"}, "relu1");
    b.node("Conv", {"r1", "W2"}, {"c2"}, "conv2");
    b.node("Add", {"c2", "r1"}, {"a"}, "add");
    b.node("Relu", {"a"}, {"y"}, "relu2");
    b.node("MatMul", {"x", "Wm"}, {"mm"}, "matmul"); // 1x2x3x3 @ 3x2
    b.node("Add", {"mm", "bm"}, {"mb"}, "bias");
    b.node("Sigmoid", {"mb"}, {"m"}, "sigmoid");
    return b;
}

TEST(FuseEpilogues, ConvBiasResidualActivationGroups) {
    Graph g = load(residual_block(), "residual.onnx");
    fuse_epilogues(g);
    ASSERT_EQ(g.groups.size(), 3u);
    EXPECT_EQ(g.groups[0].pattern, "Conv+Relu");
    EXPECT_EQ(g.groups[0].nodes, (std::vector<std::string>{"conv1", "relu1"}));
    EXPECT_EQ(g.groups[1].pattern, "Conv+Add(residual)+Relu");
    EXPECT_EQ(g.groups[1].nodes, (std::vector<std::string>{"conv2", "add", "relu2"}));
    EXPECT_EQ(g.groups[2].pattern, "MatMul+Add(bias)+Sigmoid");
    for (const auto &n : g.nodes) {
        EXPECT_GE(n.group, 0) << n.name;
    }
}

TEST(FuseEpilogues, ATensorReadTwiceEndsTheGroup) {
    ModelBuilder b;
    b.input("x", {1, 2, 3, 3}).output("y", 4).output("z", 4);
    b.init("W1", {2, 2, 1, 1}, {1, 0, 0, 1});
    b.node("Conv", {"x", "W1"}, {"c"}, "conv");
    b.node("Relu", {"c"}, {"y"}, "relu");
    b.node("Sigmoid", {"c"}, {"z"}, "sigmoid"); // c has two readers
    Graph g = load(b, "two_readers.onnx");
    fuse_epilogues(g);
    EXPECT_TRUE(g.groups.empty());
}

TEST(SplitConvPadding, APaddedStrideOneConvBecomesPadThenAnUnpaddedConv) {
    ModelBuilder b;
    b.input("x", {1, 2, 4, 5}).output("y", 4).output("z", 4);
    b.init("W", {2, 2, 3, 3}, std::vector<float>(36, 1.0f));
    ModelBuilder::attr(b.node("Conv", {"x", "W"}, {"y"}, "conv"), "pads", std::vector<int64_t>{1, 2, 1, 0});
    auto &strided = b.node("Conv", {"x", "W"}, {"z"}, "strided"); // its stride is kept
    ModelBuilder::attr(strided, "auto_pad", std::string("SAME_UPPER"));
    ModelBuilder::attr(strided, "strides", std::vector<int64_t>{2, 2});
    Graph g = load(b, "conv_pads.onnx");
    split_conv_padding(g);
    ASSERT_EQ(ops(g), (std::vector<std::string>{"Pad", "Conv", "Pad", "Conv"}));
    const GraphNode &pad = g.nodes[0], &conv = g.nodes[1];
    EXPECT_EQ(pad.inputs[0], "x");
    ASSERT_EQ(pad.inputs.size(), 2u); // opset 13: pads is an input
    const GraphTensor &pads = g.tensor(pad.inputs[1]);
    ASSERT_TRUE(pads.value);
    EXPECT_EQ(*float_values(*pads.value), (std::vector<double>{0, 0, 1, 2, 0, 0, 1, 0}));
    EXPECT_EQ(g.tensor(pad.outputs[0]).dims, (std::vector<int64_t>{1, 2, 6, 7}));
    EXPECT_EQ(conv.inputs[0], pad.outputs[0]);
    EXPECT_EQ(conv.attribute("pads"), nullptr);
    EXPECT_EQ(g.tensor("y").dims, (std::vector<int64_t>{1, 2, 4, 5})); // the Conv's output is unchanged
    // SAME_UPPER at stride 2 on 4x5: outputs 2x3, so 1 row (0 + 1) and 2 columns (1 + 1) of padding.
    EXPECT_EQ(*float_values(*g.tensor(g.nodes[2].inputs[1]).value), (std::vector<double>{0, 0, 0, 1, 0, 0, 1, 1}));
    const GraphNode &sconv = g.nodes[3];
    EXPECT_EQ(sconv.inputs[0], g.nodes[2].outputs[0]);
    EXPECT_EQ(sconv.attribute("auto_pad"), nullptr);
    ASSERT_NE(sconv.attribute("strides"), nullptr);
    EXPECT_EQ(sconv.attribute("strides")->ints, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(g.tensor("z").dims, (std::vector<int64_t>{1, 2, 2, 3}));
}

TEST(StrideOneConvs, AStridedConvBecomesAStrideOneConvAndASlice) {
    ModelBuilder b;
    b.input("x", {1, 2, 8, 8}).output("y", 4).output("z", 4);
    b.init("W1", {3, 2, 1, 1}, std::vector<float>(6, 1.0f));
    b.init("W3", {3, 2, 3, 3}, std::vector<float>(54, 1.0f));
    ModelBuilder::attr(b.node("Conv", {"x", "W1"}, {"y"}, "shortcut"), "strides", std::vector<int64_t>{2, 2});
    auto &c3 = b.node("Conv", {"x", "W3"}, {"z"}, "conv3");
    ModelBuilder::attr(c3, "strides", std::vector<int64_t>{2, 2});
    ModelBuilder::attr(c3, "pads", std::vector<int64_t>{1, 1, 1, 1});
    Graph g = load(b, "conv_strides.onnx");
    stride_one_convs(g);
    // The 1x1 shortcut reads every other pixel: Slice of its input first; the 3x3 runs at
    // stride 1 (its pads kept) and its output is subsampled.
    ASSERT_EQ(ops(g), (std::vector<std::string>{"Slice", "Conv", "Conv", "Slice"}));
    const GraphNode &s1 = g.nodes[0], &short_conv = g.nodes[1], &conv3 = g.nodes[2], &s3 = g.nodes[3];
    EXPECT_EQ(s1.inputs[0], "x");
    EXPECT_EQ(g.tensor(s1.outputs[0]).dims, (std::vector<int64_t>{1, 2, 4, 4}));
    ASSERT_EQ(s1.inputs.size(), 5u);
    EXPECT_EQ(*float_values(*g.tensor(s1.inputs[2]).value), (std::vector<double>{7, 7})); // ends
    EXPECT_EQ(*float_values(*g.tensor(s1.inputs[3]).value), (std::vector<double>{2, 3})); // axes
    EXPECT_EQ(*float_values(*g.tensor(s1.inputs[4]).value), (std::vector<double>{2, 2})); // steps
    EXPECT_EQ(short_conv.inputs[0], s1.outputs[0]);
    EXPECT_EQ(short_conv.attribute("strides"), nullptr);
    EXPECT_EQ(conv3.attribute("strides"), nullptr);
    ASSERT_NE(conv3.attribute("pads"), nullptr);
    EXPECT_EQ(conv3.attribute("pads")->ints, (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(g.tensor(conv3.outputs[0]).dims, (std::vector<int64_t>{1, 3, 8, 8}));
    EXPECT_EQ(s3.inputs[0], conv3.outputs[0]);
    EXPECT_EQ(s3.outputs[0], "z");
    EXPECT_EQ(g.tensor("z").dims, (std::vector<int64_t>{1, 3, 4, 4}));
    EXPECT_EQ(g.tensor("y").dims, (std::vector<int64_t>{1, 3, 4, 4}));
}

TEST(GraphPasses, RunInOrderAndPrintAfterEach) {
    Graph g = load(tessel::test::shape_chain(), "chain2.onnx");
    std::vector<std::string> names;
    std::string dumps;
    run_graph_passes(g, [&](const std::string &pass, const Graph &after) {
        names.push_back(pass);
        dumps += print_graph(after, pass);
    });
    EXPECT_EQ(names, (std::vector<std::string>{"fold-constants", "eliminate-dead-nodes", "fold-batchnorm", "views",
                                               "stride-one-convs", "split-conv-padding", "fuse-epilogues"}));
    EXPECT_EQ(graph_pass_names(),
              "fold-constants, eliminate-dead-nodes, fold-batchnorm, views, stride-one-convs, split-conv-padding, "
              "fuse-epilogues");
    EXPECT_NE(dumps.find("== graph after fold-constants: 2 nodes (0 views"), std::string::npos) << dumps;
    EXPECT_NE(dumps.find("== graph after views: 2 nodes (1 views"), std::string::npos) << dumps;
    EXPECT_NE(dumps.find("flatten: Reshape(x, shape const int64[2]) -> r float32[2x12]  [view of x]"),
              std::string::npos)
        << dumps;
}

} // namespace
