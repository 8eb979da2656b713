#include "npu_target/passes/InsertSync.h"

#include "npu_target/common/Error.h"
#include "npu_target/isa/InstrTable.h"
#include "npu_target/passes/SyncAnalysis.h"

#include <algorithm>
#include <optional>
#include <set>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;
using isa::Pipe;
using detail::append;
using detail::loads_in;

namespace {
Accesses accesses_of_names(const nir::NpuModule &m, const Stmt &leaf);
} // namespace

int copies_ahead(const nir::NpuModule &m, const std::string &buffer, const Expr &index) {
    auto it = m.buffers.find(buffer);
    if (it == m.buffers.end() || it->second.buffers < 2 || !it->second.rotate_count.defined() || !index.defined()) {
        return 0;
    }
    const nir::BufferInfo &b = it->second;
    struct Find : public IRVisitor {
        const nir::BufferInfo *b;
        std::optional<int64_t> ahead;
        using IRVisitor::visit;
        void visit(const Mod *op) override {
            const int64_t *n = as_const_int(op->b);
            if (!ahead && n && *n == b->buffers) {
                // Modulo the copies: the simplifier drops terms of the count
                // that are multiples of them (`(yo*8 + cg) % 2` is `cg % 2`).
                // Named: as_const_int points into the Expr, which must outlive *d.
                const Expr offset = simplify((op->a - b->rotate_count) % op->b);
                if (const int64_t *d = as_const_int(offset)) {
                    ahead = ((*d % *n) + *n) % *n;
                }
            }
            IRVisitor::visit(op);
        }
    } f;
    f.b = &b;
    index.accept(&f);
    return static_cast<int>(f.ahead.value_or(0));
}

namespace {
// Records the copy an operand reaches when it is not the current iteration's.
void note_ahead(const nir::NpuModule &m, Accesses &a, const nir::BufRef &r) {
    if (r.buffer.empty()) {
        return;
    }
    if (int d = copies_ahead(m, r.buffer, r.index)) {
        a.ahead[r.buffer] = d;
    }
}
} // namespace

Accesses accesses_of(const nir::NpuModule &m, const Stmt &leaf) {
    Accesses a = accesses_of_names(m, leaf);
    if (auto d = nir::as_dma(leaf)) {
        note_ahead(m, a, d->dst);
        note_ahead(m, a, d->src);
    } else if (auto v = nir::as_vec(leaf)) {
        note_ahead(m, a, v->dst);
        note_ahead(m, a, v->a);
        note_ahead(m, a, v->b);
    } else if (auto mm = nir::as_mmad(leaf)) {
        note_ahead(m, a, mm->c);
        note_ahead(m, a, mm->a);
        note_ahead(m, a, mm->b);
    }
    return a;
}

int most_ahead(const nir::NpuModule &m, const Stmt &s, const std::string &buffer, bool write) {
    struct Walk : public IRVisitor {
        const nir::NpuModule *m;
        const std::string *buffer;
        bool write;
        int most = 0;
        using IRVisitor::visit;
        void visit(const Evaluate *op) override {
            Accesses a = accesses_of(*m, op);
            const auto &names = write ? a.writes : a.reads;
            if (std::find(names.begin(), names.end(), *buffer) != names.end()) {
                most = std::max(most, a.ahead_of(*buffer));
            }
        }
    } w;
    w.m = &m;
    w.buffer = &buffer;
    w.write = write;
    s.accept(&w);
    return w.most;
}

namespace {
Accesses accesses_of_names(const nir::NpuModule &m, const Stmt &leaf) {
    Accesses a;
    if (auto d = nir::as_dma(leaf)) {
        a.pipe = nir::pipe_of_engine(*m.arch, d->engine);
        a.scalar_reads = loads_in(d->dst.index);
        append(a.scalar_reads, loads_in(d->src.index));
        a.reads = {d->src.buffer};
        a.writes = {d->dst.buffer};
        return a;
    }
    if (auto f = nir::as_fixparam(leaf)) {
        // Reads the parameter tables into the engine's state; a later quant DMA on the same
        // engine (in order on its pipe) applies them, so the state needs no flag.
        a.pipe = nir::pipe_of_engine(*m.arch, f->engine);
        a.scalar_reads = loads_in(f->bias.index);
        append(a.scalar_reads, loads_in(f->scale.index));
        a.reads = {f->bias.buffer, f->scale.buffer};
        return a;
    }
    if (auto v = nir::as_vec(leaf)) {
        a.pipe = Pipe::V;
        a.scalar_reads = loads_in(v->dst.index);
        append(a.scalar_reads, loads_in(v->a.index));
        append(a.scalar_reads, loads_in(v->b.index));
        append(a.scalar_reads, loads_in(v->scalar));
        if (!v->a.buffer.empty()) {
            a.reads.push_back(v->a.buffer);
        }
        if (!v->b.buffer.empty()) {
            a.reads.push_back(v->b.buffer);
        }
        if (isa::reads_destination(v->op)) {
            a.reads.push_back(v->dst.buffer);
        }
        a.writes = {v->dst.buffer};
        return a;
    }
    if (auto mm = nir::as_mmad(leaf)) {
        a.pipe = Pipe::M;
        a.scalar_reads = loads_in(mm->c.index);
        append(a.scalar_reads, loads_in(mm->a.index));
        append(a.scalar_reads, loads_in(mm->b.index));
        a.reads = {mm->a.buffer, mm->b.buffer};
        if (!mm->init) {
            a.reads.push_back(mm->c.buffer);
        }
        a.writes = {mm->c.buffer};
        return a;
    }
    if (nir::as_sync(leaf)) {
        return a;
    }
    if (const Store *st = leaf.as<Store>()) {
        a.reads = loads_in(st->value);
        append(a.reads, loads_in(st->index));
        append(a.reads, loads_in(st->predicate));
        a.writes = {st->name};
        return a;
    }
    if (const Evaluate *e = leaf.as<Evaluate>()) {
        a.reads = loads_in(e->value);
    }
    return a;
}
} // namespace

namespace {
struct Users : public IRVisitor {
    const nir::NpuModule &m;
    const std::string &buffer;
    BufferUsers u;
    Users(const nir::NpuModule &m, const std::string &b) : m(m), buffer(b) {}
    using IRVisitor::visit;
    static bool has(const std::vector<std::string> &v, const std::string &x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    }
    void note(const Accesses &a) {
        if (has(a.writes, buffer)) {
            u.writers.insert(a.pipe);
        }
        if (has(a.reads, buffer)) {
            u.readers.insert(a.pipe);
        }
        if (has(a.scalar_reads, buffer)) {
            u.readers.insert(Pipe::S);
        }
    }
    void visit(const Evaluate *op) override { note(accesses_of(m, op)); }
    void visit(const Store *op) override { note(accesses_of(m, op)); }
    void visit(const Load *op) override {
        if (op->name == buffer) {
            u.readers.insert(Pipe::S);
        }
        IRVisitor::visit(op);
    }
};
} // namespace

BufferUsers buffer_users(const nir::NpuModule &m, const Stmt &s, const std::string &buffer) {
    Users v(m, buffer);
    s.accept(&v);
    return v.u;
}

nir::NpuModule insert_sync(const nir::NpuModule &m) {
    nir::NpuModule r = m;
    detail::SyncAnalysis s(r);
    r.body = s.mutate(m.body);
    r.set_anchors = std::move(s.anchors);
    return r;
}

} // namespace tessel
