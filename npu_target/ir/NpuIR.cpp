#include "npu_target/ir/NpuIR.h"

#include "npu_target/common/Error.h"
#include "npu_target/isa/InstrTable.h"

#include <algorithm>
#include <sstream>

namespace tessel::nir {

using namespace Halide;
using namespace Halide::Internal;

namespace {

Expr s_(const std::string &s) { return StringImm::make(s); }
Expr i_(int64_t v) { return make_const(Int(64), v); }

Stmt call(const std::string &name, const std::vector<Expr> &args) {
    return Evaluate::make(Call::make(Int(32), name, args, Call::Extern));
}

const Call *tessel_call(const Stmt &s, const char *name) {
    const Evaluate *e = s.as<Evaluate>();
    if (!e) {
        return nullptr;
    }
    const Call *c = e->value.as<Call>();
    if (!c || c->name != name) {
        return nullptr;
    }
    return c;
}

std::string str(const Expr &e) {
    const StringImm *s = e.as<StringImm>();
    TESSEL_INTERNAL_ASSERT(s, "expected a string argument");
    return s->value;
}
int64_t num(const Expr &e) {
    const int64_t *v = as_const_int(e);
    TESSEL_INTERNAL_ASSERT(v, "expected a constant argument");
    return *v;
}

// Argument cursor over a call.
struct Reader {
    const Call *c;
    size_t i = 0;
    const Expr &next() {
        TESSEL_INTERNAL_ASSERT(i < c->args.size(), "truncated ", c->name);
        return c->args[i++];
    }
    std::string s() { return str(next()); }
    int64_t n() { return num(next()); }
    BufRef ref() {
        BufRef r;
        r.buffer = s();
        r.index = next();
        return r;
    }
};

void push_ref(std::vector<Expr> &a, const BufRef &r) {
    a.push_back(s_(r.buffer));
    a.push_back(r.index.defined() ? r.index : i_(0));
}

} // namespace

bool DmaOp::is_quant() const {
    return transform != 0 && isa::dma_transform_names().at(static_cast<size_t>(transform)) == "quant";
}

Stmt DmaOp::make() const {
    std::vector<Expr> a;
    if (transform != 0) { // a leading transform name; plain copies print as before
        a.push_back(s_(isa::dma_transform_names().at(static_cast<size_t>(transform))));
    }
    a.push_back(i_(engine));
    push_ref(a, dst);
    push_ref(a, src);
    a.push_back(i_(elem_bytes));
    a.push_back(i_(prov));
    for (const Dim &d : dims) {
        a.push_back(i_(d.count));
        a.push_back(i_(d.dst_stride));
        a.push_back(i_(d.src_stride));
    }
    return call("tessel.dma", a);
}

std::optional<DmaOp> as_dma(const Stmt &s) {
    const Call *c = tessel_call(s, "tessel.dma");
    if (!c) {
        return std::nullopt;
    }
    Reader r{c};
    DmaOp d;
    if (!c->args.empty() && c->args[0].as<StringImm>()) {
        const std::string t = r.s();
        const auto &names = isa::dma_transform_names();
        auto it = std::find(names.begin(), names.end(), t);
        TESSEL_INTERNAL_ASSERT(it != names.end(), "unknown DMA transform ", t);
        d.transform = static_cast<int>(it - names.begin());
    }
    d.engine = static_cast<int>(r.n());
    d.dst = r.ref();
    d.src = r.ref();
    d.elem_bytes = static_cast<int>(r.n());
    d.prov = static_cast<uint32_t>(r.n());
    while (r.i < c->args.size()) {
        Dim dim;
        dim.count = r.n();
        dim.dst_stride = r.n();
        dim.src_stride = r.n();
        d.dims.push_back(dim);
    }
    return d;
}

Stmt FixParamOp::make() const {
    std::vector<Expr> a{i_(engine)};
    push_ref(a, bias);
    push_ref(a, scale);
    a.push_back(s_(dtype_name(scale_type)));
    a.push_back(s_(dtype_name(out_type)));
    a.push_back(i_(channels));
    a.push_back(i_(shift));
    a.push_back(i_(relu ? 1 : 0));
    a.push_back(i_(prov));
    return call("tessel.fixparam", a);
}

std::optional<FixParamOp> as_fixparam(const Stmt &s) {
    const Call *c = tessel_call(s, "tessel.fixparam");
    if (!c) {
        return std::nullopt;
    }
    Reader r{c};
    FixParamOp f;
    f.engine = static_cast<int>(r.n());
    f.bias = r.ref();
    f.scale = r.ref();
    f.scale_type = *parse_dtype(r.s());
    f.out_type = *parse_dtype(r.s());
    f.channels = static_cast<int>(r.n());
    f.shift = static_cast<int>(r.n());
    f.relu = r.n() != 0;
    f.prov = static_cast<uint32_t>(r.n());
    return f;
}

Stmt VecOp::make() const {
    std::vector<Expr> a{s_(isa::op_info(op).mnemonic), s_(dtype_name(dtype)), s_(dtype_name(dtype2))};
    push_ref(a, dst);
    push_ref(a, this->a);
    push_ref(a, b.buffer.empty() ? BufRef{"", i_(0)} : b);
    a.push_back(scalar.defined() ? scalar : i_(0));
    a.push_back(i_(scalar.defined() ? 1 : 0));
    a.push_back(i_(n));
    a.push_back(i_(rows));
    for (int i = 0; i < 3; i++) {
        a.push_back(i_(stride[i]));
    }
    for (int i = 0; i < 3; i++) {
        a.push_back(i_(row_stride[i]));
    }
    a.push_back(i_(aux));
    a.push_back(i_(prov));
    return call("tessel.vec", a);
}

std::optional<VecOp> as_vec(const Stmt &s) {
    const Call *c = tessel_call(s, "tessel.vec");
    if (!c) {
        return std::nullopt;
    }
    Reader r{c};
    VecOp v;
    std::string mn = r.s();
    const isa::OpInfo *info = isa::op_by_mnemonic(mn);
    TESSEL_INTERNAL_ASSERT(info != nullptr, "unknown vector op ", mn);
    v.op = info->op;
    v.dtype = *parse_dtype(r.s());
    v.dtype2 = *parse_dtype(r.s());
    v.dst = r.ref();
    v.a = r.ref();
    v.b = r.ref();
    Expr sc = r.next();
    if (r.n()) {
        v.scalar = sc;
    }
    v.n = r.n();
    v.rows = static_cast<int>(r.n());
    for (int i = 0; i < 3; i++) {
        v.stride[i] = static_cast<int32_t>(r.n());
    }
    for (int i = 0; i < 3; i++) {
        v.row_stride[i] = static_cast<int32_t>(r.n());
    }
    v.aux = static_cast<uint32_t>(r.n());
    v.prov = static_cast<uint32_t>(r.n());
    return v;
}

Stmt MmadOp::make() const {
    std::vector<Expr> a{s_(dtype_name(dtype))};
    push_ref(a, c);
    push_ref(a, this->a);
    push_ref(a, b);
    for (int64_t v : {int64_t(m), int64_t(k), int64_t(n), c_row, a_row, b_row, int64_t(init ? 1 : 0), int64_t(prov)}) {
        a.push_back(i_(v));
    }
    return call("tessel.mmad", a);
}

std::optional<MmadOp> as_mmad(const Stmt &s) {
    const Call *c = tessel_call(s, "tessel.mmad");
    if (!c) {
        return std::nullopt;
    }
    Reader r{c};
    MmadOp m;
    m.dtype = *parse_dtype(r.s());
    m.c = r.ref();
    m.a = r.ref();
    m.b = r.ref();
    m.m = static_cast<int>(r.n());
    m.k = static_cast<int>(r.n());
    m.n = static_cast<int>(r.n());
    m.c_row = r.n();
    m.a_row = r.n();
    m.b_row = r.n();
    m.init = r.n() != 0;
    m.prov = static_cast<uint32_t>(r.n());
    return m;
}

Stmt SyncOp::make() const {
    const char *name = op == isa::Op::SET_FLAG ? "tessel.set_flag" : op == isa::Op::WAIT_FLAG ? "tessel.wait_flag" : "tessel.barrier";
    return call(name, {s_(isa::pipe_name(src)), s_(isa::pipe_name(dst)), i_(event)});
}

std::set<std::tuple<isa::Pipe, isa::Pipe, int>> flags_in(const Stmt &s) {
    struct Collect : public Halide::Internal::IRVisitor {
        std::set<std::tuple<isa::Pipe, isa::Pipe, int>> flags;
        using Halide::Internal::IRVisitor::visit;
        void visit(const Halide::Internal::Evaluate *op) override {
            auto so = as_sync(Stmt(op));
            if (so && so->op != isa::Op::BARRIER) {
                flags.insert({so->src, so->dst, so->event});
            }
        }
    } c;
    s.accept(&c);
    return c.flags;
}

std::optional<SyncOp> as_sync(const Stmt &s) {
    const Call *c = tessel_call(s, "tessel.set_flag");
    isa::Op op = isa::Op::SET_FLAG;
    if (!c) {
        c = tessel_call(s, "tessel.wait_flag");
        op = isa::Op::WAIT_FLAG;
    }
    if (!c) {
        c = tessel_call(s, "tessel.barrier");
        op = isa::Op::BARRIER;
    }
    if (!c) {
        return std::nullopt;
    }
    auto pipe = [](const std::string &n) {
        for (int p = 0; p < static_cast<int>(isa::Pipe::NUM_PIPES); p++) {
            if (n == isa::pipe_name(static_cast<isa::Pipe>(p))) {
                return static_cast<isa::Pipe>(p);
            }
        }
        internal_error("unknown pipe ", n);
    };
    SyncOp o;
    o.op = op;
    o.src = pipe(str(c->args[0]));
    o.dst = pipe(str(c->args[1]));
    o.event = static_cast<int>(num(c->args[2]));
    return o;
}

std::optional<DType> dtype_of_type(const Type &type) {
    const Type t = type.element_of();
    if (t == Int(8)) return DType::Int8;
    if (t == UInt(8)) return DType::UInt8;
    if (t == Int(16)) return DType::Int16;
    if (t == Int(32)) return DType::Int32;
    if (t == Float(16)) return DType::FP16;
    if (t == BFloat(16)) return DType::BF16;
    if (t == Float(32)) return DType::FP32;
    return std::nullopt;
}

Type halide_type_of(DType t) {
    switch (t) {
    case DType::Int8: return Int(8);
    case DType::UInt8: return UInt(8);
    case DType::Int16: return Int(16);
    case DType::Int32: return Int(32);
    case DType::FP16: return Float(16);
    case DType::BF16: return BFloat(16);
    case DType::FP32: return Float(32);
    }
    return Type();
}

namespace {
// The coefficient of `var` in a sum of products of constants and var-free
// terms, read off the expression tree: exact where the simplifier cannot prove
// (x + var) * 128 == x * 128 + 128 * var.
std::optional<int64_t> linear_coefficient(const Expr &e, const std::string &var) {
    if (!expr_uses_var(e, var)) {
        return 0;
    }
    if (const Variable *v = e.as<Variable>()) {
        return v->name == var ? std::optional<int64_t>(1) : std::nullopt;
    }
    if (const Add *a = e.as<Add>()) {
        auto x = linear_coefficient(a->a, var), y = linear_coefficient(a->b, var);
        return x && y ? std::optional<int64_t>(*x + *y) : std::nullopt;
    }
    if (const Sub *a = e.as<Sub>()) {
        auto x = linear_coefficient(a->a, var), y = linear_coefficient(a->b, var);
        return x && y ? std::optional<int64_t>(*x - *y) : std::nullopt;
    }
    if (const Mul *m = e.as<Mul>()) {
        const int64_t *ka = as_const_int(m->a), *kb = as_const_int(m->b);
        if (kb) {
            auto x = linear_coefficient(m->a, var);
            return x ? std::optional<int64_t>(*x * *kb) : std::nullopt;
        }
        if (ka) {
            auto y = linear_coefficient(m->b, var);
            return y ? std::optional<int64_t>(*y * *ka) : std::nullopt;
        }
    }
    return std::nullopt;
}
} // namespace

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::optional<int> power_of_two_exponent(const Expr &e) {
    const Broadcast *bc = e.as<Broadcast>();
    const Expr &c = bc ? bc->value : e;
    if (!c.type().is_int_or_uint()) {
        return std::nullopt;
    }
    const int64_t *i = as_const_int(c);
    const uint64_t *u = as_const_uint(c);
    const uint64_t v = i ? (*i > 0 ? static_cast<uint64_t>(*i) : 0) : (u ? *u : 0);
    if (v == 0 || (v & (v - 1)) != 0) {
        return std::nullopt;
    }
    int k = 0;
    while ((uint64_t{1} << k) != v) {
        k++;
    }
    return k;
}

std::optional<int64_t> eval_int(const Expr &e, const std::map<std::string, int64_t> &env) {
    if (const int64_t *c = as_const_int(e)) {
        return *c;
    }
    if (const uint64_t *u = as_const_uint(e)) {
        return static_cast<int64_t>(*u);
    }
    if (const Variable *v = e.as<Variable>()) {
        auto it = env.find(v->name);
        return it == env.end() ? std::nullopt : std::optional<int64_t>(it->second);
    }
    if (const Cast *c = e.as<Cast>()) {
        return c->type.is_int() || c->type.is_uint() ? eval_int(c->value, env) : std::nullopt;
    }
    if (const Not *n = e.as<Not>()) {
        auto a = eval_int(n->a, env);
        return a ? std::optional<int64_t>(!*a) : std::nullopt;
    }
    if (const Select *s = e.as<Select>()) {
        auto c = eval_int(s->condition, env);
        return c ? eval_int(*c ? s->true_value : s->false_value, env) : std::nullopt;
    }
    auto binary = [&](const Expr &x, const Expr &y, auto f) -> std::optional<int64_t> {
        auto a = eval_int(x, env), b = eval_int(y, env);
        return a && b ? f(*a, *b) : std::nullopt;
    };
    if (const Add *o = e.as<Add>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a + b; });
    if (const Sub *o = e.as<Sub>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a - b; });
    if (const Mul *o = e.as<Mul>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a * b; });
    if (const Div *o = e.as<Div>()) {
        return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> {
            return b == 0 ? std::optional<int64_t>(0) : floor_div(a, b);
        });
    }
    if (const Mod *o = e.as<Mod>()) {
        return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> {
            return b == 0 ? std::optional<int64_t>(0) : a - floor_div(a, b) * b;
        });
    }
    if (const Min *o = e.as<Min>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::min(a, b); });
    if (const Max *o = e.as<Max>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::max(a, b); });
    if (const EQ *o = e.as<EQ>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a == b; });
    if (const NE *o = e.as<NE>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a != b; });
    if (const LT *o = e.as<LT>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a < b; });
    if (const LE *o = e.as<LE>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a <= b; });
    if (const GT *o = e.as<GT>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a > b; });
    if (const GE *o = e.as<GE>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a >= b; });
    if (const And *o = e.as<And>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a && b; });
    if (const Or *o = e.as<Or>()) return binary(o->a, o->b, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a || b; });
    return std::nullopt;
}

