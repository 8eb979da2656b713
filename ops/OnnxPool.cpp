// ONNX pooling as generators: onnx_maxpool, onnx_averagepool (a window over
// 1, 2 or 3 spatial dimensions) and onnx_globalmaxpool, onnx_globalaveragepool
// (docs/onnx.md).
//
// The layout is ONNX's NCHW: N and C are merged into one outer dimension (their
// elements never mix), so `shape` is NC x D1 [x D2 [x D3]] and each image's rows
// are contiguous, the innermost dimension being W. The window is separable (max
// and sum are associative), so the pooling is one pass per spatial dimension,
// innermost first: pool_x(ox, y, c) = op over k of X(ox*s + k*d - p, y, c), then
// pool_y over pool_x's rows, ... Each pass is a pure Func of K terms, a vector
// stencil along the row (a stride-2 window is a stride-2 read of the staged row),
// which is the auto scheduler's vector form; a reduction over the window would
// not vectorise there.
//
// Padding (ONNX: a max pool's padded elements never win, an average pool's are
// left out of the count unless count_include_pad): the vector unit has no
// compare-and-select, and its operands are strided runs, so a row that reaches
// outside the input is read through a `padded` Func, its indices clamped into the
// input, clamp(likely(t), 0, S - 1) (or only the side that needs it): Halide
// partitions the row's loop so that only the vectors at the image's border carry
// the clamp (they run as scalar code, the row's first vector), the interior reads
// plain runs. The outer dimensions' indices are scalars, clamped for free.
//  - A max with dilation 1: that is the whole story. A window that reaches into the
//    padding also holds the edge element the clamp reads, which then does not
//    change the maximum. (A dilated window need not hold it: dilations with
//    padding are refused.) A max pools the outer dimensions first, reading their
//    taps at clamped indices, and pads the rows last, when there are fewer of them
//    (the stem pool's 56 rows a channel rather than 113: 0.177 of the limit, 0.068
//    the other way round).
//  - An average: `padded` is 0 outside the input (tessel::ops::zero_outside, min/max
//    with 1-D Funcs of the position, exact), and the sum is multiplied by 1 / count
//    per output position, a 1-D Func per dimension whose count varies (constant
//    counts fold into one factor).
// The window position of output o in a dimension is o * stride - pad_begin; the
// ONNX runner (graph/OnnxOpsWindow.cpp) resolves auto_pad and ceil_mode into
// pads and the output shape. fp16 and bf16 averages are summed in fp32 and
// rounded once; a max stays in its type (it is exact).
//
// The global pools view the input as NC rows of D1*D2*... elements and reduce
// each row: an update over the row, which the auto scheduler vectorises across
// rows (or across the row when its length is a multiple of the vector).

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <limits>
#include <string>
#include <vector>

namespace {

using namespace Halide;

enum class P { Max, Avg };

const char *pool_name(P op, bool global) {
    if (global) {
        return op == P::Max ? "GlobalMaxPool" : "GlobalAveragePool";
    }
    return op == P::Max ? "MaxPool" : "AveragePool";
}

// -inf of a float type, the type's lowest value otherwise (a max's neutral element).
Expr lowest(Type t) {
    return t.is_float() ? cast(t, -std::numeric_limits<float>::infinity()) : t.min();
}

Type checked_type(P op, const std::string &dtype, bool global) {
    Type t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
    if (op == P::Avg && !t.is_float()) {
        throw Halide::CompileError(std::string("onnx ") + pool_name(op, global) +
                                   ": dtype must be fp32, fp16 or bf16 (ONNX defines it on floating-point tensors)");
    }
    return t;
}

template <P OP>
class OnnxPool : public Halide::Generator<OnnxPool<OP>> {
public:
    Halide::GeneratorParam<std::string> shape{"shape", "64x112x112"};
    Halide::GeneratorParam<std::string> kernel{"kernel", "3;3"};
    Halide::GeneratorParam<std::string> strides{"strides", "2;2"};
    Halide::GeneratorParam<std::string> dilations{"dilations", ""};
    Halide::GeneratorParam<std::string> pads{"pads", "1;1;1;1"};
    Halide::GeneratorParam<std::string> out{"out", "56x56"};
    Halide::GeneratorParam<int> count_include_pad{"count_include_pad", 0};
    Halide::GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Halide::GeneratorInput<Halide::Buffer<>> *X = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> *Y = nullptr;

