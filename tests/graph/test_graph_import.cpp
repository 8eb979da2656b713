// The model import (graph/GraphImport.h): ONNX's checker and shape inference
// into the graph IR, --input-shape, and every bad model an error naming the
// node or tensor.
#include "graph/GraphImport.h"
#include "npu_target/common/Error.h"
#include "tests/graph/ModelBuilder.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace tessel;
using namespace tessel::graph;
using tessel::test::ModelBuilder;

namespace {

std::string error_of(const std::string &path, const ImportOptions &o = {}) {
    try {
        import_onnx_graph(path, o);
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}

// x[1x3x4x4] -> Relu -> Add(bias[3x1x1]) -> y
ModelBuilder relu_add(const std::vector<int64_t> &x_dims = {1, 3, 4, 4}) {
    ModelBuilder b;
    b.input("x", x_dims).init("bias", {3, 1, 1}, {1, 2, 3}).output("y", 4);
    b.node("Relu", {"x"}, {"r"}, "relu0");
    b.node("Add", {"r", "bias"}, {"y"}); // unnamed
    return b;
}

TEST(GraphImport, InfersShapesAndLinksTensors) {
    Graph g = import_onnx_graph(relu_add().save(tessel::test::model_dir() + "/relu_add.onnx"));
    EXPECT_EQ(g.opset, 13);
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[1].name, "Add_1"); // an unnamed node is named by its op and position
    ASSERT_EQ(g.inputs, std::vector<std::string>{"x"});
    ASSERT_EQ(g.outputs, std::vector<std::string>{"y"});
    const GraphTensor &r = g.tensor("r");
    EXPECT_EQ(r.dims, (std::vector<int64_t>{1, 3, 4, 4})); // from ONNX's shape inference
    EXPECT_EQ(r.producer, 0);
    EXPECT_EQ(r.consumers, std::vector<int>{1});
    EXPECT_EQ(g.tensor("y").dims, (std::vector<int64_t>{1, 3, 4, 4}));
    EXPECT_TRUE(g.tensor("y").is_output);
    ASSERT_TRUE(g.tensor("bias").constant());
    EXPECT_EQ(g.tensor("bias").value->elements(), 3);
    EXPECT_TRUE(g.tensor("x").is_input);
    const std::string text = print_graph(g, "import");
    EXPECT_NE(text.find("  relu0: Relu(x) -> r float32[1x3x4x4]\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  Add_1: Add(r, bias const float32[3x1x1]) -> y float32[1x3x4x4]\n"), std::string::npos)
        << text;
}

TEST(GraphImport, TruncatedFileIsAnError) {
    const std::string bytes = relu_add().bytes();
    const std::string p = tessel::test::model_dir() + "/truncated.onnx";
    std::ofstream(p, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    const std::string e = error_of(p);
    EXPECT_NE(e.find(p + ": not an ONNX model: the protobuf does not parse"), std::string::npos) << e;
}

TEST(GraphImport, SymbolicDimensionNeedsInputShape) {
    const std::string p = relu_add({-1, 3, 4, 4}).save(tessel::test::model_dir() + "/symbolic.onnx");
    const std::string e = error_of(p);
    EXPECT_NE(e.find("input 'x' has a symbolic dimension 'N' (dimension 0 of Nx3x4x4): give its static shape with "
                     "--input-shape x="),
              std::string::npos)
        << e;
    ImportOptions o;
    add_input_shape(o, "x=2x3x4x4");
    Graph g = import_onnx_graph(p, o);
    EXPECT_EQ(g.tensor("y").dims, (std::vector<int64_t>{2, 3, 4, 4})); // propagated
}

TEST(GraphImport, InputShapeErrorsNameTheInput) {
    const std::string p = relu_add({-1, 3, 4, 4}).save(tessel::test::model_dir() + "/symbolic2.onnx");
    ImportOptions wrong_name, wrong_rank, wrong_dim;
    add_input_shape(wrong_name, "image=1x3x4x4");
    EXPECT_NE(error_of(p, wrong_name).find("has no input 'image' (its inputs: x)"), std::string::npos);
    add_input_shape(wrong_rank, "x=1x3x4");
    EXPECT_NE(error_of(p, wrong_rank).find("input 'x' of " + p + " has rank 4 (Nx3x4x4), not 3"), std::string::npos);
    add_input_shape(wrong_dim, "x=1x5x4x4");
    EXPECT_NE(error_of(p, wrong_dim).find("dimension 1 of input 'x' is 3"), std::string::npos);
    ImportOptions o;
    for (const char *bad : {"x", "x=", "=1x2", "x=1xx2", "x=1x-2", "x=1x2x", "x=0x3"}) {
        EXPECT_THROW(add_input_shape(o, bad), UserError) << bad;
    }
}

TEST(GraphImport, ShapeInferenceConflictNamesTheNode) {
    // The model declares y as 1x5 while Add's inference gives 1x3x4x4.
    ModelBuilder b;
    b.input("x", {1, 3, 4, 4}).init("bias", {3, 1, 1}, {1, 2, 3}).output_shaped("y", {1, 5});
    b.node("Add", {"x", "bias"}, {"y"}, "add_bias");
    const std::string e = error_of(b.save(tessel::test::model_dir() + "/conflict.onnx"));
    EXPECT_NE(e.find("shape inference: "), std::string::npos) << e;
    EXPECT_NE(e.find("add_bias"), std::string::npos) << e;
}

TEST(GraphImport, OpsetOutsideTheRangeIsAnError) {
    ModelBuilder b(10);
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"});
    const std::string e = error_of(b.save(tessel::test::model_dir() + "/opset10.onnx"));
    EXPECT_NE(e.find("opset 10 of the default domain: the model compiler reads opsets 11-17"), std::string::npos) << e;
}

TEST(GraphImport, CheckerRefusalIsAnError) {
    ModelBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"missing"}, {"y"}, "relu_of_nothing");
    const std::string e = error_of(b.save(tessel::test::model_dir() + "/unchecked.onnx"));
    EXPECT_NE(e.find("the ONNX checker refuses the model"), std::string::npos) << e;
    EXPECT_NE(e.find("missing"), std::string::npos) << e;
}

