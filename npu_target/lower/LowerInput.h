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

/** A buffer's placement and lifetime, in program order (statement counter of
 * the allocation's scope), as the buffer-lifetime view draws it. */
struct BufferLifetime {
    std::string name;
    std::string level;
    int64_t offset = 0;
    int64_t bytes = 0; // one copy
    int buffers = 1;
    int64_t first = 0, last = 0;
    std::string directive;
    bool overflow = false; // it does not fit in its level (the compile fails; the view draws it in red)
};

/** The tiling as the tiling view draws it: every on-chip buffer (a staged tile,
 * an accumulator, a scratch) with its shape (the per-iteration footprint Halide
 * computed), its level and the loops around it. */
struct TiledBuffer {
    std::string name;                  // Halide name of the allocation
    std::string source;                // what it holds: the staged input/Func, or the buffer itself
    std::string level;
    std::vector<int64_t> extents;      // per dimension, innermost first
    int64_t bytes = 0;                 // one copy
    int buffers = 1;
    std::string directive;
    std::vector<std::pair<std::string, int64_t>> loops; // enclosing loops (outermost first): name, trip count (-1: not constant)
    // Where the box sits, for the tiling view: `origin` is the kernel argument
    // it holds a box of (a staged input, through every staging level, or the
    // output an accumulator is written back to; "" = not known: no DMA with an
    // affine offset reaches it). Per dimension d of that argument (innermost
    // first), the box's first element for given values of the enclosing loop
    // variables is origin_base[d] + sum over l of origin_coeffs[d][l] * loops[l]'s value.
    std::string origin;
    std::vector<int64_t> origin_base;
    std::vector<std::vector<int64_t>> origin_coeffs; // [dimension][loop]
};

struct TilingPlan {
    std::vector<TiledBuffer> buffers;
};

/** The plan as text (`tessel compile --emit tiling`, the golden test): per
 * buffer its shape, level, copies and directive, the loops around it and, when
 * known, where its box sits in the argument it holds ("A[io*16, ko*16]"). */
std::string tiling_text(const TilingPlan &p);

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
