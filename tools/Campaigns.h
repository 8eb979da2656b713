#ifndef TESSEL_TOOLS_CAMPAIGNS_H
#define TESSEL_TOOLS_CAMPAIGNS_H

// `tessel tune` as a campaign's coordinator (cmd_campaign.cpp): what
// cmd_tune.cpp hands over when the database is a PostgreSQL URL or a
// --campaign file is given.

#include "scheduler/Tuner.h"
#include "tools/Commands.h"

#include <string>
#include <vector>

namespace tessel::cli {

struct CoordinatorCli {
    std::string campaign_file; // --campaign FILE ("" = the one problem of `base`)
    std::string name;          // --campaign-name ("" = the file's name, or one made from the problem)
    std::string out;           // --out (one problem only)
    int jobs = 1;              // local tune-worker processes (0 = coordinate only)
    double lease_s = 30;
    int in_flight = 0;         // --in-flight (0 = automatic)
    bool quiet = false;
    std::vector<std::string> generator_libs; // passed on to the local workers
};

/** Runs the coordinator of `base`'s problem or of the campaign file; the exit code. */
int run_coordinator(const sched::TuneOptions &base, const CoordinatorCli &c);

} // namespace tessel::cli

#endif
