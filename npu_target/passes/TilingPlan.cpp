#include "npu_target/passes/TilingPlan.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/** An affine map from loop variables to coordinates of a dense box:
 * coordinate d = base[d] + sum coeffs[d][loop] * loop. */
struct Placement {
    std::vector<int64_t> base;
    std::vector<std::map<std::string, int64_t>> coeffs;
};

/** Element offset -> coordinates of a dense array of `extents` (innermost
 * first): mixed radix from the outermost dimension, so a step that is a
 * multiple of a row lands in the row's dimension. */
std::vector<int64_t> coordinates(int64_t v, const std::vector<int64_t> &extents) {
    std::vector<int64_t> stride(extents.size(), 1), out(extents.size(), 0);
    for (size_t d = 1; d < extents.size(); d++) {
        stride[d] = stride[d - 1] * extents[d - 1];
    }
    for (size_t d = extents.size(); d-- > 0;) {
        out[d] = v / stride[d];
        v -= out[d] * stride[d];
    }
    return out;
}

/** Every variable -> 0 (the offset at the loops' zero point). */
class Zero : public IRMutator {
    using IRMutator::visit;
    Expr visit(const Variable *op) override { return make_zero(op->type); }
};

/** The copy-rotation term of a multi-buffered buffer, ((counter % N) * copy), -> 0:
 * which copy is used says nothing about where the box sits. */
class DropRotation : public IRMutator {
public:
    explicit DropRotation(int copies) : copies_(copies) {}

private:
    int copies_;
    using IRMutator::visit;
    Expr visit(const Mod *op) override {
        const int64_t *n = as_const_int(op->b);
        return n && *n == copies_ ? make_zero(op->type) : IRMutator::visit(op);
    }
};

class Collect : public IRVisitor {
public:
    explicit Collect(const nir::NpuModule &m) : m_(m) {}
    TilingPlan plan;

    void finish() {
        for (TiledBuffer &t : plan.buffers) {
            auto it = placed_.find(t.name);
            if (it == placed_.end()) {
                continue;
            }
            t.origin = it->second.first;
            const Placement &p = it->second.second;
            t.origin_base = p.base;
            for (const auto &c : p.coeffs) {
                std::vector<int64_t> row;
                for (const auto &l : t.loops) {
                    auto k = c.find(l.first);
                    row.push_back(k == c.end() ? 0 : k->second);
                }
                t.origin_coeffs.push_back(row);
            }
        }
    }

private:
    const nir::NpuModule &m_;
    std::vector<std::pair<std::string, int64_t>> loops_;
    std::vector<std::pair<std::string, Expr>> lets_;
    std::map<std::string, std::vector<int64_t>> extents_;                // on-chip buffers
    std::map<std::string, std::pair<std::string, Placement>> placed_;    // buffer -> (argument, placement)
    using IRVisitor::visit;

    void visit(const For *op) override {
        const int64_t *e = as_const_int(op->extent);
        loops_.emplace_back(op->name, e ? *e : -1);
        op->body.accept(this);
        loops_.pop_back();
    }
    void visit(const LetStmt *op) override {
        lets_.emplace_back(op->name, op->value);
        op->body.accept(this);
        lets_.pop_back();
    }
    void visit(const Allocate *op) override {
        auto it = m_.buffers.find(op->name);
        if (it != m_.buffers.end() && op->name.find(".vtmp") == std::string::npos) {
            const nir::BufferInfo &b = it->second;
            TiledBuffer t;
            t.name = op->name;
            t.source = op->name;
            for (const auto &s : m_.schedule.staged) {
                if (s.func == op->name) {
                    t.source = s.source;
                }
            }
            t.level = b.level;
            for (const Expr &e : op->extents) {
                const int64_t *c = as_const_int(e);
                t.extents.push_back(c ? *c : -1);
            }
            t.bytes = b.bytes();
            t.buffers = b.buffers;
            t.directive = b.directive;
            t.loops = loops_;
            extents_[op->name] = t.extents;
            plan.buffers.push_back(t);
        }
        op->body.accept(this);
    }
    void visit(const Evaluate *op) override {
        if (auto d = nir::as_dma(Stmt(op))) {
            place(logical(*d));
        }
    }
    // A ring panel's piece loads and re-addressed read (ring_panels) stand for
    // the whole-panel load and the read the schedule wrote.
    nir::DmaOp logical(const nir::DmaOp &d) const {
        for (const std::string *name : {&d.dst.buffer, &d.src.buffer}) {
            auto it = m_.buffers.find(*name);
            if (it == m_.buffers.end() || it->second.pieces.count < 2) {
                continue;
            }
            const auto &p = it->second.pieces;
            auto whole = nir::as_dma(name == &d.dst.buffer ? p.whole_load : p.logical_read);
            return whole ? *whole : d;
        }
        return d;
    }

    /** The shape of a buffer: an argument's, or an allocation's (empty if unknown). */
    std::vector<int64_t> shape(const std::string &buffer) const {
        for (const auto &a : m_.args) {
            if (a.name == buffer) {
                return a.shape;
            }
        }
        auto it = extents_.find(buffer);
        return it == extents_.end() ? std::vector<int64_t>{} : it->second;
    }
    bool is_arg(const std::string &buffer) const {
        auto it = m_.buffers.find(buffer);
        return it != m_.buffers.end() && it->second.is_arg;
    }

