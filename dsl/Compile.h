#ifndef TESSEL_DSL_COMPILE_H
#define TESSEL_DSL_COMPILE_H

// The compile facade: what the IDE, the CLI, the tuner and the database call.
// Halide-free and Qt-free: requests and results are plain values, and a user
// error (a bad schedule, parameter, generator or arch) is an Error diagnostic
// in the result, never an exception.

#include "dsl/GeneratorInfo.h"
#include "dsl/Roofline.h"
#include "dsl/RooflinePoints.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/common/TensorBinding.h"
#include "npu_target/isa/Program.h"
#include "npu_target/lower/LowerInput.h"
#include "npu_target/sim/Simulator.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/** The CPU reference's outputs kept between runs of the same generator, parameters and
 * random inputs (the IDE: an edit changes the schedule, never the algorithm, so the
 * reference — a Halide JIT compile and a CPU run, most of an edit's run time — is the same).
 * Thread-safe; keeps the last few entries. */
class ReferenceCache {
public:
    /** The outputs stored under `key`, or false. */
    bool find(const std::string &key, std::vector<Tensor> &out) const;
    void put(const std::string &key, const std::vector<Tensor> &outputs);

private:
    static constexpr size_t kEntries = 4;
    mutable std::mutex mutex_;
    std::vector<std::pair<std::string, std::vector<Tensor>>> entries_; // most recent last
};

struct CompileRequest {
    std::string generator;
    ParamMap params;            // overrides of the generator's defaults
    ScheduleSpec schedule;
    std::string arch = "ascend-like"; // a preset name or a path to an ArchSpec JSON file
    std::vector<std::string> emit_kinds; // what the caller will print: stmt, loopnest, cpp, json (all are filled)
    bool npu = true;                  // run the NPU backend (program, asm, tiling, lifetimes, roofline)
    std::string dump_after;           // a backend pass name or "all": keep the NPU IR after it (pass_dumps)
    bool time_passes = false;         // fill pass_times
    std::vector<std::string> skip_passes; // optional backend passes to leave out (tessel run/compile --skip-pass)
    /** run(): also run the scheduled pipeline on the CPU and compare it with the
     * reference (cpu_schedule_verified). Costs one more JIT compile (~0.3-0.4 s);
     * the IDE turns it off to refresh its views sooner. */
    bool check_cpu_schedule = true;
    // The simulator's budgets for run() (sim::SimOptions; docs/simulator.md "Budgets"): a run
    // past them stops with an error diagnostic that says why and what to do. 0 = unlimited.
    uint64_t max_instructions = sim::kDefaultMaxInstructions;
    uint64_t max_cycles = sim::kDefaultMaxCycles;
    uint64_t max_trace_events = sim::kDefaultMaxTraceEvents; // events kept in RunReport::sim->trace
    /** run(): cancel from another thread and the count of instructions issued so far
     * (sim::RunControl; null = neither). A cancelled run ends with an error diagnostic
     * and RunReport::cancelled. */
    std::shared_ptr<sim::RunControl> control;
    std::string trace_file; // run(): stream the Chrome/Perfetto trace to this file as it runs ("" = none)
    sim::TraceSink *trace_sink = nullptr; // run(): also hand each recorded event to this as the run goes
                                          // (the IDE's partial timeline); it must outlive the run
    // run() on given data (docs/tensors.md): tensors bound to the pipeline's inputs and outputs by name,
    // else by position (npu_target/common/TensorBinding.h); element types and shapes must match.
    std::vector<GivenTensor> given_inputs;     // instead of random inputs (empty = random, from the seed)
    std::vector<GivenTensor> expected_outputs; // compared with the NPU's outputs (the CPU's when npu = false)
    double expect_rtol = 1e-3;                 // |got - want| <= expect_atol + expect_rtol * |want|:
    double expect_atol = 1e-7;                 //   the ONNX backend test runner's defaults
    bool keep_outputs = false;                 // fill RunReport::outputs
    /** run(): take the CPU reference's outputs from here when this generator, these parameters
     * and this seed ran before, and store them otherwise (null = always compute; never used
     * with given_inputs). */
    std::shared_ptr<ReferenceCache> reference_cache;
};

struct PassTime {
    std::string pass;
    double ms = 0;
    bool changed = false;
};

struct Diagnostic {
    enum Severity { Error, Warning, Note };
    Severity severity = Error;
    std::string message;
    std::string directive_id;   // "" when no directive is to blame
    int directive_index = -1;
};

/** "error", "warning", "note". */
const char *severity_name(Diagnostic::Severity s);

struct CompileResult {
    bool ok = false;
    std::vector<Diagnostic> diagnostics;
    ParamMap params;            // resolved (defaults + overrides)
    std::string arch_name;
    std::string stmt_text;      // Halide's lowered Stmt
    std::string loop_nest;      // indented loops, allocations, stores
    std::string cpp_text;       // the schedule as C++ builder calls
    std::string json_text;      // the schedule as canonical JSON
    std::string schedule_hash;  // FNV-1a 64 of json_text
    double compile_ms = 0;      // build pipeline + apply + lower (+ backend)
    // ---- the NPU backend (when CompileRequest::npu) ----
    bool has_program = false;
    isa::Program program;       // the NPU program (encode with isa::write_program)
    std::string asm_text;       // its disassembly
    std::string npu_ir_text;    // the NPU IR after the last pass
    std::vector<std::pair<std::string, std::string>> pass_dumps; // (pass, NPU IR after it) for dump_after
    std::vector<PassTime> pass_times;
    TilingPlan tiling;
    std::vector<BufferLifetime> lifetimes; // in program order
    std::map<std::string, int64_t> level_peak_bytes;
    Roofline roofline;          // the physical limit, from the algorithm and the shapes alone
};

/** Compiles `req`; never throws for user errors. */
CompileResult compile(const CompileRequest &req);

struct RunReport {
    std::string generator;
    ParamMap params;            // resolved
    std::string arch;           // ArchSpec name
    std::string schedule_hash;
    bool verified = false;      // scheduled output == reference (within the tolerance)
    bool cancelled = false;     // stopped through CompileRequest::control (an error diagnostic says when)
    double max_abs_error = 0;
    double compile_ms = 0;
    uint64_t seed = 0;
    std::string comparison;     // "exact (int32)" or "|got - want| <= 1e-4 + 1e-4 * |want| (fp32)", and the result
    std::vector<Diagnostic> diagnostics;
    // ---- filled by the NPU path when it lands (absent from the JSON until then) ----
    std::optional<int64_t> cycles;
    std::optional<int64_t> t_phys_cycles;
    std::optional<double> efficiency;           // t_phys_cycles / cycles
    std::optional<std::string> binding_resource;
    std::optional<RooflinePoints> roofline;     // the measured roofline: every roof, this run's point under each
    std::map<std::string, double> pipes;        // pipe name -> busy %, empty = absent
    bool cpu_schedule_verified = false;         // the scheduled pipeline on the CPU equals the reference too
    bool cpu_schedule_checked = false;          // it was run (CompileRequest::check_cpu_schedule)
    std::string sim_summary;                    // the simulator's text summary (cycles, pipes, engine edges)
    std::optional<sim::SimReport> sim;          // the whole simulation report (trace events when requested,
                                                // up to CompileRequest::max_trace_events)
    std::vector<isa::Provenance> provenance;    // the program's provenance table (TraceEvent::prov indexes it)
    // ---- given data (CompileRequest::given_inputs, expected_outputs, keep_outputs) ----
    bool inputs_given = false;                  // the inputs were CompileRequest::given_inputs, not random
    bool expected_checked = false;              // expected outputs were compared
    bool expected_verified = false;             // ... and every one matched
    double expected_max_abs_error = 0;
    std::string expected_comparison;            // per output: the rule, the result, the largest error and where
    std::vector<Tensor> outputs;                // the NPU's outputs (the CPU's when npu = false), when keep_outputs
};

/** Compiles `req` for the NPU, runs the program on the simulator and the
 * unscheduled pipeline (the reference) on the CPU through Halide's JIT, on the
 * same fresh random inputs (from `seed`; NPU outputs poisoned first), and
 * compares them: integers exactly; fp32 outputs within 1e-4 absolute + 1e-4
 * relative, fp16/bf16 outputs within 1e-3 + 1e-3 relative. `verified` is that
 * comparison; the scheduled pipeline is also run on the CPU
 * (cpu_schedule_verified). With req.npu = false only the CPU runs. A user
 * error gives verified=false and an Error diagnostic. With req.given_inputs
 * those tensors replace the random ones; with req.expected_outputs the NPU's
 * outputs are also compared with them (expected_verified). */
RunReport run(const CompileRequest &req, uint64_t seed, bool want_trace = false);

/** The stable run-report JSON (issue 4): one object, keys in a fixed order. */
std::string run_report_json(const RunReport &r);

} // namespace tessel

#endif
