// GEMM: C[M,N] = A[M,K] * B[K,N], accumulated in the matrix unit's accumulator
// type (fp16/bf16/fp32 -> fp32, int8/uint8/int16 -> int32).
//
// Halide indexes the innermost dimension first, so the row-major matrices are
// A(k, i), B(j, k) and C(j, i). The algorithm is all this file says: schedules
// are data (see samples/gemm/schedules/) applied by Tessel.

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class Gemm : public Halide::Generator<Gemm> {
public:
    GeneratorParam<int> M{"M", 256};
    GeneratorParam<int> N{"N", 256};
    GeneratorParam<int> K{"K", 256};
    GeneratorParam<std::string> dtype{"dtype", "fp16"};

    Input<Buffer<>> *A = nullptr;
    Input<Buffer<>> *B = nullptr;
    Output<Buffer<>> C{"C", 2}; // type follows the accumulator

    Type acc_t;
    Func acc{"acc"};

    void configure() {
        tessel::DType t = tessel::parse_dtype_param(dtype, "dtype");
        Type in_t = tessel::halide_type(t);
        A = add_input<Buffer<>>("A", in_t, 2);
        B = add_input<Buffer<>>("B", in_t, 2);
        acc_t = tessel::halide_type(tessel::accumulator_of(t));
    }

    void generate() {
        Var j("j"), i("i");
        RDom k(0, K, "k");
        // The reduction has its own Func so that a schedule can keep it in an
        // accumulator level (accumulate_in) and write C once per tile.
        acc(j, i) = cast(acc_t, 0);
        acc(j, i) += cast(acc_t, (*A)(k, i)) * cast(acc_t, (*B)(j, k));
        C(j, i) = acc(j, i);

        A->set_estimates({{0, K}, {0, M}});
        B->set_estimates({{0, N}, {0, K}});
        C.set_estimates({{0, N}, {0, M}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Gemm, gemm, "matrix product C[M,N] = A[M,K] * B[K,N] with a widened accumulator",
                          {{"M", "256", "rows of A and C"},
                           {"N", "256", "columns of B and C"},
                           {"K", "256", "reduction length (columns of A, rows of B)"},
                           {"dtype", "fp16", "element type of A and B: int8, uint8, int16, fp16, bf16, fp32"}})
