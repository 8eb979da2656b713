// ONNX's unary pointwise operators (and Identity), one generator each:
// onnx_relu, onnx_leakyrelu, onnx_clip, ... (docs/onnx.md has the table).
//
// A pointwise operator does not care how its tensor is shaped, so these
// generators take the tensor as its flat buffer of N elements: ONNX stores a
// tensor in row-major order, and that order is the buffer's, so the shape is
// metadata (the ONNX runner, graph/OnnxOps.cpp, views the tensor as N elements
// and back). The attributes are GeneratorParams of the same names.
//
// Every result is ONNX's definition (onnx/defs/math/defs.cc, the operator's
// reference expression), written only with the operations the NPU's vector unit
// has: add, sub, mul, div, min, max, exp, log, sqrt and casts. Comparisons and
// selects are not among them, so
//  - x < 0 ? a : b forms are written with min/max (LeakyRelu = max(x, 0) + alpha * min(x, 0)
//    is exact: one of the two terms is zero),
//  - |x| is max(x, -x), sign(x) is x / max(|x|, 1e-30).
// Erf mixes its two forms over a range where both are accurate.
// ThresholdedRelu (x > alpha ? x : 0) is t * min((t - alpha) 2^k, 1) with t = max(x, alpha):
// t - alpha is 0 exactly when x <= alpha and at least the spacing of the floats just above
// alpha otherwise, which 2^k (k from alpha's exponent) scales to 1, so the step is exactly 0
// or 1. Halide's simplifier treats floats as reals and rewrites the step as
// min(t 2^k, alpha 2^k + 1) - alpha 2^k; with |alpha| 2^k <= 2^24 that is exact as well (t 2^k
// is an exact scaling, or inf, where the step is 1 as it should be). alpha = 0 is Relu; an
// infinite alpha, or one below 2^-100, is refused.
// fp16 and bf16 tensors are computed in fp32 and rounded once at the end.
//
// As in every Tessel sample, the value is computed in its own Func ("op") and
// the output Y is a plain copy of it, which a schedule turns into the DMA back
// to GM.

#include "dsl/Generator.h"

#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace Halide;

enum class U {
    Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Exp, Log, Sqrt,
    Reciprocal, Neg, Abs, Elu, Selu, Softplus, Softsign, ThresholdedRelu, Identity
};

const char *onnx_name(U op) {
    switch (op) {
    case U::Relu: return "Relu";
    case U::LeakyRelu: return "LeakyRelu";
    case U::Clip: return "Clip";
    case U::Sigmoid: return "Sigmoid";
    case U::HardSigmoid: return "HardSigmoid";
    case U::HardSwish: return "HardSwish";
    case U::Tanh: return "Tanh";
    case U::Erf: return "Erf";
    case U::Exp: return "Exp";
    case U::Log: return "Log";
    case U::Sqrt: return "Sqrt";
    case U::Reciprocal: return "Reciprocal";
    case U::Neg: return "Neg";
    case U::Abs: return "Abs";
    case U::Elu: return "Elu";
    case U::Selu: return "Selu";
    case U::Softplus: return "Softplus";
    case U::Softsign: return "Softsign";
    case U::ThresholdedRelu: return "ThresholdedRelu";
    case U::Identity: return "Identity";
    }
    return "?";
}

// Operators ONNX defines on integer tensors too (the rest take float types only).
bool takes_integers(U op) {
    return op == U::Relu || op == U::Clip || op == U::Neg || op == U::Abs || op == U::Identity;
}

Expr absf(Expr x) {
    return max(x, -x);
}

template <U OP>
class OnnxUnary : public Halide::Generator<OnnxUnary<OP>> {
public:
    Halide::GeneratorParam<int> N{"N", 4096};
    Halide::GeneratorParam<std::string> dtype{"dtype", "fp32"};
    // Attributes (each operator's registration lists the ones it has, with ONNX's defaults).
    Halide::GeneratorParam<float> alpha{"alpha", 0.0f};
    Halide::GeneratorParam<float> beta{"beta", 0.0f};
    Halide::GeneratorParam<float> gamma{"gamma", 0.0f};
    // Clip's bounds (inputs 1 and 2 in opset 11+, attributes before): "none" = unbounded.
    Halide::GeneratorParam<std::string> min_value{"min", "none"};
    Halide::GeneratorParam<std::string> max_value{"max", "none"};

