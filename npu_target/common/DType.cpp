#include "npu_target/common/DType.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tessel {

int dtype_bytes(DType t) {
    switch (t) {
    case DType::Int8:
    case DType::UInt8:
        return 1;
    case DType::Int16:
    case DType::FP16:
    case DType::BF16:
        return 2;
    case DType::Int32:
    case DType::FP32:
        return 4;
    }
    return 0;
}

const char *dtype_name(DType t) {
    switch (t) {
    case DType::Int8:
        return "int8";
    case DType::UInt8:
        return "uint8";
    case DType::Int16:
        return "int16";
    case DType::Int32:
        return "int32";
    case DType::FP16:
        return "fp16";
    case DType::BF16:
        return "bf16";
    case DType::FP32:
        return "fp32";
    }
    return "?";
}

std::optional<DType> parse_dtype(const std::string &s) {
    if (s == "int8" || s == "i8")
        return DType::Int8;
    if (s == "uint8" || s == "u8")
        return DType::UInt8;
    if (s == "int16" || s == "i16")
        return DType::Int16;
    if (s == "int32" || s == "i32")
        return DType::Int32;
    if (s == "fp16" || s == "float16" || s == "f16")
        return DType::FP16;
    if (s == "bf16" || s == "bfloat16")
        return DType::BF16;
    if (s == "fp32" || s == "float32" || s == "f32" || s == "float")
        return DType::FP32;
    return std::nullopt;
}

bool dtype_is_float(DType t) { return t == DType::FP16 || t == DType::BF16 || t == DType::FP32; }

bool dtype_is_signed(DType t) { return t != DType::UInt8; }

uint16_t fp32_to_fp16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;
    if (exp == 0xff) { // inf or NaN (keep NaN quiet and non-zero)
        return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    }
    int32_t e = static_cast<int32_t>(exp) - 127 + 15;
    if (e >= 31) {
        return static_cast<uint16_t>(sign | 0x7c00u); // overflow to inf
    }
    if (e <= 0) { // subnormal or zero in fp16
        if (e < -10) {
            return static_cast<uint16_t>(sign);
        }
        man |= 0x800000u;
        int shift = 14 - e; // 1 - e + 13
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) {
            half++;
        }
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) {
        half++; // may carry into the exponent, which is the correct rounding
    }
    return static_cast<uint16_t>(half);
}

float fp16_to_fp32(uint16_t h) {
    uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (man == 0) {
            x = sign;
        } else { // subnormal: normalise
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while ((man & 0x400u) == 0);
            x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 0x1f) {
        x = sign | 0x7f800000u | (man << 13);
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

uint16_t fp32_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet NaN
    }
    uint32_t lsb = (x >> 16) & 1u;
    x += 0x7fffu + lsb;
    return static_cast<uint16_t>(x >> 16);
}

float bf16_to_fp32(uint16_t h) {
    uint32_t x = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

double load_as_double(const void *base, DType t, int64_t i) {
    const auto *p = static_cast<const uint8_t *>(base);
    switch (t) {
    case DType::Int8:
        return static_cast<const int8_t *>(base)[i];
    case DType::UInt8:
        return p[i];
    case DType::Int16:
        return static_cast<const int16_t *>(base)[i];
    case DType::Int32:
        return static_cast<const int32_t *>(base)[i];
    case DType::FP16:
        return fp16_to_fp32(static_cast<const uint16_t *>(base)[i]);
    case DType::BF16:
        return bf16_to_fp32(static_cast<const uint16_t *>(base)[i]);
    case DType::FP32:
        return static_cast<const float *>(base)[i];
    }
    return 0;
}

namespace {
template <typename T>
T saturate(double v) {
    if (std::isnan(v)) {
        return 0;
    }
    double lo = static_cast<double>(std::numeric_limits<T>::min());
    double hi = static_cast<double>(std::numeric_limits<T>::max());
    return static_cast<T>(v < lo ? lo : (v > hi ? hi : v));
}
} // namespace

void store_from_double(void *base, DType t, int64_t i, double v) {
    switch (t) {
    case DType::Int8:
        static_cast<int8_t *>(base)[i] = saturate<int8_t>(v);
        return;
    case DType::UInt8:
        static_cast<uint8_t *>(base)[i] = saturate<uint8_t>(v);
        return;
    case DType::Int16:
        static_cast<int16_t *>(base)[i] = saturate<int16_t>(v);
        return;
    case DType::Int32:
        static_cast<int32_t *>(base)[i] = saturate<int32_t>(v);
        return;
    case DType::FP16:
        static_cast<uint16_t *>(base)[i] = fp32_to_fp16(static_cast<float>(v));
        return;
    case DType::BF16:
        static_cast<uint16_t *>(base)[i] = fp32_to_bf16(static_cast<float>(v));
        return;
    case DType::FP32:
        static_cast<float *>(base)[i] = static_cast<float>(v);
        return;
    }
}

} // namespace tessel
