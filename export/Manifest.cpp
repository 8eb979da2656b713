#include "export/Manifest.h"

#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tessel::exporter {

namespace fs = std::filesystem;

bool is_c_identifier(const std::string &s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) {
        return false;
    }
    for (char c : s) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
            return false;
        }
    }
    return true;
}

namespace {

std::string param_text(const nlohmann::json &v, const std::string &where) {
    if (v.is_string()) {
        return v.get<std::string>();
    }
    if (v.is_number_integer()) {
        return std::to_string(v.get<int64_t>());
    }
    if (v.is_boolean()) {
        return v.get<bool>() ? "true" : "false";
    }
    user_error(where, ": a parameter value must be a string, an integer or a boolean, got ", json_excerpt(v));
}

std::string string_field(const nlohmann::json &k, const char *key, const std::string &where, bool required) {
    if (!k.contains(key)) {
        if (required) {
            user_error(where, ": missing \"", key, "\"");
        }
        return "";
    }
    if (!k[key].is_string()) {
        user_error(where, ": \"", key, "\" must be a string, got ", json_excerpt(k[key]));
    }
    return k[key].get<std::string>();
}

KernelEntry parse_kernel(const nlohmann::json &k, size_t index, const fs::path &base, const std::string &path) {
    std::string where = path + ": kernel #" + std::to_string(index);
    if (!k.is_object()) {
        user_error(where, " must be an object");
    }
    KernelEntry e;
    e.name = string_field(k, "name", where, true);
    where = path + ": kernel '" + e.name + "'";
    if (!is_c_identifier(e.name)) {
        user_error(where, ": the name must be a C identifier ([A-Za-z_][A-Za-z0-9_]*): it names the entry points");
    }
    e.generator = string_field(k, "generator", where, true);
    if (k.contains("params")) {
        const auto &p = k["params"];
        if (p.is_string()) {
            e.params = parse_params(p.get<std::string>());
        } else if (p.is_object()) {
            for (auto it = p.begin(); it != p.end(); ++it) {
                e.params[it.key()] = param_text(it.value(), where + ": parameter " + it.key());
            }
        } else {
            user_error(where, ": \"params\" must be an object or a \"K=V,...\" string");
        }
    }
    std::string arch = string_field(k, "arch", where, false);
    if (!arch.empty()) {
        bool file = arch.find('/') != std::string::npos || (arch.size() > 5 && arch.substr(arch.size() - 5) == ".json");
        e.arch = file ? (base / arch).lexically_normal().string() : arch;
    }
    std::string sched = string_field(k, "schedule", where, false);
    if (sched == "best" || sched.empty() || sched == "default") {
        e.schedule = sched == "best" ? "best" : "";
    } else {
        e.schedule = (base / sched).lexically_normal().string();
    }
    for (auto it = k.begin(); it != k.end(); ++it) {
        static const std::set<std::string> known{"name", "generator", "params", "arch", "schedule"};
        if (!known.count(it.key())) {
            user_error(where, ": unknown key \"", it.key(), "\" (known: name, generator, params, arch, schedule)");
        }
    }
    return e;
}

} // namespace

Manifest parse_manifest(const std::string &text, const std::string &path) {
    nlohmann::json j = parse_json_input(text, path);
    if (!j.is_object() || !j.contains("kernels") || !j["kernels"].is_array()) {
        user_error(path, ": a manifest is an object with a \"kernels\" array");
    }
    Manifest m;
    m.path = path;
    m.library = string_field(j, "library", path, false);
    if (!m.library.empty() && !is_c_identifier(m.library)) {
        user_error(path, ": the library name '", m.library, "' must be a C identifier");
    }
    fs::path base = fs::absolute(fs::path(path)).parent_path();
    std::map<std::string, std::string> symbols; // every symbol a kernel defines -> the kernel
    for (size_t i = 0; i < j["kernels"].size(); i++) {
        KernelEntry e = parse_kernel(j["kernels"][i], i, base, path);
        for (const auto &m2 : m.kernels) {
            if (m2.name == e.name) {
                user_error(path, ": kernel '", e.name, "' is listed twice");
            }
        }
        for (const char *suffix : {"", "_profiled", "_cpu", "_cpu_argv", "_cpu_metadata", "_program", "_arch"}) {
            auto [it, added] = symbols.emplace(e.name + suffix, e.name);
            if (!added) {
                user_error(path, ": kernel '", e.name, "' would define ", it->first, ", which kernel '", it->second,
                           "' defines");
            }
        }
        m.kernels.push_back(std::move(e));
    }
    if (m.kernels.empty()) {
        user_error(path, ": the manifest lists no kernels");
    }
    return m;
}

Manifest read_manifest(const std::string &path) {
    return parse_manifest(read_input_file(path, "manifest"), path);
}

} // namespace tessel::exporter
