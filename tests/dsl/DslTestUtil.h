#ifndef TESSEL_TESTS_DSL_DSLTESTUTIL_H
#define TESSEL_TESTS_DSL_DSLTESTUTIL_H

// Helpers shared by the dsl and backend tests (Halide-free).

#include "dsl/Compile.h"
#include "npu_target/common/Error.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace tessel::test {

/** The message of the UserError `f` throws, or "(no error)". */
inline std::string user_error_text(const std::function<void()> &f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}

/** A path inside the source tree (TESSEL_SOURCE_DIR is set by tessel_add_test). */
inline std::string source_path(const std::string &rel) {
    const char *root = std::getenv("TESSEL_SOURCE_DIR");
    return std::string(root ? root : ".") + "/" + rel;
}

/** The first Error diagnostic of a compile, or "(no error)". */
inline std::string first_error(const CompileResult &r) {
    for (const auto &d : r.diagnostics) {
        if (d.severity == Diagnostic::Error) {
            return d.message;
        }
    }
    return "(no error)";
}

inline std::string read_text(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

} // namespace tessel::test

#endif
