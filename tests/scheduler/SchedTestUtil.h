#ifndef TESSEL_TESTS_SCHEDULER_SCHEDTESTUTIL_H
#define TESSEL_TESTS_SCHEDULER_SCHEDTESTUTIL_H

#include "scheduler/SearchSpace.h"

#include <cstdlib>
#include <string>

namespace tessel::test {

inline std::string source_dir() {
    const char *d = std::getenv("TESSEL_SOURCE_DIR");
    return d ? d : ".";
}

inline sched::SearchSpace space_for(const std::string &generator, const ParamMap &params, const std::string &arch) {
    return sched::SearchSpace(sched::make_problem(generator, params, load_arch(arch)));
}

} // namespace tessel::test

#endif
