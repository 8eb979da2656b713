#include "npu_target/common/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace tessel;

TEST(DType, NamesRoundTrip) {
    for (int i = 0; i < kNumDTypes; i++) {
        DType t = static_cast<DType>(i);
        auto back = parse_dtype(dtype_name(t));
        ASSERT_TRUE(back.has_value()) << dtype_name(t);
        EXPECT_EQ(*back, t);
    }
    EXPECT_FALSE(parse_dtype("int7").has_value());
    EXPECT_EQ(dtype_bytes(DType::FP16), 2);
    EXPECT_EQ(dtype_bytes(DType::Int32), 4);
}

TEST(DType, Fp16KnownValues) {
    EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
    EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
    EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
    EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00); // rounds up to inf
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
    EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -26)), 0x0000); // below half of it
    EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie to even (down)
    EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02); // tie to even (up)
    EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(NAN))));
    EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
}

TEST(DType, Fp16RoundTripAllHalves) {
    for (uint32_t h = 0; h < 65536; h++) {
        float f = fp16_to_fp32(static_cast<uint16_t>(h));
        if (std::isnan(f)) {
            continue;
        }
        EXPECT_EQ(fp32_to_fp16(f), h) << std::hex << h;
    }
}

TEST(DType, Bf16RoundsToNearestEven) {
    EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
    uint32_t bits = 0x3f808000u; // exactly half way between 0x3f80 and 0x3f81
    float f;
    std::memcpy(&f, &bits, 4);
    EXPECT_EQ(fp32_to_bf16(f), 0x3f80);
    bits = 0x3f818000u;
    std::memcpy(&f, &bits, 4);
    EXPECT_EQ(fp32_to_bf16(f), 0x3f82);
    EXPECT_EQ(bf16_to_fp32(0x3f80), 1.0f);
}

TEST(DType, StoreSaturatesIntegers) {
    int8_t v[1];
    store_from_double(v, DType::Int8, 0, 300);
    EXPECT_EQ(v[0], 127);
    store_from_double(v, DType::Int8, 0, -300);
    EXPECT_EQ(v[0], -128);
}
