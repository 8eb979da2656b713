#include "dsl/Roofline.h"

#include "dsl/HalidePipeline.h"
#include "dsl/Lowering.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/ir/NpuIR.h"
#include "npu_target/lower/FixQuant.h"
#include "npu_target/lower/Specialize.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The element type of a (cast of a) multiplication operand.
std::optional<DType> operand_dtype(const Expr &e) {
    const Cast *c = e.as<Cast>();
    return nir::dtype_of_type(c ? c->value.type() : e.type());
}

// Counts arithmetic over the unscheduled (compute_root) lowering.
class CountWork : public IRVisitor {
public:
    /** fix_rate > 0: the machine requantises a matrix accumulator on its way out of the
     * accumulator level at up to this many bytes per cycle (an engine with the transform quant
     * and a parameter table), so such an epilogue is that engine's work, not the vector unit's. */
    CountWork(const ArchSpec &arch, double fix_rate) : arch_(arch), fix_rate_(fix_rate) {}
    std::map<DType, int64_t> macs;
    double fix_bytes = 0; // epilogue output bytes the FIX engine can produce
    std::map<std::string, double> vec_bytes; // op cost key -> element bytes processed
    int64_t vector_elements = 0;
    /** The casts of loaded elements, per buffer and target type: the most bytes one Func's
     * definition casts. Several Funcs casting the same input (LayerNorm's mean and centered
     * both widen x) need it converted once: the machine keeps the widened copy. */
    std::map<std::tuple<std::string, int, int>, double> load_casts;

private:
    using IRVisitor::visit;

    void visit(const For *op) override {
        const int64_t *e = as_const_int(op->extent);
        loops_.emplace_back(op->name, e ? static_cast<double>(*e) : 1.0);
        op->body.accept(this);
        loops_.pop_back();
    }
    void visit(const Store *op) override {
        double n = op->value.type().lanes();
        for (const auto &l : loops_) {
            n *= l.second;
        }
        const Add *add = op->value.as<Add>();
        if (add) {
            const Load *self = add->a.as<Load>();
            const Mul *mul = add->b.as<Mul>();
            if (self && mul && self->name == op->name) {
                auto dt = operand_dtype(mul->a);
                if (dt) {
                    macs[*dt] += static_cast<int64_t>(n);
                    auto acc = arch_.matrix.accumulators.find(*dt);
                    if (arch_.matrix.macs_per_cycle(*dt) > 0 && acc != arch_.matrix.accumulators.end() &&
                        nir::dtype_of_type(op->value.type()) == acc->second) {
                        matrix_accumulators_.insert(op->name);
                    }
                    return;
                }
            }
        }
        if (op->value.as<Load>()) {
            return; // a copy: data movement, not arithmetic
        }
        RequantPattern rq;
        if (fix_rate_ > 0 && match_requant(op->value, rq) &&
            (matrix_accumulators_.count(rq.acc->name) || matrix_accumulators_.count(rq.bias->name))) {
            fix_bytes += n * op->value.type().bytes();
            return;
        }
        CountOps ops(loops_, op->value.type().lanes());
        op->value.accept(&ops);
        for (const auto &kv : ops.bytes) {
            vec_bytes[kv.first] += kv.second;
        }
        for (const auto &kv : ops.load_casts) {
            load_casts[kv.first] = std::max(load_casts[kv.first], kv.second);
        }
        vector_elements += static_cast<int64_t>(n);
    }

    // The element bytes each operation processes. An operation runs once per
    // point of the loops its operands depend on (1/sqrt of a row's variance
    // once per row, even when the algorithm writes it inside the per-element
    // expression: it is the same value for every element of the row), at the
    // width of the type it computes in (a fp32 division whose result is cast
    // to fp16 is fp32 work; a cast at the wider of its two types).
    struct CountOps : public IRVisitor {
        CountOps(const std::vector<std::pair<std::string, double>> &loops, int lanes) : loops(loops), lanes(lanes) {}
        const std::vector<std::pair<std::string, double>> &loops;
        int lanes;
        std::map<std::string, double> bytes;
        std::map<std::string, std::set<std::string>> let_vars; // let name -> the variables its value uses
        using IRVisitor::visit;

