#include "npu_target/lower/FoldVectorLoops.h"

#include "npu_target/common/Error.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Fold : public IRMutator {
public:
    explicit Fold(nir::NpuModule &m) : m_(m) {}

private:
    nir::NpuModule &m_;
    using IRMutator::visit;

    struct Body {
        std::vector<const Allocate *> temps; // outermost first
        std::vector<nir::VecOp> ops;
    };

    // The loop body as temps around vector operations, or nullopt.
    std::optional<Body> split_body(Stmt s) {
        Body b;
        // Scalar lets around the operations (index arithmetic Halide factored
        // out) are substituted into them, so the loop still folds.
        std::vector<std::pair<std::string, Expr>> lets;
        for (;;) {
            if (const Allocate *a = s.as<Allocate>()) {
                if (a->name.find(".vtmp") == std::string::npos || a->extents.size() != 1) {
                    return std::nullopt;
                }
                b.temps.push_back(a);
                s = a->body;
            } else if (const LetStmt *l = s.as<LetStmt>()) {
                if (!l->value.type().is_scalar()) {
                    return std::nullopt;
                }
                lets.emplace_back(l->name, l->value);
                s = l->body;
            } else {
                break;
            }
        }
        auto inline_lets = [&](Expr e) {
            for (auto it = lets.rbegin(); e.defined() && it != lets.rend(); ++it) {
                e = substitute(it->first, it->second, e);
            }
            return e;
        };
        std::vector<Stmt> stmts;
        std::function<bool(const Stmt &)> flat = [&](const Stmt &x) {
            if (const Block *blk = x.as<Block>()) {
                return flat(blk->first) && flat(blk->rest);
            }
            stmts.push_back(x);
            return true;
        };
        flat(s);
        for (const Stmt &x : stmts) {
            auto v = nir::as_vec(x);
            if (!v || v->rows != 1 || v->op == isa::Op::VREDSUM || v->op == isa::Op::VREDMAX) {
                return std::nullopt;
            }
            for (nir::BufRef *r : {&v->dst, &v->a, &v->b}) {
                r->index = inline_lets(r->index);
            }
            v->scalar = inline_lets(v->scalar);
            b.ops.push_back(*v);
        }
        if (b.ops.empty()) {
            return std::nullopt;
        }
        return b;
    }

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const int64_t *ext = as_const_int(op->extent);
        auto parts = split_body(body);
        if (!ext || *ext < 2 || !parts || op->for_type != ForType::Serial) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        // Scratch rows: each temp gets `extent` rows of its lane count.
        std::map<std::string, int64_t> temp_lanes;
        for (const Allocate *a : parts->temps) {
            temp_lanes[a->name] = *as_const_int(a->extents[0]);
        }
        const int64_t max_rep = std::max(1, m_.arch->vector.max_repeat);
        int64_t rows = *ext;
        while (rows > max_rep || *ext % rows != 0) {
            rows--;
        }
        // Every operand affine in the loop variable; scalars must not use it.
        std::vector<nir::VecOp> folded;
        Expr var = Variable::make(Int(32), op->name);
        Expr base = op->min; // rows start at min (+ outer * rows when split)
        std::string outer = op->name + ".rows";
        Expr row0 = *ext == rows ? op->min : op->min + Variable::make(Int(32), outer) * make_const(Int(32), rows);
        for (nir::VecOp v : parts->ops) {
            if (v.scalar.defined() && expr_uses_var(v.scalar, op->name)) {
                return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
            }
            nir::BufRef *refs[3] = {&v.dst, &v.a, &v.b};
            for (int i = 0; i < 3; i++) {
                nir::BufRef &r = *refs[i];
                if (r.buffer.empty()) {
                    continue;
                }
                auto tl = temp_lanes.find(r.buffer);
                int64_t c;
                if (tl != temp_lanes.end()) {
                    c = tl->second; // one row of the (now taller) scratch per iteration
                    r.index = r.index + (var - op->min) * make_const(Int(32), c);
                } else {
                    auto k = nir::affine_coefficient(r.index, op->name);
                    if (!k || *k > INT32_MAX || *k < INT32_MIN) {
                        return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
                    }
                    c = *k;
                }
                v.row_stride[i] = static_cast<int32_t>(c);
                r.index = simplify(substitute(op->name, row0, r.index));
            }
            v.rows = static_cast<int>(rows);
            folded.push_back(v);
        }
        std::vector<Stmt> stmts;
        for (const auto &v : folded) {
            stmts.push_back(v.make());
        }
        Stmt s = Block::make(stmts);
        for (auto it = parts->temps.rbegin(); it != parts->temps.rend(); ++it) {
            const Allocate *a = *it;
            nir::BufferInfo &b = m_.buffers.at(a->name);
            b.elems = temp_lanes[a->name] * rows;
            s = Allocate::make(a->name, a->type, a->memory_type, {make_const(Int(32), b.elems)}, a->condition, s);
        }
        if (rows != *ext) {
            s = For::make(outer, 0, make_const(Int(32), *ext / rows), op->for_type, op->device_api, s);
        }
        return s;
    }
};

} // namespace

nir::NpuModule fold_vector_loops(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = Fold(r).mutate(m.body);
    return r;
}

} // namespace tessel