    Type t;
    int D = 0;                                   // spatial dimensions
    std::vector<int> in_shape, k, s, dl, pb, pe, o; // ONNX order (outermost first); in_shape[0] = NC

    void configure() {
        const std::string name = pool_name(OP, false);
        t = checked_type(OP, dtype, false);
        in_shape = tessel::ops::parse_int_list(shape, 'x', name, "shape", 1);
        D = static_cast<int>(in_shape.size()) - 1;
        if (D < 1 || D > 3) {
            throw Halide::CompileError("onnx " + name + ": shape '" + std::string(shape) +
                                       "' must be NC followed by 1 to 3 spatial extents");
        }
        k = tessel::ops::parse_int_list(kernel, ';', name, "kernel", 1);
        s = tessel::ops::parse_int_list(strides, ';', name, "strides", 1);
        dl = std::string(dilations).empty() ? std::vector<int>(D, 1)
                                            : tessel::ops::parse_int_list(dilations, ';', name, "dilations", 1);
        std::vector<int> p = tessel::ops::parse_int_list(pads, ';', name, "pads", 0);
        o = tessel::ops::parse_int_list(out, 'x', name, "out", 1);
        if (int(k.size()) != D || int(s.size()) != D || int(dl.size()) != D || int(p.size()) != 2 * D ||
            int(o.size()) != D) {
            throw Halide::CompileError("onnx " + name + ": kernel, strides, dilations and out need " +
                                       std::to_string(D) + " entries and pads " + std::to_string(2 * D) +
                                       " (begins, then ends) for a shape of " + std::to_string(D) +
                                       " spatial dimensions");
        }
        pb.assign(p.begin(), p.begin() + D);
        pe.assign(p.begin() + D, p.end());
        for (int j = 0; j < D; j++) {
            // Every window must hold an element of the input (ONNX's pads are below the kernel).
            for (int oo = 0; oo < o[j]; oo++) {
                bool any = false;
                for (int kk = 0; kk < k[j] && !any; kk++) {
                    const int64_t tap = int64_t(oo) * s[j] + int64_t(kk) * dl[j] - pb[j];
                    any = tap >= 0 && tap < in_shape[1 + j];
                }
                if (!any) {
                    throw Halide::CompileError("onnx " + name + ": output position " + std::to_string(oo) +
                                               " of spatial dimension " + std::to_string(j) +
                                               " has its whole window outside the input (extent " +
                                               std::to_string(in_shape[1 + j]) + ")");
                }
            }
        }
        for (int j = 0; j < D; j++) {
            const int64_t last = int64_t(o[j] - 1) * s[j] + int64_t(k[j] - 1) * dl[j] - pb[j];
            if (dl[j] > 1 && (pb[j] > 0 || last > in_shape[1 + j] - 1)) {
                throw Halide::CompileError("onnx " + name + ": dilations with windows reaching outside the input "
                                           "are not supported (spatial dimension " + std::to_string(j) + ")");
            }
        }
        X = this->template add_input<Halide::Buffer<>>("X", t, D + 1);
        Y = this->template add_output<Halide::Buffer<>>("Y", t, D + 1);
    }

