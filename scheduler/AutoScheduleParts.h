#ifndef TESSEL_SCHEDULER_AUTOSCHEDULEPARTS_H
#define TESSEL_SCHEDULER_AUTOSCHEDULEPARTS_H

// What the automatic scheduler's forms share (scheduler/AutoSchedule.cpp: the GEMM matrix
// form, the vector form and the retry loop; scheduler/ConvMatrixForm.cpp: convolutions on the
// matrix unit; scheduler/MatrixEpilogue.cpp: an accumulator's epilogue on the vector unit).
// Internal to scheduler/; plain data in, directives out.

#include "dsl/PipelineInfo.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/arch/ArchSpec.h"
#include "scheduler/AutoSchedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::autosched {

int64_t floor_pow2(int64_t v);
int64_t product(const std::vector<int64_t> &v, size_t from, size_t to);
uint64_t level_size(const ArchSpec &a, const std::string &n);
std::string gm_name(const ArchSpec &a);
/** The levels a tensor passes through from GM to `to` (not GM itself, `to` last). */
std::vector<std::string> path_from_gm(const ArchSpec &a, const std::string &to, bool via_staging);
Directive make(const std::string &id, DirectiveKind kind, const std::string &func);
Directive stage_dir(const std::string &id, const std::string &func, const std::string &level,
                    const std::string &at_func, const std::string &at_loop, int buffers);
/** The load `out`'s pure definition is a plain copy of (one Func, offsets 0), else nullptr. */
const LoadInfo *copy_source(const FuncInfo &out);
/** Multiples of `unit` by powers of two that divide `extent` (at most 4096); the extent
 * itself when none does. */
std::vector<int64_t> tile_sizes(int64_t unit, int64_t extent);

/** The matrix unit for one operand type: its fractal, the element sizes, its levels and the
 * DMA paths from GM to the operand levels. */
struct MatrixLevels {
    MatrixShape sh;
    int in_b = 1, acc_b = 4;
    std::string la, lb, lc;
    std::vector<std::string> pa, pb; // GM -> ... -> la / lb
    /** Whether a tm x tn x tk tile fits, the operands double-buffered: the accumulator's
     * buffers (2, else 1), 0 when it does not fit. */
    int operand_buffers(const ArchSpec &arch, int64_t tm, int64_t tn, int64_t tk) const;
};
/** False with the reason in `why` when there is no path from GM to an operand level. */
bool matrix_levels(const ArchSpec &arch, DType dtype, const std::string &acc, MatrixLevels &ml,
                   std::string &why);

/** The accumulator in `level` (`buffers` copies) and its update tensorized on the matrix unit. */
void accumulate_and_tensorize(const std::string &acc, const std::string &level, int buffers,
                              AutoSchedule &r);

/** The best matrix tile so far by a cycle estimate (ties: the larger tile). */
struct TileChoice {
    double best = 1e300;
    int64_t m = 0, n = 0, k = 0, k1 = 0; // m = 0: nothing fits
    int cbufs = 1;                       // accumulator buffers
    void consider(double t, int64_t tm, int64_t tn, int64_t tk, int64_t tk1, int c) {
        if (t < best * 0.999 || (t <= best * 1.001 && tm * tn > m * n)) {
            best = t;
            m = tm;
            n = tn;
            k = tk;
            k1 = tk1;
            cbufs = c;
        }
    }
    /** "Func acc: no tile of the 16x16x16 fractal fits the operand levels double-buffered". */
    static std::string no_fit(const std::string &acc, const MatrixShape &sh);
};

/** How a matrix accumulator reaches its output: directly (the output a plain copy of it) or
 * through one pointwise epilogue Func (bias, scaling, a cast) that the output copies. */
struct MatrixOutput {
    const FuncInfo *out = nullptr;
    const FuncInfo *epi = nullptr; // nullptr: the output copies the accumulator
    uint64_t epi_input_bytes = 0;  // what the epilogue reads besides the accumulator
};
/** The output `acc` reaches, or nullptr in `out` with the reason in `why`. */
MatrixOutput find_matrix_output(const PipelineInfo &p, const FuncInfo &acc, std::string &why);
/** Whether the epilogue can run on the vector unit next to the matrix unit's accumulator
 * level (an edge from it to the vector level); the reason when not. */
bool epilogue_possible(const ArchSpec &arch, std::string &why);
/** Whether a tm x tn accumulator tile's epilogue fits the vector level: the accumulator's copy
 * (2 buffers), the epilogue's result and its inputs staged once (true without an epilogue). */
bool epilogue_fits(const ArchSpec &arch, const MatrixOutput &mo, int64_t tm, int64_t tn, int acc_b);
/** The epilogue's directives: computed at `at_loop` of the output, vectorised over its
 * innermost dimension (`lanes` wide), the accumulator tile copied to the vector level and the
 * epilogue's other inputs staged there (once when small, else per tile). */
void epilogue_directives(const PipelineInfo &p, const ArchSpec &arch, const FuncInfo &acc,
                         const MatrixOutput &mo, const std::string &at_loop, int64_t lanes,
                         AutoSchedule &r);

/** The convolution form (scheduler/ConvMatrixForm.cpp): a sum of products over several
 * reduction variables whose operands are inputs read as a stride-1 window (Y[j, ..., i, ...]
 * += A[taps, k, i] * B[j + tap, ..., k, ...]) becomes, per tap, the matrix product of a tile of
 * A (i x k) and a row of B (k x j). True with the directives in `r`; false with the reasons in
 * `why` (one per Func that looked like one). `acc` names the Func it mapped. */
bool conv_matrix_form(const PipelineInfo &p, const ArchSpec &arch, AutoSchedule &r,
                      std::vector<std::string> &why, std::string &acc);

} // namespace tessel::autosched

#endif
