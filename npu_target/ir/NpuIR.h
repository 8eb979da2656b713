#ifndef TESSEL_NPU_TARGET_IR_NPUIR_H
#define TESSEL_NPU_TARGET_IR_NPUIR_H

// Tessel's NPU IR. Like Halide's own device backends (Hexagon DMA, GPU), the
// NPU IR is Halide's Stmt extended with device operations: loops, lets,
// conditions and scalar loads/stores stay Halide nodes (so Halide's printer,
// visitor, mutator and simplifier work on it), and each NPU operation is an
// `Evaluate` of a call named "tessel.*" whose arguments are described by the
// structs below. Every operation struct has make() (-> Stmt) and a matcher
// as_*(Stmt) (-> optional), so passes never touch the raw call arguments.
//
// Buffers: every buffer (kernel argument or Allocate) is described by a
// BufferInfo in NpuModule::buffers, keyed by its Halide name: its memory level,
// size, number of rotating copies and the directive that placed it. Buffer
// references in operations are (name, element index of the first element).
//
// Provenance: an operation carries the id of the directive, Func and loop it
// came from as an index into NpuModule::provenance.

#include "Halide.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/isa/Program.h"
#include "npu_target/lower/LowerInput.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tessel::nir {

using Halide::Expr;
using Halide::Internal::Stmt;

/** A buffer reference: `buffer[index ...]`, index in elements. */
struct BufRef {
    std::string buffer;
    Expr index;
};

/** One descriptor dimension, innermost first; strides in elements. */
struct Dim {
    int64_t count = 1;
    int64_t dst_stride = 0;
    int64_t src_stride = 0;
};

/** tessel.dma: copy a strided box from src to dst on `engine` (ArchSpec index). */
struct DmaOp {
    int engine = 0;
    BufRef dst, src;
    int elem_bytes = 1; // of dst; a `quant` DMA reads int32 (4-byte) source elements
    std::vector<Dim> dims;
    int transform = 0;  // index into isa::dma_transform_names(); 0 = a plain copy
    uint32_t prov = 0;
    bool is_quant() const;
    int src_elem_bytes() const { return is_quant() ? 4 : elem_bytes; }
    Stmt make() const;
};
std::optional<DmaOp> as_dma(const Stmt &s);

/** tessel.fixparam: loads an engine's per-channel requantisation parameters
 * (int32 bias[c], scale[c] for c < channels; isa FIXPARAM) from on-chip buffers. */
struct FixParamOp {
    int engine = 0;
    BufRef bias, scale;
    DType scale_type = DType::UInt8;
    DType out_type = DType::Int8;
    int channels = 1;
    int shift = 0;
    bool relu = false;
    uint32_t prov = 0;
    Stmt make() const;
};
std::optional<FixParamOp> as_fixparam(const Stmt &s);

/** tessel.vec: one vector instruction over `rows` rows of `n` elements.
 * Operand strides are in elements (0 = broadcast); row strides between rows. */
struct VecOp {
    isa::Op op = isa::Op::VADD;
    DType dtype = DType::FP32;  // element type of the operands (source type for VCAST)
    DType dtype2 = DType::FP32; // result type for VCAST
    BufRef dst, a, b;           // b unused for unary ops
    Expr scalar;                // the scalar operand of VADDS/VMULS/VMAXS/VMINS/VDUP (undefined otherwise)
    int64_t n = 1;
    int rows = 1;
    int32_t stride[3] = {1, 1, 1};     // d, a, b
    int32_t row_stride[3] = {0, 0, 0}; // d, a, b
    uint32_t aux = 0;
    uint32_t prov = 0;
    Stmt make() const;
};
std::optional<VecOp> as_vec(const Stmt &s);

/** tessel.mmad: C[m x n] (+)= A[m x k] * B[k x n] on the matrix unit. Operand
 * tiles are row-major with the given row strides (in elements). */
struct MmadOp {
    DType dtype = DType::FP16; // of A and B
    BufRef c, a, b;
    int m = 0, k = 0, n = 0;
    int64_t c_row = 0, a_row = 0, b_row = 0;
    bool init = false; // C = A*B instead of C += A*B
    uint32_t prov = 0;
    Stmt make() const;
};
std::optional<MmadOp> as_mmad(const Stmt &s);

/** tessel.set_flag / tessel.wait_flag / tessel.barrier. */
struct SyncOp {
    isa::Op op = isa::Op::BARRIER;
    isa::Pipe src = isa::Pipe::ALL, dst = isa::Pipe::S;
    int event = 0;
    Stmt make() const;
};
std::optional<SyncOp> as_sync(const Stmt &s);
/** The flags (src, dst, event) the set_flag and wait_flag operations in `s` use. */
std::set<std::tuple<isa::Pipe, isa::Pipe, int>> flags_in(const Stmt &s);

