#include "dsl/Compile.h"

#include "dsl/Lowering.h"
#include "dsl/NpuCompile.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/passes/TilingPlan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>
#include <cstdlib>

namespace tessel {

namespace {

// A message "…directive d3 (#2, …): …" names its directive; the facade keeps both.
Diagnostic diagnostic(Diagnostic::Severity sev, const std::string &msg) {
    Diagnostic d;
    d.severity = sev;
    d.message = msg;
    size_t p = msg.find("directive ");
    if (p == std::string::npos) {
        return d;
    }
    size_t id_start = p + 10;
    size_t paren = msg.find(" (#", id_start);
    if (paren == std::string::npos || msg.find(' ', id_start) < paren) {
        return d;
    }
    d.directive_id = msg.substr(id_start, paren - id_start);
    d.directive_index = std::atoi(msg.c_str() + paren + 3);
    return d;
}

// Backend messages name the directive as "directive ID (...)" without its index:
// look the id up in the schedule.
Diagnostic diagnostic(Diagnostic::Severity sev, const std::string &msg, const ScheduleSpec &spec) {
    Diagnostic d = diagnostic(sev, msg);
    if (!d.directive_id.empty()) {
        return d;
    }
    size_t p = msg.find("directive ");
    if (p == std::string::npos) {
        return d;
    }
    size_t start = p + 10, end = msg.find_first_of(" ])", start);
    std::string id = msg.substr(start, end == std::string::npos ? std::string::npos : end - start);
    for (size_t i = 0; i < spec.directives.size(); i++) {
        if (spec.directives[i].id == id) {
            d.directive_id = id;
            d.directive_index = static_cast<int>(i);
        }
    }
    return d;
}

ScheduleSpec with_ids(ScheduleSpec s) {
    s.assign_ids();
    return s;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The compile steps shared by compile() and run(); leaves the scheduled
// pipeline in `p` and, for the NPU, the build in `npu` (needs `arch` alive).
void compile_into(const CompileRequest &req, CompileResult &r, HalidePipeline &p, ArchSpec &arch,
                  std::unique_ptr<NpuBuild> &npu) {
    ScheduleSpec spec = req.schedule;
    spec.assign_ids();
    r.json_text = schedule_to_json(spec);
    r.cpp_text = schedule_to_cpp(spec);
    r.schedule_hash = schedule_hash(spec);
    GeneratorInfo info = find_generator(req.generator);
    r.params = resolve_params(info, req.params);
    arch = load_arch(req.arch);
    r.arch_name = arch.name;
    p = build_halide_pipeline(req.generator, r.params);
    if (!req.npu) {
        LoweredPipeline lp = lower_pipeline(p, spec, arch);
        r.stmt_text = lp.stmt_text;
        r.loop_nest = lp.loop_nest;
        for (const auto &w : lp.warnings) {
            r.diagnostics.push_back(diagnostic(Diagnostic::Warning, w));
        }
        r.ok = true;
        return;
    }
    PassOptions opt;
    opt.dump_after = req.dump_after;
    opt.time_passes = req.time_passes;
    opt.skip = req.skip_passes;
    npu = std::make_unique<NpuBuild>(build_npu(p, spec, arch, opt));
    const LoweredPipeline &lp = npu->lowered;
    r.stmt_text = lp.stmt_text;
    r.loop_nest = lp.loop_nest;
    for (const auto &w : lp.warnings) {
        r.diagnostics.push_back(diagnostic(Diagnostic::Warning, w));
    }
    const BackendResult &be = npu->backend;
    for (const auto &d : be.diagnostics) {
        Diagnostic x;
        x.severity = d.severity == BackendDiagnostic::Severity::Warning ? Diagnostic::Warning : Diagnostic::Note;
        x.message = d.message;
        x.directive_id = d.directive_id;
        for (size_t i = 0; i < spec.directives.size(); i++) {
            if (spec.directives[i].id == d.directive_id) {
                x.directive_index = static_cast<int>(i);
            }
        }
        r.diagnostics.push_back(x);
    }
    r.has_program = true;
    r.program = be.program;
    r.asm_text = isa::disassemble(be.program, &arch);
    r.npu_ir_text = nir::to_string(be.module);
    r.pass_dumps = be.dumps;
    for (const auto &t : be.timings) {
        r.pass_times.push_back({t.pass, t.ms, t.changed});
    }
    r.tiling = tiling_plan(be.schedule_module.body.defined() ? be.schedule_module : be.module);
    r.lifetimes = be.module.lifetimes;
    r.level_peak_bytes = be.module.level_peak_bytes;
    r.roofline = compute_roofline(req.generator, r.params, arch, be.program.cores);
    r.ok = true;
}

std::string output_name(const std::string &func_name) { return func_name.substr(0, func_name.find('$')); }

// The pipeline's inputs and outputs as TensorBinding sees them.
std::vector<TensorSlot> input_slots(const HalidePipeline &p) {
    std::vector<TensorSlot> v;
    for (const auto &in : p.inputs) {
        v.push_back({in.name, in.dtype, in.shape});
    }
    return v;
}
std::vector<TensorSlot> output_slots(const HalidePipeline &p) {
    std::vector<TensorSlot> v;
    for (const auto &o : p.outputs) {
        v.push_back({output_name(o.name), o.dtype, o.shape});
    }
    return v;
}

// Compares the outputs with the expected ones that were given (bound in output order).
void check_expected(const CompileRequest &req, const std::vector<std::optional<GivenTensor>> &expected,
                    const std::vector<Tensor> &got, const std::string &what, RunReport &rep) {
    rep.expected_checked = true;
    rep.expected_verified = true;
    for (size_t i = 0; i < expected.size(); i++) {
        if (!expected[i]) {
            continue;
        }
        ExpectedComparison c = compare_expected(got[i], *expected[i], req.expect_rtol, req.expect_atol);
        rep.expected_verified = rep.expected_verified && c.ok;
        rep.expected_max_abs_error = std::max(rep.expected_max_abs_error, c.max_abs_error);
        rep.expected_comparison += (rep.expected_comparison.empty() ? "" : "; ") + what + " " + c.message;
    }
}

double output_tolerance(DType t) {
    if (t == DType::FP32) {
        return 1e-4;
    }
    return dtype_is_float(t) ? 1e-3 : 0;
}

} // namespace

const char *severity_name(Diagnostic::Severity s) {
    switch (s) {
    case Diagnostic::Error:
        return "error";
    case Diagnostic::Warning:
        return "warning";
    case Diagnostic::Note:
        return "note";
    }
    return "error";
}

CompileResult compile(const CompileRequest &req) {
    CompileResult r;
    auto t0 = std::chrono::steady_clock::now();
    try {
        HalidePipeline p;
        ArchSpec arch;
        std::unique_ptr<NpuBuild> npu;
        compile_into(req, r, p, arch, npu);
    } catch (const OverflowError &e) {
        r.ok = false;
        r.lifetimes = e.lifetimes; // the view draws the overflow in red
        r.diagnostics.push_back(diagnostic(Diagnostic::Error, e.what(), with_ids(req.schedule)));
    } catch (const UserError &e) {
        r.ok = false;
        r.diagnostics.push_back(diagnostic(Diagnostic::Error, e.what(), with_ids(req.schedule)));
    }
    r.compile_ms = ms_since(t0);
    return r;
}

bool ReferenceCache::find(const std::string &key, std::vector<Tensor> &out) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto &e : entries_) {
        if (e.first == key) {
            out = e.second;
            return true;
        }
    }
    return false;
}

