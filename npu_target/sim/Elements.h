#ifndef TESSEL_NPU_TARGET_SIM_ELEMENTS_H
#define TESSEL_NPU_TARGET_SIM_ELEMENTS_H

// Element access for the simulator's functional units (internal): typed loads
// and stores of every DType with the numeric rules of docs/isa-semantics.md
// (integers wrap on store, fp16/bf16 round to nearest even), and the scalar
// helpers shared by the vector, matrix and scalar units.

#include "npu_target/common/DType.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace tessel::sim::detail {

constexpr bool fdt(DType t) { return t == DType::FP16 || t == DType::BF16 || t == DType::FP32; }

// ---- element access ----------------------------------------------------------

template <DType T> struct Elem;
template <> struct Elem<DType::Int8> { using S = int8_t; using C = int64_t; };
template <> struct Elem<DType::UInt8> { using S = uint8_t; using C = int64_t; };
template <> struct Elem<DType::Int16> { using S = int16_t; using C = int64_t; };
template <> struct Elem<DType::Int32> { using S = int32_t; using C = int64_t; };
template <> struct Elem<DType::FP16> { using S = uint16_t; using C = float; };
template <> struct Elem<DType::BF16> { using S = uint16_t; using C = float; };
template <> struct Elem<DType::FP32> { using S = float; using C = float; };

/** fp16 -> fp32 for every bit pattern (built from fp16_to_fp32 once). */
inline const float *fp16_table() {
    static const std::vector<float> t = [] {
        std::vector<float> v(65536);
        for (uint32_t h = 0; h < 65536; ++h) {
            v[h] = fp16_to_fp32(static_cast<uint16_t>(h));
        }
        return v;
    }();
    return t.data();
}

template <DType T>
inline typename Elem<T>::C load(const uint8_t *p) {
    typename Elem<T>::S s;
    std::memcpy(&s, p, sizeof s);
    if constexpr (T == DType::FP16) {
        static const float *const table = fp16_table();
        return table[s];
    } else if constexpr (T == DType::BF16) {
        return bf16_to_fp32(s);
    } else {
        return static_cast<typename Elem<T>::C>(s);
    }
}

/** fp32_to_fp16 with an inline path for results in fp16's normal range (the
 * same round-to-nearest-even arithmetic; everything else goes to DType.cpp). */
inline uint16_t to_fp16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t e = (x >> 23) & 0xffu;
    if (e - 113u < 29u) { // 2^-14 <= |f| < 2^15: normal in fp16, no overflow even after rounding up
        uint32_t h = ((x >> 16) & 0x8000u) | ((e - 112u) << 10) | ((x >> 13) & 0x3ffu);
        const uint32_t rem = x & 0x1fffu;
        h += (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ? 1u : 0u;
        return static_cast<uint16_t>(h);
    }
    return fp32_to_fp16(f);
}

template <DType T>
inline void store(uint8_t *p, typename Elem<T>::C v) {
    typename Elem<T>::S s;
    if constexpr (T == DType::FP16) {
        s = to_fp16(v);
    } else if constexpr (T == DType::BF16) {
        s = fp32_to_bf16(v);
    } else if constexpr (T == DType::FP32) {
        s = v;
    } else {
        s = static_cast<typename Elem<T>::S>(static_cast<uint64_t>(v)); // wraps
    }
    std::memcpy(p, &s, sizeof s);
}

inline float bits_to_float(int64_t r) {
    uint32_t b = static_cast<uint32_t>(r);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

inline int64_t float_to_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return static_cast<int64_t>(b);
}

inline int64_t trunc_to_int64(double v) {
    if (std::isnan(v)) {
        return 0;
    }
    if (v >= 9.2233720368547758e18) {
        return std::numeric_limits<int64_t>::max();
    }
    if (v <= -9.2233720368547758e18) {
        return std::numeric_limits<int64_t>::min();
    }
    return static_cast<int64_t>(v); // truncates toward zero
}

inline int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0) {
        return 0; // Halide: x / 0 == 0
    }
    if (b == -1) {
        return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
    }
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline int64_t floor_mod(int64_t a, int64_t b) {
    if (b == 0 || b == -1) {
        return 0; // Halide: x % 0 == 0
    }
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

template <typename F>
inline void dispatch_dtype(DType t, F f) {
    switch (t) {
    case DType::Int8: f(std::integral_constant<DType, DType::Int8>{}); return;
    case DType::UInt8: f(std::integral_constant<DType, DType::UInt8>{}); return;
    case DType::Int16: f(std::integral_constant<DType, DType::Int16>{}); return;
    case DType::Int32: f(std::integral_constant<DType, DType::Int32>{}); return;
    case DType::FP16: f(std::integral_constant<DType, DType::FP16>{}); return;
    case DType::BF16: f(std::integral_constant<DType, DType::BF16>{}); return;
    case DType::FP32: f(std::integral_constant<DType, DType::FP32>{}); return;
    }
}

} // namespace tessel::sim::detail

#endif
