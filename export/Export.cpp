#include "export/Export.h"

#include "database/Canonical.h"
#include "database/ScheduleStore.h"
#include "dsl/Compile.h"
#include "export/HostAot.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/Binary.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tessel::exporter {

namespace fs = std::filesystem;

namespace {

void write_file(const fs::path &p, const std::string &text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
    if (!f) {
        user_error("cannot write ", p.string());
    }
}

std::string read_file(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/** Runs argv (no shell); output goes to `log`; a non-zero exit is a UserError with the output. */
void run_tool(const std::vector<std::string> &argv, const fs::path &log) {
    std::vector<char *> args;
    for (const auto &a : argv) {
        args.push_back(const_cast<char *>(a.c_str()));
    }
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
        user_error("cannot start ", argv[0]);
    }
    if (pid == 0) {
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string cmd;
        for (const auto &a : argv) {
            cmd += (cmd.empty() ? "" : " ") + a;
        }
        user_error("`", cmd, "` failed (exit ", WIFEXITED(status) ? WEXITSTATUS(status) : -1, "):\n", read_file(log));
    }
}

std::string env_or(const char *name, const std::string &fallback) {
    const char *v = std::getenv(name);
    return v && *v ? v : fallback;
}

/** Where tessel_runtime.h is: next to an installed `tessel` (PREFIX/include/tessel), else the source tree. */
std::string runtime_include_dir() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        fs::path installed = exe.parent_path().parent_path() / "include" / "tessel";
        if (fs::exists(installed / "tessel_runtime.h")) {
            return installed.string();
        }
    }
    return std::string(TESSEL_SOURCE_DIR) + "/npu_target/runtime";
}

std::string halide_include_dir() {
    std::string dir = env_or("TESSEL_HALIDE_INCLUDE_DIR", TESSEL_HALIDE_INCLUDE);
    if (!fs::exists(fs::path(dir) / "HalideRuntime.h")) {
        user_error("HalideRuntime.h is not in ", dir, " (set TESSEL_HALIDE_INCLUDE_DIR)");
    }
    return dir;
}

ScheduleSpec best_schedule(const KernelEntry &k, const ParamMap &params, const ArchSpec &arch, const std::string &db,
                           std::string &source) {
    const std::string path = db.empty() ? db::ScheduleStore::default_path() : db;
    const std::string where = "kernel '" + k.name + "': schedule \"best\"";
    if (!db::is_postgres_url(path) && !fs::exists(path)) {
        user_error(where, ": the database ", path, " does not exist (--db FILE, $TESSEL_DB)");
    }
    try {
        db::ScheduleStore store = db::ScheduleStore::open_copy(path);
        const std::string &shown = store.path(); // a URL's password is not repeated in messages and the manifest
        const std::string params_json = db::params_to_json(params);
        auto best = store.best(k.generator, params_json, arch.hash());
        if (!best) {
            user_error(where, ": no verified result in ", shown, " for ", k.generator, " (", format_params(params),
                       ") on ", arch.name, " (arch hash ", arch.hash(),
                       "); record one with `tessel run`/`tessel tune` or give a schedule file");
        }
        auto rec = store.schedule_by_hash(best->schedule_hash);
        if (!rec) {
            user_error(where, ": result #", best->id, " names schedule ", best->schedule_hash, " that ", shown,
                       " does not hold");
        }
        source = "best in " + shown + ": result #" + std::to_string(best->id) + ", " +
                 std::to_string(best->simulated_cycles.value_or(0)) + " cycles";
        return parse_schedule(rec->spec_json, shown + " schedule " + rec->hash);
    } catch (const db::DatabaseError &e) {
        user_error(where, ": ", e.what());
    }
}