std::set<std::string> variables_of(const Expr &e) {
    struct Vars : public Halide::Internal::IRGraphVisitor {
        std::set<std::string> names;
        using Halide::Internal::IRGraphVisitor::visit;
        void visit(const Halide::Internal::Variable *op) override { names.insert(op->name); }
    } v;
    if (e.defined()) {
        e.accept(&v);
    }
    return v.names;
}

std::vector<Stmt> flatten(const Stmt &s) {
    std::vector<Stmt> out;
    std::vector<Stmt> todo{s};
    while (!todo.empty()) {
        Stmt x = todo.back();
        todo.pop_back();
        if (const Halide::Internal::Block *b = x.as<Halide::Internal::Block>()) {
            todo.push_back(b->rest);
            todo.push_back(b->first);
        } else if (x.defined()) {
            out.push_back(x);
        }
    }
    return out;
}

std::optional<int64_t> affine_coefficient(const Expr &index, const std::string &var) {
    if (!index.defined()) {
        return 0;
    }
    if (index.type().is_scalar() && index.type().is_int()) {
        if (auto k = linear_coefficient(index, var)) {
            return k;
        }
    }
    Expr at0 = substitute(var, make_zero(Int(32)), index);
    Expr step = simplify(substitute(var, make_one(Int(32)), index) - at0); // keeps the constant alive
    const int64_t *k = as_const_int(step);
    if (!k) {
        return std::nullopt;
    }
    if (!can_prove(index == at0 + make_const(Int(32), *k) * Variable::make(Int(32), var))) {
        return std::nullopt;
    }
    return *k;
}

