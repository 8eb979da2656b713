// LayerNorm over the innermost dimension of ROWS x COLS, statistics in fp32:
//   mean = sum(x) / COLS, var = sum((x - mean)^2) / COLS,
//   out = (x - mean) / sqrt(var + eps) * gamma + beta   (output in dtype).

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class LayerNorm : public Halide::Generator<LayerNorm> {
public:
    GeneratorParam<int> ROWS{"ROWS", 8};
    GeneratorParam<int> COLS{"COLS", 64};
    GeneratorParam<std::string> dtype{"dtype", "fp16"};

    Input<Buffer<>> *in = nullptr, *gamma = nullptr, *beta = nullptr;
    Output<Buffer<>> out{"out", 2};

    Type t;
    Func mean{"mean"}, var{"var"}, centered{"centered"}, inv{"inv"}, norm{"norm"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!t.is_float()) {
            throw Halide::CompileError("layernorm: dtype must be fp16, bf16 or fp32");
        }
        in = add_input<Buffer<>>("in", t, 2);
        gamma = add_input<Buffer<>>("gamma", t, 1);
        beta = add_input<Buffer<>>("beta", t, 1);
    }

    void generate() {
        Var x("x"), y("y");
        RDom r(0, COLS, "r");
        Expr n = cast<float>(COLS);
        mean(y) = 0.0f;
        mean(y) += cast<float>((*in)(r, y));
        // centered is x - mean, used by both the variance and norm: a schedule
        // that computes it (compute_at) subtracts once per element, not twice;
        // left unscheduled it is inlined into both, as written before.
        centered(x, y) = cast<float>((*in)(x, y)) - mean(y) / n;
        var(y) = 0.0f;
        var(y) += centered(r, y) * centered(r, y);
        // inv is 1 / std per row: a schedule that computes it (compute_at +
        // vectorize across a band of rows) evaluates it once per row, not once
        // per vector instruction of norm; unscheduled it is inlined as before.
        inv(y) = 1.0f / sqrt(var(y) / n + 1e-5f);
        // norm is the result in the output type; out a plain copy of it, so that a
        // schedule computes norm per tile in the vector unit's level and the copy
        // becomes one DMA to GM.
        norm(x, y) = cast(t, centered(x, y) * inv(y) * cast<float>((*gamma)(x)) + cast<float>((*beta)(x)));
        out(x, y) = norm(x, y);
        in->set_estimates({{0, COLS}, {0, ROWS}});
        gamma->set_estimates({{0, COLS}});
        beta->set_estimates({{0, COLS}});
        out.set_estimates({{0, COLS}, {0, ROWS}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(LayerNorm, layernorm, "LayerNorm over rows, fp32 statistics",
                          {{"ROWS", "8", "rows"}, {"COLS", "64", "columns (normalised over)"},
                           {"dtype", "fp16", "fp16, bf16 or fp32"}})