ExportedKernel export_kernel(const KernelEntry &k, const ExportOptions &opt, const std::string &host,
                             const fs::path &work) {
    const std::string who = "kernel '" + k.name + "'";
    ExportedKernel out;
    out.name = k.name;
    out.generator = k.generator;
    CompileRequest req;
    try {
        GeneratorInfo info = find_generator(k.generator);
        out.params = resolve_params(info, k.params);
        ArchSpec arch = load_arch(k.arch);
        out.arch_name = arch.name;
        out.arch_hash = arch.hash();
        // A preset is named; an arch file is embedded as its canonical JSON (tessel_device_open
        // takes either), so the library works wherever the file was or goes.
        const auto presets = arch_presets();
        out.arch = std::find(presets.begin(), presets.end(), k.arch) != presets.end() ? k.arch : arch.to_json(-1);
        req.generator = k.generator;
        req.params = out.params;
        req.arch = k.arch;
        if (k.schedule == "best") {
            req.schedule = best_schedule(k, out.params, arch, opt.db, out.schedule_source);
        } else if (!k.schedule.empty()) {
            req.schedule = load_schedule(k.schedule);
            out.schedule_source = k.schedule;
        } else {
            out.schedule_source = "Halide's default schedule";
        }
    } catch (const UserError &e) {
        std::string msg = e.what();
        if (msg.rfind(who, 0) == 0) {
            throw;
        }
        user_error(who, ": ", msg);
    }
    CompileResult r = compile(req);
    std::string errors;
    for (const auto &d : r.diagnostics) {
        if (d.severity == Diagnostic::Error) {
            errors += "\n  " + d.message;
        }
    }
    if (!r.ok || !r.has_program || !errors.empty()) {
        user_error(who, " (", k.generator, " ", format_params(out.params), ") does not compile for ", out.arch_name,
                   ":", errors.empty() ? std::string("\n  no NPU program") : errors);
    }
    out.schedule_hash = r.schedule_hash;
    out.schedule_json = r.json_text;
    out.args = r.program.args;
    for (auto &a : out.args) {
        a.name = a.name.substr(0, a.name.find('$')); // Halide numbers repeated names per process: C, C$3, ...
        if (a.shape.size() > 4 || !is_c_identifier(a.name)) {
            user_error(who, ": argument '", a.name, "' (", describe_arg(a),
                       ") cannot be exported: names must be C identifiers and ranks at most 4");
        }
    }
    out.binary = isa::write_program(r.program);
    RunReport rep = run(req, opt.seed);
    for (const auto &d : rep.diagnostics) {
        if (d.severity == Diagnostic::Error) {
            user_error(who, " does not verify on ", out.arch_name, ": ", d.message);
        }
    }
    if (!rep.verified || !rep.cycles) {
        user_error(who, " does not verify on ", out.arch_name, " (seed ", opt.seed, "): ", rep.comparison);
    }
    out.seed = opt.seed;
    out.cycles = *rep.cycles;
    out.comparison = rep.comparison;
    std::vector<std::string> order;
    for (const auto &a : out.args) {
        order.push_back(a.name);
    }
    try {
        compile_host_entry(k.generator, out.params, order, k.name + "_cpu", (work / (k.name + "_cpu.o")).string(),
                           host);
    } catch (const UserError &e) {
        user_error(who, ": ", e.what());
    }
    return out;
}

