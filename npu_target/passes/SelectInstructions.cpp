#include "npu_target/passes/SelectInstructions.h"

#include "Halide.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/InstrTable.h"
#include "npu_target/lower/SplitCores.h"
#include "npu_target/passes/NpuInstrs.h"
#include "npu_target/passes/ScalarRegisters.h"

#include <cstring>
#include <initializer_list>
#include <optional>
#include <map>
#include <set>
#include <sstream>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Instr;
using isa::Op;

namespace {

std::string type_text(const Type &t) {
    std::ostringstream os;
    os << t;
    return os.str();
}

using Val = ScalarRegisters::Val;

// An allocation placed in a memory level.
struct Placed {
    int level = 0;
    int64_t offset = 0;
    bool is_arg = false;
    int arg_reg = 0;
};

class Codegen : public IRVisitor, private ScalarRegisters::Emitter {
public:
    explicit Codegen(const nir::NpuModule &m)
        : m_(m), arch_(*m.arch), regs_(*m.arch, static_cast<int>(m.args.size()) + 1, *this) {
        prog_.kernel_name = m.kernel_name;
        prog_.arch_name = arch_.name;
        prog_.arch_hash = arch_.hash();
        prog_.args = m.args;
        prog_.cores = m.cores;
        gm_level_ = -1;
        for (size_t i = 0; i < arch_.memories.size(); i++) {
            if (arch_.memories[i].off_chip) {
                gm_level_ = static_cast<int>(i);
                break;
            }
        }
        TESSEL_INTERNAL_ASSERT(gm_level_ >= 0);
        for (const auto &kv : m.buffers) {
            const nir::BufferInfo &b = kv.second;
            Placed p;
            p.level = b.is_arg ? gm_level_ : arch_.level_index(b.level);
            p.offset = b.offset;
            p.is_arg = b.is_arg;
            p.arg_reg = b.arg_index + 1;
            TESSEL_INTERNAL_ASSERT(p.level >= 0 && (b.is_arg || b.offset >= 0), "buffer ", b.name, " not allocated");
            buffers_[b.name] = p;
        }
    }

    SelectedProgram finish() {
        emit(Op::END);
        SelectedProgram r;
        prog_.provenance = provenance_;
        r.program = std::move(prog_);
        for (const auto &[f, stores] : scalar_funcs_) {
            BackendDiagnostic d;
            d.func = f;
            auto pit = m_.schedule.provenance.find(f);
            d.directive_id = pit == m_.schedule.provenance.end() ? "" : pit->second;
            if (offloaded_funcs_.count(f)) {
                // e.g. a reduction's initial value, stored once per row by the scalar unit
                d.severity = BackendDiagnostic::Severity::Note;
                d.message = "Func " + f + ": " + std::to_string(stores) +
                            " store statement(s) stay scalar code; the rest runs on the vector or matrix unit";
            } else {
                d.message = "Func " + f + " runs as scalar code on the NPU (no vector or matrix mapping applied)";
            }

            r.diagnostics.push_back(d);
        }
        return r;
    }

    using IRVisitor::visit;

private:
    const nir::NpuModule &m_;
    const ArchSpec &arch_;
    isa::Program prog_;
    int gm_level_;
    ScalarRegisters regs_;
    std::map<std::string, Placed> buffers_;
    std::vector<std::string> func_stack_;
    std::string loop_;
    std::map<std::string, int> scalar_funcs_;   // Func -> scalar stores in the program
    std::set<std::string> offloaded_funcs_;     // Funcs with vector or matrix-unit operations
    std::vector<isa::Provenance> provenance_ = m_.provenance;

    // ---- provenance ----
    isa::ProvenanceId current_prov() {
        std::string func = func_stack_.empty() ? "" : func_stack_.back();
        std::string var = loop_.substr(loop_.rfind('.') == std::string::npos ? 0 : loop_.rfind('.') + 1);
        std::string dir;
        auto it = m_.schedule.provenance.find(func + "." + var);
        if (it != m_.schedule.provenance.end()) {
            dir = it->second;
        } else if ((it = m_.schedule.provenance.find(func)) != m_.schedule.provenance.end()) {
            dir = it->second;
        }
        for (size_t i = 0; i < provenance_.size(); i++) {
            if (provenance_[i].directive_id == dir && provenance_[i].func == func && provenance_[i].loop == loop_) {
                return static_cast<isa::ProvenanceId>(i);
            }
        }
        provenance_.push_back({dir, func, loop_});
        return static_cast<isa::ProvenanceId>(provenance_.size() - 1);
    }

