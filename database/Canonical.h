#ifndef TESSEL_DATABASE_CANONICAL_H
#define TESSEL_DATABASE_CANONICAL_H

// Canonical forms the database stores and hashes: JSON with sorted keys and no
// whitespace, problem parameters as a JSON object of strings.

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <string>

namespace tessel::db {

/** FNV-1a 64 of `text` as 16 lower-case hex digits (the hash ArchSpec::hash()
 * and schedule_hash() use, so hashes agree across Tessel). */
std::string fnv1a64_hex(const std::string &text);

/** JSON text from outside (an import file, a stored row) parsed with its nesting
 * bounded (64 levels: every later walk over the value recurses); throws
 * DatabaseError naming `what` when it is not JSON or nests deeper. */
nlohmann::json parse_db_json(const std::string &json_text, const std::string &what);

/** `json_text` parsed and printed compactly with sorted keys; throws
 * DatabaseError naming `what` when it is not JSON. */
std::string canonical_json(const std::string &json_text, const std::string &what);

/** Problem parameters as canonical JSON: an object whose values are all strings
 * (numbers and booleans are converted, so {"M":256} equals {"M":"256"}). */
std::string canonical_params(const std::string &json_text);
std::string params_to_json(const std::map<std::string, std::string> &params);
/** "K=256,M=128" for display. */
std::string params_to_text(const std::string &params_json);

/** The current time as ISO 8601 UTC with milliseconds: 2024-05-01T12:00:00.123Z. */
std::string now_utc();
/** 32 random hex digits: the identity of a result across databases. */
std::string new_uid();

} // namespace tessel::db

#endif
