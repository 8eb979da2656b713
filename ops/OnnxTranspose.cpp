// ONNX Transpose as a generator: onnx_transpose (docs/onnx.md).
//
// `shape` is the input's ONNX shape (outermost first, 2x3x4), `perm` the
// permutation ('2;1;0'; ONNX's default reverses the dimensions): output
// dimension i is input dimension perm[i], Y[i_0, ..., i_r-1] = X[j] with
// j[perm[i]] = i_i. The ONNX runner (graph/OnnxOps.cpp) first drops extent-1
// dimensions and merges input dimensions that stay neighbours in the output,
// which changes no element's position, so a 1x64x56x56 NCHW -> NHWC is a 64x3136
// matrix transposed. As every sample, the value is a Func ("op") and Y a copy
// of it: the transposition is the strided read of the staged input.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <string>
#include <vector>

namespace {

using namespace Halide;

class OnnxTranspose : public Halide::Generator<OnnxTranspose> {
public:
    GeneratorParam<std::string> shape{"shape", "64x64"};
    GeneratorParam<std::string> perm{"perm", ""};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> in_shape, p;
    Func op{"op"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        in_shape = tessel::ops::parse_int_list(shape, 'x', "Transpose", "shape", 0);
        const int r = static_cast<int>(in_shape.size());
        for (int s : in_shape) {
            if (s < 1) {
                throw Halide::CompileError("onnx Transpose: shape '" + std::string(shape) + "' has an extent below 1");
            }
        }
        if (std::string(perm).empty()) {
            for (int i = r - 1; i >= 0; i--) {
                p.push_back(i);
            }
        } else {
            p = tessel::ops::parse_int_list(perm, ';', "Transpose", "perm", 0);
        }
        std::vector<bool> seen(r, false);
        if (static_cast<int>(p.size()) != r) {
            throw Halide::CompileError("onnx Transpose: perm '" + std::string(perm) + "' has " +
                                       std::to_string(p.size()) + " entries for a rank-" + std::to_string(r) + " input");
        }
        for (int k : p) {
            if (k >= r || seen[k]) {
                throw Halide::CompileError("onnx Transpose: perm '" + std::string(perm) + "' is not a permutation of 0.." +
                                           std::to_string(r - 1));
            }
            seen[k] = true;
        }
        X = add_input<Buffer<>>("X", t, r);
        Y = add_output<Buffer<>>("Y", t, r);
    }

    void generate() {
        const int r = static_cast<int>(in_shape.size());
        std::vector<Var> v; // Halide order: v[d] is ONNX output dimension r - 1 - d
        for (int d = 0; d < r; d++) {
            v.push_back(Var("d" + std::to_string(d)));
        }
        std::vector<Expr> idx(r);
        for (int i = 0; i < r; i++) {          // ONNX output dimension i reads ONNX input dimension p[i]
            idx[r - 1 - p[i]] = v[r - 1 - i];  // Halide input dimension of ONNX dimension p[i]
        }
        op(v) = (*X)(idx);
        (*Y)(v) = op(v);
        Region in_est, out_est;
        for (int d = 0; d < r; d++) {
            in_est.push_back({0, in_shape[r - 1 - d]});
            out_est.push_back({0, in_shape[p[r - 1 - d]]});
        }
        X->set_estimates(in_est);
        Y->set_estimates(out_est);
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxTranspose, onnx_transpose, "ONNX Transpose: Y = X with its dimensions permuted",
                          {{"shape", "64x64", "the input's ONNX shape, outermost first (2x3x4)"},
                           {"perm", "", "output dimension i is input dimension perm[i], ';' between (2;0;1); "
                                        "empty = reversed (ONNX's default)"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
