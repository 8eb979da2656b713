#include "graph/TensorFile.h"

#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace tessel::graph {

namespace {

struct ElemInfo {
    ElemType type;
    const char *name;
    int bytes;
    std::optional<DType> dtype;
};

// The one table of element types: names, sizes and the NPU type of each.
const ElemInfo kElems[] = {
    {ElemType::Float32, "float32", 4, DType::FP32},   {ElemType::Float16, "float16", 2, DType::FP16},
    {ElemType::BFloat16, "bfloat16", 2, DType::BF16}, {ElemType::Float64, "float64", 8, std::nullopt},
    {ElemType::Int8, "int8", 1, DType::Int8},         {ElemType::UInt8, "uint8", 1, DType::UInt8},
    {ElemType::Int16, "int16", 2, DType::Int16},      {ElemType::UInt16, "uint16", 2, std::nullopt},
    {ElemType::Int32, "int32", 4, DType::Int32},      {ElemType::UInt32, "uint32", 4, std::nullopt},
    {ElemType::Int64, "int64", 8, std::nullopt},      {ElemType::UInt64, "uint64", 8, std::nullopt},
    {ElemType::Bool, "bool", 1, std::nullopt},
};

const ElemInfo &info(ElemType t) {
    for (const ElemInfo &e : kElems) {
        if (e.type == t) {
            return e;
        }
    }
    internal_error("ElemType ", static_cast<int>(t), " is not in the table");
}

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

int elem_bytes(ElemType t) { return info(t).bytes; }
const char *elem_name(ElemType t) { return info(t).name; }
std::optional<DType> elem_dtype(ElemType t) { return info(t).dtype; }

ElemType elem_of(DType t) {
    for (const ElemInfo &e : kElems) {
        if (e.dtype == t) {
            return e.type;
        }
    }
    internal_error("DType ", dtype_name(t), " has no ElemType");
}

int64_t FileTensor::elements() const {
    int64_t n = 1;
    for (int64_t d : dims) {
        n *= d;
    }
    return n;
}

std::string FileTensor::describe() const {
    std::ostringstream os;
    os << elem_name(type) << "[";
    for (size_t i = 0; i < dims.size(); i++) {
        os << (i ? "x" : "") << dims[i];
    }
    os << "]" << (dims.empty() ? " (scalar)" : "");
    return os.str();
}

int64_t checked_element_count(const std::vector<int64_t> &dims, int elem_size, const std::string &origin) {
    if (static_cast<int>(dims.size()) > kMaxTensorRank) {
        user_error(origin, ": ", dims.size(), " dimensions; at most ", kMaxTensorRank, " are supported");
    }
    // The product of the nonzero dims must fit too (times elem_size): then every
    // partial product, in any order (Tensor::elements() goes innermost first), does.
    // A zero-sized tensor with dims 0x2^40x2^40 is refused with the rest.
    const int64_t max = std::numeric_limits<int64_t>::max() / elem_size;
    int64_t nonzero = 1;
    bool empty = false;
    for (size_t i = 0; i < dims.size(); i++) {
        if (dims[i] < 0) {
            user_error(origin, ": dimension ", i, " is ", dims[i], "; dimensions must be >= 0");
        }
        if (dims[i] == 0) {
            empty = true;
            continue;
        }
        if (nonzero > max / dims[i]) {
            std::ostringstream os;
            for (size_t k = 0; k < dims.size(); k++) {
                os << (k ? "x" : "") << dims[k];
            }
            user_error(origin, ": dims ", os.str(), " hold more elements than a 64-bit size can count");
        }
        nonzero *= dims[i];
    }
    return empty ? 0 : nonzero;
}

std::optional<TensorFormat> tensor_format_of(const std::string &path) {
    if (ends_with(path, ".pb")) {
        return TensorFormat::Pb;
    }
    if (ends_with(path, ".npy")) {
        return TensorFormat::Npy;
    }
    return std::nullopt;
}

FileTensor read_tensor_file(const std::string &path) {
    std::optional<TensorFormat> f = tensor_format_of(path);
    if (!f) {
        user_error(path, ": not a tensor file (Tessel reads ONNX TensorProto .pb and NumPy .npy files)");
    }
    std::vector<uint8_t> bytes = read_input_bytes(path, "tensor file", kMaxTensorFileBytes);
    return *f == TensorFormat::Pb ? parse_pb_tensor(bytes, path) : parse_npy_tensor(bytes, path);
}

void write_tensor_file(const std::string &path, const FileTensor &t, TensorFormat format) {
    std::string bytes = format == TensorFormat::Pb ? encode_pb_tensor(t) : encode_npy_tensor(t, path);
    write_output_file(path, bytes, "tensor file");
}

Tensor to_tensor(const FileTensor &t, const std::string &name, const std::string &origin) {
    std::optional<DType> d = elem_dtype(t.type);
    if (!d) {
        user_error(origin, ": tensor '", name, "' is ", elem_name(t.type),
                   "; Tessel's generators take int8, uint8, int16, int32, float16, bfloat16 or float32");
    }
    Tensor out;
    out.name = name;
    out.dtype = *d;
    out.shape.assign(t.dims.rbegin(), t.dims.rend());
    out.data = t.data;
    return out;
}

FileTensor from_tensor(const Tensor &t) {
    FileTensor out;
    out.name = t.name;
    out.type = elem_of(t.dtype);
    out.dims.assign(t.shape.rbegin(), t.shape.rend());
    out.data = t.data;
    return out;
}

} // namespace tessel::graph