    void generate() {
        // Halide dimension d < D is ONNX spatial dimension j = D - 1 - d; dimension D is NC.
        const char *names[] = {"x", "y", "z"};
        std::vector<Var> v;
        for (int d = 0; d < D; d++) {
            v.push_back(Var(names[d]));
        }
        v.push_back(Var("c"));
        std::vector<Expr> at(v.begin(), v.end());
        const Type ct = OP == P::Avg ? Float(32) : t;
        // Which dimensions reach outside the input, and the padded source: X read with its
        // indices clamped into the input (on the side that needs it), once per element; the
        // passes then read it at plain offsets.
        std::vector<bool> outside(D, false), pooled(D, false), below(D, false), above(D, false);
        // e brought into the input along dimension d, on the side(s) that need it.
        auto bring_in = [&](Expr e, int d) -> Expr {
            const int S = in_shape[D - d];
            return below[d] && above[d] ? clamp(likely(e), 0, S - 1)
                   : below[d]           ? max(likely(e), 0)
                   : above[d]           ? min(likely(e), S - 1)
                                        : e;
        };
        bool any_outside = false;
        std::vector<Expr> clamped = at;
        for (int d = 0; d < D; d++) {
            const int j = D - 1 - d, S = in_shape[1 + j];
            pooled[d] = !(k[j] == 1 && s[j] == 1 && pb[j] == 0 && o[j] == S);
            const int64_t last = int64_t(o[j] - 1) * s[j] + int64_t(k[j] - 1) * dl[j] - pb[j];
            below[d] = pooled[d] && pb[j] > 0;
            above[d] = pooled[d] && last > S - 1;
            outside[d] = below[d] || above[d];
            clamped[d] = bring_in(v[d], d);
            any_outside = any_outside || outside[d];
        }
        Func cur; // the stage the next pass reads (undefined: X itself)
        if (any_outside && OP == P::Avg) {
            Expr val = cast(ct, (*X)(clamped));
            for (int d = 0; d < D; d++) {
                if (outside[d]) { // a sum's padding is 0
                    val = tessel::ops::zero_outside(val, v[d], 0, in_shape[D - d], ct, names[d]);
                }
            }
            cur = Func("padded");
            cur(v) = val;
        }
        auto read = [&](const std::vector<Expr> &idx) -> Expr {
            if (cur.defined()) {
                return cur(idx);
            }
            return cast(ct, (*X)(idx));
        };
        double scale = 1;
        std::vector<std::pair<int, Func>> counts; // (dimension, 1 / count per position)
        // A max pools the outer dimensions first, their taps' indices brought into the input
        // (scalar loops: free), and pads the rows last, once the rows are fewer; a sum reads
        // `padded` innermost first.
        for (int i = 0; i < D; i++) {
            const int d = OP == P::Max ? D - 1 - i : i;
            if (!pooled[d]) {
                continue;
            }
            const int j = D - 1 - d;
            const int S = in_shape[1 + j], K = k[j], st = s[j], di = dl[j];
            const bool pad_rows = OP == P::Max && d == 0 && outside[0];
            if (pad_rows) {
                std::vector<Expr> ci = at;
                ci[0] = clamped[0];
                Func px("padded");
                px(v) = read(ci);
                cur = px;
            }
            Expr acc;
            for (int kk = 0; kk < K; kk++) {
                Expr tap = v[d] * st + kk * di - pb[j];
                std::vector<Expr> idx = at;
                idx[d] = OP == P::Max && !pad_rows ? bring_in(tap, d) : tap;
                Expr val = read(idx);
                acc = kk == 0 ? val : OP == P::Max ? max(acc, val) : acc + val;
            }
            Func pass(std::string("pool_") + names[d]);
            pass(v) = acc;
            cur = pass;
            if (OP == P::Avg) {
                // Taps counted: inside the input, or inside the explicit padding as well.
                const int L = count_include_pad ? -pb[j] : 0, U = count_include_pad ? S + pe[j] : S;
                auto count_at = [&](int oo) {
                    int n = 0;
                    for (int kk = 0; kk < K; kk++) {
                        const int tap = oo * st + kk * di - pb[j];
                        n += tap >= L && tap < U;
                    }
                    return n;
                };
                bool constant = true;
                for (int oo = 1; oo < o[j]; oo++) {
                    constant = constant && count_at(oo) == count_at(0);
                }
                if (constant) {
                    scale /= count_at(0);
                } else {
                    Expr n = 0;
                    for (int kk = 0; kk < K; kk++) {
                        Expr tap = v[d] * st + kk * di - pb[j];
                        n += select(tap >= L && tap < U, 1, 0);
                    }
                    Func rc(std::string("rcount_") + names[d]);
                    rc(v[d]) = 1.0f / cast<float>(n);
                    counts.emplace_back(d, rc);
                }
            }
        }
        if (!cur.defined()) { // a 1x1 window, stride 1: a copy
            cur = Func("pool");
            cur(v) = read(at);
        }
        if (OP == P::Avg) {
            Expr r = cur(at);
            if (scale != 1) {
                r = r * static_cast<float>(scale);
            }
            for (auto &[d, rc] : counts) {
                r = r * rc(v[d]);
            }
            Func avg("avg");
            avg(v) = cast(t, r);
            cur = avg;
        }
        (*Y)(v) = cur(at);
        Region in_est, out_est;
        for (int d = 0; d < D; d++) {
            in_est.push_back({0, in_shape[1 + D - 1 - d]});
            out_est.push_back({0, o[D - 1 - d]});
        }
        in_est.push_back({0, in_shape[0]});
        out_est.push_back({0, in_shape[0]});
        X->set_estimates(in_est);
        Y->set_estimates(out_est);
    }
};

// Global pools: X viewed as NC rows of `row` elements, Y as NC x 1.
template <P OP>
class OnnxGlobalPool : public Halide::Generator<OnnxGlobalPool<OP>> {
public:
    Halide::GeneratorParam<std::string> shape{"shape", "512x49"};
    Halide::GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Halide::GeneratorInput<Halide::Buffer<>> *X = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> *Y = nullptr;

