// Elementwise operators on 1-D tensors of `dtype`:
//   op=chain: out(x) = exp(max(a(x) + b(x), 0) * c(x)), computed in fp32
//   op=add:   out(x) = a(x) + b(x), in dtype (the bandwidth-bound benchmark; c is unused)
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
    GeneratorParam<std::string> op{"op", "chain"};

    Input<Buffer<>> *a = nullptr, *b = nullptr, *c = nullptr;
    Output<Buffer<>> out{"out", 1};

    Type t;
    Func ew{"ew"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!t.is_float()) {
            throw Halide::CompileError("elementwise: dtype must be a floating-point type (fp16, bf16, fp32)");
        }
        const std::string o = op;
        if (o != "chain" && o != "add") {
            throw Halide::CompileError("elementwise: op must be chain or add, got " + o);
        }
        a = add_input<Buffer<>>("a", t, 1);
        b = add_input<Buffer<>>("b", t, 1);
        if (o == "chain") {
            c = add_input<Buffer<>>("c", t, 1);
        }
    }

    void generate() {
        Var x("x");
        if (c) {
            Expr s = max(cast<float>((*a)(x)) + cast<float>((*b)(x)), 0.0f) * cast<float>((*c)(x));
            ew(x) = cast(t, exp(s));
            c->set_estimates({{0, N}});
        } else {
            ew(x) = (*a)(x) + (*b)(x);
        }
        out(x) = ew(x);
        a->set_estimates({{0, N}});
        b->set_estimates({{0, N}});
        out.set_estimates({{0, N}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Elementwise, elementwise,
                          "elementwise: op=chain out = exp(relu(a + b) * c) (fp32 inside), op=add out = a + b",
                          {{"N", "4096", "number of elements"},
                           {"dtype", "fp16", "element type of the inputs and out: fp16, bf16, fp32"},
                           {"op", "chain", "chain or add"}})
