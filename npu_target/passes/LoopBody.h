#ifndef TESSEL_NPU_TARGET_PASSES_LOOPBODY_H
#define TESSEL_NPU_TARGET_PASSES_LOOPBODY_H

// What the passes that move work between iterations of a loop (defer_tail,
// advance_head) share: a loop body's operations in program order with what
// each accesses, and the rewrites they make (replace one statement, move
// allocations out of the body).

#include "npu_target/ir/NpuIR.h"
#include "npu_target/passes/InsertSync.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tessel {

struct Leaf {
    Halide::Internal::Stmt s;
    Accesses a;
    int depth = 0;                  // loops (and conditionals) around it inside the body
    Halide::Internal::Stmt top;     // the statement at depth 0 that holds it (itself at depth 0)
};

/** The operations of a statement in program order, the allocations in it and
 * the buffers loaded anywhere (operand addresses, lets, conditions). */
class Leaves : public Halide::Internal::IRVisitor {
public:
    Leaves(const nir::NpuModule &m, const Halide::Internal::IRNode *skip) : m_(m), skip_(skip) {}
    std::vector<Leaf> leaves;
    std::map<std::string, int> allocated; // name -> loop depth of the allocation
    std::set<std::string> loaded;
    std::set<std::string> defined, used; // variables bound (lets, loops) and read inside
    bool has_sync = false;

private:
    const nir::NpuModule &m_;
    const Halide::Internal::IRNode *skip_;
    int depth_ = 0;
    Halide::Internal::Stmt top_;
    using Halide::Internal::IRVisitor::visit;
    void add(const Halide::Internal::Stmt &s);
    void visit(const Halide::Internal::For *op) override;
    void visit(const Halide::Internal::IfThenElse *op) override;
    void visit(const Halide::Internal::LetStmt *op) override;
    void visit(const Halide::Internal::Variable *op) override;
    void visit(const Halide::Internal::Evaluate *op) override;
    void visit(const Halide::Internal::Store *op) override;
    void visit(const Halide::Internal::Allocate *op) override;
    void visit(const Halide::Internal::Load *op) override;
};

/** A buffer a pass may keep across the iterations of a loop: on chip (not an
 * argument), one copy (not multi-buffered) and not a ring panel's pieces. */
bool single_copy_scratch(const nir::NpuModule &m, const std::string &buf);

/** How often a statement node (an operation, loop, branch or free) occurs in
 * `s`: Halide shares equal subtrees, so a statement copied into two places
 * without change is one node, and replacing it by identity changes both. */
int occurrences(const Halide::Internal::Stmt &s, const Halide::Internal::IRNode *node);

/** Replaces one statement node (by identity). */
class Replace : public Halide::Internal::IRMutator {
public:
    Replace(const Halide::Internal::IRNode *target, Halide::Internal::Stmt with)
        : target_(target), with_(std::move(with)) {}
    using Halide::Internal::IRMutator::mutate;
    Halide::Internal::Stmt mutate(const Halide::Internal::Stmt &s) override {
        return s.get() == target_ ? with_ : Halide::Internal::IRMutator::mutate(s);
    }

private:
    const Halide::Internal::IRNode *target_;
    Halide::Internal::Stmt with_;
};

/** Allocations (and frees) of the buffers that now live across the loop leave its body. */
class DropAllocations : public Halide::Internal::IRMutator {
public:
    explicit DropAllocations(const std::set<std::string> &names) : names_(names) {}
    std::map<std::string, Halide::Internal::Stmt> dropped; // the allocation nodes, kept alive

private:
    const std::set<std::string> &names_;
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::Allocate *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Free *op) override;
};

/** `s` inside the allocations `drop` took out of a loop body (constant extents),
 * each freed after it; undefined when an extent is not constant. */
Halide::Internal::Stmt wrap_allocations(const DropAllocations &drop, Halide::Internal::Stmt s);

} // namespace tessel

#endif