        // The variables a subexpression uses, load indices included, lets resolved.
        std::set<std::string> vars_of(const Expr &e) const {
            struct Vars : public IRGraphVisitor {
                const CountOps *self;
                std::set<std::string> names;
                using IRGraphVisitor::visit;
                void visit(const Variable *v) override {
                    auto it = self->let_vars.find(v->name);
                    if (it != self->let_vars.end()) {
                        names.insert(it->second.begin(), it->second.end());
                    } else {
                        names.insert(v->name);
                    }
                }
            } v;
            v.self = this;
            e.accept(&v);
            return v.names;
        }
        // The bytes an operation processes: once per point of the loops it depends on.
        double bytes_of(const Expr &node, int width) const {
            const std::set<std::string> used = vars_of(node);
            double n = lanes;
            for (const auto &l : loops) {
                if (used.count(l.first)) {
                    n *= l.second;
                }
            }
            return n * width;
        }
        void add(const std::string &key, const Expr &node, int width) { bytes[key] += bytes_of(node, width); }
        // A load's index is address arithmetic, not work on the data.
        void visit(const Load *) override {}
        void visit(const Let *op) override {
            op->value.accept(this);
            let_vars[op->name] = vars_of(op->value);
            op->body.accept(this);
        }
        void visit(const Add *op) override { add("add", op, op->type.bytes()); IRVisitor::visit(op); }
        void visit(const Sub *op) override { add("sub", op, op->type.bytes()); IRVisitor::visit(op); }
        void visit(const Mul *op) override { add("mul", op, op->type.bytes()); IRVisitor::visit(op); }
        void visit(const Div *op) override {
            // A float division by a constant is a multiplication by its
            // reciprocal (Halide's code generators and the vector selector
            // emit it that way).
            const Broadcast *bc = op->b.as<Broadcast>();
            // An integer division by 2^k is a shift right by k (VSHRS).
            const bool by_constant = op->type.is_float() && (as_const_float(op->b) || (bc && as_const_float(bc->value)));
            const bool shift = op->type.is_int_or_uint() && nir::power_of_two_exponent(op->b);
            add(shift ? "shrs" : by_constant ? "mul" : "div", op, op->type.bytes());
            IRVisitor::visit(op);
        }
        void visit(const Min *op) override { min_max(op, "min"); }
        // The maximum (minimum) of an exact widening of loaded elements is the
        // widening of their maximum: the machine compares them in the narrow
        // type (softmax's row maximum of fp16 data, the vector unit's VREDMAX
        // on fp16) and the cast is counted where the widened value is used.
        template <typename T>
        void min_max(const T *op, const char *key) {
            for (const Expr *side : {&op->a, &op->b}) {
                const Cast *c = side->as<Cast>();
                if (c && c->value.as<Load>() && exact_widening(c->value.type(), c->type)) {
                    add(key, op, c->value.type().bytes());
                    (side == &op->a ? op->b : op->a).accept(this);
                    return;
                }
            }
            add(key, op, op->type.bytes());
            IRVisitor::visit(op);
        }
        static bool exact_widening(const Type &from, const Type &to) {
            if (to.bits() <= from.bits()) {
                return false;
            }
            if (from.is_float() && to.is_float()) {
                return true;
            }
            return to.is_int_or_uint() && from.is_int_or_uint() && (to.is_int() || from.is_uint());
        }
        void visit(const Max *op) override { min_max(op, "max"); }
        // Casting the same buffer's elements at several offsets (a stencil's
        // taps) converts each element once over the whole domain: counted once,
        // and across Funcs once (load_casts, merged by CountWork).
        std::set<std::string> cast_loads;
        std::map<std::tuple<std::string, int, int>, double> load_casts; // (buffer, type code, bits) -> bytes
        void visit(const Cast *op) override {
            const Load *l = op->value.as<Load>();
            const int width = std::max(op->type.bytes(), op->value.type().bytes());
            if (!l) {
                add("cast", op, width);
            } else if (cast_loads.insert(l->name).second) {
                load_casts[{l->name, static_cast<int>(op->type.code()), op->type.bits()}] += bytes_of(op, width);
            }
            IRVisitor::visit(op);
        }
        void visit(const Select *op) override { add("cmpsel", op, op->type.bytes()); IRVisitor::visit(op); }
        void visit(const Call *op) override {
            if (op->name.rfind("exp_", 0) == 0) add("exp", op, op->type.bytes());
            else if (op->name.rfind("log_", 0) == 0) add("log", op, op->type.bytes());
            else if (op->name.rfind("sqrt_", 0) == 0) add("sqrt", op, op->type.bytes());
            IRVisitor::visit(op);
        }
    };
    std::vector<std::pair<std::string, double>> loops_; // enclosing loops: name, extent
    const ArchSpec &arch_;
    double fix_rate_;
    std::set<std::string> matrix_accumulators_; // Funcs whose update is a product the matrix unit accumulates
};

