#ifndef TESSEL_NPU_TARGET_COMMON_ERROR_H
#define TESSEL_NPU_TARGET_COMMON_ERROR_H

// Tessel's two kinds of failure, as in Halide: a UserError is the user's input
// being wrong (a schedule, a file, a parameter) and carries a message that names
// what and where; an InternalError is a Tessel bug.

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessel {

class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string &msg) : std::runtime_error(msg) {}
};

class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string &msg) : std::logic_error("internal error: " + msg) {}
};

namespace detail {
inline void append(std::ostringstream &) {}
template <typename T, typename... Rest>
void append(std::ostringstream &os, const T &v, const Rest &...rest) {
    os << v;
    append(os, rest...);
}
} // namespace detail

/** Throws a UserError whose message is the concatenation of the arguments. */
template <typename... Args>
[[noreturn]] void user_error(const Args &...args) {
    std::ostringstream os;
    detail::append(os, args...);
    throw UserError(os.str());
}

template <typename... Args>
[[noreturn]] void internal_error(const Args &...args) {
    std::ostringstream os;
    detail::append(os, args...);
    throw InternalError(os.str());
}

#define TESSEL_INTERNAL_ASSERT(cond, ...)                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::tessel::internal_error(__FILE__, ":", __LINE__, ": ", #cond, " ", ##__VA_ARGS__);   \
    } while (0)

} // namespace tessel

#endif
