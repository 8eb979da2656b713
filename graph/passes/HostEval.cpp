// Host evaluation of constant subgraphs (graph/passes/HostEval.h).
#include "graph/passes/HostEval.h"

#include "npu_target/common/Error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace tessel::graph {

namespace {

// Calls f(T{}) with the C++ type of a computed element type; false for float16/bfloat16.
template <typename F>
bool with_type(ElemType t, F &&f) {
    switch (t) {
    case ElemType::Float32: f(float()); return true;
    case ElemType::Float64: f(double()); return true;
    case ElemType::Int8: f(int8_t()); return true;
    case ElemType::UInt8: f(uint8_t()); return true;
    case ElemType::Int16: f(int16_t()); return true;
    case ElemType::UInt16: f(uint16_t()); return true;
    case ElemType::Int32: f(int32_t()); return true;
    case ElemType::UInt32: f(uint32_t()); return true;
    case ElemType::Int64: f(int64_t()); return true;
    case ElemType::UInt64: f(uint64_t()); return true;
    case ElemType::Bool: f(bool()); return true;
    case ElemType::Float16:
    case ElemType::BFloat16: return false;
    }
    return false;
}

template <typename V>
std::optional<std::vector<V>> values_as(const FileTensor &t) {
    std::vector<V> r(static_cast<size_t>(t.elements()));
    const bool ok = with_type(t.type, [&](auto x) {
        for (size_t i = 0; i < r.size(); i++) {
            std::memcpy(&x, t.data.data() + i * sizeof x, sizeof x);
            r[i] = static_cast<V>(x);
        }
    });
    return ok ? std::optional<std::vector<V>>(std::move(r)) : std::nullopt;
}

template <typename V>
FileTensor tensor_from(ElemType type, const std::vector<int64_t> &dims, const std::vector<V> &v) {
    FileTensor t;
    t.type = type;
    t.dims = dims;
    t.data.resize(v.size() * elem_bytes(type));
    const bool ok = with_type(type, [&](auto x) {
        for (size_t i = 0; i < v.size(); i++) {
            x = static_cast<decltype(x)>(v[i]);
            std::memcpy(t.data.data() + i * sizeof x, &x, sizeof x);
        }
    });
    if (!ok) {
        internal_error("host eval: no arithmetic on ", elem_name(type));
    }
    return t;
}

int64_t count(const std::vector<int64_t> &d) {
    int64_t n = 1;
    for (int64_t x : d) {
        n *= x;
    }
    return n;
}

// The flat index into a tensor of `in` dims (right-aligned, NumPy broadcasting)
// of the element at output flat index `i` of `out` dims.
int64_t broadcast_index(int64_t i, const std::vector<int64_t> &out, const std::vector<int64_t> &in) {
    int64_t idx = 0, stride = 1;
    for (size_t k = 0; k < out.size(); k++) {
        const size_t od = out.size() - 1 - k;
        const int64_t coord = i % out[od];
        i /= out[od];
        if (k < in.size()) {
            const int64_t d = in[in.size() - 1 - k];
            idx += (d == 1 ? 0 : coord) * stride;
            stride *= d;
        }
    }
    return idx;
}

// Elementwise a op b with broadcasting, on values of type V (int64 or double).
template <typename V>
std::optional<std::vector<V>> broadcast_op(const std::string &op, const std::vector<V> &x, const FileTensor &a,
                                           const std::vector<V> &y, const FileTensor &b, const GraphTensor &out) {
    std::vector<V> r(static_cast<size_t>(count(out.dims)));
    for (size_t i = 0; i < r.size(); i++) {
        const V p = x[broadcast_index(i, out.dims, a.dims)], q = y[broadcast_index(i, out.dims, b.dims)];
        if (std::is_integral_v<V> && op == "Div" && q == 0) {
            return std::nullopt; // left to the kernel (ONNX leaves it undefined)
        }
        r[i] = op == "Add" ? p + q : op == "Sub" ? p - q : op == "Mul" ? p * q : p / q;
        if (out.type == ElemType::Float32) {
            r[i] = static_cast<V>(static_cast<float>(r[i])); // float32 arithmetic, rounded as the model's
        }
    }
    return r;
}

std::optional<FileTensor> binary(const std::string &op, const FileTensor &a, const FileTensor &b,
                                 const GraphTensor &out) {
    if (is_integer_type(out.type)) {
        auto x = int_values(a), y = int_values(b);
        auto r = x && y ? broadcast_op(op, *x, a, *y, b, out) : std::nullopt;
        return r ? std::optional<FileTensor>(tensor_of_ints(out.type, out.dims, *r)) : std::nullopt;
    }
    auto x = float_values(a), y = float_values(b);
    auto r = x && y ? broadcast_op(op, *x, a, *y, b, out) : std::nullopt;
    return r ? std::optional<FileTensor>(tensor_of(out.type, out.dims, *r)) : std::nullopt;
}

// Elements of `t` as bytes, gathered: out[i] = t[index(i)].
FileTensor gathered(const FileTensor &t, const GraphTensor &out, const std::vector<int64_t> &index) {
    FileTensor r;
    r.type = t.type;
    r.dims = out.dims;
    const size_t eb = static_cast<size_t>(elem_bytes(t.type));
    r.data.resize(index.size() * eb);
    for (size_t i = 0; i < index.size(); i++) {
        std::memcpy(r.data.data() + i * eb, t.data.data() + static_cast<size_t>(index[i]) * eb, eb);
    }
    return r;
}

std::optional<FileTensor> gather(const GraphNode &n, const FileTensor &data, const FileTensor &indices,
                                 const GraphTensor &out) {
    const int64_t rank = static_cast<int64_t>(data.dims.size());
    int64_t axis = n.int_attr("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    auto idx = int_values(indices);
    if (!idx || axis < 0 || axis >= rank) {
        return std::nullopt;
    }
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; k++) {
        outer *= data.dims[k];
    }
    for (int64_t k = axis + 1; k < rank; k++) {
        inner *= data.dims[k];
    }
    const int64_t extent = data.dims[axis];
    std::vector<int64_t> index;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j : *idx) {
            j = j < 0 ? j + extent : j;
            if (j < 0 || j >= extent) {
                return std::nullopt; // out of range: left to the kernel, which reports it
            }
            for (int64_t in = 0; in < inner; in++) {
                index.push_back((o * extent + j) * inner + in);
            }
        }
    }
    return gathered(data, out, index);
}