    Halide::GeneratorInput<Halide::Buffer<>> *X = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> Y{"Y", 1};

    Type t;
    Func op{"op"};
    Var i{"i"};
    std::vector<Func> stages; // intermediate values of the longer definitions (Tanh, Erf)

    // e as a Func of its own, read back at i: each stage is one short vector
    // computation over the band (a schedule computes it there, `auto` does).
    Expr stage(const std::string &name, Expr e) {
        Func f{name};
        f(i) = e;
        stages.push_back(f);
        return f(i);
    }

    Expr tanh_of(Expr x) {
        // (1 - e) / (1 + e) with e = exp(-2x), x clamped to [-9, 9] (tanh(9) rounds to 1 in fp32;
        // e stays finite). Near 0, 1 - e cancels, but its absolute error stays within one ulp
        // of 1 (6e-8), under ONNX's atol + rtol |y|.
        Expr e = stage("e", exp(-2.0f * clamp(x, -9.0f, 9.0f)));
        return (1.0f - e) / (1.0f + e);
    }

    Expr erf_of(Expr x) {
        // Two forms, each accurate where it is used, mixed by w = clamp(10 (|x| - 0.05), 0, 1):
        //  |x| >= 0.05: sign(x) (1 - erfc(|x|)), erfc from the Chebyshev fit of Numerical
        //    Recipes (6.2.2; fractional error under 1.2e-7), sign(x) = x / |x|;
        //  |x| <= 0.15: the Taylor series 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 -
        //    x^11/1320) on x clamped to [-1/2, 1/2] (finite where its weight is 0).
        // Between, a convex mix of two accurate values is accurate.
        Expr z = stage("z", max(x, -x));
        Expr t = stage("t", 1.0f / (1.0f + 0.5f * z));
        Expr poly = stage(
            "poly",
            -1.26551223f +
                t * (1.00002368f +
                     t * (0.37409196f +
                          t * (0.09678418f +
                               t * (-0.18628806f +
                                    t * (0.27886807f +
                                         t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
        Expr big = stage("big", x / max(z, 1e-30f) * (1.0f - t * exp(poly - z * z)));
        Expr xs = stage("xs", clamp(x, -0.5f, 0.5f));
        Expr x2 = stage("x2", xs * xs);
        Expr taylor = stage("taylor", 1.1283791670955126f * xs *
                                          (1.0f + x2 * (-1.0f / 3 + x2 * (1.0f / 10 + x2 * (-1.0f / 42 +
                                                                                           x2 * (1.0f / 216 + x2 * (-1.0f / 1320)))))));
        Expr w = stage("w", clamp((z - 0.05f) * 10.0f, 0.0f, 1.0f));
        return w * big + (1.0f - w) * taylor;
    }

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!t.is_float() && !takes_integers(OP)) {
            throw Halide::CompileError(std::string("onnx ") + onnx_name(OP) +
                                       ": dtype must be fp32, fp16 or bf16 (ONNX defines it on floating-point tensors)");
        }
        if (int(N) < 1) {
            throw Halide::CompileError(std::string("onnx ") + onnx_name(OP) + ": N must be at least 1");
        }
        const float a = alpha;
        if (OP == U::ThresholdedRelu && (!std::isfinite(a) || (a != 0 && std::fabs(a) < 0x1p-100f))) {
            throw Halide::CompileError("onnx ThresholdedRelu: alpha " + std::to_string(a) +
                                       " is not supported (finite, 0 or at least 2^-100 in magnitude)");
        }
        X = this->template add_input<Halide::Buffer<>>("X", t, 1);
    }

    // A Clip bound as a value of the computation's type, or an undefined Expr for "none".
    Expr bound(const std::string &text, Type ct) {
        if (text == "none") {
            return Expr();
        }
        size_t used = 0;
        double v = 0;
        try {
            v = std::stod(text, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used != text.size()) {
            throw Halide::CompileError("onnx Clip: a bound must be a number or none, got '" + text + "'");
        }
        return cast(ct, Expr(v));
    }

    Expr compute(Expr x) {
        const float a = alpha, b = beta, g = gamma;
        switch (OP) {
        case U::Relu: return max(x, Halide::Internal::make_zero(x.type()));
        case U::LeakyRelu: return max(x, 0.0f) + a * min(x, 0.0f);
        case U::Clip: {
            Expr lo = bound(min_value, x.type()), hi = bound(max_value, x.type());
            Expr v = x;
            if (lo.defined()) {
                v = max(v, lo);
            }
            if (hi.defined()) {
                v = min(v, hi);
            }
            return v;
        }
        case U::Sigmoid: return 1.0f / (1.0f + exp(-x));
        case U::HardSigmoid: return max(min(a * x + b, 1.0f), 0.0f);
        case U::HardSwish: return x * max(min(x * (1.0f / 6) + 0.5f, 1.0f), 0.0f);
        case U::Tanh: return tanh_of(x);
        case U::Erf: return erf_of(x);
        case U::Exp: return exp(x);
        case U::Log: return log(x);
        case U::Sqrt: return sqrt(x);
        case U::Reciprocal: return 1.0f / x;
        case U::Neg: return -x;
        case U::Abs: return max(x, -x);
        case U::Elu: return max(x, 0.0f) + a * (exp(min(x, 0.0f)) - 1.0f);
        case U::Selu: return g * (max(x, 0.0f) + a * (exp(min(x, 0.0f)) - 1.0f));
        case U::Softplus: return log(exp(x) + 1.0f);
        case U::Softsign: return x / (1.0f + absf(x));
        case U::ThresholdedRelu: {
            if (a == 0) {
                return max(x, 0.0f);
            }
            int e = 0;
            const float mant = std::frexp(a, &e); // |a| = |mant| 2^e, |mant| in [1/2, 1)
            // The smallest t - a > 0: the spacing above a, 2^(e-24); half that just above a
            // negative power of two. k scales it to 1, and |a| k stays <= 2^24, so that the
            // simplifier's min(t k, a k + 1) - a k (its form of the step) is exact too.
            const bool half = a < 0 && std::fabs(mant) == 0.5f;
            const float k = std::ldexp(1.0f, 24 - e + (half ? 1 : 0));
            Expr th = max(x, a);
            return th * min((th - a) * k, 1.0f);
        }
        case U::Identity: return x;
        }
        return x;
    }

    void generate() {
        Expr x = (*X)(i);
        if (t.is_float() && OP != U::Identity) {
            op(i) = cast(t, compute(cast<float>(x)));
        } else {
            op(i) = compute(x);
        }
        Y(i) = op(i);
        X->set_estimates({{0, N}});
        Y.set_estimates({{0, N}});
    }
};

using OnnxRelu = OnnxUnary<U::Relu>;
using OnnxLeakyRelu = OnnxUnary<U::LeakyRelu>;
using OnnxClip = OnnxUnary<U::Clip>;
using OnnxSigmoid = OnnxUnary<U::Sigmoid>;
using OnnxHardSigmoid = OnnxUnary<U::HardSigmoid>;
using OnnxHardSwish = OnnxUnary<U::HardSwish>;
using OnnxTanh = OnnxUnary<U::Tanh>;
using OnnxErf = OnnxUnary<U::Erf>;
using OnnxExp = OnnxUnary<U::Exp>;
using OnnxLog = OnnxUnary<U::Log>;
using OnnxSqrt = OnnxUnary<U::Sqrt>;
using OnnxReciprocal = OnnxUnary<U::Reciprocal>;
using OnnxNeg = OnnxUnary<U::Neg>;
using OnnxAbs = OnnxUnary<U::Abs>;
using OnnxElu = OnnxUnary<U::Elu>;
using OnnxSelu = OnnxUnary<U::Selu>;
using OnnxSoftplus = OnnxUnary<U::Softplus>;
using OnnxSoftsign = OnnxUnary<U::Softsign>;
using OnnxThresholdedRelu = OnnxUnary<U::ThresholdedRelu>;
using OnnxIdentity = OnnxUnary<U::Identity>;

} // namespace

#define TESSEL_ONNX_N {"N", "4096", "number of elements (the tensor's flat buffer)"}
#define TESSEL_ONNX_FLOAT {"dtype", "fp32", "element type: fp32, fp16, bf16"}
#define TESSEL_ONNX_ANY {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}

TESSEL_REGISTER_GENERATOR(OnnxRelu, onnx_relu, "ONNX Relu: Y = max(X, 0)", {TESSEL_ONNX_N, TESSEL_ONNX_ANY})
TESSEL_REGISTER_GENERATOR(OnnxThresholdedRelu, onnx_thresholdedrelu, "ONNX ThresholdedRelu: Y = X > alpha ? X : 0",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT, {"alpha", "1", "the threshold (finite)"}})
TESSEL_REGISTER_GENERATOR(OnnxLeakyRelu, onnx_leakyrelu, "ONNX LeakyRelu: Y = X < 0 ? alpha X : X",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT, {"alpha", "0.01", "slope for X < 0"}})
TESSEL_REGISTER_GENERATOR(OnnxClip, onnx_clip, "ONNX Clip: Y = min(max(X, min), max)",
                          {TESSEL_ONNX_N, TESSEL_ONNX_ANY, {"min", "none", "lower bound, or none"},
                           {"max", "none", "upper bound, or none"}})
TESSEL_REGISTER_GENERATOR(OnnxSigmoid, onnx_sigmoid, "ONNX Sigmoid: Y = 1 / (1 + exp(-X))",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxHardSigmoid, onnx_hardsigmoid, "ONNX HardSigmoid: Y = max(0, min(1, alpha X + beta))",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT, {"alpha", "0.2", "slope"}, {"beta", "0.5", "offset"}})
TESSEL_REGISTER_GENERATOR(OnnxHardSwish, onnx_hardswish, "ONNX HardSwish: Y = X max(0, min(1, X / 6 + 1/2))",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxTanh, onnx_tanh, "ONNX Tanh", {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxErf, onnx_erf, "ONNX Erf (error function)", {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxExp, onnx_exp, "ONNX Exp", {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxLog, onnx_log, "ONNX Log (natural)", {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxSqrt, onnx_sqrt, "ONNX Sqrt", {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxReciprocal, onnx_reciprocal, "ONNX Reciprocal: Y = 1 / X",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxNeg, onnx_neg, "ONNX Neg: Y = -X", {TESSEL_ONNX_N, TESSEL_ONNX_ANY})
TESSEL_REGISTER_GENERATOR(OnnxAbs, onnx_abs, "ONNX Abs: Y = |X|", {TESSEL_ONNX_N, TESSEL_ONNX_ANY})
TESSEL_REGISTER_GENERATOR(OnnxElu, onnx_elu, "ONNX Elu: Y = X < 0 ? alpha (exp(X) - 1) : X",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT, {"alpha", "1", "scale for X < 0"}})
TESSEL_REGISTER_GENERATOR(OnnxSelu, onnx_selu, "ONNX Selu: Y = gamma (X <= 0 ? alpha (exp(X) - 1) : X)",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT, {"alpha", "1.67326319217681884765625", "alpha"},
                           {"gamma", "1.05070102214813232421875", "gamma"}})
TESSEL_REGISTER_GENERATOR(OnnxSoftplus, onnx_softplus, "ONNX Softplus: Y = log(exp(X) + 1)",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxSoftsign, onnx_softsign, "ONNX Softsign: Y = X / (1 + |X|)",
                          {TESSEL_ONNX_N, TESSEL_ONNX_FLOAT})
TESSEL_REGISTER_GENERATOR(OnnxIdentity, onnx_identity,
                          "ONNX Identity, and the data of every view (Reshape, Flatten, Squeeze, Unsqueeze, "
                          "inference Dropout): Y = X",
                          {TESSEL_ONNX_N, TESSEL_ONNX_ANY})
