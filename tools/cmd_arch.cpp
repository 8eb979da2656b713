// tessel arch list | show PRESET|FILE: the shipped presets and a spec summary.
#include "tools/Commands.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/arch/ArchSummary.h"

#include <iostream>
#include <memory>

namespace tessel::cli {

Command add_arch_command(CLI::App &root, GlobalOptions &) {
    Command c;
    c.app = root.add_subcommand("arch", "NPU architecture descriptions (ArchSpec): list presets, show one");
    c.app->require_subcommand(1);
    CLI::App *list = c.app->add_subcommand("list", "List the shipped presets");
    CLI::App *show = c.app->add_subcommand(
        "show", "Print a spec: levels, engines and edges, matrix shapes and peaks, vector unit, ridge points");
    auto target = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    show->add_option("arch", *target, "a preset name or a path to an ArchSpec .json file")->required();
    show->add_flag("--json", *json, "print the validated spec as canonical JSON instead");
    c.run = [list, show, target, json] {
        if (list->parsed()) {
            for (const auto &name : arch_presets()) {
                ArchSpec a = load_arch(name);
                std::cout << name << "  " << a.description << "\n";
            }
            return 0;
        }
        ArchSpec a = load_arch(*target);
        std::cout << (*json ? a.to_json(2) + "\n" : arch_summary(a));
        (void)show;
        return 0;
    };
    return c;
}

} // namespace tessel::cli
