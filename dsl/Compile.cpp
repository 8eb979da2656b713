#include "dsl/Compile.h"

#include "dsl/Lowering.h"
#include "npu_target/common/Error.h"

#include <nlohmann/json.hpp>

#include <chrono>
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

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The compile steps shared by compile() and run(); leaves the scheduled pipeline in `p`.
void compile_into(const CompileRequest &req, CompileResult &r, HalidePipeline &p) {
    ScheduleSpec spec = req.schedule;
    spec.assign_ids();
    r.json_text = schedule_to_json(spec);
    r.cpp_text = schedule_to_cpp(spec);
    r.schedule_hash = schedule_hash(spec);
    GeneratorInfo info = find_generator(req.generator);
    r.params = resolve_params(info, req.params);
    ArchSpec arch = load_arch(req.arch);
    r.arch_name = arch.name;
    p = build_halide_pipeline(req.generator, r.params);
    LoweredPipeline lp = lower_pipeline(p, spec, arch);
    r.stmt_text = lp.stmt_text;
    r.loop_nest = lp.loop_nest;
    for (const auto &w : lp.warnings) {
        r.diagnostics.push_back(diagnostic(Diagnostic::Warning, w));
    }
    // The NPU backend (npu_target/lower) plugs in here: lower_to_npu(lp.stmt, ...) fills
    // the program, asm, tiling plan and buffer lifetimes of the result.
    r.ok = true;
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
        compile_into(req, r, p);
    } catch (const UserError &e) {
        r.ok = false;
        r.diagnostics.push_back(diagnostic(Diagnostic::Error, e.what()));
    }
    r.compile_ms = ms_since(t0);
    return r;
}

RunReport run(const CompileRequest &req, uint64_t seed) {
    RunReport rep;
    rep.generator = req.generator;
    rep.params = req.params;
    rep.arch = req.arch;
    rep.seed = seed;
    CompileResult r;
    auto t0 = std::chrono::steady_clock::now();
    try {
        HalidePipeline p;
        compile_into(req, r, p);
        rep.compile_ms = ms_since(t0);
        rep.params = r.params;
        rep.arch = r.arch_name;
        rep.schedule_hash = r.schedule_hash;
        std::vector<Tensor> inputs = make_random_inputs(p, seed);
        std::vector<Tensor> got = run_on_cpu(p, inputs);
        HalidePipeline ref_p = build_halide_pipeline(req.generator, r.params);
        std::vector<Tensor> want = run_on_cpu(ref_p, inputs);
        TESSEL_INTERNAL_ASSERT(got.size() == want.size(), "output counts differ");
        rep.verified = true;
        for (size_t i = 0; i < got.size(); i++) {
            bool fp = dtype_is_float(got[i].dtype);
            double tol = fp ? 1e-4 : 0;
            Comparison c = compare(got[i], want[i], tol, tol);
            rep.verified = rep.verified && c.mismatches == 0;
            rep.max_abs_error = std::max(rep.max_abs_error, c.max_abs_error);
            rep.comparison += (rep.comparison.empty() ? "" : "; ") + got[i].name + ": " +
                              (fp ? std::string("|got - want| <= 1e-4 + 1e-4 * |want|") : std::string("exact")) + " (" +
                              dtype_name(got[i].dtype) + "): " + c.message;
        }
    } catch (const UserError &e) {
        if (rep.compile_ms == 0) {
            rep.compile_ms = ms_since(t0);
        }
        rep.verified = false;
        r.diagnostics.push_back(diagnostic(Diagnostic::Error, e.what()));
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
    j["verified"] = r.verified;
    j["max_abs_error"] = r.max_abs_error;
    j["comparison"] = r.comparison;
    j["compile_ms"] = r.compile_ms;
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
