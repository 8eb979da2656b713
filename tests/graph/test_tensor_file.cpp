// Tensor files: ONNX TensorProto (.pb) and NumPy (.npy) round trips for every
// element type, the typed TensorProto fields, real files from the ONNX backend
// test suite, and one test per message a bad file gives.
#include "graph/OnnxTensor.h"
#include "graph/TensorFile.h"
#include "npu_target/common/Error.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace tessel;
using namespace tessel::graph;

namespace {

const ElemType kAllTypes[] = {ElemType::Float32, ElemType::Float16, ElemType::BFloat16, ElemType::Float64, ElemType::Int8,
                              ElemType::UInt8,   ElemType::Int16,   ElemType::UInt16,   ElemType::Int32,   ElemType::UInt32,
                              ElemType::Int64,   ElemType::UInt64,  ElemType::Bool};

std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}

std::string temp_path(const std::string &name) {
    return testing::TempDir() + "tessel_tensor_" + std::to_string(::getpid()) + "_" + name;
}

// A 2x3 tensor whose bytes are a pattern valid for its type (bool: 0/1).
FileTensor pattern(ElemType t, std::vector<int64_t> dims = {2, 3}) {
    FileTensor f;
    f.name = std::string("t_") + elem_name(t);
    f.type = t;
    f.dims = std::move(dims);
    f.data.resize(static_cast<size_t>(f.elements() * elem_bytes(t)));
    for (size_t i = 0; i < f.data.size(); i++) {
        f.data[i] = t == ElemType::Bool ? static_cast<uint8_t>(i % 2) : static_cast<uint8_t>(i * 37 + 11);
    }
    return f;
}

std::vector<uint8_t> bytes_of(const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); }

std::vector<uint8_t> proto_bytes(const onnx::TensorProto &p) { return bytes_of(p.SerializeAsString()); }

onnx::TensorProto float_proto(std::vector<int64_t> dims, size_t raw_bytes) {
    onnx::TensorProto p;
    p.set_name("x");
    for (int64_t d : dims) {
        p.add_dims(d);
    }
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.set_raw_data(std::string(raw_bytes, '\0'));
    return p;
}

std::string onnx_data_dir() { return "/usr/include/onnx/backend/test/data/node"; }

} // namespace

// ---- round trips ----

TEST(TensorFile, PbRoundTripsEveryType) {
    for (ElemType t : kAllTypes) {
        FileTensor f = pattern(t);
        FileTensor back = parse_pb_tensor(bytes_of(encode_pb_tensor(f)), "mem.pb");
        EXPECT_EQ(back.name, f.name) << elem_name(t);
        EXPECT_EQ(back.type, t) << elem_name(t);
        EXPECT_EQ(back.dims, f.dims) << elem_name(t);
        EXPECT_EQ(back.data, f.data) << elem_name(t);
    }
}

TEST(TensorFile, NpyRoundTripsEveryNumPyType) {
    for (ElemType t : kAllTypes) {
        if (t == ElemType::BFloat16) {
            continue; // NumPy has none: NpyRefusesBFloat16
        }
        FileTensor f = pattern(t);
        std::string enc = encode_npy_tensor(f, "mem.npy");
        EXPECT_EQ((enc.size() - f.data.size()) % 64, 0u) << "the data starts at a multiple of 64";
        FileTensor back = parse_npy_tensor(bytes_of(enc), "mem.npy");
        EXPECT_EQ(back.name, "") << elem_name(t);
        EXPECT_EQ(back.type, t) << elem_name(t);
        EXPECT_EQ(back.dims, f.dims) << elem_name(t);
        EXPECT_EQ(back.data, f.data) << elem_name(t);
    }
}

TEST(TensorFile, FilesRoundTripWithScalarsAndEmptyTensors) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {0}, {4, 0, 2}, {7}, {1, 2, 3, 4}}) {
        for (TensorFormat fmt : {TensorFormat::Pb, TensorFormat::Npy}) {
            FileTensor f = pattern(ElemType::Int16, dims);
            std::string path = temp_path(std::string("rt") + (fmt == TensorFormat::Pb ? ".pb" : ".npy"));
            write_tensor_file(path, f, fmt);
            FileTensor back = read_tensor_file(path);
            EXPECT_EQ(back.dims, dims);
            EXPECT_EQ(back.data, f.data);
            EXPECT_EQ(back.name, fmt == TensorFormat::Pb ? f.name : "");
        }
    }
}