uint32_t NpuModule::provenance_id(const std::string &func, const std::string &loop) {
    std::string var = loop.substr(loop.rfind('.') == std::string::npos ? 0 : loop.rfind('.') + 1);
    std::string dir;
    auto it = schedule.provenance.find(func + "." + var);
    if (it != schedule.provenance.end()) {
        dir = it->second;
    } else if ((it = schedule.provenance.find(func)) != schedule.provenance.end()) {
        dir = it->second;
    }
    return provenance_id_of(dir, func, loop);
}

uint32_t NpuModule::provenance_id_of(const std::string &dir, const std::string &func, const std::string &loop) {
    for (size_t i = 0; i < provenance.size(); i++) {
        if (provenance[i].directive_id == dir && provenance[i].func == func && provenance[i].loop == loop) {
            return static_cast<uint32_t>(i);
        }
    }
    provenance.push_back({dir, func, loop});
    return static_cast<uint32_t>(provenance.size() - 1);
}

int64_t BufferInfo::copy_bytes(const ArchSpec &arch) const {
    const MemoryLevel *L = arch.find_level(level);
    const int64_t align = L ? std::max(1, L->alignment) : 1;
    return (bytes() + align - 1) / align * align;
}

const BufferInfo &NpuModule::buffer(const std::string &name) const {
    auto it = buffers.find(name);
    if (it == buffers.end()) {
        internal_error("NPU IR refers to unknown buffer ", name);
    }
    return it->second;
}

