#ifndef TESSEL_GRAPH_TENSORFILE_H
#define TESSEL_GRAPH_TENSORFILE_H

// Tensor files: ONNX TensorProto (`.pb`, as the ONNX backend test suite stores
// its inputs and outputs) and NumPy `.npy`, read and written as plain data.
// Halide-free and protobuf-free (graph/OnnxTensor.h has the proto-level API).
//
// Every read goes through the checked input layer (npu_target/common/InputFile.h,
// size-capped) and every write through write_output_file. Every problem with a
// file (truncated, garbage, unknown element type, dims that are negative,
// overflow or disagree with the data, external data) is a UserError
// "FILE: what is wrong" (docs/tensors.md lists them all).

#include "npu_target/common/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::graph {

/** The element types a tensor file may hold: every fixed-size numeric type of
 * ONNX (strings and complex numbers are refused). Tessel's generators take the
 * subset DType has (to_tensor). */
enum class ElemType { Float32, Float16, BFloat16, Float64, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Bool };

/** Bytes per element. */
int elem_bytes(ElemType t);
/** Lower-case name as NumPy spells it: float32 float16 bfloat16 float64 int8 ... bool. */
const char *elem_name(ElemType t);
/** The NPU's DType for `t`, if it has one (float32, float16, bfloat16, int8, uint8, int16, int32). */
std::optional<DType> elem_dtype(ElemType t);
ElemType elem_of(DType t);

/** A tensor as the file formats hold it: dims outermost first (ONNX and NumPy
 * order, the reverse of tessel::Tensor), data dense in C order, little-endian. */
struct FileTensor {
    std::string name;            // TensorProto.name; "" when the file has none (.npy never has)
    ElemType type = ElemType::Float32;
    std::vector<int64_t> dims;   // outermost first; empty = a scalar (one element)
    std::vector<uint8_t> data;   // elements() * elem_bytes(type) bytes

    int64_t elements() const;
    /** "float32[2x3]" (outermost first), "float32[] (scalar)". */
    std::string describe() const;
};

enum class TensorFormat { Pb, Npy };

/** Largest tensor file read (1 GiB): the size cap of read_input_bytes. */
constexpr uint64_t kMaxTensorFileBytes = 1ull << 30;
/** Most dimensions a tensor may have (NumPy's own limit is 32). */
constexpr int kMaxTensorRank = 32;

/** The format a path names by its extension (.pb or .npy); nullopt for others. */
std::optional<TensorFormat> tensor_format_of(const std::string &path);

/** Parses an ONNX TensorProto (protobuf binary) / a .npy file held in memory.
 * `origin` names it in messages. Each validates everything (docs/tensors.md). */
FileTensor parse_pb_tensor(const std::vector<uint8_t> &bytes, const std::string &origin);
FileTensor parse_npy_tensor(const std::vector<uint8_t> &bytes, const std::string &origin);
/** Serialises: a TensorProto with dims, data_type, name and raw_data; a .npy
 * version 1.0 file (version 2.0 when the header needs more than 65535 bytes).
 * NumPy has no bfloat16: encoding one as .npy is a UserError. */
std::string encode_pb_tensor(const FileTensor &t);
std::string encode_npy_tensor(const FileTensor &t, const std::string &origin);

/** Reads `path` (.pb or .npy by its extension; anything else is an error). */
FileTensor read_tensor_file(const std::string &path);
/** Writes `t` to `path` in `format` (atomically, through write_output_file). */
void write_tensor_file(const std::string &path, const FileTensor &t, TensorFormat format);

/** The file tensor as a tessel::Tensor called `name` (dims reversed to
 * innermost-first). A type without a DType (int64, bool, ...) is a UserError
 * naming `origin`, the tensor and the type. */
Tensor to_tensor(const FileTensor &t, const std::string &name, const std::string &origin);
/** A tessel::Tensor as a file tensor (dims reversed to outermost-first). */
FileTensor from_tensor(const Tensor &t);

/** Checks dims (each >= 0, at most kMaxTensorRank of them, the product and
 * product * `elem_size` within int64) and returns the element count; errors
 * are "origin: ..." UserErrors. Shared by both readers. */
int64_t checked_element_count(const std::vector<int64_t> &dims, int elem_size, const std::string &origin);

} // namespace tessel::graph

#endif
