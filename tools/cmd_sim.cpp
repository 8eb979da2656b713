// tessel sim: runs an NPU program (a .tsl binary, or assembly text) on the
// simulator with random, zero or given inputs (tensor files, docs/tensors.md)
// and prints the summary: total cycles, busy % per pipe, bytes and achieved
// B/cycle per engine edge; with --expect it compares the outputs.
#include "tools/Commands.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"
#include "npu_target/sim/Simulator.h"
#include "tools/SimArgs.h"
#include "tools/TensorArgs.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <random>

namespace tessel::cli {

namespace {

struct SimCliOptions {
    std::string program;
    std::string arch = "ascend-like";
    std::string trace;
    std::vector<std::string> inputs; // empty or "random", "zeros", else tensor files
    TensorArgs tensors;
    uint64_t seed = 1;
    uint64_t max_instructions = sim::kDefaultMaxInstructions;
    uint64_t max_cycles = sim::kDefaultMaxCycles;
    uint64_t max_trace_events = sim::kDefaultMaxTraceEvents;
    bool no_race_check = false;
};

isa::Program load_program(const std::string &path, const ArchSpec &arch) {
    // Size-capped like every input (a program named /dev/zero cannot exhaust memory).
    std::vector<uint8_t> bytes = read_input_bytes(path, "program", 256ull << 20);
    if (bytes.size() >= 4 && bytes[0] == 'T' && bytes[1] == 'S' && bytes[2] == 'S' && bytes[3] == 'L') {
        isa::Program p = isa::read_program(bytes, path);
        isa::check_program_against_arch(p, arch);
        return p;
    }
    return isa::assemble(std::string(bytes.begin(), bytes.end()), path, &arch);
}

int run_sim(const SimCliOptions &o) {
    ArchSpec arch = load_arch(o.arch);
    isa::Program prog = load_program(o.program, arch);
    const std::string mode = o.inputs.empty() ? "random" : o.inputs[0];
    const bool files = mode != "random" && mode != "zeros";
    for (const std::string &in : o.inputs) {
        if (o.inputs.size() > 1 && (in == "random" || in == "zeros")) {
            user_error("--inputs ", in, " cannot be combined with other --inputs (tensor files)");
        }
    }
    // The program's arguments as binding slots: its inputs, its outputs.
    std::vector<TensorSlot> in_slots, out_slots;
    for (const auto &a : prog.args) {
        (a.is_output ? out_slots : in_slots).push_back({a.name, a.dtype, a.shape});
    }
    const std::string owner = "program '" + prog.kernel_name + "'";
    std::vector<Tensor> given;
    if (files) {
        given = bind_inputs(load_tensor_args(o.inputs, graph::TensorRole::Input), in_slots, owner);
    }
    std::vector<std::optional<GivenTensor>> expected =
        bind_tensors(load_tensor_args(o.tensors.expect, graph::TensorRole::Output), out_slots, "output", owner);
    std::vector<Tensor> args;
    std::mt19937_64 rng(o.seed);
    size_t next_input = 0;
    for (const auto &a : prog.args) {
        Tensor t(a.name, a.dtype, a.shape);
        if (a.is_output) {
            poison(t);
        } else if (files) {
            t = given[next_input++];
        } else if (mode == "random") {
            fill_random(t, rng);
        }
        args.push_back(std::move(t));
    }
    sim::SimOptions opt;
    opt.trace = false; // the trace goes to the file as it runs, never into memory
    opt.max_instructions = o.max_instructions;
    opt.max_cycles = o.max_cycles;
    opt.max_trace_events = o.max_trace_events;
    opt.check_races = !o.no_race_check;
    auto trace_file = sim::TraceFile::open(o.trace, prog, opt); // streamed; valid JSON up to an error
    sim::SimReport r;
    sim::TraceFile::record(trace_file.get(), [&]() -> const sim::SimReport & {
        r = sim::simulate(prog, arch, args, opt);
        return r;
    });
    std::cout << "kernel " << prog.kernel_name << " on " << arch.name << " (" << prog.cores << " core"
              << (prog.cores == 1 ? "" : "s") << ")\n";
    std::cout << sim::summarize(r);
    if (arch.clock_hz > 0) {
        std::cout << "time at " << arch.clock_hz / 1e9 << " GHz: " << static_cast<double>(r.cycles) / arch.clock_hz * 1e6
                  << " us\n";
    }
    if (!o.trace.empty()) {
        std::cout << "trace: " << o.trace << " (" << r.trace_recorded << " events; open in ui.perfetto.dev)\n";
    }
    std::vector<Tensor> outputs;
    for (const Tensor &t : args) {
        for (const auto &s : out_slots) {
            if (s.name == t.name) {
                outputs.push_back(t);
            }
        }
    }
    bool ok = true;
    for (size_t i = 0; i < outputs.size(); i++) {
        if (expected[i]) {
            ExpectedComparison c = compare_expected(outputs[i], *expected[i], o.tensors.rtol, o.tensors.atol);
            ok = ok && c.ok;
            std::cout << "check against the expected output: " << (c.ok ? "PASS" : "FAIL") << " (" << c.message << ")\n";
            if (!c.ok) { // exit 1 says why on stderr too, as every failure does
                std::cerr << "tessel sim: the output does not match --expect: " << c.message << "\n";
            }
        }
    }
    save_outputs(outputs, o.tensors);
    check_stdout("tessel sim");
    return ok ? 0 : 1;
}

} // namespace

Command add_sim_command(CLI::App &root, GlobalOptions &) {
    auto o = std::make_shared<SimCliOptions>();
    Command c;
    c.app = root.add_subcommand("sim", "run an NPU program (.tsl binary or assembly) on the cycle-approximate simulator");
    c.app->add_option("program", o->program, "program file (.tsl binary or .s assembly)")->required();
    c.app->add_option("--arch", o->arch, "arch preset name or JSON file")->capture_default_str();
    c.app->add_option("--trace", o->trace, "stream a Chrome/Perfetto trace JSON here as the simulation runs");
    c.app->add_option("--inputs", o->inputs,
                      "input arguments: random (the default), zeros, or tensor files: a .pb/.npy file, a directory "
                      "(input_K.pb), NAME=FILE (repeatable; docs/tensors.md)");
    add_tensor_options(c.app, o->tensors, false);
    c.app->add_option("--seed", o->seed, "random seed for the inputs")->capture_default_str();
    add_budget_options(c.app, o->max_instructions, o->max_cycles, o->max_trace_events);
    c.app->add_flag("--no-race-check", o->no_race_check, "do not report unsynchronised cross-pipe accesses");
    c.run = [o]() { return run_sim(*o); };
    return c;
}

} // namespace tessel::cli
