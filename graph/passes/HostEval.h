#ifndef TESSEL_GRAPH_PASSES_HOSTEVAL_H
#define TESSEL_GRAPH_PASSES_HOSTEVAL_H

// Host arithmetic on constant tensors for the graph passes: element access by
// value (integers as int64, floats as double) and the evaluation of the
// operators constant folding folds (graph/passes/Passes.h). float16 and
// bfloat16 are moved as bytes but not computed on. Halide-free.

#include "graph/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::graph {

bool is_integer_type(ElemType t);
/** Element values; nullopt for float16/bfloat16 (not computed on here). */
std::optional<std::vector<double>> float_values(const FileTensor &t);
std::optional<std::vector<int64_t>> int_values(const FileTensor &t);
/** A tensor of `type` and `dims` from values (converted as C++ converts). */
FileTensor tensor_of(ElemType type, const std::vector<int64_t> &dims, const std::vector<double> &v);
FileTensor tensor_of_ints(ElemType type, const std::vector<int64_t> &dims, const std::vector<int64_t> &v);

/** The value of `node`'s first output computed on the host from its inputs
 * (nullptr for an omitted one; Shape's input needs only its dims, given as
 * `input_meta`), its shape `out` (from shape inference); nullopt when the
 * operator or the form is not one the folder evaluates. */
std::optional<FileTensor> evaluate_node(const GraphNode &node, const std::vector<const FileTensor *> &inputs,
                                        const std::vector<const GraphTensor *> &input_meta, const GraphTensor &out);

} // namespace tessel::graph

#endif