// The elements of each input the algorithm reads: the union, over the loads of
// the input, of the points their affine indices reach in the loops around them
// (a stride-2 1x1 convolution reads a quarter of its input; the compulsory GM
// traffic is those bytes, not the tensor's). An input with a load whose index
// is not affine in constant-extent loops, or too many points to enumerate,
// counts whole, as does one never loaded. A Func that is the input itself
// (Halide's `input_im`, computed at root here: buf[i] = input[i]) is read
// through: its loads are the input's.
class ElementsRead : public IRVisitor {
public:
    // The elements of each input (`elems`: input -> its tensor's elements) `s` reads.
    static std::map<std::string, int64_t> in(const Stmt &s, const std::map<std::string, int64_t> &elems) {
        ElementsRead er(elems);
        er.find_copies(s);
        s.accept(&er);
        std::map<std::string, int64_t> read = elems;
        for (const auto &[name, seen] : er.seen_) {
            if (!er.whole_.count(name)) {
                read[name] = static_cast<int64_t>(std::count(seen.begin(), seen.end(), true));
            }
        }
        return read;
    }

private:
    explicit ElementsRead(std::map<std::string, int64_t> elems) : elems_(std::move(elems)) {}

    // Finds the identity copies of inputs in `s` (before the visit).
    void find_copies(const Stmt &s) {
        struct Copies : public IRVisitor {
            const std::map<std::string, int64_t> *inputs;
            std::map<std::string, std::string> of;
            using IRVisitor::visit;
            void visit(const Store *op) override {
                const Load *l = op->value.as<Load>();
                if (l && inputs->count(l->name) && !inputs->count(op->name) && equal(l->index, op->index)) {
                    of.emplace(op->name, l->name);
                }
                IRVisitor::visit(op);
            }
        } c;
        c.inputs = &elems_;
        s.accept(&c);
        copy_of_ = c.of;
    }

    static constexpr int64_t kMaxPoints = int64_t(1) << 26;
    std::map<std::string, int64_t> elems_;
    std::map<std::string, std::string> copy_of_; // identity copy -> its input
    std::map<std::string, std::vector<bool>> seen_;
    std::set<std::string> whole_;
    struct Loop {
        std::string name;
        Expr min;
        int64_t extent;
    };
    std::vector<Loop> loops_;
    using IRVisitor::visit;

    void visit(const For *op) override {
        const int64_t *e = as_const_int(op->extent);
        loops_.push_back({op->name, op->min, e ? *e : -1});
        IRVisitor::visit(op);
        loops_.pop_back();
    }
    void visit(const Store *op) override {
        const Load *l = op->value.as<Load>();
        auto c = copy_of_.find(op->name);
        if (c != copy_of_.end() && l && l->name == c->second) {
            op->index.accept(this); // the copy itself: its reads are counted where it is read
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        auto c = copy_of_.find(op->name);
        const std::string &input = c != copy_of_.end() ? c->second : op->name;
        auto n = elems_.find(input);
        if (n == elems_.end() || whole_.count(input)) {
            return;
        }
        if (!mark(op, input, n->second)) {
            whole_.insert(input);
        }
    }
    // Marks the elements this load reaches; false when it cannot tell.
    bool mark(const Load *op, const std::string &input, int64_t elems) {
        if (!op->type.is_scalar()) {
            return false;
        }
        Expr base = op->index;
        std::vector<std::pair<int64_t, int64_t>> dims; // coefficient, extent
        int64_t points = 1;
        for (const Loop &l : loops_) {
            auto c = nir::affine_coefficient(op->index, l.name);
            if (!c) {
                return false;
            }
            base = substitute(l.name, l.min, base);
            if (*c == 0) {
                continue;
            }
            if (l.extent < 0 || points > kMaxPoints / std::max<int64_t>(1, l.extent)) {
                return false;
            }
            dims.emplace_back(*c, l.extent);
            points *= l.extent;
        }
        // Hold the simplified Expr: as_const_int points into it, and a temporary
        // would be freed at the end of the statement (a use-after-free under ASan).
        const Expr simplified_base = simplify(base);
        const int64_t *b = as_const_int(simplified_base);
        if (!b) {
            return false;
        }
        std::vector<bool> &seen = seen_[input];
        seen.resize(static_cast<size_t>(elems), false);
        std::vector<int64_t> at(dims.size(), 0);
        for (int64_t p = 0; p < points; p++) {
            int64_t idx = *b;
            for (size_t d = 0; d < dims.size(); d++) {
                idx += dims[d].first * at[d];
            }
            if (idx < 0 || idx >= elems) {
                return false;
            }
            seen[static_cast<size_t>(idx)] = true;
            for (size_t d = 0; d < dims.size() && ++at[d] == dims[d].second; d++) {
                at[d] = 0;
            }
        }
        return true;
    }
};

// The fastest edge out of the matrix unit's accumulator level on an engine that requantises
// (transform quant with a parameter table); 0 when there is none.
double fix_requant_rate(const ArchSpec &arch) {
    double best = 0;
    for (const auto &e : arch.engines) {
        if (e.quant_channels <= 0 || std::find(e.transforms.begin(), e.transforms.end(), "quant") == e.transforms.end()) {
            continue;
        }
        for (const auto &ed : e.edges) {
            if (ed.src == arch.matrix.c_level) {
                best = std::max(best, ed.bytes_per_cycle);
            }
        }
    }
    return best;
}

} // namespace

