#ifndef TESSEL_NPU_TARGET_COMMON_TENSOR_H
#define TESSEL_NPU_TARGET_COMMON_TENSOR_H

// A dense host tensor as plain data: the currency between the CPU reference,
// the simulator, the runtime and the tools. Dimension 0 is the innermost
// (fastest-varying) one, as in Halide.

#include "npu_target/common/DType.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tessel {

struct Tensor {
    std::string name;
    DType dtype = DType::FP32;
    std::vector<int64_t> shape; // extent per dimension, innermost first
    std::vector<uint8_t> data;  // dense, row-major with dim 0 fastest

    Tensor() = default;
    Tensor(std::string n, DType t, std::vector<int64_t> s);

    int64_t elements() const;
    int64_t bytes() const { return static_cast<int64_t>(data.size()); }
    double get(int64_t i) const { return load_as_double(data.data(), dtype, i); }
    void set(int64_t i, double v) { store_from_double(data.data(), dtype, i, v); }
    /** Describes the tensor as "A: fp16[64x32]" (outermost extent first). */
    std::string describe() const;
};

/** Fills with uniform random values suited to the type: integers over their
 * whole range (int32 over +-2^20 so that products stay exact), floats in [-1, 1). */
void fill_random(Tensor &t, std::mt19937_64 &rng);
/** Fills every byte with 0xA5 so that elements a kernel forgot to write stand out. */
void poison(Tensor &t);

/** Result of comparing two tensors of equal shape. */
struct Comparison {
    bool equal_shape = false;
    int64_t mismatches = 0;      // elements beyond the tolerance
    double max_abs_error = 0;    // over all elements
    int64_t first_mismatch = -1; // flat index, -1 if none
    std::string message;         // human-readable summary
};
/** Compares `got` with `want`: exact for integers; for floats an element
 * passes when |got - want| <= atol + rtol * |want|. */
Comparison compare(const Tensor &got, const Tensor &want, double atol = 0, double rtol = 0);

} // namespace tessel

#endif
