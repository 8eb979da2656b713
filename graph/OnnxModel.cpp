// model.onnx through Debian's libonnx protobuf classes (onnx::ModelProto).
#include "graph/OnnxModel.h"

#include "graph/OnnxModelProto.h"
#include "graph/OnnxTensor.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <onnx/onnx_pb.h>

#include <sstream>

namespace tessel::graph {

namespace {

// Models are at most 1 GiB here (the largest node test's model is a few KiB; a
// network's weights may be large, and protobuf refuses messages over 2 GiB).
constexpr uint64_t kMaxModelBytes = 1ull << 30;

OnnxAttribute attribute_of(const onnx::AttributeProto &a, const std::string &origin) {
    OnnxAttribute r;
    r.name = a.name();
    r.type_name = onnx::AttributeProto::AttributeType_Name(a.type());
    switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
        r.kind = OnnxAttribute::Float;
        r.f = a.f();
        break;
    case onnx::AttributeProto::INT:
        r.kind = OnnxAttribute::Int;
        r.i = a.i();
        break;
    case onnx::AttributeProto::STRING:
        r.kind = OnnxAttribute::String;
        r.s = a.s();
        break;
    case onnx::AttributeProto::TENSOR:
        r.kind = OnnxAttribute::Tensor;
        // A value the tensor readers refuse (a string tensor, external data) is kept as
        // its reason: single-operator tests that never read it still load.
        try {
            r.tensor = tensor_from_proto(a.t(), origin + ": attribute '" + a.name() + "'");
        } catch (const UserError &e) {
            r.tensor_error = e.what();
        }
        break;
    case onnx::AttributeProto::FLOATS:
        r.kind = OnnxAttribute::Floats;
        r.floats.assign(a.floats().begin(), a.floats().end());
        break;
    case onnx::AttributeProto::INTS:
        r.kind = OnnxAttribute::Ints;
        r.ints.assign(a.ints().begin(), a.ints().end());
        break;
    case onnx::AttributeProto::STRINGS:
        r.kind = OnnxAttribute::Strings;
        r.strings.assign(a.strings().begin(), a.strings().end());
        break;
    default:
        r.kind = OnnxAttribute::Other;
        break;
    }
    return r;
}

OnnxValue value_of(const onnx::ValueInfoProto &v) {
    OnnxValue r;
    r.name = v.name();
    if (!v.has_type()) {
        r.kind = "unknown";
        return r;
    }
    const onnx::TypeProto &t = v.type();
    switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: {
        r.kind = "tensor";
        r.onnx_type = t.tensor_type().elem_type();
        r.type = elem_of_onnx(r.onnx_type);
        if (t.tensor_type().has_shape()) {
            r.has_shape = true;
            for (const auto &d : t.tensor_type().shape().dim()) {
                r.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
            }
        }
        return r;
    }
    case onnx::TypeProto::kSequenceType:
        r.kind = "sequence";
        return r;
    case onnx::TypeProto::kOptionalType:
        r.kind = "optional";
        return r;
    case onnx::TypeProto::kMapType:
        r.kind = "map";
        return r;
    case onnx::TypeProto::kSparseTensorType:
        r.kind = "sparse_tensor";
        return r;
    default:
        r.kind = "unknown";
        return r;
    }
}

} // namespace

const OnnxAttribute *OnnxNode::attribute(const std::string &n) const {
    for (const auto &a : attributes) {
        if (a.name == n) {
            return &a;
        }
    }
    return nullptr;
}

std::string shape_text(const std::vector<int64_t> &dims) {
    if (dims.empty()) {
        return "[] (a scalar)";
    }
    std::ostringstream os;
    for (size_t i = 0; i < dims.size(); i++) {
        os << (i ? "x" : "");
        if (dims[i] < 0) {
            os << "?";
        } else {
            os << dims[i];
        }
    }
    return os.str();
}

onnx::ModelProto read_model_proto(const std::string &path) {
    const std::vector<uint8_t> bytes = read_input_bytes(path, "ONNX model", kMaxModelBytes);
    onnx::ModelProto m;
    if (bytes.empty() || !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        user_error(path, ": not an ONNX model: the protobuf does not parse (", bytes.size(),
                   " bytes; the file is truncated or not a model.onnx)");
    }
    if (!m.has_graph()) {
        user_error(path, ": not an ONNX model: it has no graph (ModelProto.graph is empty)");
    }
    return m;
}

OnnxModel onnx_model_of(const onnx::ModelProto &m, const std::string &path) {
    OnnxModel r;
    r.path = path;
    for (const auto &op : m.opset_import()) {
        if (op.domain().empty() || op.domain() == "ai.onnx") {
            r.opset = op.version();
        }
    }
    const onnx::GraphProto &g = m.graph();
    for (const auto &init : g.initializer()) {
        r.initializers[init.name()] = tensor_from_proto(init, path + ": initializer '" + init.name() + "'");
    }
    for (const auto &v : g.input()) {
        if (!r.initializers.count(v.name())) {
            r.inputs.push_back(value_of(v));
        }
    }
    for (const auto &v : g.output()) {
        r.outputs.push_back(value_of(v));
    }
    for (const auto &n : g.node()) {
        OnnxNode node;
        node.name = n.name();
        node.op_type = n.op_type();
        node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
        node.inputs.assign(n.input().begin(), n.input().end());
        node.outputs.assign(n.output().begin(), n.output().end());
        for (const auto &a : n.attribute()) {
            node.attributes.push_back(attribute_of(a, path + ": node '" + n.name() + "' (" + n.op_type() + ")"));
        }
        r.nodes.push_back(std::move(node));
    }
    return r;
}

OnnxModel read_onnx_model(const std::string &path) { return onnx_model_of(read_model_proto(path), path); }

} // namespace tessel::graph