    /** Where element `index` of `buffer` sits in it, as a function of the loops. */
    std::optional<Placement> local(const std::string &buffer, Expr index) const {
        std::vector<int64_t> ext = shape(buffer);
        if (ext.empty() || !index.defined()) {
            return std::nullopt;
        }
        for (int64_t e : ext) {
            if (e <= 0) {
                return std::nullopt;
            }
        }
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) {
            index = substitute(it->first, it->second, index);
        }
        auto b = m_.buffers.find(buffer);
        if (b != m_.buffers.end() && b->second.buffers > 1) {
            index = DropRotation(b->second.buffers).mutate(index);
        }
        index = simplify(index);
        // as_const_int points into the Expr: keep it alive while at0 is read.
        const Expr origin = simplify(Zero().mutate(index));
        const int64_t *at0 = as_const_int(origin);
        if (!at0) {
            return std::nullopt;
        }
        Placement p;
        p.base = coordinates(*at0, ext);
        p.coeffs.resize(ext.size());
        for (size_t d = 0; d < ext.size(); d++) {
            if (p.base[d] < 0 || p.base[d] >= ext[d]) {
                return std::nullopt;
            }
        }
        std::set<std::string> loop_names;
        for (const auto &l : loops_) {
            loop_names.insert(l.first);
            std::optional<int64_t> c = nir::affine_coefficient(index, l.first);
            if (!c) {
                return std::nullopt;
            }
            std::vector<int64_t> step = coordinates(*c, ext);
            for (size_t d = 0; d < ext.size(); d++) {
                if (step[d] != 0) {
                    p.coeffs[d][l.first] = step[d];
                }
            }
        }
        // Any other variable left in the offset (a scalar loaded at run time) makes the position unknown.
        for (const auto &v : nir::variables_of(index)) {
            if (!loop_names.count(v)) {
                return std::nullopt;
            }
        }
        return p;
    }

    /** a + b (sub: a - b), dimension by dimension; nullopt when the ranks differ (unless b is zero). */
    static std::optional<Placement> combine(const Placement &a, const Placement &b, bool sub) {
        bool b_zero = true;
        for (size_t d = 0; d < b.base.size(); d++) {
            b_zero = b_zero && b.base[d] == 0 && b.coeffs[d].empty();
        }
        if (b_zero) {
            return a;
        }
        if (a.base.size() != b.base.size()) {
            return std::nullopt;
        }
        Placement r = a;
        for (size_t d = 0; d < a.base.size(); d++) {
            int64_t s = sub ? -1 : 1;
            r.base[d] += s * b.base[d];
            for (const auto &[loop, k] : b.coeffs[d]) {
                r.coeffs[d][loop] += s * k;
                if (r.coeffs[d][loop] == 0) {
                    r.coeffs[d].erase(loop);
                }
            }
        }
        return r;
    }

    void place(const nir::DmaOp &d) {
        const std::string &dst = d.dst.buffer, &src = d.src.buffer;
        bool dst_tiled = extents_.count(dst) && !placed_.count(dst);
        if (dst_tiled && (is_arg(src) || placed_.count(src))) {
            // A staging copy: the box of dst is where src's element sits, minus dst's own offset.
            auto in_src = local(src, d.src.index);
            auto in_dst = local(dst, d.dst.index);
            if (!in_src || !in_dst) {
                return;
            }
            std::optional<Placement> at = in_src;
            std::string origin = src;
            if (!is_arg(src)) {
                origin = placed_.at(src).first;
                at = combine(placed_.at(src).second, *in_src, false);
            }
            if (at && (at = combine(*at, *in_dst, true))) {
                placed_[dst] = {origin, *at};
            }
            return;
        }
        if (is_arg(dst) && extents_.count(src) && !placed_.count(src)) {
            // A write-back: src's box is where it lands in the output.
            auto in_dst = local(dst, d.dst.index);
            auto in_src = local(src, d.src.index);
            std::optional<Placement> at;
            if (in_dst && in_src && (at = combine(*in_dst, *in_src, true))) {
                placed_[src] = {dst, *at};
            }
        }
    }
};

std::string placement_text(const TiledBuffer &b) {
    std::ostringstream os;
    os << b.origin << "[";
    for (size_t d = b.origin_base.size(); d-- > 0;) {
        std::ostringstream dim;
        for (size_t l = 0; l < b.loops.size() && l < b.origin_coeffs[d].size(); l++) {
            int64_t k = b.origin_coeffs[d][l];
            if (k != 0) {
                dim << (dim.tellp() > 0 ? " + " : "") << b.loops[l].first << (k != 1 ? "*" + std::to_string(k) : "");
            }
        }
        if (b.origin_base[d] != 0 || dim.tellp() == 0) {
            dim << (dim.tellp() > 0 ? " + " : "") << b.origin_base[d];
        }
        os << dim.str() << (d ? ", " : "");
    }
    os << "]";
    return os.str();
}

} // namespace

std::string tiling_text(const TilingPlan &p) {
    std::ostringstream os;
    for (const auto &b : p.buffers) {
        os << b.name << " (" << b.source << ") in " << b.level << ": [";
        for (size_t i = b.extents.size(); i-- > 0;) {
            os << b.extents[i] << (i ? " x " : "");
        }
        os << "] " << b.bytes << " B";
        if (b.buffers > 1) {
            os << " x" << b.buffers;
        }
        if (!b.directive.empty()) {
            os << " [" << b.directive << "]";
        }
        os << "\n  at";
        for (const auto &l : b.loops) {
            os << " " << l.first << "(" << l.second << ")";
        }
        os << "\n";
        if (!b.origin.empty()) {
            os << "  box of " << placement_text(b) << "\n";
        }
    }
    return os.str();
}

TilingPlan tiling_plan(const nir::NpuModule &m) {
    Collect c(m);
    m.body.accept(&c);
    c.finish();
    return c.plan;
}

} // namespace tessel
