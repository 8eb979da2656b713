#include "npu_target/lower/Tensorize.h"

#include "npu_target/lower/DmaInference.h"
#include "npu_target/lower/FixQuant.h"

#include "npu_target/common/Error.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

std::string text(const Stmt &s) {
    std::ostringstream os;
    os << s;
    return os.str();
}

const Load *strip_cast_load(const Expr &e) {
    if (const Cast *c = e.as<Cast>()) {
        return c->value.as<Load>();
    }
    return e.as<Load>();
}

class Tensorizer : public IRMutator {
public:
    Tensorizer(nir::NpuModule &m, const TensorizeRequest &req) : m_(m), req_(req) {}
    bool done = false;

private:
    nir::NpuModule &m_;
    const TensorizeRequest &req_;
    bool in_func_ = false;
    bool zero_init_ = false;
    std::vector<NestLoop> reductions_; // enclosing reduction loops of the update
    using IRMutator::visit;

    std::string where() const {
        return "directive " + req_.directive_id + " (tensorize " + req_.func.substr(0, req_.func.find('$')) + ".update(" +
               std::to_string(req_.update) + "))";
    }

    Stmt visit(const ProducerConsumer *op) override {
        if (!op->is_producer || op->name != req_.func) {
            return IRMutator::visit(op);
        }
        in_func_ = true;
        Stmt body = drop_zero_init(op->body);
        body = mutate(body);
        in_func_ = false;
        if (!done) {
            user_error(where(), ": no loop nest of ", req_.func, "'s update is a matrix product the matrix unit can run; "
                       "expected three loops (m, n, k) around  C[i, j] = C[i, j] + cast(A[i, k]) * cast(B[k, j])  with "
                       "A in ", m_.arch->matrix.a_level, ", B in ", m_.arch->matrix.b_level, ", C in ", m_.arch->matrix.c_level,
                       "; found:\n", text(op->body));
        }
        return ProducerConsumer::make(op->name, true, body);
    }

    // Removes the leading nest that stores constant zero into the accumulator.
    Stmt drop_zero_init(const Stmt &s) {
        const Block *b = s.as<Block>();
        if (!b) {
            return s;
        }
        if (is_zero_nest(b->first)) {
            zero_init_ = true;
            return b->rest;
        }
        return Block::make(drop_zero_init(b->first), b->rest);
    }
    bool is_zero_nest(const Stmt &s) const {
        Stmt x = s;
        while (true) {
            if (const For *f = x.as<For>()) {
                x = f->body;
            } else if (const LetStmt *l = x.as<LetStmt>()) {
                x = l->body;
            } else {
                break;
            }
        }
        const Store *st = x.as<Store>();
        return st && st->name == req_.func && is_const_zero(st->value);
    }

    Stmt visit(const For *op) override {
        if (!in_func_ || done) {
            return IRMutator::visit(op);
        }
        Stmt mm = try_match(op);
        if (mm.defined()) {
            done = true;
            return mm;
        }
        // A loop of the update is "<func>.s<n>.<var>..."; it is a reduction loop
        // when <var> is an RVar (named "r$x"). Only the part after the stage
        // counts: the Func's own name may carry Halide's uniquing suffix ("acc$2").
        const std::string stage = ".s" + std::to_string(req_.update + 1) + ".";
        const size_t at = op->name.find(stage);
        bool reduction = at != std::string::npos && op->name.find('$', at + stage.size()) != std::string::npos;
        if (reduction) {
            const int64_t *ext = as_const_int(op->extent);
            reductions_.push_back({op->name, op->min, ext ? *ext : -1});
        }
        Stmt s = IRMutator::visit(op);
        if (reduction) {
            reductions_.pop_back();
            s = peel_first(s.as<For>());
        }
        return s;
    }

