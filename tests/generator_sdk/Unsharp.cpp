// A user's generator, built out of tree against an installed Tessel (the SDK):
// an unsharp mask in three stages. blur_x and blur_y are a separable 1-2-1
// binomial blur, out = in + amount * (in - blur), on the valid W x H region of a
// (W+2) x (H+2) fp32 image. A schedule computes blur_x and blur_y per output
// tile (a producer at its consumer's tiles).

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class Unsharp : public Halide::Generator<Unsharp> {
public:
    GeneratorParam<int> W{"W", 256};
    GeneratorParam<int> H{"H", 64};
    GeneratorParam<float> amount{"amount", 1.5f};

    Input<Buffer<float>> in{"in", 2};
    Output<Buffer<float>> out{"out", 2};

    Func blur_x{"blur_x"}, blur_y{"blur_y"}, sharp{"sharp"};

    void generate() {
        Var x("x"), y("y");
        blur_x(x, y) = in(x, y) + 2.0f * in(x + 1, y) + in(x + 2, y);
        blur_y(x, y) = (blur_x(x, y) + 2.0f * blur_x(x, y + 1) + blur_x(x, y + 2)) * (1.0f / 16);
        Expr centre = in(x + 1, y + 1);
        sharp(x, y) = centre + float(amount) * (centre - blur_y(x, y));
        out(x, y) = sharp(x, y); // a copy: the schedule's DMA back to GM
        in.set_estimates({{0, W + 2}, {0, H + 2}});
        out.set_estimates({{0, W}, {0, H}});
    }
};

// A second generator in the same library: y = max(a * x + b, 0) on a vector
// (the fused scale + bias + ReLU epilogue of a layer), with an int parameter.
class ScaleBiasRelu : public Halide::Generator<ScaleBiasRelu> {
public:
    GeneratorParam<int> N{"N", 4096};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *x_in = nullptr;
    Output<Buffer<>> y{"y", 1};
    Type t;

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!t.is_float()) {
            throw Halide::CompileError("scale_bias_relu: dtype must be fp16, bf16 or fp32");
        }
        x_in = add_input<Buffer<>>("x", t, 1);
    }

    void generate() {
        Var i("i");
        Func v("v");
        v(i) = cast(t, max(cast<float>((*x_in)(i)) * 0.5f + 0.25f, 0.0f));
        y(i) = v(i); // a copy: the DMA back to GM
        x_in->set_estimates({{0, N}});
        y.set_estimates({{0, N}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Unsharp, unsharp, "unsharp mask: out = in + amount * (in - 3x3 binomial blur), valid region",
                          {{"W", "256", "output width"},
                           {"H", "64", "output height"},
                           {"amount", "1.5", "sharpening strength"}})
TESSEL_REGISTER_GENERATOR(ScaleBiasRelu, scale_bias_relu, "y = max(0.5 x + 0.25, 0) elementwise",
                          {{"N", "4096", "elements"}, {"dtype", "fp32", "fp16, bf16 or fp32"}})
