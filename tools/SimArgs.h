#ifndef TESSEL_TOOLS_SIMARGS_H
#define TESSEL_TOOLS_SIMARGS_H

// The simulator's budget options shared by `tessel run`, `tessel sim` and `tessel
// tune` (each measurement's budget), and the
// check that what was printed reached stdout (a full disk is an error, exit 1).

#include "npu_target/common/Error.h"
#include "npu_target/sim/Simulator.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

namespace tessel::cli {

/** --max-instructions and --max-cycles: a simulation's run budget. */
inline void add_run_budget_options(CLI::App *app, uint64_t &max_instructions, uint64_t &max_cycles) {
    app->add_option("--max-instructions", max_instructions,
                    "stop the simulation with an error after this many instructions (0 = no limit; default " +
                        std::to_string(sim::kDefaultMaxInstructions) +
                        ", about 4-12 s of scalar code on a 2-core machine)");
    app->add_option("--max-cycles", max_cycles,
                    "stop the simulation with an error past this cycle (0 = no limit; default " +
                        std::to_string(sim::kDefaultMaxCycles) + ")");
}

/** The run budget and --max-trace-events, for `tessel run` and `tessel sim`. */
inline void add_budget_options(CLI::App *app, uint64_t &max_instructions, uint64_t &max_cycles,
                               uint64_t &max_trace_events) {
    add_run_budget_options(app, max_instructions, max_cycles);
    app->add_option("--max-trace-events", max_trace_events,
                    "record at most this many trace events; the summary stays exact (0 = no limit; default " +
                        std::to_string(sim::kDefaultMaxTraceEvents) + ")");
}

/** Flushes stdout; a failed write (e.g. `> /dev/full`) is a UserError. */
inline void check_stdout(const char *who) {
    std::cout.flush();
    if (!std::cout) {
        user_error(who, ": cannot write to standard output (disk full or a closed pipe?)");
    }
}

} // namespace tessel::cli

#endif
