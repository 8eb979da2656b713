#include "npu_target/lower/HoistAddresses.h"

#include "npu_target/lower/DmaInference.h"

#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Finds a DMA (dma = true) or a read of memory: a load or an impure call (dma = false).
class Finder : public IRVisitor {
public:
    explicit Finder(bool dma) : dma_(dma) {}
    bool found = false;

private:
    bool dma_;
    using IRVisitor::visit;
    void visit(const Load *op) override {
        found = found || !dma_;
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        found = found || (dma_ ? op->name == "tessel.dma" : !op->is_pure());
        IRVisitor::visit(op);
    }
};

bool has_dma(const Stmt &s) {
    Finder f(true);
    s.accept(&f);
    return f.found;
}

bool reads_memory(const Expr &e) {
    Finder f(false);
    e.accept(&f);
    return f.found;
}

class Hoister : public IRMutator {
    struct Level {
        std::set<std::string> defined; // the loop variable and the lets of its body
        std::vector<std::pair<std::string, Expr>> lets;
        bool hoists = true; // false: nothing is taken out of this loop
    };
    std::vector<Level> levels_;
    int next_ = 0;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        // Lets before a loop delay its first operation: with a DMA in the loop (a
        // load the other pipes wait for) that costs more than the lets save, so
        // nothing is taken out of such a loop (its inner loops are still taken).
        levels_.push_back({{op->name}, {}, !has_dma(op->body)});
        Stmt body = mutate(op->body);
        Level level = std::move(levels_.back());
        levels_.pop_back();
        Stmt s = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        // Invariant in this loop: computed before it, split again against the enclosing one.
        for (auto it = level.lets.rbegin(); it != level.lets.rend(); ++it) {
            s = LetStmt::make(it->first, hoist(it->second), s);
        }
        return s;
    }
    Stmt visit(const LetStmt *op) override {
        if (!levels_.empty()) {
            levels_.back().defined.insert(op->name);
        }
        return IRMutator::visit(op);
    }
    Expr visit(const Call *op) override {
        if (levels_.empty() || op->name.rfind("tessel.", 0) != 0) {
            return IRMutator::visit(op);
        }
        std::vector<Expr> args = op->args;
        bool changed = false;
        for (Expr &a : args) {
            if (a.type().is_int() && !is_const(a)) {
                Expr h = hoist(a);
                changed = changed || !h.same_as(a);
                a = h;
            }
        }
        return changed ? Call::make(op->type, op->name, args, op->call_type, op->func, op->value_index, op->image,
                                    op->param)
                       : Expr(op);
    }

    // e = (terms invariant in the innermost loop) + (the rest): the first part
    // as a let before that loop when computing it takes instructions.
    Expr hoist(const Expr &e) {
        if (levels_.empty() || !levels_.back().hoists) {
            return e;
        }
        Level &level = levels_.back();
        std::vector<LinearTerm> terms, invariant, rest;
        linear_terms(e, 1, terms);
        for (const LinearTerm &t : terms) {
            bool varies = !t.atom.defined() || reads_memory(t.atom);
            for (const std::string &v : level.defined) {
                varies = varies || expr_uses_var(t.atom, v);
            }
            (varies ? rest : invariant).push_back(t);
        }
        if (invariant.empty() ||
            (invariant.size() == 1 && invariant[0].coef == 1 && invariant[0].atom.as<Variable>())) {
            return e;
        }
        // One let per value and loop (the operations of a body share their copy indices).
        Expr value = sum_of_terms(invariant, e.type());
        std::string name;
        for (const auto &[n, v] : level.lets) {
            if (equal(v, value)) {
                name = n;
            }
        }
        if (name.empty()) {
            name = "hoisted$" + std::to_string(next_++);
            level.lets.emplace_back(name, value);
        }
        rest.insert(rest.begin(), LinearTerm{Variable::make(e.type(), name), 1});
        return sum_of_terms(rest, e.type());
    }
};

} // namespace

nir::NpuModule hoist_addresses(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    r.body = Hoister().mutate(m.body);
    return r;
}

} // namespace tessel
