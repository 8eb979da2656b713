// libFuzzer harness: ArchSpec JSON (npu_target/arch/ArchSpec.cpp): the parser
// and the validator. A spec either validates or is rejected with a UserError;
// one that validates prints as canonical JSON that validates again, with the
// same hash.
#include "fuzz/FuzzCheck.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace tessel;
    ArchSpec a;
    try {
        a = parse_arch(fuzz::as_text(data, size), "fuzz.json");
    } catch (const UserError &e) {
        fuzz::rejected("fuzz_arch", e);
        return 0;
    }
    const std::string canonical = a.to_json(2);
    try {
        const ArchSpec again = parse_arch(canonical, "canonical.json");
        if (again.hash() != a.hash()) {
            fuzz::invariant_failed("fuzz_arch", "canonical JSON parses to another spec:\n" + canonical);
        }
    } catch (const UserError &e) {
        fuzz::invariant_failed("fuzz_arch", std::string("canonical JSON is rejected: ") + e.what() + "\n" + canonical);
    }
    return 0;
}