    Type t;
    int rows = 0, row = 0;
    Func acc{"acc"}, res{"res"};

    void configure() {
        t = checked_type(OP, dtype, true);
        std::vector<int> sh = tessel::ops::parse_int_list(shape, 'x', pool_name(OP, true), "shape", 1);
        if (sh.size() != 2) {
            throw Halide::CompileError(std::string("onnx ") + pool_name(OP, true) + ": shape '" +
                                       std::string(shape) + "' must be NCxROW (rows and the elements of one)");
        }
        rows = sh[0];
        row = sh[1];
        X = this->template add_input<Halide::Buffer<>>("X", t, 2);
        Y = this->template add_output<Halide::Buffer<>>("Y", t, 2);
    }

    void generate() {
        Var x("x"), c("c");
        RDom r(0, row, "r");
        const Type ct = OP == P::Avg ? Float(32) : t;
        if (OP == P::Max) {
            acc(c) = lowest(ct);
            acc(c) = max(acc(c), (*X)(r, c));
            res(x, c) = acc(c);
        } else {
            acc(c) = cast(ct, 0);
            acc(c) += cast(ct, (*X)(r, c));
            res(x, c) = cast(t, acc(c) * (1.0f / row));
        }
        (*Y)(x, c) = res(x, c);
        X->set_estimates({{0, row}, {0, rows}});
        Y->set_estimates({{0, 1}, {0, rows}});
    }
};

using OnnxMaxPool = OnnxPool<P::Max>;
using OnnxAveragePool = OnnxPool<P::Avg>;
using OnnxGlobalMaxPool = OnnxGlobalPool<P::Max>;
using OnnxGlobalAveragePool = OnnxGlobalPool<P::Avg>;

} // namespace

#define TESSEL_ONNX_POOL_PARAMS                                                                                 \
    {"shape", "64x112x112", "NC (batch x channels, merged) then 1 to 3 spatial extents, outermost first"},     \
        {"kernel", "3;3", "window extent per spatial dimension, ';' between"},                                  \
        {"strides", "2;2", "step per spatial dimension"},                                                        \
        {"dilations", "", "tap spacing per spatial dimension (empty: 1)"},                                      \
        {"pads", "1;1;1;1", "padding: every dimension's begin, then every end (ONNX's order)"},                 \
        {"out", "56x56", "the output's spatial extents"}

TESSEL_REGISTER_GENERATOR(OnnxMaxPool, onnx_maxpool,
                          "ONNX MaxPool: the largest element of each window (padding never wins), NCHW",
                          {TESSEL_ONNX_POOL_PARAMS,
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
TESSEL_REGISTER_GENERATOR(OnnxAveragePool, onnx_averagepool,
                          "ONNX AveragePool: the mean of each window (padding counted only with count_include_pad)",
                          {TESSEL_ONNX_POOL_PARAMS,
                           {"count_include_pad", "0", "1: padded positions count as zeros"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
TESSEL_REGISTER_GENERATOR(OnnxGlobalMaxPool, onnx_globalmaxpool, "ONNX GlobalMaxPool: the largest element of each image",
                          {{"shape", "512x49", "NCxROW: the images (batch x channels) and the elements of one"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
TESSEL_REGISTER_GENERATOR(OnnxGlobalAveragePool, onnx_globalaveragepool, "ONNX GlobalAveragePool: the mean of each image",
                          {{"shape", "512x49", "NCxROW: the images (batch x channels) and the elements of one"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
