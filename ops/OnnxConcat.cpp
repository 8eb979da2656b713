// ONNX Concat and Gather as generators: onnx_concat, onnx_gather (docs/onnx.md).
//
// Concat: the runner views input i as `outer` rows of w_i elements (the
// dimensions before the axis merged into `outer`, the axis and the ones after it
// into w_i), and the output as `outer` rows of w_0 + w_1 + ... elements. The
// vector unit has no select, and its operands are strided runs, so the rows are
// cut into blocks of B elements (`block`, a divisor of every w_i; the runner
// takes the largest one up to 2048): the
// output is outer x blocks x B, block b of a row belongs to the input i whose
// blocks start at s_i <= b < s_i + n_i, and
//   op(x, b, o) = sum over i of zero_outside(X_i(x, clamp(b - s_i, 0, n_i - 1), o))
// with zero_outside (ops/OnnxParams.h) keeping the owning input's value and making
// the others exactly 0 (min/max with 1-D Funcs of b, +-inf inside, 0 outside).
// The block index is a scalar (the loop over blocks), so each read is a plain run
// of B elements of one input. A band of blocks reads each input at clamped rows,
// which the auto scheduler stages whole, once: a row-wise Concat (outer > 1,
// banded by rows) is a streaming copy, one along the outermost axis (outer = 1)
// fits only when its inputs fit the vector unit's level.
//
// Gather: X viewed as outer x A x inner (A the gathered axis), the indices
// resolved by the runner (negative ones wrapped), Y(x, j, o) = X(x, idx[j], o):
// idx[j] is a scalar per output row j, so a row is a plain run again.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <string>
#include <vector>

namespace {

using namespace Halide;

class OnnxConcat : public Halide::Generator<OnnxConcat> {
public:
    GeneratorParam<int> outer{"outer", 1};
    GeneratorParam<std::string> widths{"widths", "200704;200704"};
    GeneratorParam<int> block{"block", 2048};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    std::vector<Input<Buffer<>> *> X;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> w;
    int B = 1, total = 0;
    Func op{"op"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        w = tessel::ops::parse_int_list(widths, ';', "Concat", "widths", 1);
        if (w.empty() || int(outer) < 1) {
            throw Halide::CompileError("onnx Concat: needs at least one input (widths) and outer >= 1");
        }
        B = block;
        for (int wi : w) {
            if (B < 1 || wi % B != 0) {
                throw Halide::CompileError("onnx Concat: block " + std::to_string(B) + " does not divide every width ('" +
                                           std::string(widths) + "')");
            }
            total += wi;
        }
        for (size_t i = 0; i < w.size(); i++) {
            X.push_back(add_input<Buffer<>>("X" + std::to_string(i), t, 3));
        }
        Y = add_output<Buffer<>>("Y", t, 3);
    }

    void generate() {
        Var x("x"), b("b"), o("o");
        Expr sum;
        int start = 0;
        for (size_t i = 0; i < w.size(); i++) {
            const int n = w[i] / B;
            Expr v = (*X[i])(x, clamp(b - start, 0, n - 1), o);
            if (w.size() > 1) {
                v = tessel::ops::zero_outside(v, b, start, n, t, "X" + std::to_string(i));
            }
            sum = i == 0 ? v : sum + v;
            start += n;
            X[i]->set_estimates({{0, B}, {0, n}, {0, outer}});
        }
        op(x, b, o) = sum;
        (*Y)(x, b, o) = op(x, b, o);
        Y->set_estimates({{0, B}, {0, total / B}, {0, outer}});
    }
};

class OnnxGather : public Halide::Generator<OnnxGather> {
public:
    GeneratorParam<std::string> shape{"shape", "1x1000x512"};
    GeneratorParam<std::string> indices{"indices", "0;2;4;6"};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> sh, idx;
    Func op{"op"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        sh = tessel::ops::parse_int_list(shape, 'x', "Gather", "shape", 1);
        idx = tessel::ops::parse_int_list(indices, ';', "Gather", "indices", 0);
        if (sh.size() != 3 || idx.empty()) {
            throw Halide::CompileError("onnx Gather: shape must be OUTERxAXISxINNER and indices a non-empty list");
        }
        for (int i : idx) {
            if (i >= sh[1]) {
                throw Halide::CompileError("onnx Gather: index " + std::to_string(i) + " is outside the axis (extent " +
                                           std::to_string(sh[1]) + ")");
            }
        }
        X = add_input<Buffer<>>("X", t, 3);
        Y = add_output<Buffer<>>("Y", t, 3);
    }

    void generate() {
        Var x("x"), j("j"), o("o");
        // idx[j] as a scalar of the row: an arithmetic progression stays affine, any other
        // list is a table of selects on j (scalar code, once per row).
        bool progression = idx.size() > 1;
        for (size_t k = 2; k < idx.size(); k++) {
            progression = progression && idx[k] - idx[k - 1] == idx[1] - idx[0];
        }
        Expr row = progression ? idx[0] + (idx[1] - idx[0]) * j : tessel::ops::table_select(Expr(j), idx);
        op(x, j, o) = (*X)(x, row, o);
        X->set_estimates({{0, sh[2]}, {0, sh[1]}, {0, sh[0]}});
        (*Y)(x, j, o) = op(x, j, o);
        Y->set_estimates({{0, sh[2]}, {0, int(idx.size())}, {0, sh[0]}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxConcat, onnx_concat, "ONNX Concat: the inputs' rows one after another",
                          {{"outer", "1", "rows: the product of the dimensions before the axis"},
                           {"widths", "200704;200704", "each input's elements per row (axis and after), ';' between"},
                           {"block", "2048", "elements per block: a divisor of every width"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
TESSEL_REGISTER_GENERATOR(OnnxGather, onnx_gather, "ONNX Gather: Y[o, j, x] = X[o, indices[j], x]",
                          {{"shape", "1x1000x512", "X as OUTERxAXISxINNER (the gathered axis in the middle)"},
                           {"indices", "0;2;4;6", "the indices, wrapped into [0, AXIS), ';' between"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
