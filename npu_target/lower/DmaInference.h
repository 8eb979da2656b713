#ifndef TESSEL_NPU_TARGET_LOWER_DMAINFERENCE_H
#define TESSEL_NPU_TARGET_LOWER_DMAINFERENCE_H

// Recognises a staging copy in Halide's lowered IR: a loop nest (constant
// extents, possibly vectorised) whose only statement stores into one buffer a
// plain load from another, both indexed affinely in the loop variables. That
// is exactly what a DMA descriptor does, so the codegen replaces the nest by
// one DMA: the loops become descriptor dimensions (innermost first, merged
// when contiguous on both sides) and the start indices become the base
// addresses, evaluated at run time from the enclosing loops.

#include "Halide.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel {

struct CopyDim {
    int64_t count = 1;
    int64_t dst_stride = 0; // in elements
    int64_t src_stride = 0;
};

struct CopyPattern {
    std::string dst, src;              // buffer names
    Halide::Type type;                 // element type (both sides)
    std::vector<CopyDim> dims;         // innermost first, merged
    Halide::Expr dst_base, src_base;   // element index of the first element (enclosing loops free)
    std::string why_not;               // when no pattern: the reason (for diagnostics)
};

/** Returns the copy when `body` (the body of a producer) is one; otherwise
 * nullopt with no side effects. `reason` receives why it is not a copy. */
std::optional<CopyPattern> match_copy(const Halide::Internal::Stmt &body, std::string *reason);

} // namespace tessel

#endif
