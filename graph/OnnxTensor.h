#ifndef TESSEL_GRAPH_ONNXTENSOR_H
#define TESSEL_GRAPH_ONNXTENSOR_H

// ONNX TensorProto <-> FileTensor, for code that already holds protobuf
// objects (a model's initializers, Constant nodes' values). Includes Debian's
// onnx/onnx_pb.h; code that only reads and writes files uses graph/TensorFile.h.

#include "graph/TensorFile.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

namespace tessel::graph {

/** ElemType of an ONNX TensorProto::DataType value; nullopt for UNDEFINED,
 * STRING, COMPLEX64/128 and values ONNX does not define. */
std::optional<ElemType> elem_of_onnx(int32_t data_type);
int32_t onnx_of_elem(ElemType t);

/** Validates `p` and returns its data as a FileTensor: raw_data or the typed
 * field its type uses (float_data, int32_data, int64_data, double_data,
 * uint64_data), never both; dims checked against the data; external data,
 * segments, strings and values out of their type's range refused. Errors are
 * UserErrors "origin: ...". */
FileTensor tensor_from_proto(const onnx::TensorProto &p, const std::string &origin);
/** The tensor as a TensorProto (name, dims, data_type, raw_data). */
onnx::TensorProto tensor_to_proto(const FileTensor &t);

} // namespace tessel::graph

#endif
