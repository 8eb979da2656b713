// Attention in the FlashAttention style, one head:
//   out = softmax(Q K^T * scale) V            Q: S x D, K: L x D, V: L x D
// tiled over keys/values in blocks of BK with an online softmax. For each
// key block b (all per query row i, statistics in fp32):
//   s[j]      = scale * sum_d Q[i,d] K[j,d]            (the score product: matrix unit)
//   mb[b]     = max over the block of s                 (vector unit)
//   p[j]      = fp16(exp(s[j] - mb[b]))                 (vector unit)
//   lb[b]     = sum over the block of p                 (vector unit)
//   ob[b, d]  = sum over the block of p[j] V[j,d]       (the output product: matrix unit)
// and a reduction over the blocks carries the running max M, sum l and output o
// (one Tuple-valued Func, "state"):
//   M'  = max(M, mb[b])
//   l'  = l * exp(M - M') + lb[b] * exp(mb[b] - M')
//   o'  = o * exp(M - M') + ob[b] * exp(mb[b] - M')
//   out = fp16(o / l)
// so no S x L matrix of scores is ever needed whole: a schedule computes the
// block's scores, probabilities and partial output per key block and folds them
// into the running state (the block-local maximum with a rescale on folding is
// the split-K form of the online softmax; it equals the sequential form exactly
// in real arithmetic).
//
// Layouts (Halide order, innermost first): Q (d, i), KT (j, d) = K transposed
// (D x L, so that a block of it is the dense row-major k x n operand of the
// score product), V (d, j), out (d, i).
#include "dsl/Generator.h"

#include <cmath>
#include <limits>

namespace {

using namespace Halide;

class Attention : public Halide::Generator<Attention> {
public:
    GeneratorParam<int> S{"S", 64};
    GeneratorParam<int> L{"L", 256};
    GeneratorParam<int> D{"D", 64};
    GeneratorParam<int> BK{"BK", 64};

    Input<Buffer<float16_t>> Q{"Q", 2};
    Input<Buffer<float16_t>> KT{"KT", 2};
    Input<Buffer<float16_t>> V{"V", 2};
    Output<Buffer<float16_t>> out{"out", 2};

    Func scores{"scores"}, blockmax{"blockmax"}, scaledmax{"scaledmax"}, prob{"prob"}, blocksum{"blocksum"}, blockout{"blockout"},
        state{"state"}, result{"result"}, pblock{"pblock"}, vblock{"vblock"};

    void generate() {
        const int s_ = S, l_ = L, d_ = D, bk = BK;
        if (s_ < 1 || l_ < 1 || d_ < 1 || bk < 1 || l_ % bk != 0) {
            throw Halide::CompileError("attention: S, L, D, BK must be positive and BK must divide L");
        }
        const int nb = l_ / bk;
        const float scale = 1.0f / std::sqrt(static_cast<float>(d_));
        Var i("i"), j("j"), d("d"), b("b");

        // Scores, fp32 accumulation of the fp16 product (the matrix unit's form:
        // scores(j, i) += Q(k, i) * KT(j, k) with k = d).
        RDom rd(0, D, "rd");
        scores(j, i) = 0.0f;
        scores(j, i) += cast<float>(Q(rd, i)) * cast<float>(KT(j, rd));

        // Block statistics and probabilities. The block maximum is taken of
        // the unscaled scores (the scale is positive, so scaling the maximum
        // is the maximum of the scaled scores) and the probabilities scale the
        // difference, so each score is scaled once and no buffer of scaled
        // scores is needed; scaledmax is the maximum on the softmax's scale,
        // one value per row, for the state.
        RDom rj(0, BK, "rj");
        blockmax(i, b) = std::numeric_limits<float>::lowest();
        blockmax(i, b) = max(blockmax(i, b), scores(b * BK + rj, i));
        scaledmax(i, b) = blockmax(i, b) * scale;
        prob(j, i) = cast<float16_t>(exp((scores(j, i) - blockmax(i, j / BK)) * scale));
        blocksum(i, b) = 0.0f;
        blocksum(i, b) += cast<float>(prob(b * BK + rj, i));
        // The block's partial output: blockout(d, i, b) += prob(k, i) * V(d, k), k over the block.
        // (The block views are Funcs of their own so that the product reads two
        // calls, as tensorize matches it, not a let of the shared index.)
        pblock(j, i, b) = prob(b * bk + j, i);
        vblock(d, j, b) = V(d, b * bk + j);
        blockout(d, i, b) = 0.0f;
        blockout(d, i, b) += cast<float>(pblock(rj, i, b)) * cast<float>(vblock(d, rj, b));

        // The online softmax: a reduction over the key blocks whose state is the
        // running maximum, sum and output, a Tuple per (d, i) (the maximum and
        // the sum repeat along d, so that one update rescales them together).
        RDom rb(0, nb, "rb");
        state(d, i) = Tuple(std::numeric_limits<float>::lowest(), 0.0f, 0.0f);
        Expr m_old = state(d, i)[0], l_old = state(d, i)[1], o_old = state(d, i)[2];
        Expr m_new = max(m_old, scaledmax(i, rb));
        Expr keep = exp(m_old - m_new);             // rescale of the state so far (0 for the first block)
        Expr add = exp(scaledmax(i, rb) - m_new);   // rescale of the new block
        state(d, i) = Tuple(m_new, l_old * keep + blocksum(i, rb) * add, o_old * keep + blockout(d, i, rb) * add);

        // The result in a Func of its own and out a copy of it: a schedule
        // computes result per tile in the vector level; the copy is a DMA.
        result(d, i) = cast<float16_t>(state(d, i)[2] / state(d, i)[1]);
        out(d, i) = result(d, i);

        Q.set_estimates({{0, D}, {0, S}});
        KT.set_estimates({{0, L}, {0, D}});
        V.set_estimates({{0, D}, {0, L}});
        out.set_estimates({{0, D}, {0, S}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Attention, attention,
                          "one attention head, softmax(Q K^T / sqrt(D)) V, tiled over key blocks with an online "
                          "softmax (fp16 data, fp32 statistics)",
                          {{"S", "64", "queries (rows of Q and out)"},
                           {"L", "256", "keys and values"},
                           {"D", "64", "head dimension"},
                           {"BK", "64", "key block (divides L)"}})
