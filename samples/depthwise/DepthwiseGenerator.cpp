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
    // "vector": the convolution as written above. "matrix": the same sums as a
    // block-diagonal product over groups of 16 channels, which the matrix unit
    // can run: for each group g and tap, [pixels x 16] x [16 x 16] with the
    // filter taps on the diagonal (wbd) and zeros elsewhere. The added terms are
    // exact zeros (int32 accumulation; fp32 accumulation of fp16 products), so
    // the result is bit-identical to the vector form.
    GeneratorParam<std::string> form{"form", "vector"};

    Input<Buffer<>> *in = nullptr, *w = nullptr;
    Output<Buffer<>> out{"out", 4};

    Type t, acc_t;
    Func acc{"acc"}, wbd{"wbd"}, res{"res"};
    static constexpr int kGroup = 16; // channels per block of the matrix form

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        acc_t = tessel::halide_type(tessel::accumulator_of(tessel::parse_dtype_param(dtype, "dtype")));
        if (K < 1 || stride < 1) {
            throw Halide::CompileError("depthwise: K and stride must be positive");
        }
        if (form != "vector" && form != "matrix") {
            throw Halide::CompileError("depthwise: form must be vector or matrix (got " + std::string(form) + ")");
        }
        if (form == "matrix" && C % kGroup != 0) {
            throw Halide::CompileError("depthwise: form=matrix needs C to be a multiple of " + std::to_string(kGroup));
        }
        in = add_input<Buffer<>>("in", t, 4);
        w = add_input<Buffer<>>("w", t, 3);
    }

    void generate() {
        Var c("c"), x("x"), y("y"), n("n");
        const int k = K, st = stride;
        const int h_in = (H - 1) * st + k, w_in = (W - 1) * st + k;
        if (form == "matrix") {
            // The output pixels flattened over the input's row pitch: pixel
            // p = y * w_in + x (x < w_in; the columns x >= W are computed and
            // never read), so one tap of a band of rows is one product with
            // p as its rows, the tap's input pixels at s * p + kx + ky * w_in
            // contiguous for s = 1. acc(co, p, g, n) over channel
            // c = g * 16 + co; the reduction runs over the 16 input channels ci
            // of the group and the taps, tap-major as in the vector form, so
            // the non-zero terms are added in the same order.
            Var co("co"), ci("ci"), g("g"), kx("kx"), ky("ky"), p("p");
            RDom d(0, kGroup, "d");
            wbd(co, ci, kx, ky, g) = cast(t, 0);
            wbd(d, d, kx, ky, g) = (*w)(g * kGroup + d, kx, ky);
            RDom r(Internal::ReductionDomain(
                {{"ci$x", 0, Expr(kGroup)}, {"kx$x", 0, Expr(k)}, {"ky$x", 0, Expr(k)}}));
            // (Written twice with the operands in another order: the same
            // expression twice would become a let, which tensorize does not take.)
            Expr x_in = (p * st + r[1]) % w_in, y_in = (r[1] + st * p) / w_in + r[2];
            acc(co, p, g, n) = cast(acc_t, 0);
            acc(co, p, g, n) += cast(acc_t, (*in)(g * kGroup + r[0], x_in, y_in, n)) *
                                cast(acc_t, wbd(co, r[0], r[1], r[2], g));
            res(c, p, n) = acc(c % kGroup, p, c / kGroup, n);
            out(c, x, y, n) = res(c, y * w_in + x, n);
        } else {
            RDom r(0, k, 0, k, "r");
            acc(c, x, y, n) = cast(acc_t, 0);
            acc(c, x, y, n) += cast(acc_t, (*in)(c, x * st + r.x, y * st + r.y, n)) * cast(acc_t, (*w)(c, r.x, r.y));
            out(c, x, y, n) = acc(c, x, y, n);
        }
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
                           {"dtype", "int8", "int8 (int32 accumulator), fp16 or fp32 (fp32 accumulator)"},
                           {"form", "vector",
                            "vector (per-channel multiply-adds) or matrix (a block-diagonal product over 16-channel "
                            "groups, for the matrix unit; the same result)"}})
