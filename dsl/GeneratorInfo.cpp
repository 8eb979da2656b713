#include "dsl/GeneratorInfo.h"

#include "npu_target/common/Error.h"

#include <algorithm>
#include <dlfcn.h>
#include <mutex>

namespace tessel {

namespace {
std::mutex &registry_mutex() {
    static std::mutex m;
    return m;
}
std::map<std::string, GeneratorInfo> &registry() {
    static std::map<std::string, GeneratorInfo> r;
    return r;
}
} // namespace

bool register_generator_info(const GeneratorInfo &info) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry()[info.name] = info;
    return true;
}

std::vector<GeneratorInfo> list_generators() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    std::vector<GeneratorInfo> out;
    for (const auto &kv : registry()) {
        out.push_back(kv.second);
    }
    return out;
}

GeneratorInfo find_generator(const std::string &name) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(name);
    if (it != registry().end()) {
        return it->second;
    }
    std::string known;
    for (const auto &kv : registry()) {
        known += (known.empty() ? "" : ", ") + kv.first;
    }
    user_error("unknown generator '", name, "'; known generators: ", known.empty() ? "(none)" : known);
}

void load_generator_library(const std::string &path) {
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        user_error("cannot load generator library '", path, "': ", e ? e : "unknown error");
    }
}

ParamMap parse_params(const std::string &text) {
    ParamMap out;
    size_t pos = 0;
    while (pos <= text.size() && !text.empty()) {
        size_t comma = text.find(',', pos);
        std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t eq = item.find('=');
        if (item.empty() || eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
            user_error("bad parameter '", item, "' in '", text, "': expected NAME=VALUE[,NAME=VALUE...]");
        }
        out[item.substr(0, eq)] = item.substr(eq + 1);
        if (comma == std::string::npos) {
            break;
        }
        pos = comma + 1;
    }
    return out;
}

ParamMap resolve_params(const GeneratorInfo &info, const ParamMap &given) {
    ParamMap out;
    for (const auto &p : info.params) {
        out[p.name] = p.default_value;
    }
    for (const auto &kv : given) {
        if (!out.count(kv.first)) {
            std::string known;
            for (const auto &p : info.params) {
                known += (known.empty() ? "" : ", ") + p.name;
            }
            user_error("generator '", info.name, "' has no parameter '", kv.first, "'; its parameters are: ", known);
        }
        out[kv.first] = kv.second;
    }
    return out;
}

std::string format_params(const ParamMap &params) {
    std::string s;
    for (const auto &kv : params) {
        s += (s.empty() ? "" : ",") + kv.first + "=" + kv.second;
    }
    return s;
}

} // namespace tessel