    // The MMAD in a reduction loop overwrites the accumulator on the loop's
    // first iteration (try_match's `first` condition): that iteration runs as a
    // copy of the body in front of the loop, the loop the others, so neither
    // tests the condition per MMAD. Not when the body allocates (a stage at the
    // loop: a copy would allocate the buffer twice).
    Stmt peel_first(const For *f) {
        const int64_t *ext = f ? as_const_int(f->extent) : nullptr;
        if (!ext || *ext < 2) {
            return f;
        }
        BodyScan scan(f->name, f->min);
        f->body.accept(&scan);
        if (!scan.tests_first || scan.allocates) {
            return f;
        }
        Stmt head = simplify(substitute(f->name, f->min, f->body));
        Stmt rest = simplify(NotFirst(f->name, f->min).mutate(f->body));
        return Block::make(head, For::make(f->name, simplify(f->min + 1), make_const(f->extent.type(), *ext - 1),
                                            f->for_type, f->device_api, rest));
    }
    // `var == min`: the first-iteration test.
    static bool is_first_test(const EQ *op, const std::string &var, const Expr &min) {
        const Variable *v = op->a.as<Variable>();
        return v && v->name == var && equal(op->b, min);
    }
    // Whether a loop body tests for the loop's first iteration and whether it allocates.
    class BodyScan : public IRVisitor {
    public:
        BodyScan(const std::string &var, const Expr &min) : var_(var), min_(min) {}
        bool tests_first = false, allocates = false;

    private:
        const std::string &var_;
        const Expr &min_;
        using IRVisitor::visit;
        void visit(const EQ *op) override {
            tests_first = tests_first || is_first_test(op, var_, min_);
            IRVisitor::visit(op);
        }
        void visit(const Allocate *op) override {
            allocates = true;
            IRVisitor::visit(op);
        }
    };
    // The first-iteration test is false in the loop's other iterations.
    class NotFirst : public IRMutator {
    public:
        NotFirst(const std::string &var, const Expr &min) : var_(var), min_(min) {}

    private:
        const std::string &var_;
        const Expr &min_;
        using IRMutator::visit;
        Expr visit(const EQ *op) override {
            return is_first_test(op, var_, min_) ? const_false() : IRMutator::visit(op);
        }
    };

