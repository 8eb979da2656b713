// Given tensors bound to a kernel's inputs and outputs (npu_target/common/
// TensorBinding.h), compared with expected outputs, and the CLI's sets of
// tensor files (graph/TensorSet.h): one test per message.
#include "graph/TensorSet.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/TensorBinding.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>

using namespace tessel;
using namespace tessel::graph;

namespace {

std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}

GivenTensor given(const std::string &name, DType t, std::vector<int64_t> shape, const std::string &origin = "",
                  int position = -1) {
    GivenTensor g;
    g.tensor = Tensor(name, t, std::move(shape));
    g.origin = origin;
    g.position = position;
    return g;
}

const std::vector<TensorSlot> kGemm = {{"A", DType::FP16, {8, 4}}, {"B", DType::FP16, {2, 8}}};
const std::string kOwner = "generator 'gemm' (K=8,M=4,N=2)";

std::string temp_dir(const std::string &name) {
    std::string d = testing::TempDir() + "tessel_binding_" + std::to_string(::getpid()) + "_" + name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

} // namespace

TEST(TensorBinding, ByNameThenByPosition) {
    std::vector<Tensor> in = bind_inputs({given("B", DType::FP16, {2, 8}), given("x", DType::FP16, {8, 4}, "in/input_0.pb", 0)},
                                         kGemm, kOwner);
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(in[0].name, "A"); // 'x' is no input: its file is input_0, the first one
    EXPECT_EQ(in[1].name, "B");
}

TEST(TensorBindingErrors, WrongShapeNamesTheTensorAndBothShapes) {
    EXPECT_EQ(error_of([] { bind_inputs({given("A", DType::FP16, {4, 8}, "a.npy"), given("B", DType::FP16, {2, 8})}, kGemm, kOwner); }),
              "input A (from 'a.npy'): shape 8x4, but generator 'gemm' (K=8,M=4,N=2) takes 4x8 for A");
}

TEST(TensorBindingErrors, WrongElementType) {
    EXPECT_EQ(error_of([] { bind_inputs({given("x", DType::FP32, {8, 4}, "d/input_0.pb", 0)}, kGemm, kOwner); }),
              "input A (tensor 'x' from 'd/input_0.pb'): element type fp32, but generator 'gemm' (K=8,M=4,N=2) takes fp16 for A");
}

TEST(TensorBindingErrors, MissingInput) {
    EXPECT_EQ(error_of([] { bind_inputs({given("A", DType::FP16, {8, 4}, "a.pb")}, kGemm, kOwner); }),
              "no tensor given for input B (fp16[8x2]) of generator 'gemm' (K=8,M=4,N=2); given: 'A' (from 'a.pb')");
}

TEST(TensorBindingErrors, ExtraInput) {
    EXPECT_EQ(error_of([] { bind_inputs({given("bias", DType::FP16, {2}, "bias.npy")}, kGemm, kOwner); }),
              "tensor 'bias' (from 'bias.npy') is not an input of generator 'gemm' (K=8,M=4,N=2) (its inputs: A, B)");
    EXPECT_EQ(error_of([] { bind_inputs({given("c", DType::FP16, {2}, "t/input_2.pb", 2)}, kGemm, kOwner); }),
              "tensor 'c' (from 't/input_2.pb') is input 2 by its file name, but generator 'gemm' (K=8,M=4,N=2) has 2 "
              "inputs (A, B)");
}

TEST(TensorBindingErrors, GivenTwice) {
    EXPECT_EQ(error_of([] {
                  bind_inputs({given("A", DType::FP16, {8, 4}, "a.pb"), given("y", DType::FP16, {8, 4}, "d/input_0.pb", 0)},
                              kGemm, kOwner);
              }),
              "input A is given twice: 'A' (from 'a.pb') and 'y' (from 'd/input_0.pb')");
}

