#include "dsl/HostBench.h"

#include "dsl/Applier.h"
#include "dsl/Generator.h"
#include "dsl/HalidePipeline.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"

#include <algorithm>
#include <chrono>

namespace tessel {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Halide::Buffer<> wrap_tensor(Tensor &t) {
    std::vector<halide_dimension_t> dims;
    int32_t stride = 1;
    for (int64_t e : t.shape) {
        dims.push_back(halide_dimension_t(0, static_cast<int32_t>(e), stride));
        stride *= static_cast<int32_t>(e);
    }
    return Halide::Buffer<>(halide_type(t.dtype), t.data.data(), static_cast<int>(dims.size()), dims.data());
}

} // namespace

HostTiming time_on_host(const std::string &generator, const ParamMap &params, const ScheduleSpec &schedule,
                        uint64_t seed, int runs) {
    HostTiming r;
    try {
        r.params = resolve_params(find_generator(generator), params);
        HalidePipeline p = build_halide_pipeline(generator, r.params);
        ScheduleSpec spec = schedule;
        spec.assign_ids();
        // The applier checks NPU directives against an arch; a host schedule has
        // none, so any preset serves.
        ArchSpec arch = load_arch("ascend-like");
        NpuSchedule npu = apply_schedule(p, spec, arch);
        if (!npu.staged.empty() || !npu.accumulate.empty() || !npu.tensorize.empty() || !npu.core_splits.empty()) {
            user_error("a host schedule takes Halide directives only (no stage, tensorize or parallel across cores)");
        }
        r.inputs = make_random_inputs(p, seed);
        for (auto &in : p.inputs) {
            for (auto &t : r.inputs) {
                if (t.name == in.name) {
                    in.param.set_buffer(wrap_tensor(t));
                }
            }
        }
        for (const auto &o : p.outputs) {
            r.outputs.emplace_back(o.name, o.dtype, o.shape);
            poison(r.outputs.back());
        }
        std::vector<Halide::Buffer<>> bufs;
        for (auto &t : r.outputs) {
            bufs.push_back(wrap_tensor(t));
        }
        auto t0 = Clock::now();
        p.pipeline.compile_jit(host_target());
        r.jit_ms = ms_since(t0);
        p.pipeline.realize(Halide::Realization(bufs), host_target()); // warm-up
        std::vector<double> times;
        for (int i = 0; i < std::max(1, runs); ++i) {
            auto t1 = Clock::now();
            p.pipeline.realize(Halide::Realization(bufs), host_target());
            times.push_back(ms_since(t1));
        }
        for (auto &in : p.inputs) {
            in.param.set_buffer(Halide::Buffer<>());
        }
        std::sort(times.begin(), times.end());
        r.runs = static_cast<int>(times.size());
        r.best_ms = times.front();
        r.median_ms = times[times.size() / 2];
        r.ok = true;
    } catch (const UserError &e) {
        r.error = e.what();
    } catch (const Halide::Error &e) {
        r.error = std::string("Halide: ") + e.what();
    }
    return r;
}

} // namespace tessel
