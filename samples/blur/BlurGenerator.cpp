// The classic Halide 3x3 box blur, in two stages: blur_x over 3 columns, then
// blur_y over 3 rows of blur_x, on a W x H image of `dtype` (uint8 sums in
// uint16, divided back by 9 with rounding; fp16/fp32 in fp32). The output is
// the valid region (the input is (W+2) x (H+2)). Schedules fuse the stages by
// computing blur_x per output tile (compute_at).

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class Blur : public Halide::Generator<Blur> {
public:
    GeneratorParam<int> W{"W", 64};
    GeneratorParam<int> H{"H", 32};
    GeneratorParam<std::string> dtype{"dtype", "uint8"};

    Input<Buffer<>> *in = nullptr;
    Output<Buffer<>> out{"out", 2};

    Type t;
    Func blur_x{"blur_x"}, blur_y{"blur_y"}, scaled{"scaled"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!(t == UInt(8) || t.is_float())) {
            throw Halide::CompileError("blur: dtype must be uint8, fp16, bf16 or fp32");
        }
        in = add_input<Buffer<>>("in", t, 2);
    }

    void generate() {
        Var x("x"), y("y");
        Type acc = t.is_float() ? Float(32) : UInt(16);
        blur_x(x, y) = cast(acc, (*in)(x, y)) + cast(acc, (*in)(x + 1, y)) + cast(acc, (*in)(x + 2, y));
        blur_y(x, y) = blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2);
        if (t.is_float()) {
            scaled(x, y) = cast(t, blur_y(x, y) / 9.0f);
        } else {
            scaled(x, y) = cast(t, (blur_y(x, y) + 4) / 9);
        }
        // out is a plain copy of the result, so that a schedule computes scaled
        // per tile in the vector unit's level and the copy becomes a DMA to GM.
        out(x, y) = scaled(x, y);
        in->set_estimates({{0, W + 2}, {0, H + 2}});
        out.set_estimates({{0, W}, {0, H}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Blur, blur, "3x3 box blur in two stages (blur_x, blur_y), the valid region",
                          {{"W", "64", "output width"},
                           {"H", "32", "output height"},
                           {"dtype", "uint8", "uint8, fp16, bf16 or fp32"}})
