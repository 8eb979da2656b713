// The built `tessel onnx-test` (docs/onnx.md): the --quick subset of the ONNX
// backend node tests in scope (graph/onnx_node_scope.txt) on ascend-like, a
// skip with its reason, and every bad input exit 1 with a message naming the file.
#include "tests/graph/CliRun.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace {

const std::string kNode = "/usr/include/onnx/backend/test/data/node";

using Result = tessel::test::CliResult;
using tessel::test::read_text;

std::string scratch() {
    static const std::string d = tessel::test::make_scratch("tessel_onnx_cli_");
    return d;
}

Result run_tessel(const std::string &args) { return tessel::test::run_tessel_in(scratch(), args); }

// A copy of the suite's test `name` under the scratch directory, as `as`.
std::string copy_test(const std::string &name, const std::string &as) {
    const std::string dst = scratch() + "/" + as;
    fs::remove_all(dst);
    fs::copy(kNode + "/" + name, dst, fs::copy_options::recursive);
    return dst;
}

TEST(OnnxTestCli, QuickSubsetOnAscendLike) {
    Result r = run_tessel("onnx-test --quick --arch ascend-like --scope graph/onnx_node_scope.txt --report " +
                          scratch() + "/quick.json " + kNode);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(\n(\d+) passed, 0 failed, (\d+) skipped \((\d+) tests\)\n$)")))
        << r.out;
    const int passed = std::stoi(m[1]), skipped = std::stoi(m[2]), total = std::stoi(m[3]);
    EXPECT_EQ(passed + skipped, total);
    // One test per operator of the scope: each supported operator's first test passes.
    for (const char *line : {"PASS test_relu (Relu -> onnx_relu", "PASS test_add (Add -> onnx_add",
                             "PASS test_erf (Erf -> onnx_erf", "PASS test_flatten_axis0 (Flatten -> onnx_identity N=120,dtype=fp32)",
                             "PASS test_reshape_allowzero_reordered (Reshape): largest error 0, 0 cycles; 1 output a constant of its shape, no kernel",
                             "PASS test_pow (Pow -> onnx_pow", "PASS test_softmax_axis_0 (Softmax -> onnx_softmax dtype=fp32,shape=1x3x20)",
                             "PASS test_reduce_sum_default_axes_keepdims_example (ReduceSum -> onnx_reduce_sum axes=0,",
                             "PASS test_layer_normalization_2d_axis0 (LayerNormalization -> onnx_layernorm", 
                             "PASS test_maxpool_1d_default (MaxPool -> onnx_maxpool", "PASS test_averagepool_1d_default (AveragePool -> onnx_averagepool",
                             "PASS test_globalaveragepool (GlobalAveragePool -> onnx_globalaveragepool dtype=fp32,shape=3x25)",
                             "PASS test_constant_pad (Pad -> onnx_pad dtype=fp32,mode=constant,pads=0;1;3;0;2;4,shape=3x4x5",
                             "PASS test_concat_1d_axis_0 (Concat -> onnx_concat block=2,dtype=fp32,outer=1,widths=2;2)",
                             "PASS test_gather_0 (Gather -> onnx_gather dtype=fp32,indices=0;1;3,shape=1x5x24)",
                             "PASS test_resize_downsample_scales_cubic (Resize -> onnx_resize", "PASS test_upsample_nearest (Upsample -> onnx_resize", "PASS test_basic_conv_with_padding (Conv -> onnx_conv", "PASS test_gemm_all_attributes (Gemm -> onnx_gemm", "PASS test_matmul_2d (MatMul -> onnx_matmul", "PASS test_split_equal_parts_1d (Split -> onnx_split dtype=fp32,shape=1x6x1,sizes=2;2;2)"}) {
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    }
    EXPECT_GE(passed, 30);
    const std::string report = read_text(scratch() + "/quick.json");
    EXPECT_NE(report.find("\"arch\": \"ascend-like\""), std::string::npos);
    EXPECT_NE(report.find("\"passed\": " + std::to_string(passed)), std::string::npos);
}

