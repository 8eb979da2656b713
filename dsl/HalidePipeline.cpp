#include "dsl/HalidePipeline.h"

#include "dsl/Generator.h"
#include "npu_target/common/Error.h"
#include "npu_target/ir/NpuIR.h"

#include <map>
#include <set>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace tessel {

using namespace Halide;

Type halide_type(DType t) { return nir::halide_type_of(t); }

DType dtype_of(const Type &t, const std::string &what) {
    if (t.is_scalar()) {
        if (auto d = nir::dtype_of_type(t)) {
            return *d;
        }
    }
    std::ostringstream os;
    os << t;
    user_error(what, " has type ", os.str(), ", which the NPU does not support (int8, uint8, int16, int32, fp16, bf16, fp32)");
}

DType parse_dtype_param(const std::string &value, const std::string &param_name) {
    auto t = parse_dtype(value);
    if (!t) {
        user_error("parameter ", param_name, "=", value, " is not an element type (int8, uint8, int16, int32, fp16, bf16, fp32)");
    }
    return *t;
}

Target host_target() {
    Target t = get_jit_target_from_environment();
#if defined(__x86_64__)
    // Halide 14 reports AVX512_SapphireRapids on any CPU with avx512_bf16 (e.g.
    // AMD Zen 4), then emits avx512_fp16 instructions that fault there. Keep the
    // feature only when CPUID says the CPU has AVX512-FP16 (leaf 7, EDX bit 23).
    unsigned a = 0, b = 0, c = 0, d = 0;
    bool has_fp16 = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 23));
    if (!has_fp16 && t.has_feature(Target::AVX512_SapphireRapids)) {
        t = t.without_feature(Target::AVX512_SapphireRapids);
    }
#endif
    return t;
}

DType accumulator_of(DType t) { return dtype_is_float(t) ? DType::FP32 : DType::Int32; }

namespace {

// GeneratorBase::build_pipeline() and configure are protected; naming it through a derived
// class yields a pointer-to-member of the base that can be applied to any generator.
struct GeneratorAccess : Internal::GeneratorBase {
    static Pipeline build(Internal::GeneratorBase &g) {
        (g.*(&GeneratorAccess::ensure_configure_has_been_called))();
        return (g.*(&GeneratorAccess::build_pipeline))();
    }
};

// Finds the input Parameters reachable from the outputs' definitions.
class FindInputParams : public Internal::IRGraphVisitor {
public:
    std::map<std::string, Internal::Parameter> params;

protected:
    using IRGraphVisitor::visit;
    void visit(const Internal::Call *op) override {
        if (op->param.defined() && op->param.is_buffer()) {
            params.emplace(op->param.name(), op->param);
        }
        IRGraphVisitor::visit(op);
    }
    void visit(const Internal::Variable *op) override {
        if (op->param.defined() && op->param.is_buffer()) {
            params.emplace(op->param.name(), op->param);
        }
    }
};

std::vector<int64_t> shape_from_estimates(const Internal::Parameter &p, const std::string &gen) {
    std::vector<int64_t> shape;
    for (int d = 0; d < p.dimensions(); d++) {
        Expr mn = p.min_constraint_estimate(d), ex = p.extent_constraint_estimate(d);
        const int64_t *emin = mn.defined() ? Internal::as_const_int(mn) : nullptr;
        const int64_t *eext = ex.defined() ? Internal::as_const_int(ex) : nullptr;
        if (!eext) {
            user_error("generator '", gen, "': input ", p.name(), " has no constant estimate for dimension ", d,
                       "; call ", p.name(), ".set_estimates({...}) in generate()");
        }
        if (emin && *emin != 0) {
            user_error("generator '", gen, "': input ", p.name(), " dimension ", d, " starts at ", *emin,
                       "; Tessel inputs must start at 0");
        }
        shape.push_back(*eext);
    }
    return shape;
}

} // namespace

