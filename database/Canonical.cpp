#include "database/Canonical.h"

#include "database/Connection.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

namespace tessel::db {

using nlohmann::json;

std::string fnv1a64_hex(const std::string &text) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

json parse_db_json(const std::string &json_text, const std::string &what) {
    constexpr int kMaxDepth = 64;
    try {
        return json::parse(json_text, [&](int depth, json::parse_event_t, json &) {
            if (depth > kMaxDepth) {
                throw DatabaseError(what + " nests arrays and objects deeper than " + std::to_string(kMaxDepth) +
                                    " levels");
            }
            return true;
        });
    } catch (const json::exception &e) {
        throw DatabaseError(what + " is not valid JSON: " + e.what());
    }
}

std::string canonical_json(const std::string &json_text, const std::string &what) {
    return parse_db_json(json_text, what).dump();
}

std::string canonical_params(const std::string &json_text) {
    json j = parse_db_json(json_text.empty() ? "{}" : json_text, "params");
    if (!j.is_object()) {
        throw DatabaseError("params must be a JSON object of name: value, got " + j.dump());
    }
    json out = json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
        const json &v = it.value();
        if (v.is_string()) {
            out[it.key()] = v.get<std::string>();
        } else if (v.is_number() || v.is_boolean()) {
            out[it.key()] = v.dump();
        } else {
            throw DatabaseError("param '" + it.key() + "' must be a string, number or boolean, got " + v.dump());
        }
    }
    return out.dump();
}

std::string params_to_json(const std::map<std::string, std::string> &params) {
    json out = json::object();
    for (const auto &[k, v] : params) {
        out[k] = v;
    }
    return out.dump();
}

std::string params_to_text(const std::string &params_json) {
    json j = json::parse(params_json);
    std::string out;
    for (auto it = j.begin(); it != j.end(); ++it) {
        out += (out.empty() ? "" : ",") + it.key() + "=" + it.value().get<std::string>();
    }
    return out;
}

std::string now_utc() {
    auto now = std::chrono::system_clock::now();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

std::string new_uid() {
    // A fresh random_device read per uid (getrandom): no generator state that a
    // fork()ed worker could share with its siblings.
    std::random_device rd;
    char buf[33];
    snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
    return buf;
}

} // namespace tessel::db
