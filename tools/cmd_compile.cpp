// tessel compile: a generator + a schedule (JSON) + an arch -> the lowered Stmt,
// the loop nest, the schedule as C++ and as canonical JSON, the NPU IR, the NPU
// assembly and binary, the tiling plan and the buffer lifetimes (what --emit
// asks for), on stdout or as files in -o DIR. Diagnostics go to stderr.
#include "tools/Commands.h"

#include "npu_target/common/InputFile.h"

#include "tools/CompileArgs.h"

#include "npu_target/arch/ArchSpec.h"
#include "scheduler/AutoSchedule.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/Binary.h"

#include <sstream>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace tessel::cli {

namespace {

struct CompileOptions {
    std::string generator;
    std::string params;
    std::string schedule;
    std::string arch = "ascend-like";
    std::string emit = "stmt";
    std::string out_dir;
    std::string dump_after;
    std::vector<std::string> skip_passes;
    bool time_passes = false;
};

const std::vector<std::pair<std::string, std::string>> &emit_kinds() {
    static const std::vector<std::pair<std::string, std::string>> k = {
        {"stmt", "stmt.txt"},       {"loopnest", "loopnest.txt"}, {"cpp", "schedule.cpp"},
        {"json", "schedule.json"},  {"npuir", "npu_ir.txt"},      {"asm", "program.s"},
        {"bin", "program.tsl"},     {"tiling", "tiling.txt"},     {"lifetimes", "lifetimes.txt"}};
    return k;
}

std::vector<std::string> split_list(const std::string &s) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t c = s.find(',', pos);
        std::string item = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
        if (!item.empty()) {
            out.push_back(item);
        }
        if (c == std::string::npos) {
            break;
        }
        pos = c + 1;
    }
    return out;
}

std::string lifetimes_text(const CompileResult &r) {
    std::ostringstream os;
    os << "level  buffer  offset  bytes  copies  first  last  directive\n";
    for (const auto &l : r.lifetimes) {
        os << l.level << "  " << l.name << "  " << l.offset << "  " << l.bytes << "  " << l.buffers << "  " << l.first
           << "  " << l.last << "  " << (l.directive.empty() ? "-" : l.directive) << "\n";
    }
    for (const auto &kv : r.level_peak_bytes) {
        os << "peak " << kv.first << ": " << kv.second << " B\n";
    }
    return os.str();
}

std::string emitted(const CompileResult &r, const std::string &kind) {
    if (kind == "stmt") {
        return r.stmt_text;
    }
    if (kind == "loopnest") {
        return r.loop_nest;
    }
    if (kind == "cpp") {
        return r.cpp_text;
    }
    if (kind == "npuir") {
        return r.npu_ir_text;
    }
    if (kind == "asm") {
        return r.asm_text;
    }
    if (kind == "bin") {
        std::vector<uint8_t> b = isa::write_program(r.program);
        return std::string(b.begin(), b.end());
    }
    if (kind == "tiling") {
        return tiling_text(r.tiling);
    }
    if (kind == "lifetimes") {
        return lifetimes_text(r);
    }
    return r.json_text;
}

} // namespace

CompileRequest make_request(const std::string &generator, const std::string &params, const std::string &schedule,
                            const std::string &arch) {
    CompileRequest req;
    req.generator = generator;
    req.params = parse_params(params);
    req.arch = arch;
    if (schedule == "auto") {
        // The automatic NPU scheduler (docs/autoschedule.md): from the pipeline's structure and
        // the arch alone. What it decided and what it left to the default goes to stderr.
        AutoSchedule as = auto_schedule_for(generator, req.params, arch);
        for (const auto &n : as.notes) {
            std::cerr << "tessel: auto: " << n << "\n";
        }
        for (const auto &w : as.warnings) {
            std::cerr << "tessel: warning: auto: " << w << "\n";
        }
        req.schedule = as.spec;
    } else if (!schedule.empty()) {
        req.schedule = load_schedule(schedule);
    }
    return req;
}

void print_diagnostics(const std::vector<Diagnostic> &diags) {
    for (const auto &d : diags) {
        std::cerr << "tessel: " << severity_name(d.severity) << ": " << d.message << "\n";
    }
}

Command add_compile_command(CLI::App &root, GlobalOptions &) {
    auto o = std::make_shared<CompileOptions>();
    Command c;
    c.app = root.add_subcommand("compile", "Apply a schedule to a generator and lower it; print what --emit names");
    c.app->add_option("-g,--generator", o->generator, "generator name (see `tessel list`)")->required();
    c.app->add_option("-p,--params", o->params, "generator parameters K=V[,K=V...]");
    c.app->add_option("--schedule", o->schedule, "schedule JSON file (docs/schedule-format.md), or `auto` (docs/autoschedule.md); none = Halide's default");
    c.app->add_option("--arch", o->arch, "arch preset (ascend-like, gemmini-like, auto-int8) or ArchSpec JSON file")
        ->capture_default_str();
    c.app->add_option("--emit", o->emit, "comma-separated: stmt, loopnest, cpp, json, npuir, asm, bin (needs -o), "
                                         "tiling, lifetimes")
        ->capture_default_str();
    c.app->add_option("--dump-after", o->dump_after, "print the NPU IR after this backend pass (or 'all') to stderr");
    c.app->add_flag("--time-passes", o->time_passes, "print the time of every backend pass to stderr");
    c.app->add_option("--skip-pass", o->skip_passes, "leave out this optimisation pass (e.g. ring_panels)");
    c.app->add_option("-o,--out-dir", o->out_dir, "write stmt.txt, loopnest.txt, schedule.cpp, schedule.json here "
                                                  "instead of stdout");
    c.run = [o] {
        std::vector<std::string> emit = split_list(o->emit);
        for (const auto &e : emit) {
            bool known = false;
            for (const auto &k : emit_kinds()) {
                known = known || k.first == e;
            }
            if (!known) {
                user_error("--emit: unknown output '", e,
                           "'; known: stmt, loopnest, cpp, json, npuir, asm, bin, tiling, lifetimes");
            }
            if (e == "bin" && o->out_dir.empty()) {
                user_error("--emit bin writes a binary file: give -o DIR");
            }
        }
        CompileRequest req = make_request(o->generator, o->params, o->schedule, o->arch);
        req.emit_kinds = emit;
        req.dump_after = o->dump_after;
        req.time_passes = o->time_passes;
        req.skip_passes = o->skip_passes;
        CompileResult r = compile(req);
        print_diagnostics(r.diagnostics);
        for (const auto &[pass, text] : r.pass_dumps) {
            std::cerr << "=== NPU IR after " << pass << " ===\n" << text << "\n";
        }
        for (const auto &t : r.pass_times) {
            std::cerr << "pass " << t.pass << ": " << t.ms << " ms" << (t.changed ? "" : " (no change)") << "\n";
        }
        if (!r.ok) {
            return 1;
        }
        for (const auto &k : emit_kinds()) {
            if (std::find(emit.begin(), emit.end(), k.first) == emit.end()) {
                continue;
            }
            if (o->out_dir.empty()) {
                std::cout << emitted(r, k.first);
                continue;
            }
            std::error_code ec;
            std::filesystem::create_directories(o->out_dir, ec);
            if (ec) {
                user_error("cannot create the output folder '", o->out_dir, "': ", ec.message());
            }
            std::string path = (std::filesystem::path(o->out_dir) / k.second).string();
            write_output_file(path, emitted(r, k.first), "--emit " + k.first + " output");
            std::cerr << "wrote " << path << "\n";
        }
        return 0;
    };
    return c;
}

} // namespace tessel::cli