TEST(TensorBinding, ComparisonReportsTheLargestErrorAndWhere) {
    Tensor got("C", DType::FP32, {3, 2}); // 2 rows of 3
    GivenTensor want = given("C", DType::FP32, {3, 2}, "want/C.pb");
    for (int i = 0; i < 6; i++) {
        got.set(i, i);
        want.tensor.set(i, i);
    }
    ExpectedComparison ok = compare_expected(got, want, 1e-3, 1e-7);
    EXPECT_TRUE(ok.ok);
    EXPECT_EQ(ok.message, "C (from 'want/C.pb'): match (6 elements, |got - want| <= 1e-07 + 0.001 * |want|); every element equal");
    want.tensor.set(4, 4.5); // row 1, column 1
    want.tensor.set(1, 1.001);
    ExpectedComparison bad = compare_expected(got, want, 1e-3, 1e-7);
    EXPECT_FALSE(bad.ok);
    EXPECT_EQ(bad.mismatches, 1);
    EXPECT_EQ(bad.worst, 4);
    EXPECT_EQ(bad.message, "C (from 'want/C.pb'): 1 of 6 elements differ beyond |got - want| <= 1e-07 + 0.001 * |want|; "
                           "largest error 0.5 at [1, 1] (got 4, want 4.5)");
}

TEST(TensorSet, SuiteDirectoriesServeInputsAndOutputs) {
    std::string d = temp_dir("suite");
    FileTensor x;
    x.name = "x";
    x.dims = {2};
    x.data.assign(8, 0);
    write_tensor_file(d + "/input_1.pb", x, TensorFormat::Pb);
    x.name = "";
    write_tensor_file(d + "/input_0.npy", x, TensorFormat::Npy);
    write_tensor_file(d + "/output_0.pb", x, TensorFormat::Pb);
    std::vector<GivenTensor> in = read_tensor_set(d, TensorRole::Input);
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(in[0].tensor.name, "input_0"); // a .npy file: named by its stem
    EXPECT_EQ(in[0].position, 0);
    EXPECT_EQ(in[1].tensor.name, "x"); // TensorProto.name
    EXPECT_EQ(in[1].position, 1);
    EXPECT_EQ(in[1].origin, d + "/input_1.pb");
    std::vector<GivenTensor> out = read_tensor_set(d, TensorRole::Output);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].position, 0);
    EXPECT_EQ(suite_position("input_12", TensorRole::Input), 12);
    EXPECT_EQ(suite_position("input_x", TensorRole::Input), -1);
    EXPECT_EQ(suite_position("output_0", TensorRole::Input), -1);
}

TEST(TensorSet, SavedOutputsReadBack) {
    std::string d = temp_dir("save") + "/new/dir";
    Tensor t("out", DType::BF16, {5});
    for (int i = 0; i < 5; i++) {
        t.set(i, i * 0.5);
    }
    std::vector<std::string> written = save_tensor_set({t}, d, true, false);
    ASSERT_EQ(written, std::vector<std::string>{d + "/out.pb"});
    std::vector<GivenTensor> back = read_tensor_set(d, TensorRole::Output);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].tensor.data, t.data);
    EXPECT_EQ(back[0].tensor.shape, t.shape);
    EXPECT_EQ(back[0].tensor.dtype, DType::BF16);
    EXPECT_EQ(error_of([&] { save_tensor_set({t}, d, false, true); }),
              d + "/out.npy: NumPy has no bfloat16 type; write this tensor as .pb");
}

TEST(TensorSetErrors, EmptyDirectory) {
    std::string d = temp_dir("empty");
    EXPECT_EQ(error_of([&] { read_tensor_set(d, TensorRole::Input); }),
              d + ": no tensor files (.pb or .npy, other than output_K) in this directory");
    std::filesystem::create_directories(d + "/test_data_set_0");
    EXPECT_EQ(error_of([&] { read_tensor_set(d, TensorRole::Output); }),
              d + ": no tensor files (.pb or .npy, other than input_K) in this directory (its test_data_set_0/ holds an "
                  "ONNX test's tensors: pass that directory)");
}
