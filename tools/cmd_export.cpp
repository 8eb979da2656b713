// tessel export: compile, verify and package the kernels a manifest lists into
// a static library (NPU entry points + host CPU entry points) and one header
// (export/Export.h, docs/export.md).
#include "tools/Commands.h"

#include "export/Export.h"

#include <iostream>
#include <memory>

namespace tessel::cli {

Command add_export_command(CLI::App &root, GlobalOptions &) {
    auto o = std::make_shared<exporter::ExportOptions>();
    auto quiet = std::make_shared<bool>(false);
    Command c;
    c.app = root.add_subcommand("export", "Build a kernel library (NPU + host CPU entry points) from a manifest");
    c.app->add_option("--manifest", o->manifest, "kernels.json: the kernels to export (docs/export.md)")->required();
    c.app->add_option("-o,--output", o->out_dir, "output folder: libNAME.a, NAME.h, manifest.json")->required();
    c.app->add_option("--name", o->library, "library name (default: the manifest's \"library\")");
    c.app->add_option("--db", o->db, "schedule database for \"schedule\": \"best\" (default: $TESSEL_DB, else "
                                     "$XDG_DATA_HOME/tessel/tessel.db)");
    c.app->add_option("--seed", o->seed, "random seed of the verification inputs")->capture_default_str();
    c.app->add_option("--host-target", o->host_target,
                      "Halide target of the NAME_cpu code, e.g. x86-64-linux-avx2 (default: this machine's features)");
    c.app->add_option("--cxx", o->cxx, "C++ compiler for the generated launcher (default: $CXX, else Tessel's)");
    c.app->add_option("--ar", o->ar, "archiver (default: $AR, else Tessel's)");
    c.app->add_option("-I,--include-dir", o->include_dirs, "extra include folder for the generated source");
    c.app->add_flag("-q,--quiet", *quiet, "print nothing on success");
    c.run = [o, quiet] {
        if (!*quiet) {
            o->log = [](const std::string &s) { std::cout << "tessel export: " << s << "\n"; };
        }
        exporter::export_library(*o);
        return 0;
    };
    return c;
}

} // namespace tessel::cli