void ReferenceCache::put(const std::string &key, const std::vector<Tensor> &outputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const auto &e) { return e.first == key; }),
                   entries_.end());
    entries_.emplace_back(key, outputs);
    if (entries_.size() > kEntries) {
        entries_.erase(entries_.begin());
    }
}

namespace {

// Hands each event to two sinks (the trace file and the caller's).
class TeeSink : public sim::TraceSink {
public:
    TeeSink(sim::TraceSink *a, sim::TraceSink *b) : a_(a), b_(b) {}
    void event(const sim::TraceEvent &e) override {
        a_->event(e);
        b_->event(e);
    }

private:
    sim::TraceSink *a_, *b_;
};

} // namespace

RunReport run(const CompileRequest &req, uint64_t seed, bool want_trace) {
    RunReport rep;
    rep.generator = req.generator;
    rep.params = req.params;
    rep.arch = req.arch;
    rep.seed = seed;
    CompileResult r;
    auto t0 = std::chrono::steady_clock::now();
    try {
        HalidePipeline p;
        ArchSpec arch;
        std::unique_ptr<NpuBuild> npu;
        compile_into(req, r, p, arch, npu);
        rep.compile_ms = ms_since(t0);
        rep.params = r.params;
        rep.arch = r.arch_name;
        rep.schedule_hash = r.schedule_hash;
        const std::string owner = "generator '" + req.generator + "' (" + format_params(r.params) + ")";
        std::vector<Tensor> inputs = req.given_inputs.empty() ? make_random_inputs(p, seed)
                                                              : bind_inputs(req.given_inputs, input_slots(p), owner);
        rep.inputs_given = !req.given_inputs.empty();
        std::vector<std::optional<GivenTensor>> expected =
            bind_tensors(req.expected_outputs, output_slots(p), "output", owner);
        // The NPU runs first: its run is bounded by the simulator's budgets, so a
        // problem too large to finish (an unscheduled GEMM with M = 10^6) stops there
        // with the budget's message instead of in an unbounded CPU reference.
        std::vector<Tensor> got;
        std::string what = "CPU (scheduled)";
        if (npu) {
            sim::SimOptions so;
            so.trace = want_trace;
            so.max_instructions = req.max_instructions;
            so.max_cycles = req.max_cycles;
            so.max_trace_events = req.max_trace_events;
            so.control = req.control.get();
            auto trace_file = sim::TraceFile::open(req.trace_file, npu->backend.program, so);
            TeeSink tee(so.trace_sink, req.trace_sink);
            if (req.trace_sink) {
                so.trace_sink = so.trace_sink ? static_cast<sim::TraceSink *>(&tee) : req.trace_sink;
            }
            NpuRunResult out;
            sim::TraceFile::record(trace_file.get(), [&]() -> const sim::SimReport & {
                out = run_npu_program(*npu, arch, inputs, so);
                return out.report;
            });
            got = std::move(out.outputs);
            what = "NPU";
            rep.cycles = static_cast<int64_t>(out.report.cycles);
            rep.t_phys_cycles = static_cast<int64_t>(std::llround(r.roofline.t_phys_cycles));
            rep.efficiency = out.report.cycles ? r.roofline.t_phys_cycles / static_cast<double>(out.report.cycles) : 0;
            rep.binding_resource = r.roofline.binding_resource;
            rep.roofline = roofline_points(r.roofline, out.report, arch);
            for (const auto &ps : out.report.pipes) {
                std::string name = out.report.cores > 1 ? ps.pipe + "@" + std::to_string(ps.core) : ps.pipe;
                rep.pipes[name] = ps.busy_pct;
            }
            rep.sim_summary = sim::summarize(out.report);
            rep.provenance = npu->backend.program.provenance;
            rep.sim = std::move(out.report);
        }
        std::vector<Tensor> want;
        const bool cacheable = req.reference_cache && req.given_inputs.empty();
        const std::string ref_key = req.generator + "(" + format_params(r.params) + ") seed " + std::to_string(seed);
        if (!cacheable || !req.reference_cache->find(ref_key, want)) {
            HalidePipeline ref_p = build_reference_pipeline(req.generator, r.params);
            want = run_on_cpu(ref_p, inputs);
            if (cacheable) {
                req.reference_cache->put(ref_key, want);
            }
        }
        std::vector<Tensor> cpu;
        if (req.check_cpu_schedule || !npu) {
            cpu = run_on_cpu(p, inputs);
            rep.cpu_schedule_checked = true;
            rep.cpu_schedule_verified = true;
            for (size_t i = 0; i < cpu.size(); i++) {
                double tol = output_tolerance(cpu[i].dtype);
                rep.cpu_schedule_verified =
                    rep.cpu_schedule_verified && compare(cpu[i], want[i], tol, tol).mismatches == 0;
            }
        }
        if (!npu) {
            got = cpu;
        }
        TESSEL_INTERNAL_ASSERT(got.size() == want.size(), "output counts differ");
        rep.verified = true;
        for (size_t i = 0; i < got.size(); i++) {
            bool fp = dtype_is_float(got[i].dtype);
            double tol = output_tolerance(got[i].dtype);
            Comparison c = compare(got[i], want[i], tol, tol);
            rep.verified = rep.verified && c.mismatches == 0;
            rep.max_abs_error = std::max(rep.max_abs_error, c.max_abs_error);
            std::ostringstream rule;
            rule << "|got - want| <= " << tol << " + " << tol << " * |want|";
            rep.comparison += (rep.comparison.empty() ? "" : "; ") + what + " " + output_name(got[i].name) + ": " +
                              (fp ? rule.str() : std::string("exact")) + " (" + dtype_name(got[i].dtype) + "): " + c.message;
        }
        if (!req.expected_outputs.empty()) {
            check_expected(req, expected, got, what, rep);
        }
        if (req.keep_outputs) {
            rep.outputs = std::move(got);
            for (auto &t : rep.outputs) {
                t.name = output_name(t.name);
            }
        }
    } catch (const UserError &e) {
        if (rep.compile_ms == 0) {
            rep.compile_ms = ms_since(t0);
        }
        rep.verified = false;
        rep.cancelled = dynamic_cast<const sim::SimCancelled *>(&e) != nullptr;
        r.diagnostics.push_back(diagnostic(Diagnostic::Error, e.what(), with_ids(req.schedule)));
    }
    rep.diagnostics = r.diagnostics;
    return rep;
}

