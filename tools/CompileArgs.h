#ifndef TESSEL_TOOLS_COMPILEARGS_H
#define TESSEL_TOOLS_COMPILEARGS_H

// Shared by `tessel compile` and `tessel run` (defined in cmd_compile.cpp).

#include "dsl/Compile.h"

#include <string>
#include <vector>

namespace tessel::cli {

/** A CompileRequest from the command-line options; throws UserError for a bad
 * -p value or an unreadable / malformed schedule file. */
CompileRequest make_request(const std::string &generator, const std::string &params, const std::string &schedule,
                            const std::string &arch);
/** "tessel: error: ..." per diagnostic, on stderr. */
void print_diagnostics(const std::vector<Diagnostic> &diags);

} // namespace tessel::cli

#endif