    // ---- emission ----
    size_t emit(Op op, int rd = 0, int ra = 0, int rb = 0, int64_t imm = 0) {
        Instr i;
        i.op = op;
        i.rd = static_cast<uint8_t>(rd);
        i.ra = static_cast<uint8_t>(ra);
        i.rb = static_cast<uint8_t>(rb);
        i.imm = imm;
        i.prov = current_prov();
        prog_.code.push_back(i);
        return prog_.code.size() - 1;
    }
    size_t emit_mem(Op op, DType t, int level, int reg, int addr, int64_t offset) {
        Instr i;
        i.op = op;
        i.dtype = t;
        i.level = static_cast<uint8_t>(level);
        if (op == Op::LD) {
            i.rd = static_cast<uint8_t>(reg);
        } else {
            i.rb = static_cast<uint8_t>(reg);
        }
        i.ra = static_cast<uint8_t>(addr);
        i.imm = offset;
        i.prov = current_prov();
        prog_.code.push_back(i);
        return prog_.code.size() - 1;
    }
    int64_t here() const { return static_cast<int64_t>(prog_.code.size()); }
    void patch(size_t at, int64_t target) { prog_.code[at].imm = target; }

    // ---- registers (ScalarRegisters) ----
    std::string context() const { return func_stack_.empty() ? "?" : func_stack_.back(); }
    Val temp() { return regs_.temp(context()); }
    void release(const Val &v) { regs_.release(v); }
    Val own(const Val &v) { return regs_.own(v, context()); }
    int64_t scratch() { return regs_.scratch(); }
    void move(int rd, int rs) override { emit(Op::MOV, rd, rs); }
    void load_stack(DType t, int rd, int64_t slot) override { emit_mem(Op::LD, t, isa::kStackLevel, rd, 0, slot); }
    void store_stack(DType t, int rs, int64_t slot) override { emit_mem(Op::ST, t, isa::kStackLevel, rs, 0, slot); }
    void zero_extend32(int reg) override {
        Val v{reg, false};
        normalize(v, UInt(32));
    }
    DType slot_type(const Type &t) const {
        if (t.is_float()) {
            return DType::FP32;
        }
        if (t.bits() > 32) {
            user_error("64-bit integers are not supported on the NPU scalar unit (in Func ", context(), ")");
        }
        return DType::Int32;
    }
    void bind(const std::string &name, const Type &t, Val v) {
        regs_.bind(name, slot_type(t), t.is_uint() && t.bits() == 32, v, context());
    }
    void unbind(const std::string &name) { regs_.unbind(name); }
    Val read_var(const std::string &name) { return regs_.read(name, context()); }
    void write_var(const std::string &name, const Val &v) { regs_.write(name, v); }

    // ---- value representation ----
    // Integers are held sign- or zero-extended to 64 bits in their type; floats
    // as binary32 bits, rounded to fp16/bf16 when that is their type.
    void normalize(Val &v, const Type &t) {
        if (t.is_float()) {
            if (t.bits() == 16) {
                DType d = t.is_bfloat() ? DType::BF16 : DType::FP16;
                int64_t s = scratch();
                emit_mem(Op::ST, d, isa::kStackLevel, v.reg, 0, s);
                emit_mem(Op::LD, d, isa::kStackLevel, v.reg, 0, s);
            }
            return;
        }
        if (t.is_bool()) {
            return;
        }
        if (t.is_uint() && t.bits() < 64) {
            Val m = temp();
            emit(Op::LI, m.reg, 0, 0, static_cast<int64_t>((uint64_t(1) << t.bits()) - 1));
            emit(Op::AND, v.reg, v.reg, m.reg);
            release(m);
            return;
        }
        if (t.is_int() && t.bits() < 32) {
            Val s = temp();
            emit(Op::LI, s.reg, 0, 0, 64 - t.bits());
            emit(Op::SHL, v.reg, v.reg, s.reg);
            emit(Op::SHR, v.reg, v.reg, s.reg);
            release(s);
        }
    }

