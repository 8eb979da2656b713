#ifndef TESSEL_GRAPH_ONNXKERNEL_H
#define TESSEL_GRAPH_ONNXKERNEL_H

// One kernel of a mapped ONNX node (graph/OnnxOps.h) as a request to the
// compile facade (dsl/Compile.h) with the automatic schedule
// (scheduler/AutoSchedule): what `tessel onnx-test` runs for a test's node and
// `tessel model run` for each node of a model. Halide-free.

#include "dsl/Compile.h"
#include "graph/OnnxModel.h"
#include "graph/OnnxOps.h"

#include <functional>
#include <string>
#include <vector>

namespace tessel::graph {

struct OnnxKernelRequest {
    CompileRequest request;
    std::string schedule; // "auto (vector form)", with the scheduler's warnings after ": "
};

/** The request for kernel `m` of `node` on `arch`: the generator and its
 * parameters, the auto schedule, and `inputs` (one per node input, as
 * map_onnx_node took them) bound to the kernel's inputs in its view of them;
 * `origin_of(tensor name)` names each in messages. The NPU is checked against
 * Halide's CPU result by run() (the scheduled CPU run is skipped). */
OnnxKernelRequest onnx_kernel_request(const OnnxNode &node, const OnnxMapping &m,
                                      const std::vector<const FileTensor *> &inputs, const std::string &arch,
                                      const std::function<std::string(const std::string &)> &origin_of);

/** `t` as the tessel::Tensor `name` with its dims replaced by `dims` (same element count: a view). */
Tensor viewed_tensor(const FileTensor &t, const std::vector<int64_t> &dims, const std::string &name,
                     const std::string &origin);

} // namespace tessel::graph

#endif