/** Where a buffer lives. */
struct BufferInfo {
    std::string name;
    Halide::Type type;
    int64_t elems = 0;
    std::string level;
    int buffers = 1;         // rotating copies (multi-buffering)
    std::string directive;   // the directive that placed it ("" = default placement)
    bool is_arg = false;
    int arg_index = -1;
    int64_t offset = -1;     // byte offset in the level (set by allocate_buffers)
    std::string rotate_loop; // multi-buffered: the loop whose iterations rotate the copies (set by multi_buffer)
    /** Multi-buffered: the outermost loop the rotation continues across (set by
     * multi_buffer). The copy index counts executions of rotate_loop's body
     * from here, so the copies keep rotating when an enclosing loop starts its
     * next iteration instead of restarting at copy 0; the buffer's space and its
     * credits live for this whole loop (allocate_buffers, insert_buffer_credits). */
    std::string rotate_scope;
    /** Multi-buffered: the count whose value modulo `buffers` is the copy an
     * execution of rotate_loop's body uses (set by multi_buffer). An access
     * whose copy term is `(rotate_count + d) % buffers` uses the copy d
     * iterations ahead (advance_head's prefetch of the next iteration's copy). */
    Expr rotate_count;
    std::vector<isa::Pipe> credit_readers; // reader pipes ordered by the credit protocol (set by insert_buffer_credits)
    /** Loaded in pieces into a ring of slots by ring_panels (count > 1): the loop whose
     * iterations reload it, the writer and reader pipes the piece flags order,
     * and the two events (raw: writer -> reader, war: reader -> writer). */
    struct Pieces {
        int count = 1;  // pieces per panel
        int slots = 0;  // piece slots in the ring (count < slots <= 2 x count)
        std::string loop;
        isa::Pipe writer = isa::Pipe::S, reader = isa::Pipe::S;
        int raw_event = -1, war_event = -1;
        // The whole-panel load and the read as the schedule wrote them, before
        // the ring re-addressed them: where the panel's box sits (TilingPlan).
        Stmt whole_load, logical_read;
    } pieces;
    int64_t bytes() const { return elems * type.bytes(); }
    /** Bytes of one copy, rounded up to the level's alignment (copies are laid out back to back). */
    int64_t copy_bytes(const ArchSpec &arch) const;
};

using BufferLifetime = tessel::BufferLifetime;

/** The unit every pass takes and returns. */
struct NpuModule {
    std::string kernel_name;
    const ArchSpec *arch = nullptr;
    NpuSchedule schedule;
    std::vector<isa::ArgDesc> args;
    Stmt body;
    std::map<std::string, BufferInfo> buffers;
    std::vector<isa::Provenance> provenance{isa::Provenance{}};
    std::vector<BackendDiagnostic> diagnostics;
    std::vector<BufferLifetime> lifetimes; // set by allocate_buffers
    std::map<std::string, int64_t> level_peak_bytes; // set by allocate_buffers
    std::string overflow_message;          // set by allocate_buffers when a buffer does not fit
    int cores = 1;                         // set by split_cores
    // Set by insert_sync for early_sets (which runs right after it): each
    // generic SET_FLAG of the body with the operation its wait depends on.
    std::vector<std::pair<Stmt, Stmt>> set_anchors;
    // Flags (src, dst, event) whose set early_sets moved to right after that
    // operation; check_hazards replays them by position.
    std::set<std::tuple<isa::Pipe, isa::Pipe, int>> early_flags;

    uint32_t provenance_id(const std::string &func, const std::string &loop);
    /** The entry of an operation a directive created itself (a tensorize's MMAD): `directive`
     * rather than the directive of the loop it sits in. */
    uint32_t provenance_id_of(const std::string &directive, const std::string &func, const std::string &loop);
    const BufferInfo &buffer(const std::string &name) const; // internal error if absent
};

/** The NPU element type of a Halide type (of its elements), or nullopt. */
std::optional<DType> dtype_of_type(const Halide::Type &t);
/** The Halide type of an NPU element type. */
Halide::Type halide_type_of(DType t);

/** The constant coefficient of `var` in `index` when `index` is affine in it
 * (index == index[var := 0] + c * var, proved); nullopt otherwise. An undefined
 * index has coefficient 0. */
std::optional<int64_t> affine_coefficient(const Expr &index, const std::string &var);

/** The integer value of an index or condition for the loop values in `env`
 * (Halide's division and modulo round toward minus infinity); nullopt when it
 * depends on anything else (a load, a float, an unknown variable). */
std::optional<int64_t> eval_int(const Expr &e, const std::map<std::string, int64_t> &env);

/** k when `e` is the integer constant 2^k (k >= 0), or a broadcast of one: an
 * integer division by it is a shift right by k (floor, as Halide divides). */
std::optional<int> power_of_two_exponent(const Expr &e);

/** The names of the variables an expression reads (load indices included). */
std::set<std::string> variables_of(const Expr &e);

/** A visitor that keeps the loops around the node it visits in `path_`
 * (outermost first; nullptr for a branch, whose body may not run). */
class LoopPathVisitor : public Halide::Internal::IRVisitor {
protected:
    std::vector<const Halide::Internal::For *> path_;
    using Halide::Internal::IRVisitor::visit;
    void visit(const Halide::Internal::For *op) override {
        path_.push_back(op);
        op->body.accept(this);
        path_.pop_back();
    }
    void visit(const Halide::Internal::IfThenElse *op) override {
        path_.push_back(nullptr);
        Halide::Internal::IRVisitor::visit(op);
        path_.pop_back();
    }
};

/** The statements of a (nested) Block in order; any other statement alone. */
std::vector<Stmt> flatten(const Stmt &s);

/** The pipe an operation runs on (S for scalar statements). */
isa::Pipe pipe_of_engine(const ArchSpec &arch, int engine);

/** The module as text: buffers with levels and offsets, then the body. */
std::string to_string(const NpuModule &m);

} // namespace tessel::nir

#endif