TEST(TensorFile, TensorConversionReversesDims) {
    FileTensor f = pattern(ElemType::Float16, {2, 3});
    Tensor t = to_tensor(f, "A", "a.pb");
    EXPECT_EQ(t.name, "A");
    EXPECT_EQ(t.dtype, DType::FP16);
    EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 2})); // innermost first
    EXPECT_EQ(t.data, f.data);
    FileTensor back = from_tensor(t);
    EXPECT_EQ(back.dims, f.dims);
    EXPECT_EQ(back.type, ElemType::Float16);
}

// ---- the typed fields of a TensorProto ----

TEST(TensorProtoFields, TypedFieldsAreRead) {
    onnx::TensorProto p;
    p.add_dims(3);
    p.set_data_type(onnx::TensorProto::FLOAT);
    for (float v : {1.5f, -2.0f, 0.25f}) {
        p.add_float_data(v);
    }
    FileTensor f = tensor_from_proto(p, "f.pb");
    float got[3];
    std::memcpy(got, f.data.data(), sizeof got);
    EXPECT_EQ(got[0], 1.5f);
    EXPECT_EQ(got[1], -2.0f);
    EXPECT_EQ(got[2], 0.25f);

    onnx::TensorProto q; // int8 in int32_data, negative values kept
    q.add_dims(2);
    q.set_data_type(onnx::TensorProto::INT8);
    q.add_int32_data(-128);
    q.add_int32_data(127);
    FileTensor g = tensor_from_proto(q, "q.pb");
    EXPECT_EQ(static_cast<int8_t>(g.data[0]), -128);
    EXPECT_EQ(static_cast<int8_t>(g.data[1]), 127);

    onnx::TensorProto h; // float16 as its bits in int32_data
    h.add_dims(1);
    h.set_data_type(onnx::TensorProto::FLOAT16);
    h.add_int32_data(fp32_to_fp16(-3.0f));
    FileTensor hf = tensor_from_proto(h, "h.pb");
    uint16_t bits;
    std::memcpy(&bits, hf.data.data(), 2);
    EXPECT_EQ(fp16_to_fp32(bits), -3.0f);

    onnx::TensorProto l; // int64_data, uint64_data for uint32, double_data, bool
    l.add_dims(1);
    l.set_data_type(onnx::TensorProto::INT64);
    l.add_int64_data(-(int64_t(1) << 40));
    int64_t i64;
    std::memcpy(&i64, tensor_from_proto(l, "l.pb").data.data(), 8);
    EXPECT_EQ(i64, -(int64_t(1) << 40));
    onnx::TensorProto u;
    u.add_dims(1);
    u.set_data_type(onnx::TensorProto::UINT32);
    u.add_uint64_data(0xfffffffful);
    uint32_t u32;
    std::memcpy(&u32, tensor_from_proto(u, "u.pb").data.data(), 4);
    EXPECT_EQ(u32, 0xffffffffu);
    onnx::TensorProto d;
    d.set_data_type(onnx::TensorProto::DOUBLE); // a scalar: no dims
    d.add_double_data(0.1);
    double dv;
    std::memcpy(&dv, tensor_from_proto(d, "d.pb").data.data(), 8);
    EXPECT_EQ(dv, 0.1);
    onnx::TensorProto b;
    b.add_dims(2);
    b.set_data_type(onnx::TensorProto::BOOL);
    b.add_int32_data(1);
    b.add_int32_data(0);
    EXPECT_EQ(tensor_from_proto(b, "b.pb").data, (std::vector<uint8_t>{1, 0}));
}

// ---- files NumPy wrote (numpy 1.24 np.save, kept as fuzz seeds) ----

TEST(NumPyFiles, WhatNumPyWroteReads) {
    const char *root = std::getenv("TESSEL_SOURCE_DIR");
    const std::string dir = std::string(root ? root : ".") + "/fuzz/corpus/tensor/";
    FileTensor f = read_tensor_file(dir + "seed-float32-2x3.npy"); // np.arange(6, dtype=float32).reshape(2, 3)
    EXPECT_EQ(f.type, ElemType::Float32);
    EXPECT_EQ(f.dims, (std::vector<int64_t>{2, 3}));
    Tensor t = to_tensor(f, "x", "x");
    for (int i = 0; i < 6; i++) {
        EXPECT_EQ(t.get(i), i);
    }
    FileTensor s = read_tensor_file(dir + "seed-int64-scalar.npy"); // np.int64(-7)
    EXPECT_TRUE(s.dims.empty());
    int64_t v;
    std::memcpy(&v, s.data.data(), 8);
    EXPECT_EQ(v, -7);
    FileTensor v2 = read_tensor_file(dir + "seed-v2-header.npy"); // format version 2.0, uint16[4]
    EXPECT_EQ(v2.type, ElemType::UInt16);
    EXPECT_EQ(v2.dims, (std::vector<int64_t>{4}));
    EXPECT_EQ(read_tensor_file(dir + "seed-bool.npy").data, (std::vector<uint8_t>{1, 0, 1}));
    EXPECT_EQ(read_tensor_file(dir + "seed-uint8-empty.npy").dims, (std::vector<int64_t>{0}));
    EXPECT_EQ(error_of([&] { read_tensor_file(dir + "seed-big-endian.npy"); }),
              dir + "seed-big-endian.npy: unsupported .npy dtype '>i4': big-endian; Tessel reads little-endian arrays ('<')");
}

