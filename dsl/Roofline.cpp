#include "dsl/Roofline.h"

#include "dsl/HalidePipeline.h"
#include "dsl/Lowering.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/ir/NpuIR.h"
#include "npu_target/lower/Specialize.h"

#include <algorithm>
#include <cmath>
#include <set>

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
    std::map<DType, int64_t> macs;
    std::map<std::string, double> vec_bytes; // op cost key -> element bytes processed
    int64_t vector_elements = 0;

private:
    double mult_ = 1;
    using IRVisitor::visit;

    void visit(const For *op) override {
        const int64_t *e = as_const_int(op->extent);
        double saved = mult_;
        mult_ *= e ? static_cast<double>(*e) : 1.0;
        op->body.accept(this);
        mult_ = saved;
    }
    void visit(const Store *op) override {
        const double n = mult_ * op->value.type().lanes();
        const Add *add = op->value.as<Add>();
        if (add) {
            const Load *self = add->a.as<Load>();
            const Mul *mul = add->b.as<Mul>();
            if (self && mul && self->name == op->name) {
                auto dt = operand_dtype(mul->a);
                if (dt) {
                    macs[*dt] += static_cast<int64_t>(n);
                    return;
                }
            }
        }
        if (op->value.as<Load>()) {
            return; // a copy: data movement, not arithmetic
        }
        CountOps ops;
        op->value.accept(&ops);
        const int bytes = op->value.type().bytes();
        for (const auto &kv : ops.counts) {
            vec_bytes[kv.first] += n * kv.second * bytes;
        }
        vector_elements += static_cast<int64_t>(n);
    }

    struct CountOps : public IRVisitor {
        std::map<std::string, int> counts;
        using IRVisitor::visit;
        // A load's index is address arithmetic, not work on the data.
        void visit(const Load *) override {}
        void visit(const Add *op) override { counts["add"]++; IRVisitor::visit(op); }
        void visit(const Sub *op) override { counts["sub"]++; IRVisitor::visit(op); }
        void visit(const Mul *op) override { counts["mul"]++; IRVisitor::visit(op); }
        void visit(const Div *op) override {
            // A float division by a constant is a multiplication by its
            // reciprocal (Halide's code generators and the vector selector
            // emit it that way).
            const Broadcast *bc = op->b.as<Broadcast>();
            const bool by_constant = op->type.is_float() && (as_const_float(op->b) || (bc && as_const_float(bc->value)));
            counts[by_constant ? "mul" : "div"]++;
            IRVisitor::visit(op);
        }
        void visit(const Min *op) override { counts["min"]++; IRVisitor::visit(op); }
        void visit(const Max *op) override { counts["max"]++; IRVisitor::visit(op); }
        // Casting the same buffer's elements at several offsets (a stencil's
        // taps) converts each element once over the whole domain: counted once.
        std::set<std::string> cast_loads;
        void visit(const Cast *op) override {
            const Load *l = op->value.as<Load>();
            if (!l || cast_loads.insert(l->name).second) {
                counts["cast"]++;
            }
            IRVisitor::visit(op);
        }
        void visit(const Select *op) override { counts["cmpsel"]++; IRVisitor::visit(op); }
        void visit(const Call *op) override {
            if (op->name.rfind("exp_", 0) == 0) counts["exp"]++;
            else if (op->name.rfind("log_", 0) == 0) counts["log"]++;
            else if (op->name.rfind("sqrt_", 0) == 0) counts["sqrt"]++;
            IRVisitor::visit(op);
        }
    };
};

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
    {
        std::vector<Function> outs;
        std::set<std::string> out_names;
        for (const auto &o : p.outputs) {
            outs.push_back(o.func.function());
            out_names.insert(o.func.name());
        }
        for (auto &kv : build_environment(outs)) {
            if (!out_names.count(kv.first)) {
                Func(kv.second).compute_root();
            }
        }
    }
    LoweredPipeline lp = lower_pipeline(p, ScheduleSpec{}, arch);
    std::vector<isa::ArgDesc> args;
    for (const auto &i : lp.inputs) {
        args.push_back({i.name, i.dtype, i.shape, false});
        r.gm_read_bytes += Tensor(i.name, i.dtype, i.shape).bytes();
    }
    for (const auto &o : lp.outputs) {
        args.push_back({o.name, o.dtype, o.shape, true});
        r.gm_write_bytes += Tensor(o.name, o.dtype, o.shape).bytes();
    }
    Stmt s = specialize_for_npu(lp.stmt, args);
    CountWork w;
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
    for (const auto &[op, bytes] : w.vec_bytes) {
        vec_cycles += std::ceil(bytes / arch.vector.bytes_per_repeat) * arch.vector.cycles_for(op);
    }
    r.vector_elements = w.vector_elements;
    if (vec_cycles > 0) {
        r.terms.push_back({"vector", vec_cycles / c});
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
