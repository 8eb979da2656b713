#ifndef TESSEL_OPS_ONNXPARAMS_H
#define TESSEL_OPS_ONNXPARAMS_H

// The list-valued GeneratorParams of the ONNX operator generators: "64x56"
// (a shape, 'x' between) or "2;1;0" (one value per dimension, ';' between).

#include "Halide.h"

#include <climits>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace tessel::ops {

/** The integers of `text`, `sep` between them, each at least `min`. A bad list is a
 * Halide::CompileError naming the operator (`op`) and the parameter (`what`). */
inline std::vector<int> parse_int_list(const std::string &text, char sep, const std::string &op,
                                       const std::string &what, int min = INT_MIN) {
    std::vector<int> out;
    std::stringstream all(text);
    std::string one;
    while (std::getline(all, one, sep)) {
        size_t used = 0;
        int v = 0;
        try {
            v = std::stoi(one, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used != one.size() || one.empty() || v < min) {
            throw Halide::CompileError(
                "onnx " + op + ": " + what + " '" + text + "' is not a list of " +
                (min == INT_MIN ? std::string("integers") : "numbers >= " + std::to_string(min)));
        }
        out.push_back(v);
    }
    return out;
}

/** `v` where `begin <= x < begin + extent`, else 0 of `t`, without a select on the vector
 * unit (which has none): min/max with two 1-D Funcs of x, +-inf (the type's bounds) inside
 * and 0 outside. Exact. `v` reads at a clamped index there, so every read stays inside. */
inline Halide::Expr zero_outside(const Halide::Expr &v, const Halide::Var &x, int begin, int extent,
                                 const Halide::Type &t, const std::string &name) {
    using namespace Halide;
    Expr inside = x >= begin && x < begin + extent;
    Expr big = t.is_float() ? cast(t, std::numeric_limits<float>::infinity()) : t.max();
    Expr small = t.is_float() ? cast(t, -std::numeric_limits<float>::infinity()) : t.min();
    Func hi("hi_" + name), lo("lo_" + name);
    hi(x) = select(inside, big, cast(t, 0));
    lo(x) = select(inside, small, cast(t, 0));
    return max(min(v, hi(x)), lo(x));
}

} // namespace tessel::ops

#endif
