// The built `tessel run` / `tessel sim` with tensor files (docs/tensors.md):
// given inputs, expected outputs at a tolerance, saved outputs, and every bad
// file exit 1 with a message naming the file and the problem.
#include "graph/TensorFile.h"

#include "tests/graph/CliRun.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tessel;
using namespace tessel::graph;

namespace {

using Result = tessel::test::CliResult;
using tessel::test::read_text;

std::string scratch() {
    static const std::string d = tessel::test::make_scratch("tessel_tensor_cli_");
    return d;
}

Result run_tessel(const std::string &args) { return tessel::test::run_tessel_in(scratch(), args); }

// elementwise op=add on 64 fp32 elements: out = a + b.
const std::string kAdd = "run -g elementwise -p N=64,dtype=fp32,op=add ";
const std::string kOwner = "generator 'elementwise' (N=64,dtype=fp32,op=add)";

Tensor ramp(const std::string &name, DType t, int64_t n, double scale) {
    Tensor x(name, t, {n});
    for (int64_t i = 0; i < n; i++) {
        x.set(i, scale * static_cast<double>(i % 17) - 1.0);
    }
    return x;
}

// Writes a.npy, b.pb (TensorProto.name "b") and the expected out.npy into a fresh directory.
struct AddCase {
    std::string dir, a, b, out;
    explicit AddCase(const std::string &name, double perturb = 0) {
        dir = scratch() + "/" + name;
        std::filesystem::create_directories(dir);
        a = dir + "/a.npy", b = dir + "/b.pb", out = dir + "/expect/out.npy";
        std::filesystem::create_directories(dir + "/expect");
        Tensor ta = ramp("a", DType::FP32, 64, 0.25), tb = ramp("b", DType::FP32, 64, -0.125);
        Tensor sum("out", DType::FP32, {64});
        for (int64_t i = 0; i < 64; i++) {
            sum.set(i, static_cast<float>(ta.get(i)) + static_cast<float>(tb.get(i)));
        }
        sum.set(7, sum.get(7) + perturb);
        write_tensor_file(a, from_tensor(ta), TensorFormat::Npy);
        write_tensor_file(b, from_tensor(tb), TensorFormat::Pb);
        write_tensor_file(out, from_tensor(sum), TensorFormat::Npy);
    }
};

// The error line of a run: the facade's errors follow its warnings (scalar code, ...).
std::string error_line(const std::string &err) {
    size_t p = err.find("tessel: error: ");
    return p == std::string::npos ? "(no error) " + err : err.substr(p);
}

std::string write_bytes(const std::string &name, const std::string &bytes) {
    std::string p = scratch() + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
}

std::string onnx_test(const std::string &name) {
    return "/usr/include/onnx/backend/test/data/node/" + name + "/test_data_set_0";
}

} // namespace

TEST(TensorCli, OnnxSuiteDirectoryPassesAndSavesTheOutput) {
    const std::string d = onnx_test("test_matmul_2d");
    if (!std::filesystem::exists(d)) {
        GTEST_SKIP() << d << " is absent (apt-get install libonnx-testdata)";
    }
    const std::string saved = scratch() + "/matmul_out";
    // a, b and c are the model's names: input_0/input_1/output_0 bind to A, B and C by position.
    Result r = run_tessel("run -g gemm -p M=3,N=3,K=4,dtype=fp32 --inputs " + d + " --expect " + d + " --save-outputs " + saved +
                      " --save-format both");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("check against Halide's CPU result (given inputs): PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("check against the expected outputs: PASS (NPU C (from '" + d + "/output_0.pb'): match (9 elements, "
                         "|got - want| <= 1e-07 + 0.001 * |want|)"),
              std::string::npos)
        << r.out;
    FileTensor want = read_tensor_file(d + "/output_0.pb"), got = read_tensor_file(saved + "/C.pb");
    EXPECT_EQ(got.dims, want.dims);
    EXPECT_EQ(got.name, "C");
    EXPECT_EQ(read_tensor_file(saved + "/C.npy").data, got.data);
}

TEST(TensorCli, GivenFilesByNamePass) {
    AddCase c("pass");
    Result r = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + c.b + " --expect " + c.dir + "/expect");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("check against the expected outputs: PASS (NPU out (from '" + c.out + "'): match (64 elements"),
              std::string::npos)
        << r.out;
}

