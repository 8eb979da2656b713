// libFuzzer harness: the assembler (npu_target/isa/Asm.cpp), as `tessel sim`
// uses it on .s files (with the ascend-like preset). A program either assembles
// or is rejected with a UserError; one that assembles disassembles, and writes
// as a binary that loads back.
#include "fuzz/FuzzCheck.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace tessel;
    static const ArchSpec arch = load_arch("ascend-like");
    isa::Program p;
    try {
        p = isa::assemble(fuzz::as_text(data, size), "fuzz.s", &arch);
    } catch (const UserError &e) {
        fuzz::rejected("fuzz_asm", e);
        return 0;
    }
    (void)isa::disassemble(p, &arch);
    try {
        isa::Program back = isa::read_program(isa::write_program(p), "written.tsl");
        (void)isa::disassemble(back, &arch);
    } catch (const UserError &e) {
        fuzz::invariant_failed("fuzz_asm", std::string("an assembled program does not load back: ") + e.what());
    }
    return 0;
}