HalidePipeline build_halide_pipeline(const std::string &generator, const ParamMap &params) {
    HalidePipeline hp;
    hp.generator = generator;
    hp.params = params;
    try {
        GeneratorContext ctx(host_target().without_feature(Target::JIT));
        hp.gen = Internal::GeneratorRegistry::create(generator, ctx);
        Internal::GeneratorParamsMap gp;
        for (const auto &kv : params) {
            gp[kv.first] = Internal::StringOrLoopLevel(kv.second);
        }
        hp.gen->set_generator_param_values(gp);
        hp.pipeline = GeneratorAccess::build(*hp.gen);
    } catch (const Halide::Error &e) {
        user_error("generator '", generator, "' with ", format_params(params), ": ", e.what());
    }

    FindInputParams finder;
    for (Func f : hp.pipeline.outputs()) {
        std::map<std::string, Internal::Function> env = Internal::build_environment({f.function()});
        for (auto &kv : env) {
            kv.second.accept(&finder);
        }
        PipelineOutput out;
        out.name = f.name();
        if (f.output_types().size() != 1) {
            user_error("generator '", generator, "': output ", f.name(), " is a tuple; Tessel supports single-valued outputs");
        }
        out.dtype = dtype_of(f.output_types()[0], "output " + f.name());
        const auto &est = f.function().schedule().estimates();
        if (static_cast<int>(est.size()) != f.dimensions()) {
            user_error("generator '", generator, "': output ", f.name(), " has ", est.size(), " estimates for ",
                       f.dimensions(), " dimensions; call ", f.name(), ".set_estimates({...}) in generate()");
        }
        for (int d = 0; d < f.dimensions(); d++) {
            const auto &b = est[d];
            const int64_t *mn = Internal::as_const_int(b.min);
            const int64_t *ex = Internal::as_const_int(b.extent);
            if (!mn || !ex || *mn != 0) {
                user_error("generator '", generator, "': output ", f.name(), " needs constant estimates starting at 0 (dimension ", d, ")");
            }
            out.shape.push_back(*ex);
        }
        out.func = f;
        hp.outputs.push_back(std::move(out));
    }
    for (auto &kv : finder.params) {
        PipelineInput in;
        in.name = kv.first;
        in.param = kv.second;
        in.dtype = dtype_of(kv.second.type(), "input " + kv.first);
        in.shape = shape_from_estimates(kv.second, generator);
        hp.inputs.push_back(std::move(in));
    }
    return hp;
}

namespace {
Buffer<> wrap(Tensor &t) {
    std::vector<halide_dimension_t> dims;
    int32_t stride = 1;
    for (int64_t e : t.shape) {
        dims.push_back(halide_dimension_t(0, static_cast<int32_t>(e), stride));
        stride *= static_cast<int32_t>(e);
    }
    return Buffer<>(halide_type(t.dtype), t.data.data(), static_cast<int>(dims.size()), dims.data());
}
} // namespace

void compute_intermediates_at_root(HalidePipeline &p, bool reductions_only) {
    std::vector<Halide::Internal::Function> outs;
    std::set<std::string> out_names;
    for (const auto &o : p.outputs) {
        outs.push_back(o.func.function());
        out_names.insert(o.func.name());
    }
    for (auto &[name, f] : Halide::Internal::build_environment(outs)) {
        if (!out_names.count(name) && (!reductions_only || !f.updates().empty())) {
            Func(f).compute_root();
        }
    }
}

HalidePipeline build_reference_pipeline(const std::string &generator, const ParamMap &params) {
    HalidePipeline p = build_halide_pipeline(generator, params);
    compute_intermediates_at_root(p, true);
    return p;
}

std::vector<Tensor> run_on_cpu(HalidePipeline &p, const std::vector<Tensor> &inputs) {
    std::vector<Tensor> in_copies = inputs; // Halide buffers alias these
    for (auto &in : p.inputs) {
        Tensor *t = nullptr;
        for (auto &c : in_copies) {
            if (c.name == in.name) {
                t = &c;
            }
        }
        if (!t) {
            user_error("no tensor given for input ", in.name, " of generator '", p.generator, "'");
        }
        if (t->shape != in.shape || t->dtype != in.dtype) {
            Tensor want(in.name, in.dtype, in.shape);
            user_error("input ", t->describe(), " does not match the generator's ", want.describe());
        }
        in.param.set_buffer(wrap(*t));
    }
    std::vector<Tensor> outs;
    for (const auto &o : p.outputs) {
        outs.emplace_back(o.name, o.dtype, o.shape);
        poison(outs.back());
    }
    try {
        std::vector<Buffer<>> bufs;
        for (auto &t : outs) {
            bufs.push_back(wrap(t));
        }
        p.pipeline.realize(Realization(bufs), host_target());
    } catch (const Halide::Error &e) {
        for (auto &in : p.inputs) {
            in.param.set_buffer(Buffer<>());
        }
        user_error("running generator '", p.generator, "' on the CPU failed: ", e.what());
    }
    for (auto &in : p.inputs) {
        in.param.set_buffer(Buffer<>());
    }
    return outs;
}

std::vector<Tensor> make_random_inputs(const HalidePipeline &p, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Tensor> out;
    for (const auto &in : p.inputs) {
        out.emplace_back(in.name, in.dtype, in.shape);
        fill_random(out.back(), rng);
    }
    return out;
}

} // namespace tessel
