#include "npu_target/passes/LoopBody.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

void Leaves::add(const Stmt &s) {
    if (nir::as_sync(s)) {
        has_sync = true;
    }
    leaves.push_back({s, accesses_of(m_, s), depth_, depth_ == 0 ? s : top_});
}

void Leaves::visit(const For *op) {
    if (op == skip_) {
        return;
    }
    defined.insert(op->name);
    op->min.accept(this);
    op->extent.accept(this);
    if (depth_++ == 0) {
        top_ = op;
    }
    op->body.accept(this);
    depth_--;
}

void Leaves::visit(const IfThenElse *op) {
    op->condition.accept(this);
    if (depth_++ == 0) { // a conditional counts as a loop: nothing is moved into or out of it
        top_ = op;
    }
    op->then_case.accept(this);
    if (op->else_case.defined()) {
        op->else_case.accept(this);
    }
    depth_--;
}

void Leaves::visit(const LetStmt *op) {
    defined.insert(op->name);
    IRVisitor::visit(op);
}

void Leaves::visit(const Variable *op) { used.insert(op->name); }

void Leaves::visit(const Evaluate *op) {
    if (op == skip_) {
        return;
    }
    add(op);
    IRVisitor::visit(op);
}

void Leaves::visit(const Store *op) {
    add(op);
    IRVisitor::visit(op);
}

void Leaves::visit(const Allocate *op) {
    allocated[op->name] = depth_;
    IRVisitor::visit(op);
}

void Leaves::visit(const Load *op) {
    loaded.insert(op->name);
    IRVisitor::visit(op);
}

int occurrences(const Stmt &s, const IRNode *node) {
    struct Count : public IRVisitor {
        const IRNode *node;
        int n = 0;
        using IRVisitor::visit;
        void visit(const Evaluate *op) override { n += op == node; }
        void visit(const Store *op) override { n += op == node; }
        void visit(const Free *op) override { n += op == node; }
        void visit(const For *op) override {
            n += op == node;
            IRVisitor::visit(op);
        }
        void visit(const IfThenElse *op) override {
            n += op == node;
            IRVisitor::visit(op);
        }
    } c;
    c.node = node;
    s.accept(&c);
    return c.n;
}

bool single_copy_scratch(const nir::NpuModule &m, const std::string &buf) {
    auto it = m.buffers.find(buf);
    return it != m.buffers.end() && !it->second.is_arg && it->second.buffers == 1 && it->second.pieces.count <= 1;
}

Stmt DropAllocations::visit(const Allocate *op) {
    if (names_.count(op->name)) {
        dropped[op->name] = Stmt(op);
        return mutate(op->body);
    }
    return IRMutator::visit(op);
}

Stmt DropAllocations::visit(const Free *op) {
    return names_.count(op->name) ? Evaluate::make(make_zero(Int(32))) : Stmt(op);
}

Stmt wrap_allocations(const DropAllocations &drop, Stmt s) {
    for (const auto &[name, node] : drop.dropped) {
        const Allocate *a = node.as<Allocate>();
        for (const Expr &e : a->extents) {
            if (!nir::variables_of(e).empty()) {
                return Stmt();
            }
        }
        s = Allocate::make(name, a->type, a->memory_type, a->extents, a->condition, Block::make(s, Free::make(name)));
    }
    return s;
}

} // namespace tessel