Roofline compute_roofline(const std::string &generator, const ParamMap &params, const ArchSpec &arch, int cores) {
    Roofline r;
    r.cores = std::max(1, cores);
    HalidePipeline p = build_halide_pipeline(generator, params);
    // The algorithm's work, each Func computed once over its domain: every
    // Func but the outputs at root. Left to Halide's defaults a pure Func is
    // inlined into every use and a reduction recomputed at its consumer's
    // innermost loop (softmax's row max and sum once per element, COLS times
    // the work), which counts a schedule's redundancy as the algorithm's.
    compute_intermediates_at_root(p, false);
    LoweredPipeline lp = lower_pipeline(p, ScheduleSpec{}, arch);
    std::vector<isa::ArgDesc> args;
    std::map<std::string, int64_t> input_elems;
    for (const auto &i : lp.inputs) {
        args.push_back({i.name, i.dtype, i.shape, false});
        input_elems[i.name] = Tensor(i.name, i.dtype, i.shape).elements();
    }
    for (const auto &o : lp.outputs) {
        args.push_back({o.name, o.dtype, o.shape, true});
        r.gm_write_bytes += Tensor(o.name, o.dtype, o.shape).bytes();
    }
    Stmt s = specialize_for_npu(lp.stmt, args);
    // The compulsory GM reads: each input element the algorithm reads, once.
    const std::map<std::string, int64_t> read = ElementsRead::in(s, input_elems);
    for (const auto &i : lp.inputs) {
        r.gm_read_bytes += read.at(i.name) * dtype_bytes(i.dtype);
    }
    const double fix_rate = fix_requant_rate(arch);
    CountWork w(arch, fix_rate);
    s.accept(&w);
    const double c = r.cores;
    double vec_cycles = 0;
    for (const auto &[dt, n] : w.macs) {
        r.macs += n;
        int64_t rate = arch.matrix.macs_per_cycle(dt);
        if (rate > 0) {
            r.terms.push_back({std::string("matrix (") + dtype_name(dt) + ")", static_cast<double>(n) / (rate * c)});
        } else { // no matrix unit for this type: two vector ops (mul, add) per MAC
            w.vec_bytes["mul"] += static_cast<double>(n) * dtype_bytes(dt);
            w.vec_bytes["add"] += static_cast<double>(n) * dtype_bytes(dt);
        }
    }
    for (const auto &kv : w.load_casts) {
        w.vec_bytes["cast"] += kv.second;
    }
    for (const auto &[op, bytes] : w.vec_bytes) {
        vec_cycles += std::ceil(bytes / arch.vector.bytes_per_repeat) * arch.vector.cycles_for(op);
    }
    r.vector_elements = w.vector_elements;
    r.vector_op_bytes = w.vec_bytes;
    if (vec_cycles > 0) {
        r.terms.push_back({"vector", vec_cycles / c});
    }
    if (w.fix_bytes > 0) {
        r.terms.push_back({"FIX (requantise)", w.fix_bytes / fix_rate / c});
    }
    const MemoryLevel *gm = nullptr;
    for (const auto &L : arch.memories) {
        if (L.off_chip) {
            gm = &L;
            break;
        }
    }
    double rd = arch.chip.gm_bytes_per_cycle > 0 ? arch.chip.gm_bytes_per_cycle : (gm ? gm->rd_bytes_per_cycle : 1);
    double wr = gm && gm->wr_bytes_per_cycle > 0 ? gm->wr_bytes_per_cycle : rd;
    double agg = arch.chip.gm_aggregate_bytes_per_cycle > 0 ? arch.chip.gm_aggregate_bytes_per_cycle : rd * c;
    double rd_all = std::min(rd * c, agg), wr_all = std::min(wr * c, agg);
    r.gm_read_bytes_per_cycle = rd_all;
    r.gm_write_bytes_per_cycle = wr_all;
    r.gm_shared_rw_port = arch.chip.gm_shared_rw_port;
    if (arch.chip.gm_shared_rw_port) {
        r.terms.push_back({"GM read+write", (r.gm_read_bytes + r.gm_write_bytes) / rd_all});
    } else {
        r.terms.push_back({"GM read", r.gm_read_bytes / rd_all});
        r.terms.push_back({"GM write", r.gm_write_bytes / wr_all});
    }
    for (const auto &t : r.terms) {
        r.no_overlap_cycles += t.cycles;
        if (t.cycles > r.t_phys_cycles) {
            r.t_phys_cycles = t.cycles;
            r.binding_resource = t.resource;
        }
    }
    return r;
}

} // namespace tessel
