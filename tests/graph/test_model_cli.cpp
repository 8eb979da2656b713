// The built `tessel model compile` (docs/models.md): the graph after the passes
// asked for, the memory plan, files with -o, and every bad model exit 1 with a
// message naming the node or tensor.
#include "graph/TensorFile.h"
#include "tests/graph/CliRun.h"
#include "tests/graph/ModelBuilder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace {

using tessel::test::CliResult;
using tessel::test::ModelBuilder;

CliResult tessel_cli(const std::string &args) { return tessel::test::run_tessel_in(tessel::test::model_dir(), args); }

std::string path(const std::string &name) { return tessel::test::model_dir() + "/" + name; }

// x[1x2x4x4] -> Conv(W, B) -> BatchNorm -> Relu -> Flatten -> y
std::string conv_model() {
    ModelBuilder b;
    b.input("x", {1, 2, 4, 4}).output("y", 2);
    b.init("W", {2, 2, 1, 1}, {1, 0, 0, 1}).init("B", {2}, {0, 0});
    b.init("s", {2}, {1, 1}).init("b", {2}, {0, 0}).init("m", {2}, {0, 0}).init("v", {2}, {1, 1});
    b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
    b.node("BatchNormalization", {"c", "s", "b", "m", "v"}, {"n"}, "bn");
    b.node("Relu", {"n"}, {"r"}, "relu");
    b.node("Flatten", {"r"}, {"y"}, "flatten");
    return b.save(path("conv.onnx"));
}

TEST(ModelCli, CompilePrintsTheGraphAndThePlan) {
    CliResult r = tessel_cli("model compile " + conv_model() + " --arch ascend-like");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("== graph after all passes: 3 nodes (1 views, 1 fused groups)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  group 0 conv: Conv+Relu (conv, relu)\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("== memory plan: 1 kernels, 2 tensors in the arena, 2 constants; GM alignment 32 B =="),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("arena peak 256 B, lower bound 256 B"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(views: y)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("== graph after import"), std::string::npos) << r.out; // no dump asked for
}

TEST(ModelCli, DumpAfterPrintsTheNamedPasses) {
    CliResult r = tessel_cli("model compile " + conv_model() + " --dump-after import,fold-batchnorm --emit plan");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("== graph after import: 4 nodes"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("== graph after fold-batchnorm: 3 nodes"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("== graph after views"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("== graph after all passes"), std::string::npos) << r.out; // --emit plan only
    CliResult all = tessel_cli("model compile --dump-after all " + conv_model()); // the path is not a pass
    EXPECT_EQ(all.code, 0) << all.err;
    for (const char *pass : {"import", "fold-constants", "eliminate-dead-nodes", "fold-batchnorm", "views",
                             "fuse-epilogues"}) {
        EXPECT_NE(all.out.find(std::string("== graph after ") + pass + ":"), std::string::npos) << pass;
    }
}

TEST(ModelCli, OutDirectoryGetsTheFiles) {
    const std::string dir = path("out");
    CliResult r = tessel_cli("model compile " + conv_model() + " -o " + dir);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("wrote " + dir + "/graph.txt"), std::string::npos) << r.out;
    EXPECT_NE(tessel::test::read_text(dir + "/plan.txt").find("arena peak"), std::string::npos);
    EXPECT_NE(tessel::test::read_text(dir + "/graph.txt").find("== graph after all passes"), std::string::npos);
}

TEST(ModelCli, BadOptionsAreErrors) {
    CliResult r = tessel_cli("model compile " + conv_model() + " --dump-after fold-everything");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--dump-after fold-everything: no such pass (import, fold-constants,"), std::string::npos)
        << r.err;
    r = tessel_cli("model compile " + conv_model() + " --emit asm");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--emit asm: not something model compile writes (graph, plan)"), std::string::npos) << r.err;
    r = tessel_cli("model compile " + conv_model() + " --input-shape x=1x2");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("input 'x' of " + path("conv.onnx") + " has rank 4 (1x2x4x4), not 2"), std::string::npos)
        << r.err;
}

TEST(ModelCli, BadModelsExitOneNamingTheProblem) {
    // Truncated.
    const std::string whole = tessel::test::read_text(conv_model());
    std::ofstream(path("truncated.onnx"), std::ios::binary) << whole.substr(0, whole.size() - 40);
    CliResult r = tessel_cli("model compile " + path("truncated.onnx"));
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("truncated.onnx: not an ONNX model: the protobuf does not parse"), std::string::npos) << r.err;
    // Unsupported operators, all listed.
    ModelBuilder u;
    u.input("x", {3, 3}).output("y", 0);
    u.node("Celu", {"x"}, {"a"}, "celu0");
    u.node("Det", {"a"}, {"y"}, "det0");
    r = tessel_cli("model compile " + u.save(path("unsupported.onnx")));
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("2 nodes Tessel has no kernel for (Celu, Det; docs/onnx.md lists the operators):\n  celu0 "
                         "(Celu)\n  det0 (Det)"),
              std::string::npos)
        << r.err;
    // A symbolic dimension, then given.
    ModelBuilder s;
    s.input("x", {-1, 8}).output("y", 2);
    s.node("Relu", {"x"}, {"y"}, "relu");
    const std::string sym = s.save(path("symbolic.onnx"));
    r = tessel_cli("model compile " + sym);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("input 'x' has a symbolic dimension 'N' (dimension 0 of Nx8): give its static shape with "
                         "--input-shape x=D0xD1x..."),
              std::string::npos)
        << r.err;
    r = tessel_cli("model compile " + sym + " --input-shape x=4x8");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("relu: Relu(x) -> y float32[4x8]"), std::string::npos) << r.out;
    // A shape inference conflict.
    ModelBuilder c;
    c.input("x", {2, 3}).output_shaped("y", {3, 2});
    c.node("Relu", {"x"}, {"y"}, "relu_conflict");
    r = tessel_cli("model compile " + c.save(path("conflict.onnx")));
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("conflict.onnx: shape inference: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("relu_conflict"), std::string::npos) << r.err;
}

