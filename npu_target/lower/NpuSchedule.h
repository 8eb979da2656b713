#ifndef TESSEL_NPU_TARGET_LOWER_NPUSCHEDULE_H
#define TESSEL_NPU_TARGET_LOWER_NPUSCHEDULE_H

// The NPU side of an applied schedule, as plain data handed from dsl/ (the
// applier) to npu_target/lower (the backend) together with Halide's lowered
// Stmt. The Halide side of a directive (splits, compute_at, Func::in wrappers)
// is already in the Stmt; this table says what the Stmt alone cannot: which
// allocation lives in which memory level, with how many buffers, what is to be
// tensorized, and which directive each Func and loop came from (provenance).

#include <map>
#include <string>
#include <vector>

namespace tessel {

/** stage(source, level, at=(func, loop), buffers=N): `func` is the Halide Func
 * (a Func::in() wrapper of the source) whose allocation holds the staged copy. */
struct StagedBuffer {
    std::string directive_id;
    std::string source;    // the staged input or Func, e.g. "A"
    std::string func;      // the wrapper Func whose realization is the copy, e.g. "A_in_L1"
    std::string level;     // ArchSpec memory level
    int buffers = 1;       // 2 = double buffering
    std::string at_func;   // where it is computed (compute_at)
    std::string at_loop;   // loop variable name (Halide dim name, e.g. "jo")
};

/** accumulate_in(func, level): the reduction's accumulator lives in `level`. */
struct AccumulateIn {
    std::string directive_id;
    std::string func;
    std::string level;
    int buffers = 1; // 2: the next tile accumulates while this one is written back
};

/** tensorize(func, update, unit=matrix); tensorize(func, unit=fix): a requantising
 * epilogue of an accumulator as the FIX engine's quant DMA. */
struct TensorizeRequest {
    std::string directive_id;
    std::string func;
    int update = 0;       // matrix: the update; fix: -1 (the pure definition)
    std::string unit = "matrix";
};

/** parallel(func, loop, cores). */
struct CoreSplit {
    std::string directive_id;
    std::string func;
    std::string loop;
    int cores = 1;
};

/** layout(buffer, format). */
struct LayoutRequest {
    std::string directive_id;
    std::string func;
    std::string format; // "ND", "NZ", ...
};

struct NpuSchedule {
    std::vector<StagedBuffer> staged;
    std::vector<AccumulateIn> accumulate;
    std::vector<TensorizeRequest> tensorize;
    std::vector<CoreSplit> core_splits;
    std::vector<LayoutRequest> layouts;
    /** Provenance: "func" or "func.loop" (Halide names, e.g. "C.s1.j.jo" keyed as
     * "C" and "C.jo") -> the id of the directive that created or last changed it. */
    std::map<std::string, std::string> provenance;
};

} // namespace tessel

#endif
