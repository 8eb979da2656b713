// A matrix accumulator's epilogue on the vector unit (scheduler/AutoScheduleParts.h): the
// output is a plain copy of one pointwise Func that reads the accumulator (a convolution's or
// Gemm's bias, alpha and beta, a cast to fp16). Per output tile the accumulator tile is copied
// from the matrix unit's output level to the vector level (ascend-like: FIX, L0C -> UB), the
// epilogue computes there, vectorised along the tile's row, and the output's copy is the DMA
// back to GM.
#include "scheduler/AutoScheduleParts.h"

#include <algorithm>

namespace tessel::autosched {

namespace {

// Every read of `acc` in `f`'s pure definition is acc(f's own variables), offsets 0.
bool reads_pointwise(const FuncInfo &f, const std::string &acc) {
    bool found = false;
    for (const auto &l : f.pure.loads) {
        if (l.callee != acc) {
            continue;
        }
        found = true;
        if (l.index_var.size() != f.vars.size()) {
            return false;
        }
        for (size_t i = 0; i < l.index_var.size(); i++) {
            if (l.index_var[i] != f.vars[i] || l.min_offset[i] != 0 || l.max_offset[i] != 0) {
                return false;
            }
        }
    }
    return found;
}

} // namespace

MatrixOutput find_matrix_output(const PipelineInfo &p, const FuncInfo &acc, std::string &why) {
    MatrixOutput mo;
    for (const auto &o : p.funcs) {
        if (!o.is_output || o.vars.size() != acc.vars.size()) {
            continue;
        }
        const LoadInfo *src = copy_source(o);
        if (!src) {
            continue;
        }
        if (src->callee == acc.name) {
            mo.out = &o;
            return mo;
        }
        const FuncInfo *e = p.find(src->callee);
        if (!e || !e->updates.empty() || e->vars.size() != acc.vars.size() ||
            !reads_pointwise(*e, acc.name) ||
            !std::count(acc.consumers.begin(), acc.consumers.end(), e->name)) {
            continue;
        }
        bool inputs_only = true;
        for (const auto &l : e->pure.loads) {
            if (l.callee == acc.name) {
                continue;
            }
            const TensorInfo *t = p.find_input(l.callee);
            if (!t) {
                inputs_only = false;
                break;
            }
            mo.epi_input_bytes +=
                uint64_t(product(t->shape, 0, t->shape.size())) * uint64_t(dtype_bytes(t->dtype));
        }
        if (!inputs_only) {
            why = "Func " + e->name + " (between " + acc.name + " and the output " + o.name +
                  ") reads a computed Func besides " + acc.name + "; not mapped";
            continue;
        }
        mo.out = &o;
        mo.epi = e;
        return mo;
    }
    if (why.empty()) {
        why = "Func " + acc.name +
              ": no output of its rank copies it or one pointwise epilogue of it directly";
    }
    mo.epi_input_bytes = 0;
    return mo;
}

bool epilogue_possible(const ArchSpec &arch, std::string &why) {
    const std::string &from = arch.matrix.c_level, &to = arch.vector.level;
    if (to.empty() || arch.engine_for(from, to) == nullptr) {
        why = "no DMA edge from the matrix unit's accumulator level " + from +
              " to the vector unit's level " + (to.empty() ? std::string("(none)") : to) +
              " for the epilogue";
        return false;
    }
    return true;
}

bool epilogue_fits(const ArchSpec &arch, const MatrixOutput &mo, int64_t tm, int64_t tn,
                   int acc_b) {
    if (!mo.epi) {
        return true;
    }
    const uint64_t vl = level_size(arch, arch.vector.level);
    return 3 * uint64_t(tm * tn * acc_b) + std::min<uint64_t>(mo.epi_input_bytes, vl / 8) <= vl;
}

void epilogue_directives(const PipelineInfo &p, const ArchSpec &arch, const FuncInfo &acc,
                         const MatrixOutput &mo, const std::string &at_loop, int64_t lanes,
                         AutoSchedule &r) {
    const FuncInfo &e = *mo.epi;
    const std::string vl = arch.vector.level;
    Directive at = make(e.name + "_at", DirectiveKind::ComputeAt, e.name);
    at.at_func = mo.out->name;
    at.at_loop = at_loop;
    r.spec.directives.push_back(at);
    Directive v = make(e.name + "_vec", DirectiveKind::Vectorize, e.name);
    v.vars = {e.vars[0]};
    v.factors = {lanes};
    r.spec.directives.push_back(v);
    r.spec.directives.push_back(
        stage_dir("stage_" + acc.name + "_" + vl, acc.name, vl, mo.out->name, at_loop, 2));
    const bool once = mo.epi_input_bytes * 8 <= level_size(arch, vl);
    for (const auto &l : e.pure.loads) {
        if (l.callee != acc.name && p.find_input(l.callee)) {
            r.spec.directives.push_back(stage_dir("stage_" + l.callee + "_" + vl, l.callee, vl,
                                                  mo.out->name, once ? "root" : at_loop,
                                                  once ? 1 : 2));
        }
    }
    r.notes.push_back("epilogue: " + e.name + " per tile of " + mo.out->name +
                      " on the vector unit (" + std::to_string(lanes) +
                      " lanes), the accumulator tile copied " + arch.matrix.c_level + " -> " + vl +
                      " (2 buffers), its other inputs staged " + (once ? "once" : "per tile"));
}

} // namespace tessel::autosched