    DType mem_dtype(const Type &t) const {
        if (t.is_bool() || t == UInt(8)) {
            return DType::UInt8;
        }
        if (t == Int(8)) {
            return DType::Int8;
        }
        if (t == Int(16)) {
            return DType::Int16;
        }
        if (t == Int(32) || t == UInt(32) || t == UInt(16)) {
            if (t == UInt(16)) {
                user_error("uint16 buffers are not supported on the NPU (Func ", func_stack_.empty() ? "?" : func_stack_.back(), ")");
            }
            return DType::Int32;
        }
        if (t == Float(16)) {
            return DType::FP16;
        }
        if (t == BFloat(16)) {
            return DType::BF16;
        }
        if (t == Float(32)) {
            return DType::FP32;
        }
        user_error("type ", type_text(t), " is not supported by the NPU (Func ",
                   func_stack_.empty() ? "?" : func_stack_.back(), ")");
    }

    // ---- expressions ----
    Val result_;
    Val eval(const Expr &e) {
        if (e.type().lanes() != 1) {
            internal_error("scalar codegen: vector expression survived scalarisation: ", e);
        }
        e.accept(this);
        return result_;
    }

    void visit(const IntImm *op) override {
        Val t = temp();
        emit(Op::LI, t.reg, 0, 0, op->value);
        result_ = t;
    }
    void visit(const UIntImm *op) override {
        Val t = temp();
        emit(Op::LI, t.reg, 0, 0, static_cast<int64_t>(op->value));
        result_ = t;
    }
    void visit(const FloatImm *op) override {
        float f = static_cast<float>(op->value);
        if (op->type.bits() == 16) {
            f = op->type.is_bfloat() ? bf16_to_fp32(fp32_to_bf16(f)) : fp16_to_fp32(fp32_to_fp16(f));
        }
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        Val t = temp();
        emit(Op::LI, t.reg, 0, 0, static_cast<int64_t>(bits));
        result_ = t;
    }
    void visit(const StringImm *op) override {
        user_error("string values are not supported on the NPU (\"", op->value, "\")");
    }
    void visit(const Variable *op) override {
        if (op->name == kCoreIdVar) {
            Val t = temp();
            emit(Op::COREID, t.reg);
            result_ = t;
            return;
        }
        result_ = read_var(op->name);
    }

