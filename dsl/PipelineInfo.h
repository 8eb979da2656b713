#ifndef TESSEL_DSL_PIPELINEINFO_H
#define TESSEL_DSL_PIPELINEINFO_H

// The structure of a generator's pipeline as plain data (Halide-free), for the
// automatic scheduler (scheduler/AutoSchedule) and anything else that reasons
// about a pipeline without Halide: its inputs and outputs with shapes, and every
// Func with its pure variables, its reductions and what it reads, each read as
// the variable every index follows and the constant offsets of that index
// (a 3x3 stencil's read of `in` shows offsets 0..2 in both dimensions).

#include "dsl/GeneratorInfo.h"
#include "npu_target/common/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

/** One callee of a definition, all the places it is read merged. */
struct LoadInfo {
    std::string callee;       // a Func's name, or an input's name (callee_is_input)
    bool callee_is_input = false;
    /** Per dimension of the callee: the consumer variable (pure or reduction) its index
     * follows, "" when it is not one variable plus a constant. */
    std::vector<std::string> index_var;
    std::vector<int64_t> min_offset, max_offset; // per dimension, over every read
    /** Per dimension: the variables of an index that is a sum of variables with coefficient 1
     * plus a constant (a stride-1 convolution's x + r.x), sorted; empty when it is anything
     * else or differs between reads. A one-variable index has its one name here too. */
    std::vector<std::vector<std::string>> index_sum;
    /** Per dimension: some read's index holds a min or max (a clamped, padded read). */
    std::vector<bool> index_clamped;
};

struct DefInfo {
    std::vector<std::string> rvars;      // reduction variables, innermost first (empty: pure)
    std::vector<int64_t> rvar_extents;   // -1 when not constant
    std::vector<LoadInfo> loads;         // what the definition reads, by callee
    /** The update is self + a * b (casts allowed) with a and b two loads: a matrix product
     * (or a contraction) candidate; mul_a / mul_b name them. */
    bool sum_of_products = false;
    std::string mul_a, mul_b;
    /** Per dimension of the Func: the variable (pure or reduction) the definition writes at,
     * plus a constant ("" otherwise). An update whose first reduction variable is one of
     * these writes a different element at each step (a copy into a region, not a reduction). */
    std::vector<std::string> lhs_var;
};

struct FuncInfo {
    std::string name;                  // as the generator named it (no Halide $N suffix)
    std::string type;                  // "float32", "uint16", ... (Halide's names)
    int bytes = 0;                     // of one element
    std::vector<std::string> vars;     // pure variables, innermost first
    bool is_output = false;
    DefInfo pure;
    std::vector<DefInfo> updates;
    /** Every Func or input that reads this one. */
    std::vector<std::string> consumers;

    /** The pure definition, then each update. */
    std::vector<const DefInfo *> definitions() const;
};

struct TensorInfo {
    std::string name;
    DType dtype = DType::FP32;
    std::vector<int64_t> shape;        // innermost first
};

struct PipelineInfo {
    std::string generator;
    ParamMap params;                   // resolved
    std::vector<TensorInfo> inputs;    // sorted by name
    std::vector<TensorInfo> outputs;   // generator order
    /** Every Func but the inputs' own, producers before their consumers. */
    std::vector<FuncInfo> funcs;

    const FuncInfo *find(const std::string &name) const;
    const TensorInfo *find_input(const std::string &name) const;
};

/** Instantiates `generator` with `params` (resolved against its defaults) and describes it.
 * Throws UserError for an unknown generator or parameter, as compile() reports them. */
PipelineInfo describe_pipeline(const std::string &generator, const ParamMap &params);

} // namespace tessel

#endif
