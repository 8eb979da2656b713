// libFuzzer harness: schedule JSON (dsl/ScheduleSpec.cpp, Halide-free).
// A schedule either parses or is rejected with a UserError; one that parses
// prints as canonical JSON that parses back to the same schedule.
#include "dsl/ScheduleSpec.h"
#include "fuzz/FuzzCheck.h"
#include "npu_target/common/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace tessel;
    ScheduleSpec s;
    try {
        s = parse_schedule(fuzz::as_text(data, size), "fuzz.json");
    } catch (const UserError &e) {
        fuzz::rejected("fuzz_schedule", e);
        return 0;
    }
    const std::string canonical = schedule_to_json(s);
    (void)schedule_to_cpp(s);
    try {
        if (parse_schedule(canonical, "canonical.json") != s) {
            fuzz::invariant_failed("fuzz_schedule", "canonical JSON parses to another schedule:\n" + canonical);
        }
    } catch (const UserError &e) {
        fuzz::invariant_failed("fuzz_schedule", std::string("canonical JSON is rejected: ") + e.what() + "\n" + canonical);
    }
    return 0;
}