nlohmann::ordered_json manifest_json(const ExportResult &res) {
    nlohmann::ordered_json j;
    j["library"] = res.library;
    j["abi_version"] = kAbiVersion;
    j["static_library"] = fs::path(res.static_library).filename().string();
    j["header"] = fs::path(res.header).filename().string();
    j["host_target"] = res.host_target;
    j["kernels"] = nlohmann::ordered_json::array();
    for (const auto &k : res.kernels) {
        nlohmann::ordered_json e;
        e["name"] = k.name;
        e["generator"] = k.generator;
        e["params"] = k.params;
        e["arch"] = k.arch.rfind('{', 0) == 0 ? nlohmann::ordered_json::parse(k.arch) : nlohmann::ordered_json(k.arch);
        e["arch_name"] = k.arch_name;
        e["arch_hash"] = k.arch_hash;
        e["schedule_hash"] = k.schedule_hash;
        e["schedule_source"] = k.schedule_source;
        e["schedule"] = nlohmann::ordered_json::parse(k.schedule_json);
        e["entry_points"] = {{"npu", k.name}, {"npu_profiled", k.name + "_profiled"}, {"cpu", k.name + "_cpu"}};
        e["args"] = nlohmann::ordered_json::array();
        for (const auto &a : k.args) {
            e["args"].push_back({{"name", a.name}, {"dtype", dtype_name(a.dtype)}, {"shape", a.shape},
                                 {"output", a.is_output}});
        }
        e["program_bytes"] = k.binary.size();
        e["verification"] = {{"seed", k.seed}, {"cycles", k.cycles}, {"comparison", k.comparison}};
        j["kernels"].push_back(e);
    }
    return j;
}

} // namespace

ExportResult export_library(const ExportOptions &opt) {
    auto log = [&](const std::string &s) {
        if (opt.log) {
            opt.log(s);
        }
    };
    Manifest m = read_manifest(opt.manifest);
    ExportResult res;
    res.library = opt.library.empty() ? m.library : opt.library;
    if (res.library.empty()) {
        user_error(opt.manifest, ": no library name (give \"library\" in the manifest or --name)");
    }
    if (!is_c_identifier(res.library)) {
        user_error("the library name '", res.library, "' must be a C identifier");
    }
    res.host_target = resolve_host_target(opt.host_target);
    fs::path dir = opt.out_dir;
    fs::path work = dir / (res.library + ".build");
    fs::create_directories(work);
    for (const auto &k : m.kernels) {
        log("kernel " + k.name + ": " + k.generator + " on " + k.arch);
        res.kernels.push_back(export_kernel(k, opt, res.host_target, work));
        const auto &e = res.kernels.back();
        log("  schedule " + e.schedule_hash + ", verified (seed " + std::to_string(e.seed) + "), " +
            std::to_string(e.cycles) + " cycles, program " + std::to_string(e.binary.size()) + " bytes");
    }
    std::vector<std::string> objects;
    for (const auto &k : res.kernels) {
        objects.push_back((work / (k.name + "_cpu.o")).string());
    }
    objects.push_back((work / "halide_runtime.o").string());
    compile_host_runtime(objects.back(), res.host_target);

    res.header = (dir / (res.library + ".h")).string();
    write_file(res.header, generate_header(res.library, res.host_target, res.kernels));
    const fs::path src = work / (res.library + "_npu.cpp");
    write_file(src, generate_source(res.library, res.kernels));
    const std::string cxx = opt.cxx.empty() ? env_or("CXX", TESSEL_CXX_COMPILER) : opt.cxx;
    std::vector<std::string> cc{cxx, "-std=c++17", "-O2", "-fPIC", "-I" + dir.string(), "-I" + runtime_include_dir(),
                                "-I" + halide_include_dir()};
    for (const auto &i : opt.include_dirs) {
        cc.push_back("-I" + i);
    }
    objects.push_back((work / (res.library + "_npu.o")).string());
    cc.insert(cc.end(), {"-c", src.string(), "-o", objects.back()});
    log("compiling " + src.string());
    run_tool(cc, work / "compile.log");

    res.static_library = (dir / ("lib" + res.library + ".a")).string();
    fs::remove(res.static_library);
    std::vector<std::string> arc{opt.ar.empty() ? env_or("AR", TESSEL_AR) : opt.ar, "rcs", res.static_library};
    arc.insert(arc.end(), objects.begin(), objects.end());
    run_tool(arc, work / "ar.log");

    res.manifest = (dir / "manifest.json").string();
    write_file(res.manifest, manifest_json(res).dump(2) + "\n");
    log("wrote " + res.static_library + ", " + res.header + ", " + res.manifest);
    return res;
}

} // namespace tessel::exporter