TEST(TensorCli, PerturbedExpectedOutputFailsWithTheLargestError) {
    AddCase c("perturbed", 0.5);
    Result r = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + c.b + " --expect " + c.out + " --report-json " + c.dir +
                      "/report.json");
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("check against Halide's CPU result (given inputs): PASS"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("check against the expected outputs: FAIL (NPU out (from '" + c.out +
                         "'): 1 of 64 elements differ beyond |got - want| <= 1e-07 + 0.001 * |want|; largest error 0.5 at [7]"),
              std::string::npos)
        << r.out;
    std::string j = read_text(c.dir + "/report.json");
    EXPECT_NE(j.find("\"inputs\": \"given\""), std::string::npos) << j;
    EXPECT_NE(j.find("\"max_abs_error\": 0.5"), std::string::npos) << j;
    // A looser tolerance accepts it.
    Result loose = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + c.b + " --expect " + c.out + " --atol 0.6");
    EXPECT_EQ(loose.code, 0) << loose.out << loose.err;
}

TEST(TensorCliErrors, TruncatedPb) {
    AddCase c("trunc_pb");
    std::string bytes = read_text(c.b);
    std::string cut = write_bytes("cut_b.pb", bytes.substr(0, bytes.size() - 10));
    Result r = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + cut);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "tessel: error: " + cut + ": not an ONNX TensorProto: the protobuf does not parse (" +
                         std::to_string(bytes.size() - 10) + " bytes; the file is truncated or not a .pb tensor)\n");
}

TEST(TensorCliErrors, TruncatedNpy) {
    AddCase c("trunc_npy");
    std::string bytes = read_text(c.a);
    std::string cut = write_bytes("a.npy", bytes.substr(0, bytes.size() - 8));
    Result r = run_tessel(kAdd + "--inputs " + cut + " --inputs " + c.b);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "tessel: error: " + cut + ": truncated .npy file: shape float32[64] needs 256 bytes of data, the file has 248\n");
}

TEST(TensorCliErrors, WrongDtype) {
    AddCase c("dtype");
    std::string a16 = c.dir + "/a16.npy";
    write_tensor_file(a16, from_tensor(ramp("a", DType::FP16, 64, 0.25)), TensorFormat::Npy);
    Result r = run_tessel(kAdd + "--inputs a=" + a16 + " --inputs " + c.b);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(error_line(r.err), "tessel: error: input a (from '" + a16 + "'): element type fp16, but " + kOwner + " takes fp32 for a\n");
}

TEST(TensorCliErrors, ShapeMismatchNamesTheTensorAndBothShapes) {
    AddCase c("shape");
    std::string a32 = c.dir + "/a.pb";
    write_tensor_file(a32, from_tensor(ramp("a", DType::FP32, 32, 0.25)), TensorFormat::Pb);
    Result r = run_tessel(kAdd + "--inputs " + a32 + " --inputs " + c.b);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(error_line(r.err), "tessel: error: input a (from '" + a32 + "'): shape 32, but " + kOwner + " takes 64 for a\n");
    // The expected output is checked before anything runs, too.
    std::string out2 = c.dir + "/out.pb";
    FileTensor o = from_tensor(ramp("out", DType::FP32, 64, 1));
    o.dims = {8, 8};
    write_tensor_file(out2, o, TensorFormat::Pb);
    Result e = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + c.b + " --expect " + out2);
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(error_line(e.err), "tessel: error: output out (from '" + out2 + "'): shape 8x8, but " + kOwner + " takes 64 for out\n");
}