    Stmt try_match(const For *top) {
        const LoopNest nest = walk_loop_nest(top);
        const std::vector<NestLoop> &loops = nest.loops;
        const auto &lets = nest.lets;
        if (!nest.non_constant.empty() || loops.size() != 3) {
            return Stmt();
        }
        const Store *st = nest.inner.as<Store>();
        if (!st || st->name != req_.func || st->value.type().lanes() != 1) {
            return Stmt();
        }
        const Add *add = st->value.as<Add>();
        if (!add) {
            return Stmt();
        }
        const Load *self = add->a.as<Load>();
        const Mul *mul = add->b.as<Mul>();
        if (!self || !mul || self->name != req_.func) {
            return Stmt();
        }
        const Load *la = strip_cast_load(mul->a), *lb = strip_cast_load(mul->b);
        if (!la || !lb) {
            return Stmt();
        }
        Expr ic = st->index, is = self->index, ia = la->index, ib = lb->index;
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            ic = substitute(it->first, it->second, ic);
            is = substitute(it->first, it->second, is);
            ia = substitute(it->first, it->second, ia);
            ib = substitute(it->first, it->second, ib);
        }
        ic = join_div_mod(ic), is = join_div_mod(is), ia = join_div_mod(ia), ib = join_div_mod(ib);
        if (!can_prove(ic == is)) {
            return Stmt();
        }
        // Classify the loops; swap A and B if the product is written B * A.
        auto classify = [&](const Load *a, const Load *b, Expr xa, Expr xb, nir::MmadOp &op) -> bool {
            const NestLoop *lm = nullptr, *ln = nullptr, *lk = nullptr;
            int64_t cm_c = 0, cm_a = 0, cn_c = 0, cn_b = 0, ck_a = 0, ck_b = 0;
            for (const NestLoop &l : loops) {
                auto c_c = nir::affine_coefficient(ic, l.name), c_a = nir::affine_coefficient(xa, l.name), c_b = nir::affine_coefficient(xb, l.name);
                if (!c_c || !c_a || !c_b) {
                    return false;
                }
                if (*c_c && *c_a && !*c_b) {
                    lm = &l, cm_c = *c_c, cm_a = *c_a;
                } else if (*c_c && *c_b && !*c_a) {
                    ln = &l, cn_c = *c_c, cn_b = *c_b;
                } else if (*c_a && *c_b && !*c_c) {
                    lk = &l, ck_a = *c_a, ck_b = *c_b;
                } else {
                    return false;
                }
            }
            if (!lm || !ln || !lk || cn_c != 1 || ck_a != 1 || cn_b != 1) {
                return false;
            }
            op.m = static_cast<int>(lm->extent);
            op.n = static_cast<int>(ln->extent);
            op.k = static_cast<int>(lk->extent);
            op.c_row = cm_c;
            op.a_row = cm_a;
            op.b_row = ck_b;
            Expr c0 = ic, a0 = xa, b0 = xb;
            for (const NestLoop &l : loops) {
                c0 = substitute(l.name, l.min, c0);
                a0 = substitute(l.name, l.min, a0);
                b0 = substitute(l.name, l.min, b0);
            }
            op.c = {req_.func, simplify(c0)};
            op.a = {a->name, simplify(a0)};
            op.b = {b->name, simplify(b0)};
            return true;
        };
        nir::MmadOp op;
        if (!classify(la, lb, ia, ib, op)) {
            if (!classify(lb, la, ib, ia, op)) {
                return Stmt();
            }
            std::swap(la, lb);
        }
        check_operands(op, la->type, st->value.type(), top);
        auto dt = nir::dtype_of_type(la->type);
        op.dtype = *dt;
        op.prov = m_.provenance_id_of(req_.directive_id, req_.func, top->name);
        if (!zero_init_) {
            return op.make();
        }
        // The first reduction iteration overwrites the accumulator.
        Expr first = const_true();
        for (const NestLoop &r : reductions_) {
            first = first && (Variable::make(Int(32), r.name) == r.min);
        }
        nir::MmadOp init = op;
        init.init = true;
        if (reductions_.empty()) {
            return init.make();
        }
        return IfThenElse::make(simplify(first), init.make(), op.make());
    }

    void check_operands(const nir::MmadOp &op, const Type &in_t, const Type &acc_t, const For *top) {
        const MatrixUnit &mu = m_.arch->matrix;
        auto dt = nir::dtype_of_type(in_t);
        std::ostringstream ty;
        ty << in_t;
        if (!dt || !mu.shapes.count(*dt)) {
            std::string have;
            for (const auto &kv : mu.shapes) {
                have += (have.empty() ? "" : ", ") + std::string(dtype_name(kv.first));
            }
            user_error(where(), ": the matrix unit of ", m_.arch->name, " does not multiply ", ty.str(), " (it takes ", have, ")");
        }
        auto acc = mu.accumulators.find(*dt);
        auto want = nir::dtype_of_type(acc_t);
        if (!want || acc->second != *want) {
            std::ostringstream os;
            os << acc_t;
            user_error(where(), ": the matrix unit accumulates ", ty.str(), " in ", dtype_name(acc->second), ", but ",
                       req_.func, " is ", os.str());
        }
        auto level_is = [&](const std::string &buf, const std::string &want_level, const char *role) {
            const nir::BufferInfo &b = m_.buffer(buf);
            if (b.level != want_level) {
                user_error(where(), ": operand ", role, " (", buf, ") is in ", b.level, "; the matrix unit reads ", role,
                           " from ", want_level, " (stage it there at the tensorized loop)");
            }
        };
        level_is(op.a.buffer, mu.a_level, "A");
        level_is(op.b.buffer, mu.b_level, "B");
        level_is(op.c.buffer, mu.c_level, "C");
        if (op.a_row != op.k || op.b_row != op.n || op.c_row != op.n) {
            user_error(where(), ": operand tiles must be dense row-major (A ", op.m, "x", op.k, " row stride ", op.k,
                       ", B ", op.k, "x", op.n, " row stride ", op.n, ", C ", op.m, "x", op.n, " row stride ", op.n,
                       "); found row strides A ", op.a_row, ", B ", op.b_row, ", C ", op.c_row, " in loop ", top->name);
        }
        if (op.m > 65535 || op.k > 65535 || op.n > 65535) {
            user_error(where(), ": ", op.m, "x", op.k, "x", op.n, " is too large for one MMAD (max 65535 per dimension)");
        }
    }
};

} // namespace

nir::NpuModule tensorize(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    for (const TensorizeRequest &req : m.schedule.tensorize) {
        if (req.unit == "fix") {
            r.body = tensorize_fix(r, req, r.body);
            continue;
        }
        Tensorizer t(r, req);
        r.body = t.mutate(r.body);
    }
    return r;
}

} // namespace tessel
