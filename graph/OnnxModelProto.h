#ifndef TESSEL_GRAPH_ONNXMODELPROTO_H
#define TESSEL_GRAPH_ONNXMODELPROTO_H

// model.onnx at the protobuf level, for the code that needs ONNX's own tools on
// the ModelProto (the checker and shape inference of the model import,
// graph/GraphImport.cpp) before turning it into plain data. Includes
// onnx/onnx_pb.h; everything else uses graph/OnnxModel.h.

#include "graph/OnnxModel.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace tessel::graph {

/** Reads and parses `path` with read_onnx_model's errors (unreadable, does not
 * parse, no graph). */
onnx::ModelProto read_model_proto(const std::string &path);
/** The plain-data model of a parsed ModelProto (`path` names it in errors). */
OnnxModel onnx_model_of(const onnx::ModelProto &m, const std::string &path);

} // namespace tessel::graph

#endif
