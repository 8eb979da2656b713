// A mapped ONNX node's kernel as a compile-facade request (graph/OnnxKernel.h).
#include "graph/OnnxKernel.h"

#include "scheduler/AutoSchedule.h"

namespace tessel::graph {

Tensor viewed_tensor(const FileTensor &t, const std::vector<int64_t> &dims, const std::string &name,
                     const std::string &origin) {
    FileTensor v = t;
    v.dims = dims;
    return to_tensor(v, name, origin);
}

OnnxKernelRequest onnx_kernel_request(const OnnxNode &node, const OnnxMapping &m,
                                      const std::vector<const FileTensor *> &inputs, const std::string &arch,
                                      const std::function<std::string(const std::string &)> &origin_of) {
    OnnxKernelRequest r;
    CompileRequest &req = r.request;
    req.generator = m.generator;
    req.params = m.params;
    req.arch = arch;
    req.check_cpu_schedule = false; // the NPU is checked against Halide's CPU result (the reference) all the same
    AutoSchedule as = auto_schedule_for(m.generator, m.params, arch);
    req.schedule = as.spec;
    r.schedule = "auto (" + as.form + " form)";
    for (size_t i = 0; i < as.warnings.size(); i++) {
        r.schedule += (i ? "; " : ": ") + as.warnings[i];
    }
    for (const OnnxKernelInput &ki : m.inputs) {
        const std::string &name = node.inputs[ki.node_input];
        GivenTensor g;
        g.origin = origin_of(name);
        g.tensor = viewed_tensor(ki.converted ? *ki.converted : *inputs[ki.node_input], ki.dims, ki.name, g.origin);
        req.given_inputs.push_back(std::move(g));
    }
    return r;
}

} // namespace tessel::graph
