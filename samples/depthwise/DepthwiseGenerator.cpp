// Depthwise 3x3 convolution over NHWC: every channel has its own K x K filter,
// out(c, x, y, n) = sum_{kx, ky} in(c, x*S + kx, y*S + ky, n) * w(c, kx, ky),
// accumulated in int32 (int8) or fp32 (fp16/fp32), written in the accumulator
// type; the output is the valid region. Channels are innermost, so a vector
// of channels is contiguous in the input, the weights and the output.

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class Depthwise : public Halide::Generator<Depthwise> {
public:
    GeneratorParam<int> N{"N", 1};
    GeneratorParam<int> H{"H", 8};
    GeneratorParam<int> W{"W", 8};
    GeneratorParam<int> C{"C", 32};
    GeneratorParam<int> K{"K", 3};
    GeneratorParam<int> stride{"stride", 1};
    GeneratorParam<std::string> dtype{"dtype", "int8"};

    Input<Buffer<>> *in = nullptr, *w = nullptr;
    Output<Buffer<>> out{"out", 4};

    Type t, acc_t;
    Func acc{"acc"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        acc_t = tessel::halide_type(tessel::accumulator_of(tessel::parse_dtype_param(dtype, "dtype")));
        if (K < 1 || stride < 1) {
            throw Halide::CompileError("depthwise: K and stride must be positive");
        }
        in = add_input<Buffer<>>("in", t, 4);
        w = add_input<Buffer<>>("w", t, 3);
    }

    void generate() {
        Var c("c"), x("x"), y("y"), n("n");
        const int k = K, st = stride;
        RDom r(0, k, 0, k, "r");
        acc(c, x, y, n) = cast(acc_t, 0);
        acc(c, x, y, n) += cast(acc_t, (*in)(c, x * st + r.x, y * st + r.y, n)) * cast(acc_t, (*w)(c, r.x, r.y));
        out(c, x, y, n) = acc(c, x, y, n);
        const int h_in = (H - 1) * st + k, w_in = (W - 1) * st + k;
        in->set_estimates({{0, C}, {0, w_in}, {0, h_in}, {0, N}});
        w->set_estimates({{0, C}, {0, k}, {0, k}});
        out.set_estimates({{0, C}, {0, W}, {0, H}, {0, N}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Depthwise, depthwise, "depthwise K x K convolution over NHWC, widened accumulator",
                          {{"N", "1", "batch"},
                           {"H", "8", "output height"},
                           {"W", "8", "output width"},
                           {"C", "32", "channels"},
                           {"K", "3", "filter size"},
                           {"stride", "1", "stride"},
                           {"dtype", "int8", "int8 (int32 accumulator), fp16 or fp32 (fp32 accumulator)"}})
