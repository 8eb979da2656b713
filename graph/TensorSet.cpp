#include "graph/TensorSet.h"

#include "npu_target/common/Error.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace tessel::graph {

namespace fs = std::filesystem;

namespace {

GivenTensor given_from_file(const fs::path &file, TensorRole role) {
    const std::string path = file.string();
    FileTensor ft = read_tensor_file(path);
    const std::string stem = file.stem().string();
    GivenTensor g;
    const std::string name = ft.name.empty() ? stem : ft.name;
    g.tensor = to_tensor(ft, name, path);
    g.origin = path;
    g.position = suite_position(stem, role);
    return g;
}

} // namespace

int suite_position(const std::string &stem, TensorRole role) {
    const std::string prefix = role == TensorRole::Input ? "input_" : "output_";
    if (stem.size() <= prefix.size() || stem.size() > prefix.size() + 6 || stem.compare(0, prefix.size(), prefix) != 0) {
        return -1;
    }
    int k = 0;
    for (size_t i = prefix.size(); i < stem.size(); i++) {
        if (!std::isdigit(static_cast<unsigned char>(stem[i]))) {
            return -1;
        }
        k = k * 10 + (stem[i] - '0');
    }
    return k;
}

std::vector<GivenTensor> read_tensor_set(const std::string &path, TensorRole role) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        return {given_from_file(path, role)}; // the reader says what is wrong with it (missing, not a tensor file)
    }
    const TensorRole other = role == TensorRole::Input ? TensorRole::Output : TensorRole::Input;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path &f = it->path();
        if (!tensor_format_of(f.string()) || suite_position(f.stem().string(), other) >= 0) {
            continue;
        }
        files.push_back(f);
    }
    if (ec) {
        user_error("cannot read the tensor directory '", path, "': ", ec.message());
    }
    if (files.empty()) {
        // An ONNX backend test's own directory holds model.onnx and test_data_set_N/: say so.
        std::string hint;
        if (fs::is_directory(fs::path(path) / "test_data_set_0", ec)) {
            hint = " (its test_data_set_0/ holds an ONNX test's tensors: pass that directory)";
        }
        user_error(path, ": no tensor files (.pb or .npy", role == TensorRole::Input ? ", other than output_K" : ", other than input_K",
                   ") in this directory", hint);
    }
    std::sort(files.begin(), files.end());
    std::vector<GivenTensor> out;
    for (const fs::path &f : files) {
        out.push_back(given_from_file(f, role));
    }
    return out;
}

std::vector<std::string> save_tensor_set(const std::vector<Tensor> &tensors, const std::string &dir, bool pb, bool npy) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        user_error("cannot create the output directory '", dir, "': ", ec.message());
    }
    std::vector<std::string> written;
    for (const Tensor &t : tensors) {
        if (t.name.empty() || t.name == "." || t.name == ".." || t.name.find('/') != std::string::npos) {
            user_error("output '", t.name, "' cannot be saved under its name in '", dir, "'");
        }
        FileTensor ft = from_tensor(t);
        const std::string base = (fs::path(dir) / t.name).string();
        if (pb) {
            write_tensor_file(base + ".pb", ft, TensorFormat::Pb);
            written.push_back(base + ".pb");
        }
        if (npy) {
            write_tensor_file(base + ".npy", ft, TensorFormat::Npy);
            written.push_back(base + ".npy");
        }
    }
    return written;
}

} // namespace tessel::graph