// ---- real files from the ONNX backend test suite (Debian's libonnx-testdata) ----

TEST(OnnxTestData, AddInputsAndOutputAgree) {
    const std::string dir = onnx_data_dir() + "/test_add/test_data_set_0/";
    if (!std::filesystem::exists(dir)) {
        GTEST_SKIP() << dir << " is absent (apt-get install libonnx-testdata)";
    }
    FileTensor x = read_tensor_file(dir + "input_0.pb"), y = read_tensor_file(dir + "input_1.pb");
    FileTensor sum = read_tensor_file(dir + "output_0.pb");
    EXPECT_EQ(x.name, "x");
    EXPECT_EQ(sum.name, "sum");
    EXPECT_EQ(x.type, ElemType::Float32);
    EXPECT_EQ(x.dims, (std::vector<int64_t>{3, 4, 5}));
    ASSERT_EQ(sum.data.size(), 60u * 4);
    Tensor tx = to_tensor(x, "x", "x"), ty = to_tensor(y, "y", "y"), ts = to_tensor(sum, "sum", "sum");
    for (int64_t i = 0; i < 60; i++) {
        EXPECT_FLOAT_EQ(static_cast<float>(tx.get(i) + ty.get(i)), static_cast<float>(ts.get(i))) << i;
    }
}

TEST(OnnxTestData, TypedInt64BoolAndFloat16Files) {
    const std::string node = onnx_data_dir();
    if (!std::filesystem::exists(node)) {
        GTEST_SKIP() << node << " is absent (apt-get install libonnx-testdata)";
    }
    // int64_data (not raw_data): the axes of a ReduceSum example.
    FileTensor axes = read_tensor_file(node + "/test_reduce_sum_default_axes_keepdims_example/test_data_set_0/input_1.pb");
    EXPECT_EQ(axes.type, ElemType::Int64);
    EXPECT_EQ(axes.dims, (std::vector<int64_t>{0}));
    FileTensor b = read_tensor_file(node + "/test_and2d/test_data_set_0/input_0.pb");
    EXPECT_EQ(b.type, ElemType::Bool);
    EXPECT_EQ(b.dims, (std::vector<int64_t>{3, 4}));
    for (uint8_t v : b.data) {
        EXPECT_LE(v, 1);
    }
    FileTensor h = read_tensor_file(node + "/test_cast_DOUBLE_to_FLOAT16/test_data_set_0/output_0.pb");
    EXPECT_EQ(h.type, ElemType::Float16);
    // Written back and read again, each file is the same tensor.
    for (const FileTensor &t : {axes, b, h}) {
        FileTensor again = parse_pb_tensor(bytes_of(encode_pb_tensor(t)), "again.pb");
        EXPECT_EQ(again.data, t.data);
        EXPECT_EQ(again.dims, t.dims);
    }
}

TEST(OnnxTestData, EveryNodeTestFileReadsOrIsRefusedWithAMessage) {
    const std::string node = onnx_data_dir();
    if (!std::filesystem::exists(node)) {
        GTEST_SKIP() << node << " is absent (apt-get install libonnx-testdata)";
    }
    int read = 0, refused = 0;
    for (const auto &test : std::filesystem::directory_iterator(node)) {
        const auto set = test.path() / "test_data_set_0";
        if (!std::filesystem::is_directory(set)) {
            continue;
        }
        for (const auto &f : std::filesystem::directory_iterator(set)) {
            try {
                FileTensor t = read_tensor_file(f.path().string());
                EXPECT_EQ(static_cast<int64_t>(t.data.size()), t.elements() * elem_bytes(t.type)) << f.path();
                read++;
            } catch (const UserError &e) {
                EXPECT_EQ(std::string(e.what()).rfind(f.path().string() + ": ", 0), 0u) << e.what();
                refused++;
            }
        }
    }
    // 2816 read, 71 refused: strings, and the SequenceProto / OptionalProto files
    // (their bytes read as a TensorProto with a segment or impossible dims).
    EXPECT_GT(read, 2800) << refused << " refused";
    EXPECT_LT(refused, 100) << read << " read";
}

