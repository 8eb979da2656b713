#include "npu_target/common/InputFile.h"

#include "npu_target/common/Error.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>
#include <unistd.h>

namespace tessel {

using json = nlohmann::json;

namespace {

// Nesting depth and number range, checked on the text before nlohmann builds a
// value: the parser itself is iterative, but every later walk over the value
// (dump() in a message, operator==) recurses, and a value too deep to print
// would crash the message that reports it.
void check_json_text(const std::string &text, const std::string &origin, const JsonLimits &lim) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > lim.max_depth) {
                auto lc = text_line_column(text, i);
                user_error(origin, ":", lc.first, ":", lc.second, ": arrays and objects nested deeper than ",
                           lim.max_depth, " levels (no Tessel file nests more than a few)");
            }
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = i;
            while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '-' ||
                                       text[j] == '+' || text[j] == '.' || text[j] == 'e' || text[j] == 'E')) {
                j++;
            }
            std::string tok = text.substr(i, std::min<size_t>(j - i, 400));
            double d = std::strtod(tok.c_str(), nullptr);
            if (std::isinf(d)) {
                auto lc = text_line_column(text, i);
                user_error(origin, ":", lc.first, ":", lc.second, ": number '", tok.substr(0, 40),
                           "' is out of range (a JSON number must fit a 64-bit float, |x| < 1.8e308)");
            }
            i = j - 1;
        }
    }
}

void excerpt(const json &v, std::string &out, size_t max_chars, int depth) {
    if (out.size() > max_chars) {
        return;
    }
    if (v.is_array() || v.is_object()) {
        bool obj = v.is_object();
        out += obj ? '{' : '[';
        if (depth >= 2 && !v.empty()) {
            out += "...";
        } else {
            size_t n = 0;
            for (auto it = v.begin(); it != v.end() && out.size() <= max_chars; ++it, ++n) {
                out += n ? "," : "";
                if (obj) {
                    out += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace) + ":";
                }
                excerpt(*it, out, max_chars, depth + 1);
            }
        }
        out += obj ? '}' : ']';
        return;
    }
    out += v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string reason(int err) { return std::strerror(err); }

} // namespace

std::pair<size_t, size_t> text_line_column(const std::string &text, size_t pos) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos && i < text.size(); i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return {line, col};
}

std::vector<uint8_t> read_input_bytes(const std::string &path, const std::string &what, uint64_t max_bytes) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        user_error("cannot read ", what, " '", path, "': it is a directory");
    }
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) {
        user_error("cannot read ", what, " '", path, "': ", reason(errno));
    }
    std::vector<uint8_t> bytes;
    uint8_t buf[1 << 16];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        if (bytes.size() + n > max_bytes) {
            std::fclose(f);
            user_error("cannot read ", what, " '", path, "': larger than ", max_bytes >> 20, " MiB, the limit for ",
                       what, "s");
        }
        bytes.insert(bytes.end(), buf, buf + n);
    }
    bool failed = std::ferror(f);
    int err = errno;
    std::fclose(f);
    if (failed) {
        user_error("cannot read ", what, " '", path, "': ", reason(err));
    }
    return bytes;
}

std::string read_input_file(const std::string &path, const std::string &what, uint64_t max_bytes) {
    std::vector<uint8_t> b = read_input_bytes(path, what, max_bytes);
    return std::string(b.begin(), b.end());
}

json parse_json_input(const std::string &text, const std::string &origin, const JsonLimits &limits) {
    if (text.size() > limits.max_bytes) {
        user_error(origin, ": larger than ", limits.max_bytes >> 20, " MiB, the limit for a JSON input");
    }
    check_json_text(text, origin, limits);
    try {
        return json::parse(text);
    } catch (const json::parse_error &e) {
        auto lc = text_line_column(text, e.byte == 0 ? 0 : e.byte - 1);
        // nlohmann's message is "[json.exception.parse_error.101] parse error at line 1, column 5: <what>".
        std::string msg = e.what();
        size_t col = msg.find("column ");
        size_t colon = col == std::string::npos ? std::string::npos : msg.find(": ", col);
        if (colon != std::string::npos) {
            msg = msg.substr(colon + 2);
        }
        user_error(origin, ":", lc.first, ":", lc.second, ": malformed JSON: ", msg);
    } catch (const json::exception &e) {
        user_error(origin, ": malformed JSON: ", e.what());
    }
}

std::string json_excerpt(const json &v, size_t max_chars) {
    std::string out;
    excerpt(v, out, max_chars, 0);
    if (out.size() > max_chars) {
        out = out.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
    }
    return out;
}

void write_output_file(const std::string &path, const std::string &data, const std::string &what) {
    namespace fs = std::filesystem;
    fs::path p(path);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
        user_error("cannot write ", what, " '", path, "': it is a directory");
    }
    fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec)) {
        user_error("cannot write ", what, " '", path, "': '", dir.string(), "' is not a directory");
    }
    // Special files (/dev/null, /dev/full, a pipe) are written in place; a regular
    // file is replaced atomically so a failure leaves the old one intact.
    bool special = fs::exists(p, ec) && !fs::is_regular_file(p, ec);
    std::string tmp = special ? path : path + ".tmp" + std::to_string(::getpid());
    std::FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f) {
        user_error("cannot write ", what, " '", path, "': ", reason(errno));
    }
    size_t n = data.empty() ? 0 : std::fwrite(data.data(), 1, data.size(), f);
    int err = n == data.size() ? 0 : errno;
    if (std::fflush(f) != 0 && !err) {
        err = errno;
    }
    if (std::fclose(f) != 0 && !err) {
        err = errno;
    }
    if (err) {
        if (!special) {
            std::remove(tmp.c_str());
        }
        user_error("cannot write ", what, " '", path, "': ", reason(err));
    }
    if (!special) {
        fs::rename(tmp, p, ec);
        if (ec) {
            std::remove(tmp.c_str());
            user_error("cannot write ", what, " '", path, "': ", ec.message());
        }
    }
}

void check_stdout(const std::string &what) {
    std::cout.flush();
    if (!std::cout) {
        user_error("cannot write ", what, " to standard output: ", reason(errno ? errno : EIO));
    }
}

} // namespace tessel