TEST(GraphImport, EveryUnsupportedNodeListedInOneError) {
    ModelBuilder b;
    b.input("x", {3, 3}).output("y", 0);
    b.node("Celu", {"x"}, {"a"}, "celu0");
    b.node("Relu", {"a"}, {"b"}, "relu0");
    b.node("Det", {"b"}, {"c"}, "det0");
    b.node("Celu", {"c"}, {"y"});
    Graph g = import_onnx_graph(b.save(tessel::test::model_dir() + "/unsupported.onnx"));
    EXPECT_EQ(unsupported_nodes(g), (std::vector<std::string>{"celu0 (Celu)", "det0 (Det)", "Celu_3 (Celu)"}));
    try {
        check_supported(g);
        FAIL() << "no error";
    } catch (const UserError &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("3 nodes Tessel has no kernel for (Celu, Det;"), std::string::npos) << m;
        EXPECT_NE(m.find("\n  celu0 (Celu)\n  det0 (Det)\n  Celu_3 (Celu)"), std::string::npos) << m;
    }
}

TEST(GraphImport, ShapeChainOfPyTorchGetsStaticShapes) {
    // ONNX 1.12's data propagation leaves y's shape unknown here: the import folds
    // the constant chain on a copy (graph/passes/FoldConstants.cpp), infers again
    // and declares the shapes found; the nodes stay for the fold-constants pass.
    Graph g = import_onnx_graph(tessel::test::shape_chain().save(tessel::test::model_dir() + "/shape_chain.onnx"));
    EXPECT_EQ(g.tensor("r").dims, (std::vector<int64_t>{2, 12}));
    EXPECT_EQ(g.tensor("y").dims, (std::vector<int64_t>{2, 12}));
    EXPECT_EQ(g.tensor("shape").dims, (std::vector<int64_t>{2}));
    EXPECT_FALSE(g.tensor("shape").constant());
    EXPECT_EQ(g.nodes.size(), 9u);
}

TEST(GraphImport, OnnxFunctionBodyShapeArithmeticResolves) {
    // LayerNormalization's function body (the ONNX suite's _expanded test): Shape -> Size,
    // Slice to an empty prefix, Neg -> ConstantOfShape, Concat -> Reshape. ONNX 1.12's
    // inference cannot size it; the import computes it (an empty Slice, ConstantOfShape and
    // Concat sized from their inputs) and declares the shapes.
    const std::string t = "/usr/include/onnx/backend/test/data/node/"
                          "test_layer_normalization_2d_axis_negative_2_expanded/model.onnx";
    Graph g = import_onnx_graph(t);
    const std::string f = "LayerNormalization_test_layer_normalization_2d_axis_negative_2_expanded_function_";
    EXPECT_EQ(g.tensor(f + "PrefixShape").dims, (std::vector<int64_t>{0}));
    EXPECT_EQ(g.tensor(f + "SuffixShape").dims, (std::vector<int64_t>{2}));
    EXPECT_EQ(g.tensor(f + "ReducedShape").dims, (std::vector<int64_t>{2}));
    EXPECT_FALSE(g.tensor(f + "ReducedShape").constant()); // the nodes stay for fold-constants
}

} // namespace
