// ONNX LayerNormalization (opset 17) as a generator: onnx_layernorm (docs/onnx.md).
//
// `shape` is "OUTERxN": the tensor as the ONNX runner (graph/OnnxOpsReduce.cpp)
// views it, the dimensions before `axis` merged into OUTER (the independent
// rows), the ones from `axis` on into N (normalised over); Scale and B are N
// elements. As ONNX's reference, with stash_type 1 (statistics in fp32; fp16
// and bf16 inputs rounded once at the end):
//   Mean      = sum(x) / N
//   D         = x - Mean
//   InvStdDev = 1 / sqrt(sum(D^2) / N + epsilon)
//   Y         = D * InvStdDev * Scale + B
// `output` selects what this kernel computes: Y (inputs X, Scale and, with
// bias=true, B), or one of the optional outputs Mean and InvStdDev (input X;
// fp32, OUTERx1: the rank of X, so that `--schedule auto` bands both alike). One output per kernel: `--schedule auto` bands a
// pipeline at its first output, so the runner computes a node's optional
// outputs with kernels of their own from the same inputs.
//
// Every statistic is its own Func with one update over one reduction variable
// along the dense row, which `--schedule auto` vectorises across the reduction.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <string>
#include <vector>

namespace {

using namespace Halide;

class OnnxLayerNorm : public Halide::Generator<OnnxLayerNorm> {
public:
    GeneratorParam<std::string> shape{"shape", "128x768"};
    GeneratorParam<float> epsilon{"epsilon", 1e-5f};
    GeneratorParam<bool> bias{"bias", true};
    GeneratorParam<std::string> output{"output", "Y"};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr, *Scale = nullptr, *B = nullptr;
    Output<Buffer<>> *Out = nullptr;

    Type t;
    int rows = 0, n = 0;
    std::string what;
    Func sum{"sum"}, centered{"centered"}, var{"var"}, inv{"inv"}, op{"op"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!t.is_float()) {
            throw Halide::CompileError("onnx LayerNormalization: dtype must be fp32, fp16 or bf16");
        }
        std::vector<int> d = tessel::ops::parse_int_list(shape, 'x', "LayerNormalization", "shape", 1);
        if (d.size() != 2) {
            throw Halide::CompileError("onnx LayerNormalization: shape '" + std::string(shape) +
                                       "' must be OUTERxN (the rows, and the elements each is normalised over)");
        }
        rows = d[0];
        n = d[1];
        what = output;
        if (what != "Y" && what != "Mean" && what != "InvStdDev") {
            throw Halide::CompileError("onnx LayerNormalization: output '" + what + "' is not Y, Mean or InvStdDev");
        }
        X = add_input<Buffer<>>("X", t, 2);
        if (what == "Y") {
            Scale = add_input<Buffer<>>("Scale", t, 1);
            if (bias) {
                B = add_input<Buffer<>>("B", t, 1);
            }
            Out = add_output<Buffer<>>("Y", t, 2);
        } else {
            Out = add_output<Buffer<>>(what, Float(32), 2);
        }
    }

    void generate() {
        Var x("x"), y("y");
        RDom r(0, n, "r");
        const float count = static_cast<float>(n);
        sum(y) = 0.0f;
        sum(y) += cast<float>((*X)(r, y));
        Expr mean = sum(y) / count;
        if (what != "Y") {
            // One value per row, in an output of X's rank (OUTERx1). Its extent-1 dimension has
            // a Var of its own, the value is a Func of the row alone (`inv`, vectorised across
            // rows; `op` only copies it), and D is not a Func here (a Func of x would be
            // vectorised by the output's x, of extent 1).
            Var one("one");
            if (what == "Mean") {
                inv(y) = mean;
            } else {
                Expr d = cast<float>((*X)(r, y)) - mean;
                var(y) = 0.0f;
                var(y) += d * d;
                inv(y) = 1.0f / sqrt(var(y) / count + static_cast<float>(epsilon));
            }
            op(one, y) = inv(y);
            (*Out)(one, y) = op(one, y);
        } else {
            // D = x - Mean, its own Func so that a schedule subtracts once per element.
            centered(x, y) = cast<float>((*X)(x, y)) - mean;
            var(y) = 0.0f;
            var(y) += centered(r, y) * centered(r, y);
            inv(y) = 1.0f / sqrt(var(y) / count + static_cast<float>(epsilon));
            Expr v = centered(x, y) * inv(y) * cast<float>((*Scale)(x));
            if (B) {
                v = v + cast<float>((*B)(x));
            }
            op(x, y) = cast(t, v);
            (*Out)(x, y) = op(x, y);
        }
        X->set_estimates({{0, n}, {0, rows}});
        if (Scale) {
            Scale->set_estimates({{0, n}});
        }
        if (B) {
            B->set_estimates({{0, n}});
        }
        if (what == "Y") {
            Out->set_estimates({{0, n}, {0, rows}});
        } else {
            Out->set_estimates({{0, 1}, {0, rows}});
        }
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxLayerNorm, onnx_layernorm,
                          "ONNX LayerNormalization over the last dimensions, fp32 statistics",
                          {{"shape", "128x768", "OUTERxN: rows, and the elements each is normalised over"},
                           {"epsilon", "1e-05", "added to the variance"},
                           {"bias", "true", "whether B is an input (ONNX's B is optional)"},
                           {"output", "Y", "what this kernel computes: Y, or the optional outputs Mean, InvStdDev"},
                           {"dtype", "fp32", "element type of X, Scale, B and Y: fp32, fp16, bf16"}})
