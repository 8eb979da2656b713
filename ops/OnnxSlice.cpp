// ONNX Slice as a generator: onnx_slice (docs/onnx.md).
//
// `shape` is the input's ONNX shape (outermost first), `starts` and `steps` one
// value per dimension (';' between, outermost first) and `out` the output's
// shape: Y[i] = X[starts + steps * i] per dimension, a negative step walking
// backwards. The ONNX runner (graph/OnnxOps.cpp) resolves ONNX's starts, ends,
// axes and steps (negative indices, clamping, omitted axes) into these.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <string>
#include <vector>

namespace {

using namespace Halide;

class OnnxSlice : public Halide::Generator<OnnxSlice> {
public:
    GeneratorParam<std::string> shape{"shape", "64x64"};
    GeneratorParam<std::string> starts{"starts", "0;0"};
    GeneratorParam<std::string> steps{"steps", "1;1"};
    GeneratorParam<std::string> out{"out", "32x32"};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> in_shape, start, step, out_shape;
    Func op{"op"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        in_shape = tessel::ops::parse_int_list(shape, 'x', "Slice", "shape");
        start = tessel::ops::parse_int_list(starts, ';', "Slice", "starts");
        step = tessel::ops::parse_int_list(steps, ';', "Slice", "steps");
        out_shape = tessel::ops::parse_int_list(out, 'x', "Slice", "out");
        const size_t r = in_shape.size();
        if (start.size() != r || step.size() != r || out_shape.size() != r) {
            throw Halide::CompileError("onnx Slice: shape, starts, steps and out must have one entry per dimension");
        }
        for (size_t d = 0; d < r; d++) {
            const int64_t last = int64_t(start[d]) + int64_t(step[d]) * (out_shape[d] - 1);
            if (in_shape[d] < 1 || out_shape[d] < 1 || step[d] == 0 || start[d] < 0 || start[d] >= in_shape[d] ||
                last < 0 || last >= in_shape[d]) {
                throw Halide::CompileError("onnx Slice: dimension " + std::to_string(d) + " (extent " +
                                           std::to_string(in_shape[d]) + ", start " + std::to_string(start[d]) +
                                           ", step " + std::to_string(step[d]) + ", " + std::to_string(out_shape[d]) +
                                           " elements) reads outside the input");
            }
        }
        X = add_input<Buffer<>>("X", t, int(r));
        Y = add_output<Buffer<>>("Y", t, int(r));
    }

    void generate() {
        const int r = static_cast<int>(in_shape.size());
        std::vector<Var> v;
        std::vector<Expr> idx;
        for (int d = 0; d < r; d++) { // Halide dimension d is ONNX dimension r - 1 - d
            v.push_back(Var("d" + std::to_string(d)));
            idx.push_back(start[r - 1 - d] + step[r - 1 - d] * v.back());
        }
        op(v) = (*X)(idx);
        (*Y)(v) = op(v);
        X->set_estimates(tessel::ops::onnx_region(in_shape));
        Y->set_estimates(tessel::ops::onnx_region(out_shape));
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxSlice, onnx_slice, "ONNX Slice: Y[i] = X[starts + steps * i] per dimension",
                          {{"shape", "64x64", "the input's ONNX shape, outermost first"},
                           {"starts", "0;0", "first index read per dimension, ';' between"},
                           {"steps", "1;1", "index step per dimension (negative: backwards)"},
                           {"out", "32x32", "the output's shape"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
