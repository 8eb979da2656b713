#ifndef TESSEL_NPU_TARGET_LOWER_FIXQUANT_H
#define TESSEL_NPU_TARGET_LOWER_FIXQUANT_H

// tensorize(func, unit=fix): a requantising epilogue of a matrix accumulator as
// FIXPARAM + a `quant` DMA on the FIX engine (FixQuant.cpp, docs/backend.md).

#include "npu_target/ir/NpuIR.h"

namespace tessel {

/** The parts of a requantising epilogue  sat_T(((acc + bias) * scale + 2^(s-1)) >> s)  (relu:
 * max(acc + bias, 0)) as Halide's simplifier leaves it; acc and bias are the two int32 loads
 * of the sum (which is the accumulator is the caller's to decide). */
struct RequantPattern {
    const Halide::Internal::Load *acc = nullptr, *bias = nullptr, *scale = nullptr;
    int shift = 0;
    bool relu = false;
    Halide::Type out;
};
bool match_requant(const Halide::Expr &value, RequantPattern &r);

/** `body` with the epilogue `req.func` mapped onto the FIX engine; a user error naming
 * req.directive_id when it does not match or the machine cannot run it. */
Halide::Internal::Stmt tensorize_fix(nir::NpuModule &m, const TensorizeRequest &req, const Halide::Internal::Stmt &body);

} // namespace tessel

#endif
