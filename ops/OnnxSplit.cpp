// ONNX Split as a generator: onnx_split (docs/onnx.md).
//
// `shape` is the input as OUTER x A x INNER (the dimensions before the axis merged, the
// axis, the ones after it merged; the ONNX runner views it so) and `sizes` the pieces'
// extents along A (';' between, summing to A). Output k, Y<k> (OUTER x sizes[k] x INNER),
// is X[o, offset_k + a, i]: each output a copy of its slice, computed by its own Func
// `op<k>`, so that every output is a plain copy of one stage (docs/autoschedule.md: each
// output gets its own band loop).

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace Halide;

class OnnxSplit : public Halide::Generator<OnnxSplit> {
public:
    GeneratorParam<std::string> shape{"shape", "1x64x3136"};
    GeneratorParam<std::string> sizes{"sizes", "32;32"};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    std::vector<Output<Buffer<>> *> Y;

    Type t;
    std::vector<int> sh, sz;

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        sh = tessel::ops::parse_int_list(shape, 'x', "Split", "shape", 1);
        sz = tessel::ops::parse_int_list(sizes, ';', "Split", "sizes", 1);
        if (sh.size() != 3) {
            throw Halide::CompileError("onnx Split: shape '" + std::string(shape) + "' is not OUTERxAxINNER");
        }
        if (sz.empty() || sz.size() > 16 || std::accumulate(sz.begin(), sz.end(), 0) != sh[1]) {
            throw Halide::CompileError("onnx Split: sizes '" + std::string(sizes) + "' (1 to 16 pieces) do not sum to " +
                                       std::to_string(sh[1]));
        }
        X = add_input<Buffer<>>("X", t, 3);
        for (size_t k = 0; k < sz.size(); k++) {
            Y.push_back(add_output<Buffer<>>("Y" + std::to_string(k), t, 3));
        }
    }

    void generate() {
        Var i("i"), a("a"), o("o"); // Halide order: INNER, A, OUTER
        int offset = 0;
        for (size_t k = 0; k < sz.size(); k++) {
            Func op("op" + std::to_string(k));
            op(i, a, o) = (*X)(i, a + offset, o);
            (*Y[k])(i, a, o) = op(i, a, o);
            Y[k]->set_estimates({{0, sh[2]}, {0, sz[k]}, {0, sh[0]}});
            offset += sz[k];
        }
        X->set_estimates({{0, sh[2]}, {0, sh[1]}, {0, sh[0]}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxSplit, onnx_split, "ONNX Split: X cut along one axis into pieces, one output each",
                          {{"shape", "1x64x3136", "X as OUTER x A x INNER (A the split axis)"},
                           {"sizes", "32;32", "the pieces' extents along A, ';' between (outputs Y0, Y1, ...)"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