    void binary(const Expr &a, const Expr &b, Op int_op, Op float_op, const Type &t) {
        Val va = eval(a);
        Val vb = eval(b);
        // Into a's register when it is a temporary, else straight into a fresh
        // one (no copy of a variable's register first).
        Val d = va.temp ? va : temp();
        emit(a.type().is_float() ? float_op : int_op, d.reg, va.reg, vb.reg);
        release(vb);
        normalize(d, t);
        result_ = d;
    }
    // An integer constant operand goes into the instruction's immediate
    // (ADDI, MULI) instead of a LI into a register first; + 0 and * 1 emit
    // nothing but the other operand.
    static std::optional<int64_t> int_constant(const Expr &e) {
        if (const int64_t *c = as_const_int(e)) {
            return *c;
        }
        if (const uint64_t *u = as_const_uint(e); u && *u <= static_cast<uint64_t>(INT64_MAX)) {
            return static_cast<int64_t>(*u);
        }
        return std::nullopt;
    }
    bool binary_imm(const Expr &a, const Expr &b, Op imm_op, bool commutes, bool negate, const Type &t) {
        if (t.is_float()) {
            return false;
        }
        std::optional<int64_t> c = int_constant(b);
        const Expr *x = &a;
        if (!c && commutes) {
            c = int_constant(a);
            x = &b;
        }
        if (!c || (negate && *c == INT64_MIN)) {
            return false;
        }
        const int64_t k = negate ? -*c : *c;
        Val src = eval(*x);
        if ((imm_op == Op::ADDI && k == 0) || (imm_op == Op::MULI && k == 1)) {
            result_ = src;
            return true;
        }
        result_ = scaled(src, imm_op, k);
        normalize(result_, t);
        return true;
    }
    // src op imm into a temporary: src's own register when it is one, else a
    // fresh one written directly (no copy of src first).
    Val scaled(const Val &src, Op imm_op, int64_t k) {
        Val v = src.temp ? src : temp();
        emit(imm_op, v.reg, src.reg, 0, k);
        return v;
    }
    void visit(const Add *op) override {
        if (!binary_imm(op->a, op->b, Op::ADDI, true, false, op->type)) {
            binary(op->a, op->b, Op::ADD, Op::FADD, op->type);
        }
    }
    void visit(const Sub *op) override {
        if (!binary_imm(op->a, op->b, Op::ADDI, false, true, op->type)) {
            binary(op->a, op->b, Op::SUB, Op::FSUB, op->type);
        }
    }
    void visit(const Mul *op) override {
        if (!binary_imm(op->a, op->b, Op::MULI, true, false, op->type)) {
            binary(op->a, op->b, Op::MUL, Op::FMUL, op->type);
        }
    }
    // Division and modulo by an integer constant take it as the immediate
    // (DIVI / REMI, floor semantics as Halide's): multi-buffered copy indices
    // (t mod N) need no LI first.
    void visit(const Div *op) override {
        if (!binary_imm(op->a, op->b, Op::DIVI, false, false, op->type)) {
            binary(op->a, op->b, Op::DIV, Op::FDIV, op->type);
        }
    }
    void visit(const Mod *op) override {
        if (op->type.is_float()) {
            user_error("floating-point modulo is not supported on the NPU (Func ", func_stack_.empty() ? "?" : func_stack_.back(), ")");
        }
        if (!binary_imm(op->a, op->b, Op::REMI, false, false, op->type)) {
            binary(op->a, op->b, Op::REM, Op::REM, op->type);
        }
    }
    void visit(const Min *op) override { binary(op->a, op->b, Op::MIN, Op::FMIN, op->type); }
    void visit(const Max *op) override { binary(op->a, op->b, Op::MAX, Op::FMAX, op->type); }
    void compare(const Expr &a, const Expr &b, Op int_op, Op float_op, bool negate) {
        Val va = eval(a);
        // An integer 0 is register r0 (reads 0), not a LI.
        const bool b_zero = !b.type().is_float() && is_const_zero(b);
        Val vb = b_zero ? Val{0, false} : eval(b);
        Val d = va.temp ? va : temp();
        emit(a.type().is_float() ? float_op : int_op, d.reg, va.reg, vb.reg);
        if (!b_zero) {
            release(vb);
        }
        if (negate) {
            emit(Op::SEQ, d.reg, d.reg, 0);
        }
        result_ = d;
    }
    void visit(const EQ *op) override { compare(op->a, op->b, Op::SEQ, Op::FSEQ, false); }
    void visit(const NE *op) override { compare(op->a, op->b, Op::SEQ, Op::FSEQ, true); }
    void visit(const LT *op) override { compare(op->a, op->b, Op::SLT, Op::FSLT, false); }
    void visit(const LE *op) override { compare(op->a, op->b, Op::SLE, Op::FSLE, false); }
    void visit(const GT *op) override { compare(op->b, op->a, Op::SLT, Op::FSLT, false); }
    void visit(const GE *op) override { compare(op->b, op->a, Op::SLE, Op::FSLE, false); }
    void visit(const And *op) override { binary(op->a, op->b, Op::AND, Op::AND, op->type); }
    void visit(const Or *op) override { binary(op->a, op->b, Op::OR, Op::OR, op->type); }
    void visit(const Not *op) override {
        Val v = own(eval(op->a));
        emit(Op::SEQ, v.reg, v.reg, 0);
        result_ = v;
    }
    void visit(const Select *op) override {
        Val c = eval(op->condition);
        Val t = eval(op->true_value);
        Val f = eval(op->false_value);
        Val d = temp();
        Instr i;
        i.op = Op::SELECT;
        i.rd = static_cast<uint8_t>(d.reg);
        i.ra = static_cast<uint8_t>(t.reg);
        i.rb = static_cast<uint8_t>(f.reg);
        i.rc = static_cast<uint8_t>(c.reg);
        i.prov = current_prov();
        prog_.code.push_back(i);
        release(c);
        release(t);
        release(f);
        result_ = d;
    }
    void visit(const Cast *op) override {
        const Type &from = op->value.type(), &to = op->type;
        Val v = own(eval(op->value));
        if (to.is_bool()) {
            emit(from.is_float() ? Op::FSEQ : Op::SEQ, v.reg, v.reg, 0);
            emit(Op::SEQ, v.reg, v.reg, 0);
        } else if (from.is_float() && to.is_float()) {
            normalize(v, to);
        } else if (from.is_float()) {
            emit(Op::FTOI, v.reg, v.reg);
            normalize(v, to);
        } else if (to.is_float()) {
            emit(Op::ITOF, v.reg, v.reg);
            normalize(v, to);
        } else {
            normalize(v, to);
            if (to.is_int() && to.bits() == 32 && !(from.is_int() && from.bits() <= 32)) {
                Val s = temp(); // wrap to int32 (e.g. from uint32)
                emit(Op::LI, s.reg, 0, 0, 32);
                emit(Op::SHL, v.reg, v.reg, s.reg);
                emit(Op::SHR, v.reg, v.reg, s.reg);
                release(s);
            }
        }
        result_ = v;
    }
    void reinterpret(const Call *op) {
        const Type &from = op->args[0].type(), &to = op->type;
        if (from.bits() != 32 || to.bits() != 32) {
            user_error("reinterpret from ", type_text(from), " to ", type_text(to), " is not supported on the NPU");
        }
        Val v = own(eval(op->args[0]));
        if (to.is_int()) {
            Val s = temp();
            emit(Op::LI, s.reg, 0, 0, 32);
            emit(Op::SHL, v.reg, v.reg, s.reg);
            emit(Op::SHR, v.reg, v.reg, s.reg);
            release(s);
        } else {
            normalize(v, UInt(32));
        }
        result_ = v;
    }
    void visit(const Let *op) override {
        bind(op->name, op->value.type(), eval(op->value));
        Val r = eval(op->body);
        unbind(op->name);
        result_ = r;
    }
    Val address(const std::string &buf, const Expr &index, int bytes, Placed &p) {
        auto it = buffers_.find(buf);
        if (it == buffers_.end()) {
            user_error("buffer ", buf, " is used but was neither an argument nor allocated (Func ",
                       func_stack_.empty() ? "?" : func_stack_.back(), ")");
        }
        p = it->second;
        Val idx = bytes != 1 ? scaled(eval(index), Op::MULI, bytes) : own(eval(index));
        if (p.is_arg) {
            emit(Op::ADD, idx.reg, idx.reg, p.arg_reg);
        }
        return idx;
    }
    void visit(const Load *op) override {
        if (!is_const_one(op->predicate)) {
            // Predicated scalar load: select 0 when the predicate is off.
            Expr e = Select::make(op->predicate, Load::make(op->type, op->name, op->index, op->image, op->param,
                                                             const_true(), op->alignment),
                                  make_zero(op->type));
            result_ = eval_guarded_load(op->predicate, e);
            return;
        }
        Placed p;
        Val a = address(op->name, op->index, op->type.bytes(), p);
        emit_mem(Op::LD, mem_dtype(op->type), p.level, a.reg, a.reg, p.is_arg ? 0 : p.offset);
        result_ = a;
    }
    Val eval_guarded_load(const Expr &pred, const Expr &sel) {
        // The load must not execute when the predicate is false (it may be out of bounds).
        const Select *s = sel.as<Select>();
        Val out = temp();
        emit(Op::LI, out.reg, 0, 0, 0);
        Val c = eval(pred);
        size_t skip = emit(Op::BEQ, 0, c.reg, 0, 0);
        release(c);
        Val v = eval(s->true_value);
        emit(Op::MOV, out.reg, v.reg);
        release(v);
        patch(skip, here());
        return out;
    }
    void visit(const Call *op) override {
        if (op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
            op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped) ||
            op->is_intrinsic(Call::strict_float)) {
            result_ = eval(op->args[0]);
            return;
        }
        if (op->is_intrinsic(Call::reinterpret)) {
            reinterpret(op);
            return;
        }
        if (op->is_intrinsic(Call::return_second)) {
            release(eval(op->args[0]));
            result_ = eval(op->args[1]);
            return;
        }
        if (op->is_intrinsic(Call::if_then_else)) {
            Expr f = op->args.size() > 2 ? op->args[2] : make_zero(op->type);
            result_ = eval(Select::make(op->args[0], op->args[1], f));
            return;
        }
        if (op->is_intrinsic(Call::bitwise_and) || op->is_intrinsic(Call::bitwise_or) ||
            op->is_intrinsic(Call::bitwise_xor)) {
            Op o = op->is_intrinsic(Call::bitwise_and) ? Op::AND : op->is_intrinsic(Call::bitwise_or) ? Op::OR : Op::XOR;
            binary(op->args[0], op->args[1], o, o, op->type);
            return;
        }
        if (op->is_intrinsic(Call::bitwise_not)) {
            Val v = own(eval(op->args[0]));
            Val m = temp();
            emit(Op::LI, m.reg, 0, 0, -1);
            emit(Op::XOR, v.reg, v.reg, m.reg);
            release(m);
            normalize(v, op->type);
            result_ = v;
            return;
        }
        if (op->is_intrinsic(Call::shift_left) || op->is_intrinsic(Call::shift_right)) {
            binary(op->args[0], op->args[1], op->is_intrinsic(Call::shift_left) ? Op::SHL : Op::SHR, Op::SHR, op->type);
            return;
        }
        if (op->is_intrinsic(Call::abs)) {
            const Type &t = op->args[0].type();
            Val v = own(eval(op->args[0]));
            if (t.is_float()) {
                emit(Op::FABS, v.reg, v.reg);
            } else if (t.is_int()) {
                Val n = temp();
                emit(Op::SUB, n.reg, 0, v.reg);
                emit(Op::MAX, v.reg, v.reg, n.reg);
                release(n);
            }
            normalize(v, op->type);
            result_ = v;
            return;
        }
        static const std::map<std::string, Op> unary_math = {
            {"exp_f32", Op::FEXP}, {"log_f32", Op::FLOG}, {"sqrt_f32", Op::FSQRT},
            {"exp_f16", Op::FEXP}, {"log_f16", Op::FLOG}, {"sqrt_f16", Op::FSQRT},
        };
        auto it = unary_math.find(op->name);
        if (it != unary_math.end()) {
            Val v = own(eval(op->args[0]));
            emit(it->second, v.reg, v.reg);
            normalize(v, op->type);
            result_ = v;
            return;
        }
        user_error("call to ", op->name, " (", type_text(op->type), ") is not supported on the NPU (Func ",
                   func_stack_.empty() ? "?" : func_stack_.back(), ")");
    }
    void visit(const Ramp *op) override { internal_error("scalar codegen: unscalarised ramp ", Expr(op)); }
    void visit(const Broadcast *op) override { internal_error("scalar codegen: unscalarised broadcast ", Expr(op)); }
    void visit(const Shuffle *op) override { internal_error("scalar codegen: unscalarised shuffle ", Expr(op)); }
    void visit(const VectorReduce *op) override {
        internal_error("scalar codegen: unscalarised vector reduce ", Expr(op));
    }

