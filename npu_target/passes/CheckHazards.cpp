#include "npu_target/passes/CheckHazards.h"

#include "npu_target/common/Error.h"
#include "npu_target/passes/CreditCheck.h"
#include "npu_target/passes/RingCheck.h"
#include "npu_target/passes/SyncAnalysis.h"

namespace tessel {

nir::NpuModule check_hazards(const nir::NpuModule &m) {
    detail::SyncAnalysis s(m);
    s.check = true;
    s.mutate(m.body);
    // The analysis takes the credit-ordered reads of multi-buffered copies as
    // ordered; the credit protocol they rest on is checked here.
    for (auto &v : detail::credit_protocol_violations(m)) {
        s.violations.push_back(std::move(v));
    }
    // Likewise the ring panels' reads and loads inside their reload loops (ring_panels).
    for (auto &v : detail::ring_protocol_violations(m)) {
        s.violations.push_back(std::move(v));
    }
    if (!s.violations.empty()) {
        std::string all;
        for (size_t i = 0; i < s.violations.size() && i < 5; i++) {
            all += "\n  " + s.violations[i];
        }
        internal_error("hazard check of kernel ", m.kernel_name, ": ", s.violations.size(),
                       " cross-pipe access(es) are not ordered:", all);
    }
    return m;
}

} // namespace tessel
