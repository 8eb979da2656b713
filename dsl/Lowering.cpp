#include "dsl/Lowering.h"

#include "dsl/Applier.h"
#include "dsl/Generator.h"
#include "npu_target/common/Error.h"

#include <memory>
#include <sstream>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// Records the Stmt it is given and changes nothing.
class CaptureStmt : public IRMutator {
public:
    explicit CaptureStmt(std::shared_ptr<Stmt> out) : out_(std::move(out)) {}
    using IRMutator::mutate;
    Stmt mutate(const Stmt &s) override {
        *out_ = s;
        return s;
    }

private:
    std::shared_ptr<Stmt> out_;
};

const char *for_type_name(ForType t) {
    switch (t) {
    case ForType::Serial:
        return "serial";
    case ForType::Parallel:
        return "parallel";
    case ForType::Vectorized:
        return "vectorized";
    case ForType::Unrolled:
        return "unrolled";
    case ForType::Extern:
        return "extern";
    default:
        return "gpu";
    }
}

const char *memory_type_name(MemoryType t) {
    switch (t) {
    case MemoryType::Auto:
        return "auto";
    case MemoryType::Heap:
        return "heap";
    case MemoryType::Stack:
        return "stack";
    case MemoryType::Register:
        return "register";
    case MemoryType::LockedCache:
        return "locked_cache";
    case MemoryType::VTCM:
        return "vtcm";
    case MemoryType::AMXTile:
        return "amx_tile";
    default:
        return "gpu";
    }
}

class LoopNestPrinter : public IRVisitor {
public:
    std::ostringstream os;
    std::map<std::string, Expr> known; // argument metadata and constant lets

protected:
    using IRVisitor::visit;
    int depth = 0;
    std::string last;

    Expr value(const Expr &e) const { return simplify(substitute(known, e)); }

    void line(const std::string &s) {
        std::string l = std::string(2 * depth, ' ') + s;
        if (l == last) {
            return;
        }
        os << l << "\n";
        last = l;
    }

    void visit(const LetStmt *op) override {
        Expr v = value(op->value);
        if (is_const(v)) {
            known[op->name] = v;
        }
        IRVisitor::visit(op);
    }
    void visit(const For *op) override {
        std::ostringstream s;
        s << "for " << op->name << " in [" << value(op->min) << ", " << value(op->min + op->extent) << ") "
          << for_type_name(op->for_type);
        line(s.str());
        depth++;
        op->body.accept(this);
        depth--;
    }
    void visit(const Allocate *op) override {
        std::ostringstream s;
        s << "allocate " << op->name << ": " << op->type << "[";
        int64_t bytes = op->type.bytes();
        for (size_t i = 0; i < op->extents.size(); i++) {
            Expr e = value(op->extents[i]);
            s << (i ? " x " : "") << e;
            const int64_t *c = as_const_int(e);
            bytes = c && bytes >= 0 ? bytes * *c : -1;
        }
        s << "]";
        if (bytes >= 0) {
            s << " " << format_bytes(bytes);
        }
        s << " in " << memory_type_name(op->memory_type);
        line(s.str());
        op->body.accept(this);
    }
    void visit(const Realize *op) override {
        std::ostringstream s;
        s << "realize " << op->name << ": [";
        for (size_t i = 0; i < op->bounds.size(); i++) {
            s << (i ? " x " : "") << value(op->bounds[i].extent);
        }
        s << "] in " << memory_type_name(op->memory_type);
        line(s.str());
        op->body.accept(this);
    }
    void visit(const ProducerConsumer *op) override {
        line(std::string(op->is_producer ? "produce " : "consume ") + op->name);
        depth++;
        op->body.accept(this);
        depth--;
    }
    void visit(const Store *op) override { line("store " + op->name); }
    void visit(const Provide *op) override { line("provide " + op->name); }
};

void add_metadata(std::map<std::string, Expr> &known, const std::string &name, const std::vector<int64_t> &shape) {
    int64_t stride = 1;
    for (size_t d = 0; d < shape.size(); d++) {
        known[name + ".min." + std::to_string(d)] = 0;
        known[name + ".extent." + std::to_string(d)] = static_cast<int>(shape[d]);
        known[name + ".stride." + std::to_string(d)] = static_cast<int>(stride);
        stride *= shape[d];
    }
}

} // namespace

Target lowering_target() {
    return host_target()
        .without_feature(Target::JIT)
        .with_feature(Target::NoRuntime)
        .with_feature(Target::NoBoundsQuery);
}

std::string loop_nest_text(const Stmt &s, const std::vector<PipelineInput> &inputs, const std::vector<PipelineOutput> &outputs) {
    LoopNestPrinter p;
    for (const auto &in : inputs) {
        add_metadata(p.known, in.name, in.shape);
    }
    for (const auto &out : outputs) {
        add_metadata(p.known, out.name, out.shape);
    }
    if (s.defined()) {
        s.accept(&p);
    }
    return p.os.str();
}

LoweredPipeline lower_pipeline(HalidePipeline &p, const ScheduleSpec &spec, const ArchSpec &arch) {
    LoweredPipeline out;
    out.npu = apply_schedule(p, spec, arch);
    auto captured = std::make_shared<Stmt>();
    p.pipeline.add_custom_lowering_pass(new CaptureStmt(captured));
    try {
        p.pipeline.compile_to_module(p.pipeline.infer_arguments(), p.generator, lowering_target());
    } catch (const Halide::Error &e) {
        p.pipeline.clear_custom_lowering_passes();
        rethrow_lowering_error(e, spec, out.npu);
    }
    p.pipeline.clear_custom_lowering_passes();
    TESSEL_INTERNAL_ASSERT(captured->defined(), "the custom lowering pass did not run");
    out.stmt = *captured;
    out.inputs = p.inputs;
    out.outputs = p.outputs;
    std::ostringstream os;
    os << out.stmt;
    out.stmt_text = os.str();
    out.loop_nest = loop_nest_text(out.stmt, out.inputs, out.outputs);
    out.warnings = check_footprints(out.stmt, out.npu, spec, arch);
    return out;
}

} // namespace tessel
