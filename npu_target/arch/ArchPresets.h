#ifndef TESSEL_NPU_TARGET_ARCH_ARCHPRESETS_H
#define TESSEL_NPU_TARGET_ARCH_ARCHPRESETS_H

// The shipped presets (npu_target/arch/presets/*.json), embedded into the
// library at build time (EmbedPresets.cmake generates the definition), so that
// load_arch("ascend-like") works from any directory.

#include <string>
#include <vector>

namespace tessel {

struct EmbeddedArchPreset {
    std::string name; // file name without .json
    std::string json; // the file's text
};

/** In a fixed order: ascend-like, gemmini-like, auto-int8. */
const std::vector<EmbeddedArchPreset> &embedded_arch_presets();

} // namespace tessel

#endif
