#ifndef TESSEL_TOOLS_TENSORARGS_H
#define TESSEL_TOOLS_TENSORARGS_H

// The tensor-file options shared by `tessel run` and `tessel sim`
// (docs/tensors.md): --inputs FILE|DIR|NAME=FILE, --expect FILE|DIR|NAME=FILE,
// --rtol, --atol, --save-outputs DIR, --save-format pb|npy|both.

#include "graph/TensorSet.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/TensorBinding.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace tessel::cli {

struct TensorArgs {
    std::vector<std::string> inputs; // FILE, DIR or NAME=FILE (repeatable)
    std::vector<std::string> expect;
    double rtol = 1e-3; // ONNX's backend test runner's defaults
    double atol = 1e-7;
    std::string save_dir;
    std::string save_format = "pb";
};

/** Adds --expect, --rtol, --atol, --save-outputs, --save-format (and --inputs
 * when `with_inputs`: `tessel sim` declares its own, which also takes random|zeros). */
inline void add_tensor_options(CLI::App *app, TensorArgs &a, bool with_inputs) {
    if (with_inputs) {
        app->add_option("--inputs", a.inputs,
                        "input tensors instead of random ones: a .pb/.npy file, a directory of them (an ONNX "
                        "test_data_set_N: input_K.pb), or NAME=FILE (repeatable; docs/tensors.md)");
    }
    app->add_option("--expect", a.expect,
                    "expected outputs to compare with: a .pb/.npy file, a directory (output_K.pb), or NAME=FILE (repeatable)");
    app->add_option("--rtol", a.rtol, "relative tolerance for --expect: |got - want| <= atol + rtol * |want|")
        ->capture_default_str();
    app->add_option("--atol", a.atol, "absolute tolerance for --expect")->capture_default_str();
    app->add_option("--save-outputs", a.save_dir, "write each output to DIR/<output name>.pb (see --save-format)");
    app->add_option("--save-format", a.save_format, "format of --save-outputs: pb, npy or both")
        ->check(CLI::IsMember({"pb", "npy", "both"}))
        ->capture_default_str();
}

/** Reads every FILE|DIR|NAME=FILE of `specs`. NAME=FILE binds the file's tensor
 * to NAME whatever it is called inside (a path that exists is never split). */
inline std::vector<GivenTensor> load_tensor_args(const std::vector<std::string> &specs, graph::TensorRole role) {
    std::vector<GivenTensor> out;
    for (const std::string &spec : specs) {
        std::error_code ec;
        size_t eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || std::filesystem::exists(spec, ec)) {
            for (GivenTensor &g : graph::read_tensor_set(spec, role)) {
                out.push_back(std::move(g));
            }
            continue;
        }
        const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
        if (std::filesystem::is_directory(path, ec)) {
            user_error("'", spec, "': NAME=PATH takes one tensor file, and '", path, "' is a directory");
        }
        GivenTensor g = graph::read_tensor_set(path, role).at(0);
        g.tensor.name = name;
        g.position = -1;
        out.push_back(std::move(g));
    }
    return out;
}

/** --save-outputs: writes `outputs` and prints each path. */
inline void save_outputs(const std::vector<Tensor> &outputs, const TensorArgs &a) {
    if (a.save_dir.empty()) {
        return;
    }
    for (const std::string &p : graph::save_tensor_set(outputs, a.save_dir, a.save_format != "npy", a.save_format != "pb")) {
        std::cout << "  saved: " << p << "\n";
    }
}

} // namespace tessel::cli

#endif
