#ifndef TESSEL_DSL_GENERATORINFO_H
#define TESSEL_DSL_GENERATORINFO_H

// What Tessel knows about a registered generator, as plain data (Halide-free):
// its name, a summary and the documented GeneratorParams. Generators register
// themselves with TESSEL_REGISTER_GENERATOR (dsl/Generator.h).

#include <map>
#include <string>
#include <vector>

namespace tessel {

struct ParamInfo {
    std::string name;
    std::string default_value;
    std::string help;
};

struct GeneratorInfo {
    std::string name;
    std::string summary;
    std::vector<ParamInfo> params;
};

using ParamMap = std::map<std::string, std::string>;

/** Every registered generator, sorted by name. */
std::vector<GeneratorInfo> list_generators();
/** The generator called `name`; throws UserError naming the known ones if absent. */
GeneratorInfo find_generator(const std::string &name);
/** Registers documentation for a generator (called by TESSEL_REGISTER_GENERATOR). */
bool register_generator_info(const GeneratorInfo &info);
/** Loads users' generators from a shared library (dlopen); their static
 * registrations run on load. Throws UserError with dlerror() text on failure. */
void load_generator_library(const std::string &path);

/** Parses "K=V,K=V" into a map; throws UserError naming the bad item. */
ParamMap parse_params(const std::string &text);
/** The defaults of `info` overridden by `given`; throws UserError for a name
 * the generator does not have (listing the ones it has). */
ParamMap resolve_params(const GeneratorInfo &info, const ParamMap &given);
std::string format_params(const ParamMap &params);

} // namespace tessel

#endif
