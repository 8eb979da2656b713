// libFuzzer harness: the NPU binary loader (npu_target/isa/Binary.cpp), as
// `tessel sim` and `tessel disasm` use it: read_program, then
// check_program_against_arch against each shipped preset, then disassemble.
//
// Each input runs twice: as given (the size, magic and checksum checks), and
// with the declared size and the CRC-32 patched to match, so that mutations get
// past the checksum to the field checks behind it.
#include "fuzz/FuzzCheck.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"

#include <vector>

namespace {

using namespace tessel;

const std::vector<ArchSpec> &presets() {
    static const std::vector<ArchSpec> all = [] {
        std::vector<ArchSpec> v;
        for (const std::string &name : arch_presets()) {
            v.push_back(load_arch(name));
        }
        return v;
    }();
    return all;
}

void put_u32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        b[at + i] = static_cast<uint8_t>(v >> (8 * i));
    }
}

void load(const std::vector<uint8_t> &bytes) {
    isa::Program p;
    try {
        p = isa::read_program(bytes, "fuzz.tsl");
    } catch (const UserError &e) {
        fuzz::rejected("fuzz_binary", e);
        return;
    }
    (void)isa::disassemble(p);
    for (const ArchSpec &arch : presets()) {
        try {
            isa::check_program_against_arch(p, arch);
        } catch (const UserError &e) {
            fuzz::rejected("fuzz_binary", e);
            continue;
        }
        (void)isa::disassemble(p, &arch);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::vector<uint8_t> bytes(data, data + size);
    load(bytes);
    if (bytes.size() >= 16) {
        put_u32(bytes, 8, static_cast<uint32_t>(bytes.size()));
        put_u32(bytes, bytes.size() - 4, isa::crc32(bytes.data(), bytes.size() - 4));
        load(bytes);
    }
    return 0;
}
