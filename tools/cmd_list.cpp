// tessel list: the registered generators with their parameters.
#include "tools/Commands.h"

#include "dsl/GeneratorInfo.h"

#include <iostream>

namespace tessel::cli {

Command add_list_command(CLI::App &root, GlobalOptions &) {
    Command c;
    c.app = root.add_subcommand("list", "List the generators with their parameters and defaults");
    c.run = [] {
        for (const auto &g : list_generators()) {
            std::cout << g.name << "  " << g.summary << "\n";
            for (const auto &p : g.params) {
                std::cout << "    " << p.name << "=" << p.default_value << "  " << p.help << "\n";
            }
        }
        return 0;
    };
    return c;
}

} // namespace tessel::cli
