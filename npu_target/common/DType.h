#ifndef TESSEL_NPU_TARGET_COMMON_DTYPE_H
#define TESSEL_NPU_TARGET_COMMON_DTYPE_H

// Element types of the NPU, shared by the ISA, the simulator, the compiler and
// the host tools. Halide-free and Qt-free.

#include <cstdint>
#include <optional>
#include <string>

namespace tessel {

enum class DType : uint8_t { Int8, UInt8, Int16, Int32, FP16, BF16, FP32 };

constexpr int kNumDTypes = 7;

/** Size of one element in bytes. */
int dtype_bytes(DType t);
/** Canonical lower-case name: int8 uint8 int16 int32 fp16 bf16 fp32. */
const char *dtype_name(DType t);
/** Parses a canonical name (also accepts float16/float32/bfloat16 and Halide's
 * spellings). Returns nullopt for anything else. */
std::optional<DType> parse_dtype(const std::string &s);
bool dtype_is_float(DType t);
bool dtype_is_signed(DType t);

/** IEEE binary16 <-> binary32, round to nearest even, with inf/NaN/subnormals. */
uint16_t fp32_to_fp16(float f);
float fp16_to_fp32(uint16_t h);
/** bfloat16 <-> binary32, round to nearest even; NaN stays NaN. */
uint16_t fp32_to_bf16(float f);
float bf16_to_fp32(uint16_t h);

/** Reads element `i` of a raw buffer of type t as a double (exact for every type). */
double load_as_double(const void *base, DType t, int64_t i);
/** Writes v to element `i`, converting with round-to-nearest-even for floats and
 * saturation for integers. */
void store_from_double(void *base, DType t, int64_t i, double v);

} // namespace tessel

#endif