// ---- bad files: one test per message ----

TEST(TensorFileErrors, TruncatedPbDoesNotParse) {
    std::string enc = encode_pb_tensor(pattern(ElemType::Float32));
    std::vector<uint8_t> cut = bytes_of(enc.substr(0, enc.size() - 5));
    EXPECT_EQ(error_of([&] { parse_pb_tensor(cut, "cut.pb"); }),
              "cut.pb: not an ONNX TensorProto: the protobuf does not parse (" + std::to_string(cut.size()) +
                  " bytes; the file is truncated or not a .pb tensor)");
}

TEST(TensorFileErrors, PbWhoseDataIsShorterThanItsDims) {
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(float_proto({2, 3}, 20)), "short.pb"); }),
              "short.pb: raw_data holds 20 bytes, but dims 2x3 of float32 need 24 (the file is truncated or its dims are wrong)");
    onnx::TensorProto p;
    p.add_dims(4);
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.add_float_data(1);
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(p), "few.pb"); }),
              "few.pb: float_data holds 1 values, but dims 4 need 4 (the file is truncated or its dims are wrong)");
    p.clear_float_data();
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(p), "none.pb"); }),
              "none.pb: the tensor holds no data (neither raw_data nor float_data), but dims 4 need 4 elements");
}

TEST(TensorFileErrors, GarbageBytesAreNotATensorProto) {
    std::vector<uint8_t> junk = bytes_of(std::string("\xff\xff\xff\xff garbage, not a tensor", 27));
    std::string e = error_of([&] { parse_pb_tensor(junk, "junk.pb"); });
    EXPECT_EQ(e.rfind("junk.pb: not an ONNX TensorProto: ", 0), 0u) << e;
    // Well-formed protobuf, but not a TensorProto: field 15 is not one of its fields.
    std::vector<uint8_t> other = {0x78, 0x01};
    EXPECT_EQ(error_of([&] { parse_pb_tensor(other, "other.pb"); }),
              "other.pb: not an ONNX TensorProto: it has field number 15, which TensorProto does not define");
    EXPECT_EQ(error_of([&] { parse_pb_tensor({}, "empty.pb"); }),
              "empty.pb: not an ONNX TensorProto: it has no data_type (the file is empty)");
}

TEST(TensorFileErrors, UnknownAndUnsupportedElementTypes) {
    onnx::TensorProto p = float_proto({1}, 4);
    p.set_data_type(onnx::TensorProto::STRING);
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(p), "s.pb"); }),
              "s.pb: unsupported element type 8 (STRING); Tessel reads float32, float16, bfloat16, float64, int8, int16, "
              "int32, int64, uint8, uint16, uint32, uint64 and bool");
    p.set_data_type(99);
    std::string e = error_of([&] { parse_pb_tensor(proto_bytes(p), "u.pb"); });
    EXPECT_EQ(e.rfind("u.pb: unsupported element type 99 (not an ONNX data type)", 0), 0u) << e;
}

TEST(TensorFileErrors, NegativeAndOverflowingDims) {
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(float_proto({2, -3}, 0)), "neg.pb"); }),
              "neg.pb: dimension 1 is -3; dimensions must be >= 0");
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(float_proto({1ll << 32, 1ll << 30}, 0)), "big.pb"); }),
              "big.pb: dims 4294967296x1073741824 hold more elements than a 64-bit size can count");
    // A zero dimension does not excuse the others (fuzz_tensor found the product overflowing
    // in Tensor::elements(), which multiplies innermost first).
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(float_proto({0, 1ll << 32, 1ll << 32}, 0)), "zero.pb"); }),
              "zero.pb: dims 0x4294967296x4294967296 hold more elements than a 64-bit size can count");
    std::vector<int64_t> many(33, 1);
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(float_proto(many, 4)), "rank.pb"); }),
              "rank.pb: 33 dimensions; at most 32 are supported");
}

TEST(TensorFileErrors, ExternalDataIsRefused) {
    onnx::TensorProto p = float_proto({2}, 0);
    p.clear_raw_data();
    p.set_data_location(onnx::TensorProto::EXTERNAL);
    auto *kv = p.add_external_data();
    kv->set_key("location");
    kv->set_value("weights.bin");
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(p), "ext.pb"); }),
              "ext.pb: the tensor's data is stored in an external file (location 'weights.bin'); Tessel reads only "
              "tensors that hold their data (raw_data or the typed fields)");
}