// Concat of constants; the result's shape comes from the inputs' (ONNX 1.12's inference
// fails on a Concat of an empty constant during the import's shape resolution).
std::optional<FileTensor> concat(const GraphNode &n, const std::vector<const FileTensor *> &in, const GraphTensor &out) {
    if (in.empty() || !in[0]) {
        return std::nullopt;
    }
    std::vector<int64_t> dims = in[0]->dims;
    const int64_t rank = static_cast<int64_t>(dims.size());
    int64_t axis = n.int_attr("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank) {
        return std::nullopt;
    }
    dims[axis] = 0;
    for (const FileTensor *t : in) {
        if (!t || t->type != out.type || t->dims.size() != dims.size()) {
            return std::nullopt;
        }
        dims[axis] += t->dims[axis];
    }
    int64_t outer = 1;
    for (int64_t k = 0; k < axis; k++) {
        outer *= dims[k];
    }
    FileTensor r;
    r.type = out.type;
    r.dims = dims;
    const size_t eb = static_cast<size_t>(elem_bytes(out.type));
    for (int64_t o = 0; o < outer; o++) {
        for (const FileTensor *t : in) {
            const size_t chunk = static_cast<size_t>(t->elements() / std::max<int64_t>(outer, 1)) * eb;
            r.data.insert(r.data.end(), t->data.begin() + o * chunk, t->data.begin() + (o + 1) * chunk);
        }
    }
    return r;
}

