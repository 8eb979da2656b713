#include "npu_target/passes/ScalarRegisters.h"

#include "npu_target/common/Error.h"

namespace tessel {

ScalarRegisters::ScalarRegisters(const ArchSpec &arch, int first_free, Emitter &e) : arch_(arch), emit_(e) {
    const int n = arch.scalar.registers;
    if (first_free + kTempReserve > n) {
        user_error("the kernel needs ", first_free - 1, " argument registers; the scalar unit of ", arch.name,
                   " has only ", n, " registers");
    }
    for (int r = n - 1; r >= first_free; r--) {
        free_.push_back(r);
    }
}

int ScalarRegisters::take(const std::string &context) {
    if (free_.empty()) {
        user_error("expression too deep for the scalar register file of ", arch_.name, " (", arch_.scalar.registers,
                   " registers) in Func ", context);
    }
    int r = free_.back();
    free_.pop_back();
    return r;
}

ScalarRegisters::Val ScalarRegisters::temp(const std::string &context) { return {take(context), true}; }

void ScalarRegisters::release(const Val &v) {
    if (v.temp) {
        free_.push_back(v.reg);
    }
}

ScalarRegisters::Val ScalarRegisters::own(const Val &v, const std::string &context) {
    if (v.temp) {
        return v;
    }
    Val t = temp(context);
    emit_.move(t.reg, v.reg);
    return t;
}

int64_t ScalarRegisters::alloc_stack(int64_t bytes) {
    int64_t at = (stack_top_ + 7) / 8 * 8;
    stack_top_ = at + bytes;
    if (static_cast<uint64_t>(stack_top_) > arch_.scalar.stack_bytes) {
        user_error("scalar stack overflow: ", stack_top_, " bytes needed for spilled values; ", arch_.name, " has ",
                   arch_.scalar.stack_bytes, " bytes of scalar stack");
    }
    return at;
}

int64_t ScalarRegisters::scratch() {
    if (scratch_slot_ < 0) {
        scratch_slot_ = alloc_stack(8);
    }
    return scratch_slot_;
}

void ScalarRegisters::bind(const std::string &name, DType slot, bool zext32, Val v, const std::string &context) {
    Binding b;
    b.type = slot;
    b.zext32 = zext32;
    if (static_cast<int>(free_.size()) > kTempReserve) {
        if (v.temp) {
            b.reg = v.reg; // the temporary becomes the binding's register
        } else {
            b.reg = take(context);
            emit_.move(b.reg, v.reg);
        }
    } else {
        b.slot = alloc_stack(8);
        emit_.store_stack(slot, v.reg, b.slot);
        release(v);
    }
    vars_[name].push_back(b);
}

void ScalarRegisters::unbind(const std::string &name) {
    auto it = vars_.find(name);
    TESSEL_INTERNAL_ASSERT(it != vars_.end(), "unbind of unbound ", name);
    Binding b = it->second.back();
    it->second.pop_back();
    if (b.reg >= 0) {
        free_.push_back(b.reg);
    }
    if (it->second.empty()) {
        vars_.erase(it);
    }
}

const ScalarRegisters::Binding &ScalarRegisters::binding(const std::string &name) const {
    auto it = vars_.find(name);
    if (it == vars_.end()) {
        internal_error("scalar codegen: unbound variable ", name);
    }
    return it->second.back();
}

ScalarRegisters::Val ScalarRegisters::read(const std::string &name, const std::string &context) {
    const Binding &b = binding(name);
    if (b.reg >= 0) {
        return {b.reg, false};
    }
    Val t = temp(context);
    emit_.load_stack(b.type, t.reg, b.slot);
    if (b.zext32) {
        emit_.zero_extend32(t.reg);
    }
    return t;
}

void ScalarRegisters::write(const std::string &name, const Val &v) {
    const Binding &b = binding(name);
    if (b.reg >= 0) {
        if (b.reg != v.reg) {
            emit_.move(b.reg, v.reg);
        }
        return;
    }
    emit_.store_stack(b.type, v.reg, b.slot);
}

} // namespace tessel
