// ONNX TensorProto files (.pb) through Debian's libonnx protobuf classes:
// parse, validate, convert to and from FileTensor.
#include "graph/OnnxTensor.h"

#include "npu_target/common/Error.h"

#include <google/protobuf/unknown_field_set.h>

#include <cstring>
#include <limits>
#include <sstream>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "tensor files hold little-endian data; the readers copy it as is");

namespace tessel::graph {

namespace {

using onnx::TensorProto;

struct OnnxType {
    int32_t onnx;
    ElemType type;
};

const OnnxType kOnnxTypes[] = {
    {TensorProto::FLOAT, ElemType::Float32},   {TensorProto::UINT8, ElemType::UInt8},
    {TensorProto::INT8, ElemType::Int8},       {TensorProto::UINT16, ElemType::UInt16},
    {TensorProto::INT16, ElemType::Int16},     {TensorProto::INT32, ElemType::Int32},
    {TensorProto::INT64, ElemType::Int64},     {TensorProto::BOOL, ElemType::Bool},
    {TensorProto::FLOAT16, ElemType::Float16}, {TensorProto::DOUBLE, ElemType::Float64},
    {TensorProto::UINT32, ElemType::UInt32},   {TensorProto::UINT64, ElemType::UInt64},
    {TensorProto::BFLOAT16, ElemType::BFloat16},
};

std::string dims_text(const std::vector<int64_t> &dims) {
    if (dims.empty()) {
        return "[] (a scalar)";
    }
    std::ostringstream os;
    for (size_t i = 0; i < dims.size(); i++) {
        os << (i ? "x" : "") << dims[i];
    }
    return os.str();
}

// The typed field a type's values go in when raw_data is not used (onnx.proto).
enum class Field { Float, Int32, Int64, Double, UInt64 };

Field field_of(ElemType t) {
    switch (t) {
    case ElemType::Float32:
        return Field::Float;
    case ElemType::Int64:
        return Field::Int64;
    case ElemType::Float64:
        return Field::Double;
    case ElemType::UInt32:
    case ElemType::UInt64:
        return Field::UInt64;
    default:
        return Field::Int32; // int8/16/32, uint8/16, bool, float16 and bfloat16 (as their bits)
    }
}

const char *field_name(Field f) {
    switch (f) {
    case Field::Float:
        return "float_data";
    case Field::Int32:
        return "int32_data";
    case Field::Int64:
        return "int64_data";
    case Field::Double:
        return "double_data";
    case Field::UInt64:
        return "uint64_data";
    }
    return "?";
}

int field_size(const TensorProto &p, Field f) {
    switch (f) {
    case Field::Float:
        return p.float_data_size();
    case Field::Int32:
        return p.int32_data_size();
    case Field::Int64:
        return p.int64_data_size();
    case Field::Double:
        return p.double_data_size();
    case Field::UInt64:
        return p.uint64_data_size();
    }
    return 0;
}

// The range an int32_data / uint64_data value must lie in for type t.
void int_range(ElemType t, int64_t &lo, uint64_t &hi) {
    switch (t) {
    case ElemType::Int8:
        lo = -128, hi = 127;
        return;
    case ElemType::UInt8:
        lo = 0, hi = 255;
        return;
    case ElemType::Bool:
        lo = 0, hi = 1;
        return;
    case ElemType::Int16:
        lo = -32768, hi = 32767;
        return;
    case ElemType::UInt16:
    case ElemType::Float16:
    case ElemType::BFloat16:
        lo = 0, hi = 65535;
        return;
    case ElemType::UInt32:
        lo = 0, hi = 0xffffffffull;
        return;
    default:
        lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<uint64_t>::max();
        return;
    }
}

template <typename T>
void put(std::vector<uint8_t> &data, int64_t i, T v) {
    std::memcpy(data.data() + i * sizeof(T), &v, sizeof(T));
}

// Copies the typed field's values into `t.data`, checking each fits the type.
void copy_typed(const TensorProto &p, Field f, FileTensor &t, const std::string &origin) {
    const int64_t n = static_cast<int64_t>(t.data.size()) / elem_bytes(t.type);
    int64_t lo = 0;
    uint64_t hi = 0;
    int_range(t.type, lo, hi);
    auto out_of_range = [&](int64_t i, const std::string &v) {
        user_error(origin, ": ", field_name(f), " value ", v, " at element ", i, " does not fit ", elem_name(t.type));
    };
    for (int64_t i = 0; i < n; i++) {
        switch (f) {
        case Field::Float:
            put(t.data, i, p.float_data(static_cast<int>(i)));
            break;
        case Field::Double:
            put(t.data, i, p.double_data(static_cast<int>(i)));
            break;
        case Field::Int64:
            put(t.data, i, p.int64_data(static_cast<int>(i)));
            break;
        case Field::UInt64: {
            uint64_t v = p.uint64_data(static_cast<int>(i));
            if (v > hi) {
                out_of_range(i, std::to_string(v));
            }
            if (t.type == ElemType::UInt32) {
                put(t.data, i, static_cast<uint32_t>(v));
            } else {
                put(t.data, i, v);
            }
            break;
        }
        case Field::Int32: {
            int64_t v = p.int32_data(static_cast<int>(i));
            if (v < lo || (v >= 0 && static_cast<uint64_t>(v) > hi)) {
                out_of_range(i, std::to_string(v));
            }
            switch (elem_bytes(t.type)) {
            case 1:
                put(t.data, i, static_cast<uint8_t>(v));
                break;
            case 2:
                put(t.data, i, static_cast<uint16_t>(v));
                break;
            default:
                put(t.data, i, static_cast<int32_t>(v));
                break;
            }
            break;
        }
        }
    }
}

} // namespace

std::optional<ElemType> elem_of_onnx(int32_t data_type) {
    for (const OnnxType &o : kOnnxTypes) {
        if (o.onnx == data_type) {
            return o.type;
        }
    }
    return std::nullopt;
}

int32_t onnx_of_elem(ElemType t) {
    for (const OnnxType &o : kOnnxTypes) {
        if (o.type == t) {
            return o.onnx;
        }
    }
    internal_error("ElemType ", elem_name(t), " has no ONNX data type");
}

FileTensor tensor_from_proto(const TensorProto &p, const std::string &origin) {
    if (p.data_location() == TensorProto::EXTERNAL || p.external_data_size() > 0) {
        std::string where;
        for (const auto &kv : p.external_data()) {
            if (kv.key() == "location") {
                where = " (location '" + kv.value().substr(0, 200) + "')";
            }
        }
        user_error(origin, ": the tensor's data is stored in an external file", where,
                   "; Tessel reads only tensors that hold their data (raw_data or the typed fields)");
    }
    if (p.has_segment()) {
        user_error(origin, ": the tensor is a segment of a larger one (TensorProto.segment); Tessel reads only whole tensors");
    }
    std::optional<ElemType> type = elem_of_onnx(p.data_type());
    if (!type) {
        const std::string name = TensorProto::DataType_IsValid(p.data_type())
                                     ? TensorProto::DataType_Name(static_cast<TensorProto::DataType>(p.data_type()))
                                     : std::string("not an ONNX data type");
        user_error(origin, ": unsupported element type ", p.data_type(), " (", name,
                   "); Tessel reads float32, float16, bfloat16, float64, int8, int16, int32, int64, "
                   "uint8, uint16, uint32, uint64 and bool");
    }
    FileTensor t;
    t.name = p.name();
    t.type = *type;
    t.dims.assign(p.dims().begin(), p.dims().end());
    const int64_t n = checked_element_count(t.dims, elem_bytes(t.type), origin);
    const int64_t need = n * elem_bytes(t.type);
    // Which typed fields hold values: at most one, and the one this type uses.
    const Field want = field_of(t.type);
    std::string present;
    for (Field f : {Field::Float, Field::Int32, Field::Int64, Field::Double, Field::UInt64}) {
        if (field_size(p, f) == 0) {
            continue;
        }
        if (f != want) {
            user_error(origin, ": a ", elem_name(t.type), " tensor holds ", field_name(f), "; its values belong in ",
                       field_name(want), " or raw_data");
        }
        present = field_name(f);
    }
    if (p.has_raw_data() && !present.empty()) {
        user_error(origin, ": the tensor holds both raw_data and ", present, "; a TensorProto holds one of them");
    }
    if (p.string_data_size() > 0) {
        user_error(origin, ": a ", elem_name(t.type), " tensor holds string_data");
    }
    if (p.has_raw_data()) {
        const std::string &raw = p.raw_data();
        if (static_cast<int64_t>(raw.size()) != need) {
            user_error(origin, ": raw_data holds ", raw.size(), " bytes, but dims ", dims_text(t.dims), " of ",
                       elem_name(t.type), " need ", need, " (the file is truncated or its dims are wrong)");
        }
        t.data.assign(raw.begin(), raw.end());
        return t;
    }
    const int64_t count = field_size(p, want);
    if (count != n) {
        if (count == 0) {
            user_error(origin, ": the tensor holds no data (neither raw_data nor ", field_name(want), "), but dims ",
                       dims_text(t.dims), " need ", n, " elements");
        }
        user_error(origin, ": ", field_name(want), " holds ", count, " values, but dims ", dims_text(t.dims), " need ",
                   n, " (the file is truncated or its dims are wrong)");
    }
    t.data.assign(static_cast<size_t>(need), 0);
    copy_typed(p, want, t, origin);
    return t;
}

TensorProto tensor_to_proto(const FileTensor &t) {
    TensorProto p;
    if (!t.name.empty()) {
        p.set_name(t.name);
    }
    for (int64_t d : t.dims) {
        p.add_dims(d);
    }
    p.set_data_type(onnx_of_elem(t.type));
    p.set_raw_data(std::string(t.data.begin(), t.data.end()));
    return p;
}

FileTensor parse_pb_tensor(const std::vector<uint8_t> &bytes, const std::string &origin) {
    TensorProto p;
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
        !p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        user_error(origin, ": not an ONNX TensorProto: the protobuf does not parse (", bytes.size(),
                   " bytes; the file is truncated or not a .pb tensor)");
    }
    const auto &unknown = p.unknown_fields();
    if (unknown.field_count() > 0) {
        user_error(origin, ": not an ONNX TensorProto: it has field number ", unknown.field(0).number(),
                   ", which TensorProto does not define");
    }
    if (!p.has_data_type()) {
        user_error(origin, ": not an ONNX TensorProto: it has no data_type",
                   bytes.empty() ? " (the file is empty)" : "");
    }
    return tensor_from_proto(p, origin);
}

std::string encode_pb_tensor(const FileTensor &t) { return tensor_to_proto(t).SerializeAsString(); }

} // namespace tessel::graph
