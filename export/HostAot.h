#ifndef TESSEL_EXPORT_HOSTAOT_H
#define TESSEL_EXPORT_HOSTAOT_H

// The host CPU entry points of an exported library: the generator's Halide
// pipeline compiled ahead of time (Halide's default schedule, the host target
// without JIT and without the runtime; the runtime is compiled once per
// library). Halide.h stays inside HostAot.cpp.

#include "dsl/GeneratorInfo.h"

#include <string>
#include <vector>

namespace tessel::exporter {

/** Compiles `generator` with resolved `params` into an object file defining
 * `int fn_name(halide_buffer_t *...)` with the buffers in `arg_order` (input
 * names, then output names, as the NPU program orders them). Throws UserError. */
void compile_host_entry(const std::string &generator, const ParamMap &params, const std::vector<std::string> &arg_order,
                        const std::string &fn_name, const std::string &object_path, const std::string &target);

/** Halide's runtime for `target`, as one object file. */
void compile_host_runtime(const std::string &object_path, const std::string &target);

/** The host target both use: `requested` (a Halide target string such as
 * x86-64-linux-avx2) checked, else host_target() (this machine's features);
 * without JIT. Throws UserError for a target Halide does not know. */
std::string resolve_host_target(const std::string &requested);

} // namespace tessel::exporter

#endif
