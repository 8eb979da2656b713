// ONNX's matrix products as generators: onnx_matmul and onnx_gemm (docs/onnx.md).
//
// onnx_matmul: Y[b..., m, n] = sum_k A[ba..., m, k] * B[bb..., k, n], NumPy's
// matmul: `batch` is the output's batch shape (outermost first, "" for none),
// `a_batch` / `b_batch` each input's batch shape at the same rank with 1 where it
// broadcasts (read at index 0). The ONNX runner (graph/OnnxOpsMatrix.cpp) turns a
// 1-D operand into a matrix of one row or column and merges batch dimensions
// that broadcast alike.
//
// onnx_gemm: Y = alpha * A' B' + beta * C, A' = transA ? A^T : A (M x K),
// B' = transB ? B^T : B (K x N), C (optional) broadcast to M x N: `c` is its
// shape as "CMxCN" with 1 where it broadcasts, "" when there is no C.
//
// Both reduce in Func `acc` (a pure init 0, one update acc += a * b over the
// reduction k), the shape the automatic scheduler's matrix form takes when the
// operands are inputs in the matrix unit's layout (docs/autoschedule.md). The
// accumulator is fp32 for fp32, fp16 and bf16 operands (the result rounded once
// at the end) and int32 for integers (wrapping, as NumPy). Scaling, the bias and
// the final conversion are a separate Func `epi` so that the output stays a
// plain copy of its last stage.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <string>
#include <vector>

namespace {

using namespace Halide;

Type acc_type_of(const Type &t) {
    return t.is_float() ? Float(32) : Int(32);
}

class OnnxMatMul : public Halide::Generator<OnnxMatMul> {
public:
    GeneratorParam<int> M{"M", 64};
    GeneratorParam<int> N{"N", 64};
    GeneratorParam<int> K{"K", 64};
    GeneratorParam<std::string> batch{"batch", ""};
    GeneratorParam<std::string> a_batch{"a_batch", ""};
    GeneratorParam<std::string> b_batch{"b_batch", ""};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *A = nullptr;
    Input<Buffer<>> *B = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> bs, as, bbs; // batch shapes, outermost first
    Func acc{"acc"}, epi{"epi"};

    std::vector<int> shape_param(const std::string &text, const char *what) {
        return text.empty() ? std::vector<int>{}
                            : tessel::ops::parse_int_list(text, 'x', "MatMul", what, 1);
    }

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        bs = shape_param(batch, "batch");
        as = shape_param(a_batch, "a_batch");
        bbs = shape_param(b_batch, "b_batch");
        if (M < 1 || N < 1 || K < 1) {
            throw Halide::CompileError("onnx MatMul: M, N and K must be positive");
        }
        if (as.size() != bs.size() || bbs.size() != bs.size()) {
            throw Halide::CompileError(
                "onnx MatMul: batch, a_batch and b_batch must have the same rank");
        }
        for (size_t d = 0; d < bs.size(); d++) {
            if ((as[d] != 1 && as[d] != bs[d]) || (bbs[d] != 1 && bbs[d] != bs[d])) {
                throw Halide::CompileError("onnx MatMul: batch dimension " + std::to_string(d) +
                                           " of A (" + std::to_string(as[d]) + ") or B (" +
                                           std::to_string(bbs[d]) + ") does not broadcast to " +
                                           std::to_string(bs[d]));
            }
        }
        const int r = 2 + static_cast<int>(bs.size());
        A = add_input<Buffer<>>("A", t, r);
        B = add_input<Buffer<>>("B", t, r);
        Y = add_output<Buffer<>>("Y", t, r);
    }

    void generate() {
        const int nb = static_cast<int>(bs.size());
        Var n("n"), m("m");
        std::vector<Var> v = {n, m};
        std::vector<Expr> ab, bb; // the operands' batch indices, innermost first
        for (int d = nb - 1; d >= 0; d--) {
            v.push_back(Var("b" + std::to_string(d)));
            ab.push_back(as[d] == 1 ? Expr(0) : Expr(v.back()));
            bb.push_back(bbs[d] == 1 ? Expr(0) : Expr(v.back()));
        }
        RDom k(0, K, "k");
        std::vector<Expr> ai = {k, m}, bi = {n, k};
        ai.insert(ai.end(), ab.begin(), ab.end());
        bi.insert(bi.end(), bb.begin(), bb.end());
        const Type at = acc_type_of(t);
        acc(v) = cast(at, 0);
        acc(v) += cast(at, (*A)(ai)) * cast(at, (*B)(bi));
        if (at == t) {
            (*Y)(v) = acc(v);
        } else {
            epi(v) = cast(t, acc(v));
            (*Y)(v) = epi(v);
        }
        Region ae = {{0, K}, {0, M}}, be = {{0, N}, {0, K}}, ye = {{0, N}, {0, M}};
        for (int d = nb - 1; d >= 0; d--) {
            ae.push_back({0, as[d]});
            be.push_back({0, bbs[d]});
            ye.push_back({0, bs[d]});
        }
        A->set_estimates(ae);
        B->set_estimates(be);
        Y->set_estimates(ye);
    }
};

