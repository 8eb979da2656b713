#ifndef TESSEL_NPU_TARGET_PASSES_SCALARREGISTERS_H
#define TESSEL_NPU_TARGET_PASSES_SCALARREGISTERS_H

// Register allocation for the scalar unit, used by select_instructions.
// Expression temporaries come from a free list; let-bound values and loop
// counters ("bindings") get a register when more than a reserve of registers
// is free at their definition, and a slot in the scalar stack otherwise
// (spilled: loaded into a temporary at each use, stored at each write). The
// choice is fixed for the binding's whole scope, so the code of a loop body
// sees the same storage on every iteration. Halide-free.

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/DType.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel {

class ScalarRegisters {
public:
    /** What the allocator needs to emit: moves and scalar-stack loads/stores. */
    class Emitter {
    public:
        virtual void move(int rd, int rs) = 0;
        virtual void load_stack(DType t, int rd, int64_t slot) = 0;
        virtual void store_stack(DType t, int rs, int64_t slot) = 0;
        virtual void zero_extend32(int reg) = 0; // after loading a uint32 spilled as int32
        virtual ~Emitter() = default;
    };

    /** A value in a register: `temp` values are owned by the caller and must be released. */
    struct Val {
        int reg = 0;
        bool temp = false;
    };

    /** Registers 1..first_free-1 are reserved (kernel arguments); r0 reads 0. */
    ScalarRegisters(const ArchSpec &arch, int first_free, Emitter &e);

    /** `context` names the Func for the error when the file is exhausted. */
    Val temp(const std::string &context);
    void release(const Val &v);
    /** A copy the caller may overwrite (v itself if it is a temporary). */
    Val own(const Val &v, const std::string &context);

    /** Binds `name` (shadowing an outer binding of the same name) to v's value;
     * takes v. `slot` is the type its spill slot holds (int32 or fp32). */
    void bind(const std::string &name, DType slot, bool zext32, Val v, const std::string &context);
    void unbind(const std::string &name);
    Val read(const std::string &name, const std::string &context);
    void write(const std::string &name, const Val &v);

    /** Bytes of scalar stack (8-byte aligned); a user error past the arch's size. */
    int64_t alloc_stack(int64_t bytes);
    /** One 8-byte slot for rounding through memory (fp16/bf16). */
    int64_t scratch();

private:
    struct Binding {
        int reg = -1;      // >= 0: in this register
        int64_t slot = -1; // else: byte offset in the scalar stack
        DType type = DType::Int32;
        bool zext32 = false;
    };
    // Registers kept for expression temporaries: bindings take one only while more are free.
    static constexpr int kTempReserve = 8;

    int take(const std::string &context);
    const Binding &binding(const std::string &name) const;

    const ArchSpec &arch_;
    Emitter &emit_;
    std::vector<int> free_;
    std::map<std::string, std::vector<Binding>> vars_;
    int64_t stack_top_ = 0;
    int64_t scratch_slot_ = -1;
};

} // namespace tessel

#endif
