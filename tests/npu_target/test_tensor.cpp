#include "npu_target/common/Tensor.h"

#include <gtest/gtest.h>

using namespace tessel;

TEST(Tensor, DescribeAndSize) {
    Tensor t("A", DType::FP16, {32, 64});
    EXPECT_EQ(t.elements(), 2048);
    EXPECT_EQ(t.bytes(), 4096);
    EXPECT_EQ(t.describe(), "A: fp16[64x32]");
}

TEST(Tensor, CompareFindsFirstMismatch) {
    Tensor a("x", DType::Int32, {4}), b("x", DType::Int32, {4});
    for (int i = 0; i < 4; i++) {
        a.set(i, i);
        b.set(i, i);
    }
    EXPECT_EQ(compare(a, b).mismatches, 0);
    b.set(2, 7);
    Comparison c = compare(a, b);
    EXPECT_EQ(c.mismatches, 1);
    EXPECT_EQ(c.first_mismatch, 2);
    EXPECT_DOUBLE_EQ(c.max_abs_error, 5);
    EXPECT_NE(c.message.find("first at flat index 2"), std::string::npos) << c.message;
}

TEST(Tensor, CompareFloatTolerance) {
    Tensor a("x", DType::FP32, {2}), b("x", DType::FP32, {2});
    a.set(0, 1.0);
    b.set(0, 1.0 + 1e-6);
    EXPECT_EQ(compare(a, b, 1e-5, 0).mismatches, 0);
    EXPECT_EQ(compare(a, b, 0, 0).mismatches, 1);
}

TEST(Tensor, PoisonAndRandomDiffer) {
    Tensor a("x", DType::Int8, {1000});
    std::mt19937_64 rng(3);
    fill_random(a, rng);
    Tensor p = a;
    poison(p);
    EXPECT_GT(compare(p, a).mismatches, 900);
    int distinct = 0;
    for (int i = 1; i < 1000; i++) {
        distinct += a.get(i) != a.get(i - 1);
    }
    EXPECT_GT(distinct, 900);
}