class OnnxGemm : public Halide::Generator<OnnxGemm> {
public:
    GeneratorParam<int> M{"M", 64};
    GeneratorParam<int> N{"N", 64};
    GeneratorParam<int> K{"K", 64};
    GeneratorParam<bool> transA{"transA", false};
    GeneratorParam<bool> transB{"transB", false};
    GeneratorParam<float> alpha{"alpha", 1.0f};
    GeneratorParam<float> beta{"beta", 1.0f};
    GeneratorParam<std::string> c{"c", ""};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *A = nullptr;
    Input<Buffer<>> *B = nullptr;
    Input<Buffer<>> *C = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> cs;
    Func acc{"acc"}, epi{"epi"};

    void configure() {
        tessel::DType d = tessel::parse_dtype_param(dtype, "dtype");
        t = tessel::halide_type(d);
        if (!t.is_float()) {
            throw Halide::CompileError("onnx Gemm: dtype must be fp32, fp16 or bf16 (got " +
                                       std::string(dtype) + ")");
        }
        if (M < 1 || N < 1 || K < 1) {
            throw Halide::CompileError("onnx Gemm: M, N and K must be positive");
        }
        if (!std::string(c).empty()) {
            cs = tessel::ops::parse_int_list(c, 'x', "Gemm", "c", 1);
            if (cs.size() != 2 || (cs[0] != 1 && cs[0] != M) || (cs[1] != 1 && cs[1] != N)) {
                throw Halide::CompileError("onnx Gemm: C's shape '" + std::string(c) +
                                           "' does not broadcast to " + std::to_string(int(M)) +
                                           "x" + std::to_string(int(N)));
            }
        }
        A = add_input<Buffer<>>("A", t, 2);
        B = add_input<Buffer<>>("B", t, 2);
        if (!cs.empty()) {
            C = add_input<Buffer<>>("C", t, 2);
        }
        Y = add_output<Buffer<>>("Y", t, 2);
    }

    void generate() {
        Var n("n"), m("m");
        RDom k(0, K, "k");
        const Type at = Float(32);
        // Halide indexes the innermost (ONNX's last) dimension first.
        Expr a = transA ? (*A)(m, k) : (*A)(k, m);
        Expr b = transB ? (*B)(k, n) : (*B)(n, k);
        acc(n, m) = cast(at, 0);
        acc(n, m) += cast(at, a) * cast(at, b);
        Expr y = acc(n, m);
        if (float(alpha) != 1.0f) {
            y = y * float(alpha);
        }
        if (C && float(beta) != 0.0f) {
            Expr cv =
                cast(at, (*C)(cs[1] == 1 ? Expr(0) : Expr(n), cs[0] == 1 ? Expr(0) : Expr(m)));
            y = y + (float(beta) == 1.0f ? cv : cv * float(beta));
        }
        if (y.same_as(acc(n, m)) && at == t) {
            (*Y)(n, m) = acc(n, m);
        } else {
            epi(n, m) = cast(t, y);
            (*Y)(n, m) = epi(n, m);
        }
        A->set_estimates(transA ? Region{{0, M}, {0, K}} : Region{{0, K}, {0, M}});
        B->set_estimates(transB ? Region{{0, K}, {0, N}} : Region{{0, N}, {0, K}});
        if (C) {
            C->set_estimates({{0, cs[1]}, {0, cs[0]}});
        }
        Y->set_estimates({{0, N}, {0, M}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(
    OnnxMatMul, onnx_matmul,
    "ONNX MatMul: Y = A B over the last two dimensions, batch dimensions broadcasting",
    {{"M", "64", "rows of A and Y"},
     {"N", "64", "columns of B and Y"},
     {"K", "64", "columns of A, rows of B (the reduction)"},
     {"batch", "", "the output's batch shape, outermost first ('' for none)"},
     {"a_batch", "", "A's batch shape at the same rank, 1 where it broadcasts"},
     {"b_batch", "", "B's batch shape at the same rank, 1 where it broadcasts"},
     {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
TESSEL_REGISTER_GENERATOR(OnnxGemm, onnx_gemm,
                          "ONNX Gemm: Y = alpha A' B' + beta C, C broadcast to M x N",
                          {{"M", "64", "rows of Y"},
                           {"N", "64", "columns of Y"},
                           {"K", "64", "the reduction"},
                           {"transA", "false", "A is K x M (transposed)"},
                           {"transB", "false", "B is N x K (transposed)"},
                           {"alpha", "1", "scale of the product"},
                           {"beta", "1", "scale of C"},
                           {"c", "", "C's shape as CMxCN, 1 where it broadcasts; '' for no C"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
