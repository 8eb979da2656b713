// The attention sample on the host CPU (Halide's JIT, unscheduled) equals the
// textbook definition softmax(Q K^T / sqrt(D)) V computed in double precision
// over the whole score row (no blocks, no online rescaling), within fp16
// rounding of the output: the block-wise online softmax is the same function.
#include "dsl/HalidePipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace tessel;

namespace {

const Tensor &find(const std::vector<Tensor> &ts, const std::string &name) {
    for (const auto &t : ts) {
        if (t.name == name) {
            return t;
        }
    }
    throw std::runtime_error("no tensor " + name);
}

// out[i][d] = sum_j softmax_j(scale * Q[i] . K[j]) V[j][d], in double.
std::vector<double> attention_reference(const Tensor &q, const Tensor &kt, const Tensor &v, int s, int l, int dh) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
    std::vector<double> out(static_cast<size_t>(s) * dh, 0.0), row(l);
    for (int i = 0; i < s; ++i) {
        double mx = -INFINITY;
        for (int j = 0; j < l; ++j) {
            double acc = 0;
            for (int d = 0; d < dh; ++d) {
                acc += q.get(i * dh + d) * kt.get(d * l + j); // Q (d, i), KT (j, d)
            }
            row[j] = acc * scale;
            mx = std::max(mx, row[j]);
        }
        double sum = 0;
        for (int j = 0; j < l; ++j) {
            row[j] = std::exp(row[j] - mx);
            sum += row[j];
        }
        for (int j = 0; j < l; ++j) {
            for (int d = 0; d < dh; ++d) {
                out[i * dh + d] += row[j] / sum * v.get(j * dh + d); // V (d, j)
            }
        }
    }
    return out;
}

struct AttnCase {
    int s, l, d, bk;
};

class AttentionCpu : public ::testing::TestWithParam<AttnCase> {};

TEST_P(AttentionCpu, EqualsTheWholeRowSoftmax) {
    const AttnCase c = GetParam();
    HalidePipeline p = build_halide_pipeline("attention", {{"S", std::to_string(c.s)},
                                                           {"L", std::to_string(c.l)},
                                                           {"D", std::to_string(c.d)},
                                                           {"BK", std::to_string(c.bk)}});
    std::vector<Tensor> in = make_random_inputs(p, 7 + c.bk);
    std::vector<Tensor> outs = run_on_cpu(p, in);
    std::vector<double> want = attention_reference(find(in, "Q"), find(in, "KT"), find(in, "V"), c.s, c.l, c.d);
    ASSERT_EQ(outs[0].elements(), static_cast<int64_t>(want.size()));
    int bad = 0;
    double worst = 0;
    for (size_t k = 0; k < want.size(); ++k) {
        double err = std::fabs(outs[0].get(static_cast<int64_t>(k)) - want[k]);
        worst = std::max(worst, err);
        // fp16 output (half an ulp at |x| < 1 is <= 2^-12) plus the fp16
        // rounding of the probabilities fed to the output product.
        bad += err > 2e-3 + 2e-3 * std::fabs(want[k]);
    }
    EXPECT_EQ(bad, 0) << "max abs error " << worst;
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionCpu,
                         ::testing::Values(AttnCase{4, 64, 16, 16}, AttnCase{8, 128, 32, 32}, AttnCase{3, 48, 8, 48},
                                           AttnCase{5, 96, 16, 8}));

TEST(AttentionCpu, BlockMustDivideKeys) {
    EXPECT_ANY_THROW(build_halide_pipeline("attention", {{"S", "4"}, {"L", "60"}, {"D", "8"}, {"BK", "16"}}));
}

} // namespace
