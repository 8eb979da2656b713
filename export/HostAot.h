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
                        const std::string &fn_name, const std::string &object_path);

/** Halide's runtime for the host target, as one object file. */
void compile_host_runtime(const std::string &object_path);

/** The host target used for both (host_target() without JIT), as text. */
std::string host_target_text();

} // namespace tessel::exporter

#endif
