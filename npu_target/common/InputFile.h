#ifndef TESSEL_NPU_TARGET_COMMON_INPUTFILE_H
#define TESSEL_NPU_TARGET_COMMON_INPUTFILE_H

// The one checked way in for files Tessel reads but did not write: schedules,
// arch descriptions, manifests, programs, tensor files. Everything here
// assumes the input is hostile: sizes are capped before anything is
// allocated, JSON nesting is bounded before the parser builds a value, a
// number that does not fit a double is an error with its position, and the
// excerpts of values shown in messages are bounded in length and in depth.
// Every failure is a UserError naming the file (and line:column where there
// is one).

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

struct JsonLimits {
    /** Deepest nesting of arrays and objects accepted. Schedules nest 3 levels,
     * arch files 4; 64 leaves room for any format of ours while keeping every
     * recursive walk over a value (printing, comparing) far from the stack's end. */
    int max_depth = 64;
    /** Largest text accepted, in bytes. */
    uint64_t max_bytes = 64ull << 20;
};

/** Largest input file read whole into memory unless a reader says otherwise. */
constexpr uint64_t kDefaultMaxInputBytes = 64ull << 20;

/** Reads the whole of `path` (a regular file, or a pipe) into memory. `what`
 * says what the file is ("schedule file", "arch file") for the messages.
 * Fails with a UserError when it cannot be opened, is a directory, or is
 * larger than `max_bytes` (the read stops there: /dev/zero cannot exhaust
 * memory). */
std::string read_input_file(const std::string &path, const std::string &what,
                            uint64_t max_bytes = kDefaultMaxInputBytes);
/** The same, as bytes. */
std::vector<uint8_t> read_input_bytes(const std::string &path, const std::string &what,
                                      uint64_t max_bytes = kDefaultMaxInputBytes);

/** Parses JSON text. Errors are UserErrors "origin:line:col: malformed JSON: ...",
 * "origin:line:col: arrays and objects nested deeper than 64 levels", or
 * "origin:line:col: number '1e400' is out of range (JSON numbers must fit a
 * 64-bit float)". */
nlohmann::json parse_json_input(const std::string &text, const std::string &origin, const JsonLimits &limits = {});

/** A short, one-line rendering of `v` for an error message: at most `max_chars`
 * characters ("..." marks a cut), containers shown two levels deep. Never
 * recurses further and never throws (invalid UTF-8 is replaced). */
std::string json_excerpt(const nlohmann::json &v, size_t max_chars = 60);

/** Line and column (1-based) of byte offset `pos` in `text`, as editors count them. */
std::pair<size_t, size_t> text_line_column(const std::string &text, size_t pos);

/** Writes `data` to `path` (replacing it through a temporary file in the same
 * folder, so a failed write never leaves a half-written file in its place).
 * Every failure (missing folder, permission, full disk) is a UserError naming
 * the path and the reason. */
void write_output_file(const std::string &path, const std::string &data, const std::string &what);

/** Flushes std::cout and fails with a UserError if anything written to it was
 * lost (a closed pipe, a full disk: `tessel ... > /dev/full`). */
void check_stdout(const std::string &what);

} // namespace tessel

#endif
