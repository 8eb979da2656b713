#ifndef TESSEL_TESTS_BACKEND_HAZARDMESSAGE_H
#define TESSEL_TESTS_BACKEND_HAZARDMESSAGE_H

// check_hazards on a module, its failure as text ("" when it passes): for the
// tests that remove or move a sync operation and expect the check to name it.

#include "npu_target/common/Error.h"
#include "npu_target/passes/CheckHazards.h"

#include <string>

namespace tessel::test {

inline std::string hazard_message(const nir::NpuModule &m) {
    try {
        check_hazards(m);
    } catch (const tessel::InternalError &e) {
        return e.what();
    }
    return "";
}

} // namespace tessel::test

#endif
