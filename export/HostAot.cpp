#include "export/HostAot.h"

#include "dsl/Generator.h"
#include "dsl/HalidePipeline.h"
#include "npu_target/common/Error.h"

namespace tessel::exporter {

namespace {

Halide::Target aot_target(const std::string &text) {
    Halide::Target t = text.empty() ? host_target() : Halide::Target(text);
    return t.without_feature(Halide::Target::JIT);
}

} // namespace

std::string resolve_host_target(const std::string &requested) {
    if (!requested.empty() && !Halide::Target::validate_target_string(requested)) {
        user_error("--host-target '", requested, "' is not a Halide target (e.g. x86-64-linux-avx2)");
    }
    return aot_target(requested).to_string();
}

void compile_host_entry(const std::string &generator, const ParamMap &params, const std::vector<std::string> &arg_order,
                        const std::string &fn_name, const std::string &object_path, const std::string &target) {
    HalidePipeline p = build_halide_pipeline(generator, params);
    std::vector<Halide::Argument> args;
    std::vector<std::string> outputs;
    for (const auto &o : p.outputs) {
        outputs.push_back(o.name.substr(0, o.name.find('$')));
    }
    size_t next_output = 0;
    for (const auto &name : arg_order) {
        bool found = false;
        for (const auto &in : p.inputs) {
            if (in.name.substr(0, in.name.find('$')) == name) {
                args.emplace_back(in.name, Halide::Argument::InputBuffer, halide_type(in.dtype),
                                  static_cast<int>(in.shape.size()), Halide::ArgumentEstimates{});
                found = true;
            }
        }
        if (!found) {
            // Halide appends the outputs after the inputs, in generator order:
            // the NPU program must order them the same way.
            if (next_output >= outputs.size() || outputs[next_output] != name.substr(0, name.find('$'))) {
                internal_error("generator '", generator, "': NPU argument ", name,
                               " is neither an input nor the next output of the Halide pipeline");
            }
            next_output++;
        }
    }
    Halide::Target t = aot_target(target).with_feature(Halide::Target::NoRuntime);
    try {
        p.pipeline.compile_to({{Halide::OutputFileType::object, object_path}}, args, fn_name, t);
    } catch (const Halide::Error &e) {
        user_error("compiling generator '", generator, "' for the host CPU (", t.to_string(), ") failed: ", e.what());
    }
}

void compile_host_runtime(const std::string &object_path, const std::string &target) {
    try {
        Halide::compile_standalone_runtime(object_path, aot_target(target));
    } catch (const Halide::Error &e) {
        user_error("compiling Halide's runtime for ", target, " failed: ", e.what());
    }
}

} // namespace tessel::exporter
