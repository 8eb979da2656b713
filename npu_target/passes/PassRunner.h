#ifndef TESSEL_NPU_TARGET_PASSES_PASSRUNNER_H
#define TESSEL_NPU_TARGET_PASSES_PASSRUNNER_H

// The backend pipeline: Halide's lowered Stmt -> NPU program, as one list of
// passes (each in its own file) run by one runner that can dump the NPU IR
// after a pass (only when it changed), time every pass and stop after one.
// The CLI (--dump-after, --time-passes) and the IDE use this runner.

#include "npu_target/common/Error.h"
#include "npu_target/ir/NpuIR.h"

#include <string>
#include <vector>

namespace tessel {

struct PassInfo {
    std::string name;
    std::string summary;
    bool optional = false; // an optimisation the program is correct without: PassOptions::skip may leave it out
};

/** The passes in the order they run. */
const std::vector<PassInfo> &backend_passes();

struct PassOptions {
    std::string dump_after;  // a pass name, "all", or "" for none
    std::string stop_after;  // a pass name, or "" to run to the end
    bool time_passes = false;
    std::vector<std::string> skip; // optional passes not to run (to measure what one gains)
};

struct PassTiming {
    std::string pass;
    double ms = 0;
    bool changed = false;
};

struct BackendResult {
    isa::Program program;          // empty when stopped early
    nir::NpuModule module;         // the NPU IR after the last pass that ran
    // The NPU IR as the schedule lays it out: after multi_buffer, before the
    // passes that move work across iterations (ring_panels, defer_tail,
    // advance_head, ...). The tiling view reads it: tile t's boxes are where
    // the schedule puts them, not where a load of tile t + 1 was advanced to.
    // Undefined body when the backend stopped earlier.
    nir::NpuModule schedule_module;
    std::vector<BackendDiagnostic> diagnostics;
    std::vector<PassTiming> timings;
    std::vector<std::pair<std::string, std::string>> dumps; // (pass, IR text after it)
};

/** A buffer does not fit in its level: the message names the buffer, the level,
 * the bytes and the directive; the lifetimes show every buffer, the overflowing
 * ones marked, for the buffer-lifetime view. */
class OverflowError : public UserError {
public:
    OverflowError(const std::string &msg, std::vector<BufferLifetime> lifetimes)
        : UserError(msg), lifetimes(std::move(lifetimes)) {}
    std::vector<BufferLifetime> lifetimes;
};

/** Runs the backend. Throws UserError for schedules the machine cannot run
 * (a buffer that does not fit, a level the arch lacks, ...). */
BackendResult run_backend(const Halide::Internal::Stmt &lowered, const LowerInput &in, const PassOptions &opt = {});

} // namespace tessel

#endif