std::string run_report_json(const RunReport &r) {
    nlohmann::ordered_json j;
    j["generator"] = r.generator;
    j["params"] = nlohmann::ordered_json::object();
    for (const auto &kv : r.params) {
        j["params"][kv.first] = kv.second;
    }
    j["arch"] = r.arch;
    j["schedule_hash"] = r.schedule_hash;
    j["seed"] = r.seed;
    if (r.inputs_given) {
        j["inputs"] = "given"; // CompileRequest::given_inputs: the seed was not used
    }
    j["verified"] = r.verified;
    j["max_abs_error"] = r.max_abs_error;
    j["comparison"] = r.comparison;
    j["compile_ms"] = r.compile_ms;
    if (r.expected_checked) {
        j["expected"] = {{"verified", r.expected_verified},
                         {"max_abs_error", r.expected_max_abs_error},
                         {"comparison", r.expected_comparison}};
    }
    if (r.cpu_schedule_checked) {
        j["cpu_schedule_verified"] = r.cpu_schedule_verified;
    } else {
        j["cpu_schedule_verified"] = nullptr; // not run (CompileRequest::check_cpu_schedule)
    }
    // Filled by the NPU path; absent until then.
    if (r.cycles) {
        j["cycles"] = *r.cycles;
    }
    if (r.t_phys_cycles) {
        j["t_phys_cycles"] = *r.t_phys_cycles;
    }
    if (r.efficiency) {
        j["efficiency"] = *r.efficiency;
    }
    if (r.binding_resource) {
        j["binding_resource"] = *r.binding_resource;
    }
    if (r.roofline) {
        const RooflinePoints &p = *r.roofline;
        nlohmann::ordered_json rj;
        rj["valid"] = p.valid;
        if (!p.valid) {
            rj["why_not"] = p.why_not;
        } else {
            rj["work_unit"] = p.work_unit;
            rj["work"] = p.work;
            rj["cycles"] = p.cycles;
            rj["achieved_ops_per_cycle"] = p.achieved;
            rj["limit_intensity"] = p.limit_intensity;
            rj["limit_ops_per_cycle"] = p.limit_ops_per_cycle;
            rj["binding"] = p.binding;
            rj["hint"] = p.hint;
            rj["roofs"] = nlohmann::ordered_json::array();
            for (const auto &roof : p.roofs) {
                nlohmann::ordered_json o;
                o["name"] = roof.name;
                o["memory"] = roof.memory;
                o["peak"] = roof.peak;
                if (roof.memory) {
                    o["bytes"] = roof.bytes;
                    o["compulsory_bytes"] = roof.compulsory_bytes;
                    o["intensity"] = roof.intensity;
                }
                o["bound"] = roof.bound;
                o["utilisation"] = roof.utilisation;
                rj["roofs"].push_back(o);
            }
        }
        j["roofline"] = rj;
    }
    if (!r.pipes.empty()) {
        j["pipes"] = nlohmann::ordered_json::object();
        for (const auto &kv : r.pipes) {
            j["pipes"][kv.first] = kv.second;
        }
    }
    j["diagnostics"] = nlohmann::ordered_json::array();
    for (const auto &d : r.diagnostics) {
        nlohmann::ordered_json dj;
        dj["severity"] = severity_name(d.severity);
        dj["message"] = d.message;
        if (!d.directive_id.empty()) {
            dj["directive_id"] = d.directive_id;
            dj["directive_index"] = d.directive_index;
        }
        j["diagnostics"].push_back(dj);
    }
    return j.dump(2) + "\n";
}

} // namespace tessel