std::optional<FileTensor> slice_1d(const std::vector<const FileTensor *> &in, const GraphTensor &out) {
    if (in.size() < 3 || !in[0] || !in[1] || !in[2] || in[0]->dims.size() != 1) {
        return std::nullopt;
    }
    auto starts = int_values(*in[1]), ends = int_values(*in[2]);
    std::vector<int64_t> steps{1};
    if (in.size() > 4 && in[4]) {
        auto s = int_values(*in[4]);
        if (!s || s->size() != 1) {
            return std::nullopt;
        }
        steps = *s;
    }
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || steps[0] == 0) {
        return std::nullopt;
    }
    const int64_t n = in[0]->dims[0], step = steps[0];
    auto clampi = [n, step](int64_t v) {
        v = v < 0 ? v + n : v;
        return step > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
    };
    std::vector<int64_t> index;
    for (int64_t i = clampi((*starts)[0]), e = clampi((*ends)[0]); step > 0 ? i < e : i > e; i += step) {
        index.push_back(i);
    }
    FileTensor r = gathered(*in[0], out, index);
    r.dims = {static_cast<int64_t>(index.size())};
    return r;
}

// out = transpose(t, perm): output dimension k is input dimension perm[k].
std::optional<FileTensor> transpose(const GraphNode &n, const FileTensor &t, const GraphTensor &out) {
    const size_t rank = t.dims.size();
    std::vector<int64_t> perm;
    if (const OnnxAttribute *a = n.attribute("perm")) {
        perm = a->ints;
    } else {
        for (size_t k = 0; k < rank; k++) {
            perm.push_back(static_cast<int64_t>(rank - 1 - k));
        }
    }
    if (perm.size() != rank) {
        return std::nullopt;
    }
    std::vector<int64_t> in_stride(rank, 1);
    for (size_t k = rank; k-- > 1;) {
        in_stride[k - 1] = in_stride[k] * t.dims[k];
    }
    const int64_t total = count(out.dims);
    std::vector<int64_t> index(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; i++) {
        int64_t rest = i, src = 0;
        for (size_t k = rank; k-- > 0;) {
            const int64_t coord = rest % out.dims[k];
            rest /= out.dims[k];
            if (perm[k] < 0 || perm[k] >= static_cast<int64_t>(rank)) {
                return std::nullopt;
            }
            src += coord * in_stride[perm[k]];
        }
        index[i] = src;
    }
    return gathered(t, out, index);
}

std::optional<FileTensor> constant_value(const GraphNode &n, const GraphTensor &out) {
    for (const auto &a : n.attributes) {
        if (a.name == "value" && a.tensor) {
            return a.tensor;
        }
        if (a.name == "value_float") {
            return tensor_of(ElemType::Float32, {}, {a.f});
        }
        if (a.name == "value_int") {
            return tensor_of_ints(ElemType::Int64, {}, {a.i});
        }
        if (a.name == "value_floats") {
            return tensor_of(ElemType::Float32, {int64_t(a.floats.size())}, a.floats);
        }
        if (a.name == "value_ints") {
            return tensor_of_ints(ElemType::Int64, {int64_t(a.ints.size())}, a.ints);
        }
    }
    (void)out;
    return std::nullopt; // sparse_value, string values: not folded
}

} // namespace

bool is_integer_type(ElemType t) {
    return t != ElemType::Float32 && t != ElemType::Float64 && t != ElemType::Float16 && t != ElemType::BFloat16;
}

std::optional<std::vector<double>> float_values(const FileTensor &t) { return values_as<double>(t); }
std::optional<std::vector<int64_t>> int_values(const FileTensor &t) { return values_as<int64_t>(t); }

FileTensor tensor_of(ElemType type, const std::vector<int64_t> &dims, const std::vector<double> &v) {
    return tensor_from(type, dims, v);
}

