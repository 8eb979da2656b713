// int8 2-D convolution, NHWC, "valid" region, with the fused epilogue of an
// inference layer: bias, optional ReLU, requantisation to int8.
//   acc[n, y, x, co] = sum over (ky, kx, ci) of input[n, y*S + ky, x*S + kx, ci] * weights[ky, kx, ci, co]   (int32)
//   v   = acc + bias[co];  v = max(v, 0) when relu
//   out = sat_int8((v * scale[co] + 2^(shift-1)) >> shift)
// The shift is arithmetic (flooring), so the rounding is half up:
// floor((v * scale) / 2^shift + 1/2); saturation to [-128, 127]. All int32,
// bit-exact on every target while |v| * 255 < 2^31 (CI * K * K <= 512 with
// any int8 data; larger reductions stay exact only while the sums do).
//
// Layout and reduction as in samples/conv2d (Halide order, innermost first):
//   input (ci, x_in, y_in, n), weights (co, ci, kx, ky) (HWIO), output (co, x, y, n)
// The reduction is the Func "acc" (loops ci, kx, ky; ci innermost), so a
// schedule can keep it in the accumulator level and tensorize it per tap; the
// epilogue is the Func "requant", which a schedule computes per output tile
// (compute_at) right after the tile's products: the int32 tile never goes to GM.

#include "dsl/Generator.h"
#include "samples/conv2d/ConvTaps.h"

namespace {

using namespace Halide;

class Conv2dQ8 : public Halide::Generator<Conv2dQ8> {
public:
    GeneratorParam<int> N{"N", 1};
    GeneratorParam<int> H{"H", 8};
    GeneratorParam<int> W{"W", 16};
    GeneratorParam<int> CI{"CI", 32};
    GeneratorParam<int> CO{"CO", 32};
    GeneratorParam<int> K{"K", 3};
    GeneratorParam<int> stride{"stride", 1};
    GeneratorParam<int> shift{"shift", 12};
    GeneratorParam<int> relu{"relu", 1};

    Input<Buffer<int8_t>> input{"input", 4};
    Input<Buffer<int8_t>> weights{"weights", 4};
    Input<Buffer<int32_t>> bias{"bias", 1};
    Input<Buffer<uint8_t>> scale{"scale", 1};
    Output<Buffer<int8_t>> output{"output", 4};

    Func acc{"acc"}, requant{"requant"};

    void generate() {
        if (K != 1 && K != 3) {
            throw Halide::CompileError("conv2d_q8: K must be 1 or 3 (got " + std::to_string(int(K)) + ")");
        }
        if (stride != 1 && stride != 2) {
            throw Halide::CompileError("conv2d_q8: stride must be 1 or 2 (got " + std::to_string(int(stride)) + ")");
        }
        if (shift < 1 || shift > 30) {
            throw Halide::CompileError("conv2d_q8: shift must be in [1, 30]");
        }
        if (relu != 0 && relu != 1) {
            throw Halide::CompileError("conv2d_q8: relu must be 0 or 1");
        }
        if (N < 1 || H < 1 || W < 1 || CI < 1 || CO < 1) {
            throw Halide::CompileError("conv2d_q8: N, H, W, CI and CO must be positive");
        }
        Var co("co"), x("x"), y("y"), n("n");
        const int s = stride;
        acc(co, x, y, n) = 0;
        // As conv2d: stride 2 sums one update per input phase (ConvTaps.h).
        tessel::samples::add_conv_taps(acc, input, weights, Int(32), K, s, CI);
        Expr v = acc(co, x, y, n) + bias(co);
        if (relu) {
            v = max(v, 0);
        }
        const int sh = shift;
        requant(co, x, y, n) = saturating_cast<int8_t>((v * cast<int32_t>(scale(co)) + (1 << (sh - 1))) >> sh);
        output(co, x, y, n) = requant(co, x, y, n);

        const int w_in = (W - 1) * s + K, h_in = (H - 1) * s + K;
        input.set_estimates({{0, CI}, {0, w_in}, {0, h_in}, {0, N}});
        weights.set_estimates({{0, CO}, {0, CI}, {0, K}, {0, K}});
        bias.set_estimates({{0, CO}});
        scale.set_estimates({{0, CO}});
        output.set_estimates({{0, CO}, {0, W}, {0, H}, {0, N}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Conv2dQ8, conv2d_q8,
                          "int8 2-D convolution, NHWC, valid region, with a fused epilogue: "
                          "sat_int8((relu(conv + bias) * scale + 2^(shift-1)) >> shift)",
                          {{"N", "1", "batch"},
                           {"H", "8", "output rows"},
                           {"W", "16", "output columns"},
                           {"CI", "32", "input channels"},
                           {"CO", "32", "output channels"},
                           {"K", "3", "kernel height = width: 3 or 1"},
                           {"stride", "1", "stride in x and y: 1 or 2"},
                           {"shift", "12", "right shift of the requantisation, 1..30 (rounding half up)"},
                           {"relu", "1", "1: ReLU after the bias, before the requantisation; 0: none"}})
