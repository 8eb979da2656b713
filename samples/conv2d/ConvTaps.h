#ifndef TESSEL_SAMPLES_CONV2D_CONVTAPS_H
#define TESSEL_SAMPLES_CONV2D_CONVTAPS_H

// The reduction of a 2-D convolution, shared by conv2d and conv2d_q8:
//   acc(co, x, y, n) += cast(acc_t, input(ci, x*s + kx, y*s + ky, n)) * cast(acc_t, weights(co, ci, kx, ky))
// (layouts as in samples/conv2d: input (ci, x, y, n), weights (co, ci, kx, ky)).
//
// Stride 1: one update, reduction loops ci, kx, ky (ci innermost), named as
// users write them.
//
// Stride 2: one update per stride phase (px, py) of the input, p = px + 2 py,
// through two Funcs of that phase:
//   in_p<p>(ci, xp, yp, n)  = input(ci, 2 xp + px, 2 yp + py, n)
//   w_p<p>(co, ci, a, b)     = weights(co, ci, 2 a + px, 2 b + py)
//   acc(co, x, y, n)        += in_p<p>(ci, x + a, y + b, n) * w_p<p>(co, ci, a, b)
// over the taps kx = 2 a + px < K, ky = 2 b + py < K (reduction loops ci,
// kx<p>, ky<p>). For one tap the pixels of consecutive x are consecutive xp,
// so a schedule that stages in_p<p> (a gather of every other pixel) gets the
// dense operand tiles a matrix unit reads; staging the input itself copies the
// pixels in between too and the tile's rows are 2 * CI apart. Each phase's
// footprint is its own box, so no copy reads past the input. Same sum as the
// one-update form, taken in another order (exact for integers).

#include "dsl/Generator.h"

#include <string>

namespace tessel::samples {

inline void add_conv_taps(Halide::Func acc, Halide::Func input, Halide::Func weights, const Halide::Type &acc_t,
                          int K, int stride, int CI) {
    using namespace Halide;
    Var co("co"), x("x"), y("y"), n("n");
    auto term = [&](Func in, Func w, const Expr &ci, const Expr &xi, const Expr &yi, const Expr &a, const Expr &b) {
        return cast(acc_t, in(ci, xi, yi, n)) * cast(acc_t, w(co, ci, a, b));
    };
    if (stride == 1) {
        if (K == 1) {
            // One reduction variable: a GEMM over (pixels, ci) x (ci, co).
            RDom r(Internal::ReductionDomain({{"ci$x", 0, Expr(CI)}}));
            acc(co, x, y, n) += term(input, weights, r[0], x, y, 0, 0);
        } else {
            RDom r(Internal::ReductionDomain({{"ci$x", 0, Expr(CI)}, {"kx$x", 0, Expr(K)}, {"ky$x", 0, Expr(K)}}));
            acc(co, x, y, n) += term(input, weights, r[0], x + r[1], y + r[2], r[1], r[2]);
        }
        return;
    }
    Var ci("ci"), xp("xp"), yp("yp"), a("a"), b("b");
    for (int p = 0; p < 4; p++) {
        const int px = p % 2, py = p / 2;
        const int taps_x = (K - px + 1) / 2, taps_y = (K - py + 1) / 2; // kx = 2 a + px < K
        if (taps_x == 0 || taps_y == 0) {
            continue;
        }
        const std::string s = std::to_string(p);
        Func in_p("in_p" + s), w_p("w_p" + s);
        in_p(ci, xp, yp, n) = input(ci, 2 * xp + px, 2 * yp + py, n);
        w_p(co, ci, a, b) = weights(co, ci, 2 * a + px, 2 * b + py);
        RDom r(Internal::ReductionDomain(
            {{"ci$x", 0, Expr(CI)}, {"kx" + s + "$x", 0, Expr(taps_x)}, {"ky" + s + "$x", 0, Expr(taps_y)}}));
        acc(co, x, y, n) += term(in_p, w_p, r[0], x + r[1], y + r[2], r[1], r[2]);
    }
}

} // namespace tessel::samples

#endif
