// An elementwise chain: out(x) = exp(max(a(x) + b(x), 0) * c(x)), computed in
// fp32 from inputs of `dtype` and written back as `dtype`.
//
// As in every Tessel sample, the result is computed in its own Func ("ew") and
// the output Func is a plain copy of it: a schedule can then keep ew's tile on
// chip (in the vector unit's level) and the copy becomes one DMA per tile.

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class Elementwise : public Halide::Generator<Elementwise> {
public:
    GeneratorParam<int> N{"N", 4096};
    GeneratorParam<std::string> dtype{"dtype", "fp16"};

    Input<Buffer<>> *a = nullptr, *b = nullptr, *c = nullptr;
    Output<Buffer<>> out{"out", 1};

    Type t;
    Func ew{"ew"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!t.is_float()) {
            throw Halide::CompileError("elementwise: dtype must be a floating-point type (fp16, bf16, fp32)");
        }
        a = add_input<Buffer<>>("a", t, 1);
        b = add_input<Buffer<>>("b", t, 1);
        c = add_input<Buffer<>>("c", t, 1);
    }

    void generate() {
        Var x("x");
        Expr s = max(cast<float>((*a)(x)) + cast<float>((*b)(x)), 0.0f) * cast<float>((*c)(x));
        ew(x) = cast(t, exp(s));
        out(x) = ew(x);
        a->set_estimates({{0, N}});
        b->set_estimates({{0, N}});
        c->set_estimates({{0, N}});
        out.set_estimates({{0, N}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Elementwise, elementwise, "elementwise chain out = exp(relu(a + b) * c), fp32 inside",
                          {{"N", "4096", "number of elements"},
                           {"dtype", "fp16", "element type of a, b, c and out: fp16, bf16, fp32"}})
