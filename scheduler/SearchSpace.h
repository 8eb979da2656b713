#ifndef TESSEL_SCHEDULER_SEARCHSPACE_H
#define TESSEL_SCHEDULER_SEARCHSPACE_H

// The tuner's search space (docs/tuner.md): for one problem (a generator, its
// parameters and an ArchSpec), the legal schedules as a small struct of choices
// (`Candidate`) that turns into a ScheduleSpec made of the same directives as
// the hand schedules in samples/. Legal means: tile sizes divide the shape and
// are whole matrix-unit fractals, every staged tile times its buffer count fits
// its memory level (footprints computed here from the tile sizes and dtypes,
// rounded up to the level's alignment), every copy has a DMA edge, the matrix
// unit takes the operand type, and a core split fits the chip and the tile
// rows. Halide-free: it reads the ArchSpec and the parameters only.

#include "dsl/GeneratorInfo.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/arch/ArchSpec.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace tessel::sched {

enum class OpKind { Gemm, Elementwise, Conv2d, Softmax };

/** One tuning problem: the shapes and types the space and the cost model need. */
struct Problem {
    std::string generator;
    ParamMap params; // resolved (defaults + overrides)
    ArchSpec arch;
    OpKind op = OpKind::Gemm;
    // gemm: C[M,N] = A[M,K] * B[K,N]
    int64_t M = 0, N = 0, K = 0;
    DType in_t = DType::FP16, acc_t = DType::FP32;
    // conv2d (NHWC, valid, stride 1, 3x3): M = W output pixels per row, N = CO,
    // K = CI; `batch` images of `rows` (H) output rows; `taps` = KH * KW
    int64_t batch = 1, rows = 1, taps = 1;
    // elementwise: `inputs` tensors of `length` elements of in_t; chain computes in fp32
    // softmax: `rows` (ROWS) independent softmaxes of `length` (COLS) elements of
    // in_t, statistics in acc_t = fp32
    int64_t length = 0;
    int inputs = 2;
    bool chain = false;
};

/** Builds the problem; throws UserError for a generator the tuner does not
 * handle (it handles gemm, elementwise, softmax, and conv2d with K=3, stride 1) or a bad parameter. */
Problem make_problem(const std::string &generator, const ParamMap &given, const ArchSpec &arch);

/** How the reduction of a GEMM runs. */
enum class Path {
    Naive,  // the default schedule: scalar code on the NPU
    Vector, // C tiles on the vector unit, A and B chunks staged into its level
    Matrix, // the matrix unit: operands staged into its a/b levels, accumulator in its c level
};
const char *path_name(Path p);

struct Candidate {
    Path path = Path::Matrix;
    int64_t tile_n = 0;   // gemm: columns of the C tile (loop j); conv2d: output channels; elementwise: tile length
    int64_t tile_m = 0;   // gemm: rows of the C tile (loop i); conv2d: output pixels of a row;
                          // softmax: rows of a band (one DMA in, one out; the row reductions' vector width)
    int64_t k_chunk = 0;  // gemm: reduction chunk; conv2d: CI (one tap's product per chunk)
    bool via_mid = false; // matrix path: A and B go GM -> mid level (L1) -> operand levels (else GM -> operand levels)
    bool a_panel = false; // matrix path via mid: A staged once per row of tiles (at C.io)
    int mid_buffers = 1;  // buffers of the chunks in the mid level
    int op_buffers = 1;   // buffers of the chunks in the operand levels (vector path / elementwise: inputs)
    int acc_buffers = 1;  // accumulators in the c level
    int vector = 0;       // vector width in lanes (vector path, elementwise; softmax: expd and norm along a row,
                          // and with row_reduce the row reductions' chunk too)
    int cores = 1;        // parallel(C|out, io|xo, cores)
    // conv2d, the resident-weights form (0: the per-tap form): all weights staged
    // once into the mid level (at output.n), the accumulator computed per band of
    // `band` output rows (whole rows, all channels: tile_m = W, tile_n = CO), the
    // input band staged into the mid level per band (mid_buffers), per tap and row
    // the input row into the a level (op_buffers), per tap the weights into the b
    // level (op_buffers), reused across the band's rows.
    int64_t band = 0;
    // softmax: the row reductions along the row (atomic + vectorize of the
    // reduction variable by `vector`: VREDMAX/VREDSUM per chunk) instead of
    // across the band's rows.
    bool row_reduce = false;
    // softmax where no engine copies GM into the vector level (auto-int8's ACC):
    // 0 = the band is copied in from GM by scalar code; i > 0 = the band is first
    // staged by DMA into softmax_mid_levels()[i-1] (mid_buffers) and copied from
    // there by scalar code (a shorter load latency per element).
    int via_level = 0;

    bool operator==(const Candidate &o) const;
    bool operator!=(const Candidate &o) const { return !(*this == o); }
    bool operator<(const Candidate &o) const;
    /** "matrix 128x128 k64 L1x2 L0x2 acc x2 cores 1" for logs and database notes. */
    std::string describe() const;
};

class SearchSpace {
public:
    explicit SearchSpace(Problem p);

    const Problem &problem() const { return p_; }
    /** The mid level between GM and the matrix operand levels ("" when the
     * machine has none, e.g. gemmini-like: GM -> SPAD directly). */
    const std::string &mid_level() const { return mid_; }

    /** softmax: the on-chip levels a DMA fills from GM that a band can be staged
     * through when no engine copies GM into the vector level (else empty). */
    const std::vector<std::string> &softmax_mid_levels() const { return sm_mids_; }

    /** Bytes per memory level the candidate needs (tiles x buffers, each
     * rounded up to the level's alignment). */
    std::map<std::string, int64_t> footprint(const Candidate &c) const;
    /** True when the candidate is in the space; otherwise `why` says which rule it breaks. */
    bool legal(const Candidate &c, std::string *why = nullptr) const;
    /** Every legal candidate (at most `limit`), in a fixed order. */
    std::vector<Candidate> enumerate(size_t limit = 200000) const;
    /** A legal candidate drawn uniformly per choice (rejection sampling). */
    Candidate random(std::mt19937_64 &rng) const;
    /** `c` with one or two choices changed to a neighbouring or random value; legal. */
    Candidate mutate(const Candidate &c, std::mt19937_64 &rng) const;
    /** The default schedule (no directives: scalar code) as a candidate. */
    Candidate naive() const;
    /** The directives (the vocabulary of the hand schedules in samples/). */
    ScheduleSpec to_spec(const Candidate &c) const;

private:
    Problem p_;
    std::string mid_;
    bool matrix_ok_ = false, vector_ok_ = false, direct_ok_ = false;
    std::vector<Path> paths_;
    std::vector<int64_t> tn_, tm_, tk_, vtn_, vtm_, vtk_, len_;
    std::vector<int> vec_, cores_;
    std::vector<int64_t> bands_;   // conv2d resident-weights form: output rows per accumulator
    std::vector<int64_t> rrows_;   // softmax row_reduce form: rows per band
    std::vector<int> rvec_;        // softmax row_reduce form: chunk / vector widths
    std::vector<std::string> sm_mids_;
};

/** The ascending divisors of n that are multiples of `step` (step itself when n < step is not one). */
std::vector<int64_t> divisors_multiple_of(int64_t n, int64_t step, int64_t max_value);

} // namespace tessel::sched

#endif