FileTensor tensor_of_ints(ElemType type, const std::vector<int64_t> &dims, const std::vector<int64_t> &v) {
    return tensor_from(type, dims, v);
}

std::optional<FileTensor> evaluate_node(const GraphNode &n, const std::vector<const FileTensor *> &in,
                                        const std::vector<const GraphTensor *> &meta, const GraphTensor &out) {
    const std::string &op = n.op_type;
    auto input = [&in](size_t k) { return k < in.size() ? in[k] : nullptr; };
    if (!n.domain.empty()) {
        return std::nullopt;
    }
    if (op == "Constant") {
        return constant_value(n, out);
    }
    if (op == "Shape") {
        if (meta.empty() || !meta[0]) {
            return std::nullopt;
        }
        const std::vector<int64_t> &d = meta[0]->dims;
        const int64_t r = static_cast<int64_t>(d.size());
        int64_t start = n.int_attr("start", 0), end = n.int_attr("end", r);
        start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
        end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
        std::vector<int64_t> v(d.begin() + start, d.begin() + std::max(start, end));
        return tensor_of_ints(ElemType::Int64, {int64_t(v.size())}, v);
    }
    if (op == "Identity" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
        op == "Dropout") {
        if (!input(0) || input(0)->elements() != count(out.dims)) {
            return std::nullopt;
        }
        FileTensor r = *input(0);
        r.dims = out.dims;
        return r;
    }
    if (op == "Cast") {
        if (!input(0)) {
            return std::nullopt;
        }
        if (is_integer_type(out.type) && is_integer_type(input(0)->type)) {
            auto v = int_values(*input(0));
            return v ? std::optional<FileTensor>(tensor_of_ints(out.type, out.dims, *v)) : std::nullopt;
        }
        auto v = float_values(*input(0));
        if (!v || out.type == ElemType::Float16 || out.type == ElemType::BFloat16) {
            return std::nullopt;
        }
        return tensor_of(out.type, out.dims, *v);
    }
    if (op == "Gather") {
        return input(0) && input(1) ? gather(n, *input(0), *input(1), out) : std::nullopt;
    }
    if (op == "Concat") {
        return concat(n, in, out);
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
        return input(0) && input(1) ? binary(op, *input(0), *input(1), out) : std::nullopt;
    }
    if (op == "ConstantOfShape") {
        const OnnxAttribute *a = n.attribute("value");
        FileTensor fill = a && a->tensor ? *a->tensor : tensor_of(ElemType::Float32, {1}, {0.0});
        auto dims = input(0) ? int_values(*input(0)) : std::nullopt;
        if (fill.elements() != 1 || fill.type != out.type || !dims) {
            return std::nullopt;
        }
        std::vector<int64_t> index(static_cast<size_t>(count(*dims)), 0);
        FileTensor r = gathered(fill, out, index);
        r.dims = *dims;
        return r;
    }
    if (op == "Slice") {
        return slice_1d(in, out);
    }
    if (op == "Transpose") {
        return input(0) ? transpose(n, *input(0), out) : std::nullopt;
    }
    if (op == "Size") { // ONNX's function bodies take a rank this way
        return input(0) ? std::optional<FileTensor>(tensor_of_ints(ElemType::Int64, {}, {input(0)->elements()}))
                        : std::nullopt;
    }
    if (op == "Neg" && input(0)) {
        auto negate = [](auto v) {
            for (auto &x : *v) {
                x = -x;
            }
            return v;
        };
        if (is_integer_type(out.type)) {
            auto v = int_values(*input(0));
            return v ? std::optional<FileTensor>(tensor_of_ints(out.type, out.dims, *negate(v))) : std::nullopt;
        }
        auto v = float_values(*input(0));
        return v ? std::optional<FileTensor>(tensor_of(out.type, out.dims, *negate(v))) : std::nullopt;
    }
    return std::nullopt;
}

} // namespace tessel::graph
