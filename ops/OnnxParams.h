#ifndef TESSEL_OPS_ONNXPARAMS_H
#define TESSEL_OPS_ONNXPARAMS_H

// The list-valued GeneratorParams of the ONNX operator generators: "64x56"
// (a shape, 'x' between) or "2;1;0" (one value per dimension, ';' between).

#include "Halide.h"

#include <climits>
#include <functional>
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

/** `v` where the position `pos` (a function of `vars`) is in [0, extent), else 0 of `t`,
 * without a select on the vector unit (which has none): min/max with two Funcs of `vars`,
 * +-inf (the type's bounds) inside and 0 outside. Exact. `v` reads at a clamped index
 * there, so every read stays inside. */
inline Halide::Expr zero_outside(const Halide::Expr &v, const std::vector<Halide::Var> &vars, const Halide::Expr &pos,
                                 int extent, const Halide::Type &t, const std::string &name) {
    using namespace Halide;
    Expr inside = pos >= 0 && pos < extent;
    Expr big = t.is_float() ? cast(t, std::numeric_limits<float>::infinity()) : t.max();
    Expr small = t.is_float() ? cast(t, -std::numeric_limits<float>::infinity()) : t.min();
    Func hi("hi_" + name), lo("lo_" + name);
    std::vector<Expr> args(vars.begin(), vars.end());
    hi(vars) = select(inside, big, cast(t, 0));
    lo(vars) = select(inside, small, cast(t, 0));
    return max(min(v, hi(args)), lo(args));
}

/** The same for a position `x - begin` of one variable. */
inline Halide::Expr zero_outside(const Halide::Expr &v, const Halide::Var &x, int begin, int extent,
                                 const Halide::Type &t, const std::string &name) {
    return zero_outside(v, std::vector<Halide::Var>{x}, x - begin, extent, t, name);
}

/** The Region of a tensor whose ONNX shape (outermost first) is `shape`: Halide's dimension
 * d is ONNX's r - 1 - d (set_estimates' argument). */
inline Halide::Region onnx_region(const std::vector<int> &shape) {
    Halide::Region r;
    for (size_t d = 0; d < shape.size(); d++) {
        r.push_back({0, shape[shape.size() - 1 - d]});
    }
    return r;
}

/** values[x] for x in [0, values.size()), as selects on `x` in a balanced tree (runs of equal
 * values merged): a table per position of constants, whose depth (log2 of the runs) keeps
 * the scalar unit's registers enough where a chain of selects would not be. */
template <typename T>
Halide::Expr table_select(const Halide::Expr &x, const std::vector<T> &values) {
    std::vector<std::pair<int, T>> runs; // (first position, value)
    for (size_t i = 0; i < values.size(); i++) {
        if (runs.empty() || !(runs.back().second == values[i])) {
            runs.emplace_back(static_cast<int>(i), values[i]);
        }
    }
    std::function<Halide::Expr(size_t, size_t)> tree = [&](size_t lo, size_t hi) -> Halide::Expr {
        if (hi - lo == 1) {
            return Halide::Expr(runs[lo].second);
        }
        const size_t mid = (lo + hi) / 2;
        return Halide::select(x < runs[mid].first, tree(lo, mid), tree(mid, hi));
    };
    return tree(0, runs.size());
}

} // namespace tessel::ops

#endif
