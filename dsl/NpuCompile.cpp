#include "dsl/NpuCompile.h"

#include "npu_target/common/Error.h"

namespace tessel {

NpuBuild build_npu(HalidePipeline &p, const ScheduleSpec &spec, const ArchSpec &arch, const PassOptions &opt) {
    NpuBuild b;
    b.lowered = lower_pipeline(p, spec, arch);
    b.input.kernel_name = p.generator;
    b.input.arch = &arch;
    b.input.npu = b.lowered.npu;
    for (const auto &i : b.lowered.inputs) {
        b.input.args.push_back({i.name, i.dtype, i.shape, false});
    }
    for (const auto &o : b.lowered.outputs) {
        b.input.args.push_back({o.name, o.dtype, o.shape, true});
    }
    b.backend = run_backend(b.lowered.stmt, b.input, opt);
    return b;
}

NpuRunResult run_npu_program(const NpuBuild &b, const ArchSpec &arch, const std::vector<Tensor> &inputs,
                             const sim::SimOptions &opt) {
    std::vector<Tensor> args;
    for (const auto &a : b.input.args) {
        if (a.is_output) {
            args.emplace_back(a.name, a.dtype, a.shape);
            poison(args.back());
            continue;
        }
        const Tensor *t = nullptr;
        for (const auto &in : inputs) {
            if (in.name == a.name) {
                t = &in;
            }
        }
        if (!t) {
            user_error("no tensor given for input ", a.name, " of kernel ", b.input.kernel_name);
        }
        args.push_back(*t);
    }
    NpuRunResult r;
    r.report = sim::simulate(b.backend.program, arch, args, opt);
    for (size_t i = 0; i < args.size(); i++) {
        if (b.input.args[i].is_output) {
            r.outputs.push_back(std::move(args[i]));
        }
    }
    return r;
}

} // namespace tessel
