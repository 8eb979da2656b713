#ifndef TESSEL_EXPORT_CODEGEN_H
#define TESSEL_EXPORT_CODEGEN_H

// The C++ source and the C header of an exported library: each kernel's NPU
// program embedded as bytes with a launcher through tessel_runtime.h, and the
// declarations of the NPU and host entry points with their documentation.
// Halide-free.

#include "dsl/GeneratorInfo.h"
#include "npu_target/isa/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::exporter {

/** Bumped whenever the generated functions change signature or meaning. */
constexpr int kAbiVersion = 1;

struct ExportedKernel {
    std::string name;
    std::string generator;
    ParamMap params;                 // resolved
    std::string arch;                // a preset name, or the canonical JSON of an arch file (never its path:
                                     // the library must not depend on where the build machine kept it)
    std::string arch_name, arch_hash;
    std::string schedule_source;     // "default", "best (database FILE, result #N)" or the file path
    std::string schedule_hash;
    std::string schedule_json;       // canonical
    std::vector<isa::ArgDesc> args;  // NPU argument order: inputs, then outputs
    std::vector<uint8_t> binary;     // isa::write_program
    uint64_t seed = 0;               // verification inputs
    int64_t cycles = 0;              // simulated cycles of the verification run
    std::string comparison;          // tessel::run's comparison text
};

std::string generate_source(const std::string &library, const std::vector<ExportedKernel> &kernels);
/** `host_target`: the Halide target the NAME_cpu functions were compiled for. */
std::string generate_header(const std::string &library, const std::string &host_target,
                            const std::vector<ExportedKernel> &kernels);

/** "int8 [64 x 32]" (shape innermost first, as Halide's dimensions). */
std::string describe_arg(const isa::ArgDesc &a);

} // namespace tessel::exporter

#endif