// A test_data_set directory with input_0.pb and output_0.pb of float32 data.
std::string data_set(const std::string &name, const std::vector<int64_t> &in_dims, const std::vector<float> &in,
                     const std::vector<int64_t> &out_dims, const std::vector<float> &out) {
    const std::string dir = path(name);
    std::filesystem::create_directories(dir);
    auto write = [](const std::string &file, const std::vector<int64_t> &dims, const std::vector<float> &v) {
        tessel::graph::FileTensor t;
        t.dims = dims;
        t.data.resize(v.size() * 4);
        std::memcpy(t.data.data(), v.data(), t.data.size());
        tessel::graph::write_tensor_file(file, t, tessel::graph::TensorFormat::Pb);
    };
    write(dir + "/input_0.pb", in_dims, in);
    write(dir + "/output_0.pb", out_dims, out);
    return dir;
}

TEST(ModelCli, RunExecutesEveryKernelAndVerifiesTheOutputs) {
    // conv_model(): y = flatten(relu(conv1x1(x) with W = identity, B = 0, then a BatchNorm of
    // scale 1, var 1, epsilon 1e-5)), so y = relu(x) / sqrt(1 + 1e-5).
    std::vector<float> x(32), y(32);
    for (int i = 0; i < 32; i++) {
        x[i] = float(i % 7) - 3.0f;
        y[i] = std::max(x[i], 0.0f) / std::sqrt(1.0f + 1e-5f);
    }
    const std::string data = data_set("conv_data", {1, 2, 4, 4}, x, {1, 32}, y);
    CliResult r = tessel_cli("model run " + conv_model() + " --arch ascend-like --data " + data);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    // Two kernels (the Conv with the BatchNorm folded in, the Relu), the Flatten a view.
    EXPECT_NE(r.out.find("  kernel 0 conv (Conv -> onnx_conv"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  kernel 1 relu (Relu -> onnx_relu"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("kernel 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("total: 2 kernels, "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("output_0.pb ('y'): match"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nPASS " + path("conv.onnx") + ": 2 kernels"), std::string::npos) << r.out;

    // A wrong reference: exit 1, the element named.
    y[5] += 1;
    const std::string wrong = data_set("conv_wrong", {1, 2, 4, 4}, x, {1, 32}, y);
    r = tessel_cli("model run " + conv_model() + " --data " + wrong);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("output_0.pb ('y'): MISMATCH (|got - want| <= 0.0001 + 0.001 * |want|: 1 of 32 outside; "
                         "largest error 1 at element 5"),
              std::string::npos)
        << r.out;
}

// A model PyTorch exported (graph/models/make_models.py small_cnn, committed: 9 KB) with
// PyTorch's output: conv-BN-ReLU, conv-BN + residual, ReLU, max pool, global average pool, linear.
TEST(ModelCli, PyTorchExportRunsAndMatchesPyTorch) {
    const std::string model = "tests/graph/data/small_cnn/model.onnx";
    CliResult c = tessel_cli("model compile " + model + " --dump-after import,fold-batchnorm --emit graph");
    EXPECT_EQ(c.code, 0) << c.err;
    EXPECT_NE(c.out.find("== graph after import: 11 nodes"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("== graph after fold-batchnorm: 9 nodes"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("Conv+Add(residual)+Relu"), std::string::npos) << c.out;
    const std::string report = path("small_cnn.json");
    CliResult r = tessel_cli("model run " + model + " --data tests/graph/data/small_cnn --report-json " + report);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    const std::string json = tessel::test::read_text(report);
    EXPECT_NE(json.find("\"verified\": true"), std::string::npos) << json;
    // 8 nodes with a kernel, and a Pad before each of the two padded 3x3 Convs (split-conv-padding).
    EXPECT_NE(json.find("\"kernels\": 10"), std::string::npos) << json;
    EXPECT_NE(json.find("\"op\": \"Pad\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"op\": \"MaxPool\""), std::string::npos) << json;
    EXPECT_NE(r.out.find("total: 10 kernels, "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("test_data_set_0/output_0.pb ('output'): match ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nPASS " + model + ": 10 kernels"), std::string::npos) << r.out;
}

// The ONNX backend suite's strided and padded Convs as models: the graph passes rewrite them
// (stride-one-convs: a stride-1 Conv and a Slice; split-conv-padding: a Pad first) and the
// result still equals ONNX's expected output.
TEST(ModelCli, RewrittenConvsStillMatchOnnx) {
    const std::string node = "/usr/include/onnx/backend/test/data/node/";
    struct Case {
        std::string test, kernels;
    };
    for (const Case &c : std::vector<Case>{{"test_conv_with_strides_padding", "3 kernels"},
                                          {"test_conv_with_strides_no_padding", "2 kernels"},
                                          {"test_conv_with_strides_and_asymmetric_padding", "3 kernels"},
                                          {"test_basic_conv_with_padding", "2 kernels"}}) {
        SCOPED_TRACE(c.test);
        CliResult r = tessel_cli("model run " + node + c.test + "/model.onnx --data " + node + c.test +
                                 "/test_data_set_0");
        EXPECT_EQ(r.code, 0) << r.out << r.err;
        EXPECT_NE(r.out.find("\nPASS " + node + c.test + "/model.onnx: " + c.kernels), std::string::npos) << r.out;
    }
}

// An ONNX function body from the backend suite (LayerNormalization expanded: 22 nodes, three
// outputs) against ONNX's expected outputs.
TEST(ModelCli, OnnxSuiteExpandedLayerNormMatches) {
    const std::string t = "/usr/include/onnx/backend/test/data/node/test_layer_normalization_2d_axis_negative_2_expanded";
    CliResult r = tessel_cli("model run " + t + "/model.onnx --data " + t);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("output_0.pb ('Y'): match"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("output_2.pb ('InvStdDev'): match"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nPASS " + t + "/model.onnx: 12 kernels"), std::string::npos) << r.out;
}

TEST(ModelCli, RunDataErrorsNameTheFile) {
    CliResult r = tessel_cli("model run " + conv_model() + " --data " + path("no_such_dir"));
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("no_such_dir: no such directory"), std::string::npos) << r.err;
    const std::string bad = data_set("bad_shape", {1, 32}, std::vector<float>(32), {1, 32}, std::vector<float>(32));
    r = tessel_cli("model run " + conv_model() + " --data " + bad);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("bad_shape/input_0.pb: float32[1x32], but the model's input 0 'x' is float32[1x2x4x4]"),
              std::string::npos)
        << r.err;
}

} // namespace