    // ---- statements ----
    void visit(const LetStmt *op) override {
        bind(op->name, op->value.type(), eval(op->value));
        op->body.accept(this);
        unbind(op->name);
    }
    void visit(const AssertStmt *) override {}
    void visit(const ProducerConsumer *op) override {
        if (!op->is_producer) {
            op->body.accept(this);
            return;
        }
        func_stack_.push_back(op->name);
        op->body.accept(this);
        func_stack_.pop_back();
    }

    // ---- NPU operations (their fields: NpuInstrs.h) ----
    // Byte address of element `index` of a placed buffer, in a fresh register.
    Val buffer_address(const nir::BufRef &r, int bytes) {
        Placed p;
        Val a = address(r.buffer, r.index, bytes, p);
        if (!p.is_arg && p.offset != 0) {
            emit(Op::ADDI, a.reg, a.reg, 0, p.offset);
        }
        return a;
    }
    // Appends an NPU operation's instruction (its provenance, or the current
    // one) and frees the registers that held its operands.
    void push(Instr i, uint32_t prov, std::initializer_list<Val> operands) {
        i.prov = prov ? prov : current_prov();
        prog_.code.push_back(i);
        for (const Val &x : operands) {
            release(x);
        }
    }
    void emit_dma(const nir::DmaOp &d) {
        Val da = buffer_address(d.dst, d.elem_bytes);
        Val sa = buffer_address(d.src, d.src_elem_bytes());
        push(dma_instr(d, buffers_.at(d.dst.buffer).level, buffers_.at(d.src.buffer).level, da.reg, sa.reg,
                       intern_descriptor(prog_, dma_descriptor(d))),
             d.prov, {da, sa});
    }
    void emit_fixparam(const nir::FixParamOp &f) {
        Val b = buffer_address(f.bias, 4);
        Val s = buffer_address(f.scale, dtype_bytes(f.scale_type));
        const int lb = buffers_.at(f.bias.buffer).level, ls = buffers_.at(f.scale.buffer).level;
        TESSEL_INTERNAL_ASSERT(lb == ls, "fixparam: bias and scale in different levels (tensorize checks it)");
        push(fixparam_instr(f, lb, b.reg, s.reg), f.prov, {b, s});
    }
    void emit_vec(const nir::VecOp &v) {
        const int bytes = dtype_bytes(v.dtype);
        const int dbytes = v.op == Op::VCAST ? dtype_bytes(v.dtype2) : bytes;
        Val d = buffer_address(v.dst, dbytes);
        Val a = v.a.buffer.empty() ? Val{0, false} : buffer_address(v.a, bytes);
        Val b = v.b.buffer.empty() ? Val{0, false} : buffer_address(v.b, bytes);
        Val sc = v.scalar.defined() ? eval(v.scalar) : Val{0, false};
        Val n = temp();
        emit(Op::LI, n.reg, 0, 0, v.n);
        push(vector_instr(v, d.reg, a.reg, b.reg, sc.reg, n.reg), v.prov, {d, a, b, sc, n});
    }
    void emit_mmad(const nir::MmadOp &mm) {
        const int ib = dtype_bytes(mm.dtype);
        auto acc = arch_.matrix.accumulators.find(mm.dtype);
        TESSEL_INTERNAL_ASSERT(acc != arch_.matrix.accumulators.end());
        Val c = buffer_address(mm.c, dtype_bytes(acc->second));
        Val a = buffer_address(mm.a, ib);
        Val b = buffer_address(mm.b, ib);
        push(mmad_instr(mm, c.reg, a.reg, b.reg), mm.prov, {c, a, b});
    }
    void emit_sync(const nir::SyncOp &s) { push(sync_instr(s), 0, {}); }
    void visit(const For *op) override {
        std::string saved_loop = loop_;
        loop_ = op->name;
        Val mn = eval(op->min);
        Val end = own(eval(simplify(op->min + op->extent))); // a constant when both are
        bind(op->name, Int(32), mn);
        std::string end_name = op->name + ".$end";
        bind(end_name, Int(32), end);
        // A loop of a constant positive trip count runs its body at least
        // once: the test goes to the bottom (one BLT per iteration instead of
        // a BGE at the top and a JMP at the bottom).
        const int64_t *trips = as_const_int(op->extent);
        const bool entered = trips && *trips > 0;
        int64_t top = here();
        size_t exit_branch = 0;
        if (!entered) {
            Val i = read_var(op->name);
            Val e = read_var(end_name);
            exit_branch = emit(Op::BGE, 0, i.reg, e.reg, 0);
            release(i);
            release(e);
        }
        op->body.accept(this);
        // The counter steps in its own register (one ADDI); a spilled one in a temporary, stored back.
        Val i2 = read_var(op->name);
        emit(Op::ADDI, i2.reg, i2.reg, 0, 1);
        write_var(op->name, i2);
        release(i2);
        if (entered) {
            Val i = read_var(op->name);
            Val e = read_var(end_name);
            emit(Op::BLT, 0, i.reg, e.reg, top);
            release(i);
            release(e);
        } else {
            emit(Op::JMP, 0, 0, 0, top);
            patch(exit_branch, here());
        }
        unbind(end_name);
        unbind(op->name);
        loop_ = saved_loop;
    }
    void note_offloaded() {
        if (!func_stack_.empty()) {
            offloaded_funcs_.insert(func_stack_.back());
        }
    }
    void visit(const Store *op) override {
        if (!func_stack_.empty()) {
            scalar_funcs_[func_stack_.back()]++;
        }
        const int lanes = op->value.type().lanes();
        for (int l = 0; l < lanes; l++) {
            Expr value = lanes == 1 ? op->value : extract_lane(op->value, l);
            Expr index = lanes == 1 ? op->index : extract_lane(op->index, l);
            Expr pred = lanes == 1 ? op->predicate : extract_lane(op->predicate, l);
            value = simplify(value);
            index = simplify(index);
            pred = simplify(pred);
            size_t skip = 0;
            bool guarded = !is_const_one(pred);
            if (guarded) {
                Val c = eval(pred);
                skip = emit(Op::BEQ, 0, c.reg, 0, 0);
                release(c);
            }
            Val v = eval(value);
            Placed p;
            Val a = address(op->name, index, value.type().bytes(), p);
            emit_mem(Op::ST, mem_dtype(value.type()), p.level, v.reg, a.reg, p.is_arg ? 0 : p.offset);
            release(a);
            release(v);
            if (guarded) {
                patch(skip, here());
            }
        }
    }
    void visit(const Provide *op) override { internal_error("scalar codegen: Provide after lowering: ", op->name); }
    void visit(const Realize *op) override { internal_error("scalar codegen: Realize after lowering: ", op->name); }
    void visit(const Allocate *op) override { op->body.accept(this); }
    void visit(const Free *) override {}
    void visit(const IfThenElse *op) override {
        Val c = eval(op->condition);
        size_t to_else = emit(Op::BEQ, 0, c.reg, 0, 0);
        release(c);
        op->then_case.accept(this);
        if (op->else_case.defined()) {
            size_t to_end = emit(Op::JMP);
            patch(to_else, here());
            op->else_case.accept(this);
            patch(to_end, here());
        } else {
            patch(to_else, here());
        }
    }
    void visit(const Evaluate *op) override {
        Stmt st(op);
        if (auto d = nir::as_dma(st)) {
            emit_dma(*d);
        } else if (auto f = nir::as_fixparam(st)) {
            note_offloaded();
            emit_fixparam(*f);
        } else if (auto v = nir::as_vec(st)) {
            note_offloaded();
            emit_vec(*v);
        } else if (auto mm = nir::as_mmad(st)) {
            note_offloaded();
            emit_mmad(*mm);
        } else if (auto sy = nir::as_sync(st)) {
            emit_sync(*sy);
        } else if (!is_const(op->value)) {
            release(eval(op->value));
        }
    }
    void visit(const Fork *) override { user_error("async() is not supported by the scalar fallback"); }
    void visit(const Acquire *) override { user_error("async() is not supported by the scalar fallback"); }
    void visit(const Atomic *) override { user_error("atomic() is not supported by the NPU backend"); }
    void visit(const Prefetch *) override {}
};

} // namespace

SelectedProgram select_instructions(const nir::NpuModule &m) {
    TESSEL_INTERNAL_ASSERT(m.arch != nullptr);
    Codegen cg(m);
    m.body.accept(&cg);
    return cg.finish();
}

} // namespace tessel