TEST(OnnxTestCli, OnlySelectsByName) {
    Result r = run_tessel("onnx-test --only '^test_(leakyrelu|clip_default_int8_max)$' " + kNode);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("PASS test_clip_default_int8_max (Clip -> onnx_clip N=60,dtype=int8,max=0)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("PASS test_leakyrelu (LeakyRelu -> onnx_leakyrelu N=60,alpha=0.100000001,dtype=fp32)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\n2 passed, 0 failed, 0 skipped (2 tests)\n"), std::string::npos) << r.out;
}

TEST(OnnxTestCli, UnsupportedIsASkipWithTheReasonNeverAnError) {
    // A string tensor (the reader refuses those files) and an operator not mapped: skipped
    // before the data is read.
    Result r = run_tessel("onnx-test --only '^test_(strnormalizer_export_monday_empty_output|argmax_default_axis_example)$' " + kNode);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("SKIP test_strnormalizer_export_monday_empty_output (StringNormalizer): operator "
                         "StringNormalizer is not supported yet"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("SKIP test_argmax_default_axis_example (ArgMax): operator ArgMax is not supported yet"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\n0 passed, 0 failed, 2 skipped (2 tests)\n"), std::string::npos) << r.out;
}

TEST(OnnxTestCli, AWrongExpectedOutputFailsWithTheLargestError) {
    const std::string dir = copy_test("test_relu", "relu_wrong");
    // output_0.pb of test_relu is the relu of input_0.pb; give it the input instead.
    fs::copy_file(dir + "/test_data_set_0/input_0.pb", dir + "/test_data_set_0/output_0.pb",
                  fs::copy_options::overwrite_existing);
    Result r = run_tessel("onnx-test " + dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("FAIL relu_wrong (Relu -> onnx_relu N=60,dtype=fp32): NPU Y (from '" + dir +
                         "/test_data_set_0/output_0.pb'): "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("largest error"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n0 passed, 1 failed, 0 skipped (1 tests)\n"), std::string::npos) << r.out;
}

TEST(OnnxTestCli, EveryKernelOfANodeIsCheckedAgainstItsOutput) {
    // LayerNormalization runs as three kernels (Y, Mean, InvStdDev); each output is compared.
    Result ok = run_tessel("onnx-test " + std::string(kNode) + "/test_layer_normalization_2d_axis1");
    EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
    EXPECT_NE(ok.out.find(" cycles (3 kernels)\n"), std::string::npos) << ok.out;
    // Give Mean the expected InvStdDev: the second kernel fails, naming its file.
    const std::string dir = copy_test("test_layer_normalization_2d_axis1", "layernorm_wrong_mean");
    fs::copy_file(dir + "/test_data_set_0/output_2.pb", dir + "/test_data_set_0/output_1.pb",
                  fs::copy_options::overwrite_existing);
    Result r = run_tessel("onnx-test " + dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("FAIL layernorm_wrong_mean (LayerNormalization -> onnx_layernorm "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NPU Mean (from '" + dir + "/test_data_set_0/output_1.pb'): "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n0 passed, 1 failed, 0 skipped (1 tests)\n"), std::string::npos) << r.out;
}

// Outputs the shapes alone determine are constants the runner writes, compared exactly with
// ONNX's: empty tensors (a Slice past the end, zero-size Split pieces, a Reshape of an empty
// input) and Dropout's mask, all true, beside the kernel that copies Y.
TEST(OnnxTestCli, EmptyTensorsAndDropoutMasksAreConstantsOfTheirShape) {
    Result r = run_tessel("onnx-test --arch ascend-like --only "
                          "'^test_(dropout_default_mask|training_dropout_zero_ratio_mask|slice_start_out_of_bounds|"
                          "split_zero_size_splits)$' " +
                          std::string(kNode));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("\n4 passed, 0 failed, 0 skipped (4 tests)\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("PASS test_dropout_default_mask (Dropout -> onnx_identity N=60,dtype=fp32): largest error 0, "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("; 1 output a constant of its shape, no kernel"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("PASS test_split_zero_size_splits (Split): largest error 0, 0 cycles; 3 outputs a constant of "
                         "their shape, no kernel"),
              std::string::npos)
        << r.out;
}

TEST(OnnxTestCli, MalformedModelIsExit1NamingTheFile) {
    const std::string dir = copy_test("test_relu", "malformed");
    std::ofstream(dir + "/model.onnx", std::ios::binary | std::ios::trunc) << "\x08\x07garbage\xff\xff";
    Result r = run_tessel("onnx-test " + dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tessel: error: " + dir + "/model.onnx: not an ONNX model: the protobuf does not parse (11 bytes; "
                         "the file is truncated or not a model.onnx)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("ERROR malformed: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0 passed, 0 failed, 0 skipped, 1 errors (1 tests)"), std::string::npos) << r.out;
}

TEST(OnnxTestCli, ModelWithTwoNodesIsExit1NamingTheFile) {
    const std::string dir = copy_test("test_hardswish_expanded", "two_nodes");
    Result r = run_tessel("onnx-test " + dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tessel: error: " + dir + "/model.onnx: the model has 2 nodes (HardSigmoid, Mul); "
                         "tessel onnx-test runs single-operator models"),
              std::string::npos)
        << r.err;
}

TEST(OnnxTestCli, MissingTestDataSetIsExit1NamingIt) {
    const std::string dir = copy_test("test_relu", "no_data");
    fs::remove_all(dir + "/test_data_set_0");
    Result r = run_tessel("onnx-test " + dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tessel: error: " + dir +
                         "/test_data_set_0: missing (a test's inputs and expected outputs are in test_data_set_N/)"),
              std::string::npos)
        << r.err;
    // A data set without the input the model declares.
    const std::string dir2 = copy_test("test_relu", "no_input");
    fs::remove(dir2 + "/test_data_set_0/input_0.pb");
    r = run_tessel("onnx-test " + dir2);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tessel: error: " + dir2 + "/test_data_set_0/input_0.pb: missing (the model has an input 0"),
              std::string::npos)
        << r.err;
}

TEST(OnnxTestCli, BadTensorFileIsExit1NamingIt) {
    const std::string dir = copy_test("test_relu", "bad_tensor");
    std::ofstream(dir + "/test_data_set_0/input_0.pb", std::ios::binary | std::ios::trunc) << "\x0a\xff\xff";
    Result r = run_tessel("onnx-test " + dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tessel: error: " + dir + "/test_data_set_0/input_0.pb: not an ONNX TensorProto: the protobuf "
                         "does not parse (3 bytes; the file is truncated or not a .pb tensor)"),
              std::string::npos)
        << r.err;
}

TEST(OnnxTestCli, BadPathsAndScopeFiles) {
    Result r = run_tessel("onnx-test " + scratch() + "/nowhere");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tessel: error: " + scratch() + "/nowhere: no such test directory"), std::string::npos) << r.err;
    const std::string scope = scratch() + "/bad_scope.txt";
    std::ofstream(scope) << "# comment\ntest_relu in Relu\ntest_add maybe\n";
    r = run_tessel("onnx-test --scope " + scope + " " + kNode);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tessel: error: " + scope + ":3: expected 'NAME in OPERATOR' or 'NAME out REASON', got 'test_add maybe'"),
              std::string::npos)
        << r.err;
}

} // namespace
