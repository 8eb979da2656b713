#ifndef TESSEL_OPS_ONNXPARAMS_H
#define TESSEL_OPS_ONNXPARAMS_H

// The list-valued GeneratorParams of the ONNX operator generators: "64x56"
// (a shape, 'x' between) or "2;1;0" (one value per dimension, ';' between).

#include "Halide.h"

#include <climits>
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
            throw Halide::CompileError("onnx " + op + ": " + what + " '" + text + "' is not a list of " +
                                       (min == INT_MIN ? std::string("integers")
                                                       : "numbers >= " + std::to_string(min)));
        }
        out.push_back(v);
    }
    return out;
}

} // namespace tessel::ops

#endif
