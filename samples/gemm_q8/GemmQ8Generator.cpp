// int8 GEMM with a requantising epilogue, as an inference layer computes it:
//   acc[i, j] = sum_k A[i, k] * B[k, j]                      (int32)
//   C[i, j]   = sat_int8(((acc + bias[j]) * scale[j] + 2^(shift-1)) >> shift)
// with a per-output-channel bias (int32) and scale (uint8), one shift, rounding
// half up (an arithmetic shift of the biased value, i.e. floor((x + 2^(s-1)) / 2^s))
// and saturation to [-128, 127]. Everything is int32 and bit-exact; the product
// fits int32 while |acc + bias| * 255 < 2^31 (K <= 512 with int8 inputs).

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class GemmQ8 : public Halide::Generator<GemmQ8> {
public:
    GeneratorParam<int> M{"M", 64};
    GeneratorParam<int> N{"N", 64};
    GeneratorParam<int> K{"K", 64};
    GeneratorParam<int> shift{"shift", 12};

    Input<Buffer<int8_t>> A{"A", 2};
    Input<Buffer<int8_t>> B{"B", 2};
    Input<Buffer<int32_t>> bias{"bias", 1};
    Input<Buffer<uint8_t>> scale{"scale", 1};
    Output<Buffer<int8_t>> C{"C", 2};

    Func acc{"acc"}, requant{"requant"};

    void generate() {
        if (shift < 1 || shift > 30) {
            throw Halide::CompileError("gemm_q8: shift must be in [1, 30]");
        }
        Var j("j"), i("i");
        RDom k(0, K, "k");
        acc(j, i) = 0;
        acc(j, i) += cast<int32_t>(A(k, i)) * cast<int32_t>(B(j, k));
        const int s = shift;
        Expr x = (acc(j, i) + bias(j)) * cast<int32_t>(scale(j)) + (1 << (s - 1));
        requant(j, i) = saturating_cast<int8_t>(x >> s);
        C(j, i) = requant(j, i);
        A.set_estimates({{0, K}, {0, M}});
        B.set_estimates({{0, N}, {0, K}});
        bias.set_estimates({{0, N}});
        scale.set_estimates({{0, N}});
        C.set_estimates({{0, N}, {0, M}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(GemmQ8, gemm_q8,
                          "int8 GEMM with a requantising epilogue: sat_int8(((A*B + bias) * scale + 2^(shift-1)) >> shift)",
                          {{"M", "64", "rows of A and C"},
                           {"N", "64", "columns of B and C (output channels)"},
                           {"K", "64", "reduction length (<= 512 keeps the epilogue in int32)"},
                           {"shift", "12", "right shift of the requantisation, 1..30"}})