TEST(TensorCliErrors, MissingInput) {
    AddCase c("missing");
    Result r = run_tessel(kAdd + "--inputs " + c.a);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(error_line(r.err), "tessel: error: no tensor given for input b (fp32[64]) of " + kOwner + "; given: 'a' (from '" + c.a + "')\n");
    Result gone = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + c.dir + "/nosuch.pb");
    EXPECT_EQ(gone.code, 1);
    EXPECT_EQ(gone.err, "tessel: error: cannot read tensor file '" + c.dir + "/nosuch.pb': No such file or directory\n");
}

TEST(TensorCliErrors, ExtraInput) {
    AddCase c("extra");
    std::string extra = c.dir + "/c.npy";
    write_tensor_file(extra, from_tensor(ramp("c", DType::FP32, 64, 1)), TensorFormat::Npy);
    Result r = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + c.b + " --inputs " + extra);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(error_line(r.err), "tessel: error: tensor 'c' (from '" + extra + "') is not an input of " + kOwner + " (its inputs: a, b)\n");
}

TEST(TensorCliErrors, GarbageBytes) {
    AddCase c("garbage");
    std::string junk = write_bytes("junk.pb", std::string("\xff\xff\xff\xff\xff not a tensor", 18));
    Result r = run_tessel(kAdd + "--inputs " + c.a + " --inputs b=" + junk);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err.rfind("tessel: error: " + junk + ": not an ONNX TensorProto: ", 0), 0u) << r.err;
    std::string npy = write_bytes("junk.npy", "PK\x03\x04 zip, not npy");
    Result n = run_tessel(kAdd + "--inputs " + npy + " --inputs " + c.b);
    EXPECT_EQ(n.code, 1);
    EXPECT_EQ(n.err, "tessel: error: " + npy + ": not a .npy file (it does not start with \\x93NUMPY)\n");
}

TEST(TensorCliErrors, ExternalData) {
    AddCase c("external");
    // A TensorProto (name "b", dims [64], FLOAT) whose data lives in "b.bin": field 13 holds
    // {key: "location", value: "b.bin"}, field 14 data_location = EXTERNAL.
    std::string pb = std::string("\x08\x40\x10\x01\x42\x01" "b", 7) + std::string("\x6a\x11\x0a\x08location\x12\x05" "b.bin", 19) +
                     std::string("\x70\x01", 2);
    std::string ext = write_bytes("external.pb", pb);
    Result r = run_tessel(kAdd + "--inputs " + c.a + " --inputs " + ext);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "tessel: error: " + ext + ": the tensor's data is stored in an external file (location 'b.bin'); "
                     "Tessel reads only tensors that hold their data (raw_data or the typed fields)\n");
}

TEST(TensorCli, SimTakesInputFilesAndComparesOutputs) {
    const std::string prog = "tests/npu_target/programs/copy_16k.s"; // y = x, 16384 uint8
    Tensor x("x", DType::UInt8, {16384});
    for (int64_t i = 0; i < 16384; i++) {
        x.set(i, static_cast<double>(i % 251));
    }
    std::string xin = scratch() + "/x.npy", yexp = scratch() + "/y.pb", saved = scratch() + "/sim_out";
    write_tensor_file(xin, from_tensor(x), TensorFormat::Npy);
    Tensor y = x;
    y.name = "y";
    write_tensor_file(yexp, from_tensor(y), TensorFormat::Pb);
    Result r = run_tessel("sim " + prog + " --inputs " + xin + " --expect " + yexp + " --save-outputs " + saved);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("check against the expected output: PASS (y (from '" + yexp + "'): match (16384 elements"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(read_tensor_file(saved + "/y.pb").data, x.data);
    y.set(300, 0);
    write_tensor_file(yexp, from_tensor(y), TensorFormat::Pb);
    Result bad = run_tessel("sim " + prog + " --inputs " + xin + " --expect " + yexp);
    EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
    EXPECT_NE(bad.out.find("largest error 49 at [300] (got 49, want 0)"), std::string::npos) << bad.out;
    Result wrong = run_tessel("sim " + prog + " --inputs x=" + yexp + " --inputs zeros");
    EXPECT_EQ(wrong.code, 1);
    EXPECT_EQ(wrong.err, "tessel: error: --inputs zeros cannot be combined with other --inputs (tensor files)\n");
}
