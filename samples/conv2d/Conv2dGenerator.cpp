// 2-D convolution, NHWC, "valid" region, no padding:
//   out[n, y, x, co] = sum over (ky, kx, ci) of input[n, y*S + ky, x*S + kx, ci] * weights[ky, kx, ci, co]
// accumulated in the matrix unit's accumulator type (fp16 -> fp32, int8 -> int32).
//
// Halide indexes the innermost dimension first, so the tensors are
//   input   (ci, x_in, y_in, n)    with x_in = (W-1)*S + KW, y_in = (H-1)*S + KH
//   weights (co, ci, kx, ky)       (HWIO: co innermost)
//   output  (co, x, y, n)          W x H output pixels per image
// The weight layout puts co innermost so that, for one tap (kx, ky), the
// weights are a dense row-major CI x CO matrix: together with NHWC input (ci
// innermost, a dense pixels x CI matrix per image row) each tap is a GEMM
// pixels x CI x CO, the shape the matrix unit multiplies.
//
// The reduction lives in its own Func "acc" (pure init 0, one update over the
// reduction loops ci, kx, ky, innermost first) and the output is a plain copy
// of it, so a schedule can keep the accumulator tile on chip (accumulate_in)
// and write it back once per tile. A 1x1 convolution has no window: its update
// reduces over ci alone, which makes it literally the GEMM
// (pixels x CI) * (CI x CO) with one reduction variable, as tensorize wants.

#include "dsl/Generator.h"
#include "samples/conv2d/ConvTaps.h"

namespace {

using namespace Halide;

class Conv2d : public Halide::Generator<Conv2d> {
public:
    GeneratorParam<int> N{"N", 1};
    GeneratorParam<int> H{"H", 16};
    GeneratorParam<int> W{"W", 16};
    GeneratorParam<int> CI{"CI", 32};
    GeneratorParam<int> CO{"CO", 32};
    GeneratorParam<int> K{"K", 3};
    GeneratorParam<int> stride{"stride", 1};
    GeneratorParam<std::string> dtype{"dtype", "fp16"};

    Input<Buffer<>> *input = nullptr;
    Input<Buffer<>> *weights = nullptr;
    Output<Buffer<>> output{"output", 4}; // type follows the accumulator

    Type acc_t;
    Func acc{"acc"};

    void configure() {
        tessel::DType t = tessel::parse_dtype_param(dtype, "dtype");
        if (t != tessel::DType::FP16 && t != tessel::DType::Int8) {
            throw Halide::CompileError("conv2d: dtype must be fp16 or int8 (got " + std::string(dtype) + ")");
        }
        if (K != 1 && K != 3) {
            throw Halide::CompileError("conv2d: K must be 1 or 3 (got " + std::to_string(int(K)) + ")");
        }
        if (stride != 1 && stride != 2) {
            throw Halide::CompileError("conv2d: stride must be 1 or 2 (got " + std::to_string(int(stride)) + ")");
        }
        if (N < 1 || H < 1 || W < 1 || CI < 1 || CO < 1) {
            throw Halide::CompileError("conv2d: N, H, W, CI and CO must be positive");
        }
        Type in_t = tessel::halide_type(t);
        input = add_input<Buffer<>>("input", in_t, 4);
        weights = add_input<Buffer<>>("weights", in_t, 4);
        acc_t = tessel::halide_type(tessel::accumulator_of(t));
    }

    void generate() {
        Var co("co"), x("x"), y("y"), n("n");
        const int s = stride;
        acc(co, x, y, n) = cast(acc_t, 0);
        // Stride 1: one update (loops ci, kx, ky); stride 2: one per input phase
        // through in_p<p> / w_p<p> (samples/conv2d/ConvTaps.h).
        tessel::samples::add_conv_taps(acc, *input, *weights, acc_t, K, s, CI);
        output(co, x, y, n) = acc(co, x, y, n);

        const int w_in = (W - 1) * s + K, h_in = (H - 1) * s + K;
        input->set_estimates({{0, CI}, {0, w_in}, {0, h_in}, {0, N}});
        weights->set_estimates({{0, CO}, {0, CI}, {0, K}, {0, K}});
        output.set_estimates({{0, CO}, {0, W}, {0, H}, {0, N}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Conv2d, conv2d,
                          "2-D convolution, NHWC, valid region: output[n,y,x,co] = sum input[n,y*S+ky,x*S+kx,ci] * "
                          "weights[ky,kx,ci,co], widened accumulator",
                          {{"N", "1", "batch"},
                           {"H", "16", "output rows"},
                           {"W", "16", "output columns"},
                           {"CI", "32", "input channels"},
                           {"CO", "32", "output channels"},
                           {"K", "3", "kernel height = width: 3 or 1"},
                           {"stride", "1", "stride in x and y: 1 or 2"},
                           {"dtype", "fp16", "element type of input and weights: fp16 (fp32 output) or int8 (int32 output)"}})
