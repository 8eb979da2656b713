// tessel asm IN.s -o OUT.tsl | disasm IN.tsl | isa [--markdown]: NPU assembly,
// binaries and the instruction table.
#include "tools/Commands.h"

#include "npu_target/common/InputFile.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"
#include "npu_target/isa/InstrTable.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace tessel::cli {

namespace {

/** The arch named by --arch, or nullptr when not given. */
std::unique_ptr<ArchSpec> optional_arch(const std::string &name) {
    return name.empty() ? nullptr : std::make_unique<ArchSpec>(load_arch(name));
}

} // namespace

Command add_asm_command(CLI::App &root, GlobalOptions &) {
    Command c;
    c.app = root.add_subcommand("asm", "Assemble NPU assembly text into a binary program (.tsl)");
    struct Opts {
        std::string in, out, arch;
    };
    auto o = std::make_shared<Opts>();
    c.app->add_option("input", o->in, "assembly file (.s)")->required();
    c.app->add_option("-o,--output", o->out, "binary program to write (.tsl)")->required();
    c.app->add_option("--arch", o->arch,
                      "preset or .json used for level/engine names (default: the .arch directive's preset); "
                      "the program is then checked against it");
    c.run = [o] {
        std::string text = read_input_file(o->in, "assembly file");
        auto arch = optional_arch(o->arch);
        isa::Program p = isa::assemble(text, o->in, arch.get());
        if (arch) {
            isa::check_program_against_arch(p, *arch);
        }
        isa::write_program_file(p, o->out);
        std::cout << o->out << ": " << p.code.size() << " instructions, " << p.descs.size() << " descriptors, "
                  << p.constants.size() << " constant bytes\n";
        return 0;
    };
    return c;
}

Command add_disasm_command(CLI::App &root, GlobalOptions &) {
    Command c;
    c.app = root.add_subcommand("disasm", "Print a binary program (.tsl) as assembly text");
    struct Opts {
        std::string in, arch;
    };
    auto o = std::make_shared<Opts>();
    c.app->add_option("input", o->in, "binary program (.tsl)")->required();
    c.app->add_option("--arch", o->arch,
                      "preset or .json for level/engine names and the arch check (default: the program's arch if "
                      "it is a preset with the same hash; otherwise levels print as #N)");
    c.run = [o] {
        isa::Program p = isa::read_program_file(o->in);
        std::unique_ptr<ArchSpec> arch = optional_arch(o->arch);
        if (arch) {
            isa::check_program_against_arch(p, *arch);
        } else {
            for (const auto &name : arch_presets()) {
                if (name == p.arch_name) {
                    auto a = std::make_unique<ArchSpec>(load_arch(name));
                    if (a->hash() == p.arch_hash) {
                        arch = std::move(a);
                    }
                }
            }
        }
        std::cout << isa::disassemble(p, arch.get());
        return 0;
    };
    return c;
}

Command add_isa_command(CLI::App &root, GlobalOptions &) {
    Command c;
    c.app = root.add_subcommand("isa", "Print the NPU instruction table");
    auto markdown = std::make_shared<bool>(false);
    c.app->add_flag("--markdown", *markdown, "as the Markdown table of docs/isa.md");
    c.run = [markdown] {
        if (*markdown) {
            std::cout << isa::isa_markdown_table();
            return 0;
        }
        for (const auto &op : isa::all_ops()) {
            char code[8];
            snprintf(code, sizeof code, "0x%02x", op.opcode);
            std::cout << code << "  " << op.syntax() << "\n        " << op.semantics << "\n";
        }
        return 0;
    };
    return c;
}

} // namespace tessel::cli
