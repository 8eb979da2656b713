#ifndef TESSEL_FUZZ_FUZZCHECK_H
#define TESSEL_FUZZ_FUZZCHECK_H

// What every harness shares: the input as text, and the one way a harness
// reports a broken invariant (a message, then abort, which libFuzzer records as
// a crash with the input saved).
//
// The contract the harnesses check is the CLI's: a bad input is a
// tessel::UserError (exit 1 with a message). Any other exception escapes the
// harness and is a finding, as are signals, sanitizer reports, timeouts and
// out-of-memory.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace tessel::fuzz {

inline std::string as_text(const uint8_t *data, size_t size) {
    return std::string(reinterpret_cast<const char *>(data), size);
}

/** Called with each UserError a harness expects. With TESSEL_FUZZ_VERBOSE=1 in
 * the environment it prints the message: to see why a seed stops early. */
inline void rejected(const char *harness, const std::exception &e) {
    static const bool verbose = std::getenv("TESSEL_FUZZ_VERBOSE") != nullptr;
    if (verbose) {
        std::fprintf(stderr, "%s: rejected: %s\n", harness, e.what());
    }
}

[[noreturn]] inline void invariant_failed(const char *harness, const std::string &what) {
    std::fprintf(stderr, "%s: invariant broken: %s\n", harness, what.c_str());
    std::abort();
}

} // namespace tessel::fuzz

#endif