TEST(TensorFileErrors, WrongOrDoubledDataFields) {
    onnx::TensorProto p = float_proto({1}, 4);
    p.add_int64_data(7);
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(p), "w.pb"); }),
              "w.pb: a float32 tensor holds int64_data; its values belong in float_data or raw_data");
    p.clear_int64_data();
    p.add_float_data(1);
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(p), "both.pb"); }),
              "both.pb: the tensor holds both raw_data and float_data; a TensorProto holds one of them");
    onnx::TensorProto q;
    q.add_dims(2);
    q.set_data_type(onnx::TensorProto::INT8);
    q.add_int32_data(1);
    q.add_int32_data(300);
    EXPECT_EQ(error_of([&] { parse_pb_tensor(proto_bytes(q), "r.pb"); }),
              "r.pb: int32_data value 300 at element 1 does not fit int8");
}

TEST(TensorFileErrors, TruncatedNpy) {
    std::string enc = encode_npy_tensor(pattern(ElemType::Float32), "x.npy");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(bytes_of(enc.substr(0, enc.size() - 4)), "cut.npy"); }),
              "cut.npy: truncated .npy file: shape float32[2x3] needs 24 bytes of data, the file has 20");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(bytes_of(enc.substr(0, 30)), "head.npy"); }),
              "head.npy: truncated .npy file: the header is 118 bytes, but only 20 follow");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(bytes_of(enc.substr(0, 7)), "ver.npy"); }),
              "ver.npy: truncated .npy file: 7 bytes, it ends inside the version");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(bytes_of(enc + "xx"), "long.npy"); }),
              "long.npy: 2 bytes after the data of a float32[2x3] array (24 bytes): not a single .npy array");
}

TEST(TensorFileErrors, BadNpyHeaders) {
    auto npy = [](const std::string &header) {
        std::string s("\x93NUMPY\x01\x00", 8);
        s.push_back(static_cast<char>(header.size()));
        s.push_back(0);
        return bytes_of(s + header);
    };
    EXPECT_EQ(error_of([&] { parse_npy_tensor(bytes_of("PK\x03\x04 a zip"), "z.npy"); }),
              "z.npy: not a .npy file (it does not start with \\x93NUMPY)");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }"), "be.npy"); }),
              "be.npy: unsupported .npy dtype '>f4': big-endian; Tessel reads little-endian arrays ('<')");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"), "c.npy"); }),
              "c.npy: unsupported .npy dtype '<c8': Tessel reads float16/32/64, int8/16/32/64, uint8/16/32/64 and bool (b1)");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }"), "f.npy"); }),
              "f.npy: the array is in Fortran order (fortran_order: True); Tessel reads C-order arrays "
              "(numpy.ascontiguousarray before numpy.save)");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"), "n.npy"); }),
              "n.npy: malformed .npy header at character 52: a negative dimension (header: \"{'descr': '<f4', "
              "'fortran_order': False, 'shape': (-1,), }\")");
    EXPECT_EQ(error_of([&] { parse_npy_tensor(npy("{'descr': '<f4', 'shape': (1,), }"), "m.npy"); }),
              "m.npy: malformed .npy header at character 34: missing key 'fortran_order' (header: \"{'descr': '<f4', "
              "'shape': (1,), }\")");
}

TEST(TensorFileErrors, NpyRefusesBFloat16) {
    EXPECT_EQ(error_of([&] { encode_npy_tensor(pattern(ElemType::BFloat16), "out/B.npy"); }),
              "out/B.npy: NumPy has no bfloat16 type; write this tensor as .pb");
}

TEST(TensorFileErrors, TypesGeneratorsDoNotTake) {
    EXPECT_EQ(error_of([&] { to_tensor(pattern(ElemType::Int64), "x", "x.pb"); }),
              "x.pb: tensor 'x' is int64; Tessel's generators take int8, uint8, int16, int32, float16, bfloat16 or float32");
}

TEST(TensorFileErrors, NotATensorFileOrMissing) {
    EXPECT_EQ(error_of([&] { read_tensor_file("weights.txt"); }),
              "weights.txt: not a tensor file (Tessel reads ONNX TensorProto .pb and NumPy .npy files)");
    std::string e = error_of([&] { read_tensor_file("/nonexistent/a.pb"); });
    EXPECT_EQ(e, "cannot read tensor file '/nonexistent/a.pb': No such file or directory") << e;
}
