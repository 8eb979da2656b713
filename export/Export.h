#ifndef TESSEL_EXPORT_EXPORT_H
#define TESSEL_EXPORT_EXPORT_H

// `tessel export`: a manifest of kernels -> DIR/libNAME.a + DIR/NAME.h +
// DIR/manifest.json (docs/export.md). Each kernel is compiled for the NPU,
// verified on the simulator against Halide's CPU result, embedded with a
// launcher, and compiled for the host CPU by Halide ahead of time.

#include "export/CodeGen.h"
#include "export/Manifest.h"

#include <functional>
#include <string>
#include <vector>

namespace tessel::exporter {

struct ExportOptions {
    std::string manifest;     // path of the manifest
    std::string out_dir;
    std::string library;      // overrides the manifest's "library"; one of them is required
    std::string db;           // database for "best" ("" = ScheduleStore::default_path())
    uint64_t seed = 1;        // verification inputs
    std::string host_target;  // Halide target of the NAME_cpu code ("" = this machine's features)
    std::string cxx;          // C++ compiler ("" = $CXX, else the one Tessel was built with)
    std::string ar;           // archiver ("" = $AR, else the one Tessel was built with)
    std::vector<std::string> include_dirs; // extra -I for the generated source
    std::function<void(const std::string &)> log; // progress lines (may be empty)
};

struct ExportResult {
    std::string library;
    std::string host_target;    // the Halide target NAME_cpu was compiled for
    std::string static_library; // DIR/libNAME.a
    std::string header;         // DIR/NAME.h
    std::string manifest;       // DIR/manifest.json
    std::vector<ExportedKernel> kernels;
};

/** Exports the manifest's kernels. Any failure is a UserError; one about a
 * kernel starts with "kernel 'NAME'". Nothing is left in DIR half-written:
 * the library, header and manifest are written only after every kernel passed. */
ExportResult export_library(const ExportOptions &opt);

} // namespace tessel::exporter

#endif