isa::Pipe pipe_of_engine(const ArchSpec &arch, int engine) {
    TESSEL_INTERNAL_ASSERT(engine >= 0 && engine < static_cast<int>(arch.engines.size()));
    const std::string &n = arch.engines[engine].pipe;
    for (int p = 0; p < static_cast<int>(isa::Pipe::NUM_PIPES); p++) {
        if (n == isa::pipe_name(static_cast<isa::Pipe>(p))) {
            return static_cast<isa::Pipe>(p);
        }
    }
    internal_error("engine ", arch.engines[engine].name, " has pipe ", n, ", which the ISA does not have");
}

std::string to_string(const NpuModule &m) {
    std::ostringstream os;
    os << "kernel " << m.kernel_name << " for " << (m.arch ? m.arch->name : "?");
    if (m.cores > 1) {
        os << " on " << m.cores << " cores";
    }
    os << "\n";
    for (const auto &kv : m.buffers) {
        const BufferInfo &b = kv.second;
        os << "buffer " << b.name << ": " << b.type << " x " << b.elems << " in " << b.level;
        if (b.buffers > 1) {
            os << " x" << b.buffers;
            if (!b.rotate_loop.empty()) {
                os << " rotating on " << b.rotate_loop;
                if (!b.rotate_scope.empty() && b.rotate_scope != b.rotate_loop) {
                    os << " across " << b.rotate_scope;
                }
            }
        }
        if (b.offset >= 0) {
            os << " @" << b.offset;
        }
        if (b.is_arg) {
            os << " (argument " << b.arg_index << ")";
        }
        if (!b.directive.empty()) {
            os << " [" << b.directive << "]";
        }
        os << "\n";
    }
    os << m.body;
    return os.str();
}

} // namespace tessel::nir
