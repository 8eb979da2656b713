#ifndef TESSEL_NPU_TARGET_LOWER_LOWERINPUT_H
#define TESSEL_NPU_TARGET_LOWER_LOWERINPUT_H

// What the backend needs besides Halide's lowered Stmt, as plain data.

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/isa/Program.h"
#include "npu_target/lower/NpuSchedule.h"

#include <string>
#include <vector>

namespace tessel {

/** A warning or note the backend reports (e.g. a Func that fell back to scalar code). */
struct BackendDiagnostic {
    enum class Severity { Warning, Note };
    Severity severity = Severity::Warning;
    std::string message;
    std::string directive_id;
    std::string func;
};

struct LowerInput {
    std::string kernel_name;
    const ArchSpec *arch = nullptr;
    NpuSchedule npu;
    /** Kernel arguments in launch order (inputs then outputs); names are the
     * Halide buffer names used by Loads and Stores in the Stmt. */
    std::vector<isa::ArgDesc> args;
};

} // namespace tessel

#endif
