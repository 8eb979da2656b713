#ifndef TESSEL_EXPORT_MANIFEST_H
#define TESSEL_EXPORT_MANIFEST_H

// The input of `tessel export`: a JSON manifest listing the kernels of one
// library (docs/export.md). Halide-free.
//
//   {"library": "mykernels",
//    "kernels": [{"name": "gemm64", "generator": "gemm",
//                 "params": {"M": 64, "N": 64, "K": 64, "dtype": "int8"},
//                 "arch": "ascend-like",
//                 "schedule": "schedules/gemm64.json"}]}   // or "best", or absent
//
// A schedule path is relative to the manifest's folder; "best" is the fastest
// verified schedule in the database for (generator, params, arch hash); no
// schedule is Halide's default one (scalar code on the NPU).

#include "dsl/GeneratorInfo.h"

#include <string>
#include <vector>

namespace tessel::exporter {

struct KernelEntry {
    std::string name;      // C identifier: the NPU entry point; NAME_cpu is the host one
    std::string generator;
    ParamMap params;       // as given (the generator's defaults fill the rest)
    std::string arch = "ascend-like"; // preset name or arch JSON file (made absolute)
    std::string schedule;  // "" (Halide's default), "best", or an absolute file path
};

struct Manifest {
    std::string path;      // the file it was read from
    std::string library;   // "" when the manifest does not name it
    std::vector<KernelEntry> kernels;
};

/** Reads and checks a manifest; a malformed one is a UserError naming the
 * file and, when it is about one kernel, the kernel. */
Manifest read_manifest(const std::string &path);
/** Parses manifest text; `path` is used for messages and relative paths. */
Manifest parse_manifest(const std::string &text, const std::string &path);

/** True for [A-Za-z_][A-Za-z0-9_]*. */
bool is_c_identifier(const std::string &s);

} // namespace tessel::exporter

#endif
