// tensorize(func, unit=fix): a Func whose value is a requantising epilogue of an
// accumulator in the matrix unit's output level,
//   out[..] = sat_T(((acc[..] + bias[c]) * scale[c] + 2^(s-1)) >> s)      (relu: max(acc + bias, 0))
// becomes FIXPARAM (the per-channel bias and scale from their on-chip buffers into the
// engine's parameter table) and one `quant` DMA of the accumulator tile (docs/backend.md).
#include "npu_target/lower/FixQuant.h"

#include "npu_target/lower/DmaInference.h"

#include "npu_target/common/Error.h"
#include "npu_target/isa/InstrTable.h"

#include <algorithm>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

bool is_int(const Expr &e, int64_t v) {
    const int64_t *c = as_const_int(e);
    return c && *c == v;
}

// a + b in either order, a a Load of int32.
bool match_add_loads(const Expr &e, const Load *&x, const Load *&y) {
    const Add *add = e.as<Add>();
    if (!add) {
        return false;
    }
    x = add->a.as<Load>();
    y = add->b.as<Load>();
    return x && y;
}

} // namespace

// sat_T(((acc + bias) * cast(scale) + 2^(s-1)) / 2^s), the form Halide's simplifier leaves
// (saturating_cast is max(min(x, hi), lo); >> s is a division by 2^s).
bool match_requant(const Expr &value, RequantPattern &r) {
    const Cast *cast = value.as<Cast>();
    if (!cast || !cast->type.is_int_or_uint() || cast->type.bits() > 16 || cast->value.type() != Int(32)) {
        return false;
    }
    r.out = cast->type;
    const int64_t lo = r.out.is_uint() ? 0 : -(int64_t{1} << (r.out.bits() - 1));
    const int64_t hi = r.out.is_uint() ? (int64_t{1} << r.out.bits()) - 1 : (int64_t{1} << (r.out.bits() - 1)) - 1;
    Expr x = cast->value;
    if (const Max *mx = x.as<Max>(); mx && is_int(mx->b, lo)) {
        const Min *mn = mx->a.as<Min>();
        if (!mn || !is_int(mn->b, hi)) {
            return false;
        }
        x = mn->a;
    } else if (const Min *mn = x.as<Min>(); mn && is_int(mn->b, hi)) {
        const Max *mx2 = mn->a.as<Max>();
        if (!mx2 || !is_int(mx2->b, lo)) {
            return false;
        }
        x = mx2->a;
    } else {
        return false;
    }
    r.shift = 0;
    if (const Div *d = x.as<Div>()) {
        auto k = nir::power_of_two_exponent(d->b);
        if (!k || *k < 1 || *k > 31) {
            return false;
        }
        r.shift = *k;
        x = d->a;
        const Add *round = x.as<Add>();
        if (!round || !is_int(round->b, int64_t{1} << (r.shift - 1))) {
            return false;
        }
        x = round->a;
    }
    const Mul *mul = x.as<Mul>();
    if (!mul) {
        return false;
    }
    for (int swap = 0; swap < 2; swap++) {
        Expr v = swap ? mul->b : mul->a, sc = swap ? mul->a : mul->b;
        const Load *s = sc.as<Load>();
        if (const Cast *c = sc.as<Cast>()) {
            s = c->value.as<Load>();
        }
        if (!s || !s->type.is_int_or_uint() || s->type.bits() > 32) {
            continue;
        }
        r.relu = false;
        if (const Max *m = v.as<Max>(); m && is_const_zero(m->b)) {
            r.relu = true;
            v = m->a;
        }
        const Load *a = nullptr, *b = nullptr;
        if (!match_add_loads(v, a, b) || a->type != Int(32) || b->type != Int(32)) {
            continue;
        }
        r.acc = a;
        r.bias = b;
        r.scale = s;
        return true;
    }
    return false;
}

namespace {

class FixTensorizer : public IRMutator {
public:
    FixTensorizer(nir::NpuModule &m, const TensorizeRequest &req) : m_(m), req_(req) {}
    bool done = false;

private:
    nir::NpuModule &m_;
    const TensorizeRequest &req_;
    bool in_func_ = false;
    using IRMutator::visit;

    std::string where() const {
        return "directive " + req_.directive_id + " (tensorize " + req_.func.substr(0, req_.func.find('$')) +
               ", unit fix)";
    }

    Stmt visit(const ProducerConsumer *op) override {
        if (!op->is_producer || op->name != req_.func) {
            return IRMutator::visit(op);
        }
        in_func_ = true;
        Stmt body = mutate(op->body);
        in_func_ = false;
        if (!done) {
            user_error(where(), ": no loop nest of ", req_.func, " stores a requantising epilogue the FIX engine can "
                       "run; expected loops with constant extents around  out[..] = sat(((acc[..] + bias[c]) * "
                       "scale[c] + 2^(s-1)) >> s)  (optionally max(acc + bias, 0)), acc an int32 accumulator in ",
                       m_.arch->matrix.c_level, ", bias int32 and scale integer per channel c; found:\n", op->body);
        }
        return ProducerConsumer::make(op->name, true, body);
    }

    Stmt visit(const For *op) override {
        if (!in_func_ || done) {
            return IRMutator::visit(op);
        }
        Stmt s = try_match(op);
        if (s.defined()) {
            done = true;
            return s;
        }
        return IRMutator::visit(op);
    }

    Stmt try_match(const For *top) {
        const LoopNest nest = walk_loop_nest(top);
        const std::vector<NestLoop> &loops = nest.loops;
        const auto &lets = nest.lets;
        if (!nest.non_constant.empty()) {
            return Stmt();
        }
        const Store *st = nest.inner.as<Store>();
        if (st && st->name == req_.func && st->value.type().lanes() != 1) {
            user_error(where(), ": ", req_.func, " is vectorised (", st->value.type().lanes(), " lanes); the FIX engine "
                       "copies the whole tile, leave its loops scalar (remove the vectorize)");
        }
        if (!st || st->name != req_.func || !is_const_one(st->predicate)) {
            return Stmt();
        }
        Expr value = st->value, index = st->index;
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            value = substitute(it->first, it->second, value);
            index = substitute(it->first, it->second, index);
        }
        RequantPattern r;
        if (!match_requant(value, r)) {
            user_error(where(), ": ", req_.func, "'s value is not a requantising epilogue the FIX engine computes; "
                       "expected  sat(((acc + bias[c]) * scale[c] + 2^(s-1)) >> s)  with int32 acc and bias "
                       "(optionally max(acc + bias, 0)), 1 <= s <= 31, saturated to int8, uint8 or int16; found: ",
                       value);
        }
        // Which load is the accumulator: the one in the matrix unit's output level.
        const std::string &c_level = m_.arch->matrix.c_level;
        if (m_.buffer(r.acc->name).level != c_level && m_.buffer(r.bias->name).level == c_level) {
            std::swap(r.acc, r.bias);
        }
        const nir::BufferInfo &acc = m_.buffer(r.acc->name), &bias = m_.buffer(r.bias->name),
                              &scale = m_.buffer(r.scale->name), &out = m_.buffer(st->name);
        if (acc.level != c_level) {
            user_error(where(), ": the accumulator ", r.acc->name, " is in ", acc.level, "; the FIX engine reads it from ",
                       c_level, " (accumulate_in ", c_level, ")");
        }
        // The engine: FIX-like, an edge acc level -> out level, the transform quant, a parameter table.
        int engine = -1;
        for (size_t e = 0; e < m_.arch->engines.size() && engine < 0; e++) {
            const DmaEngine &en = m_.arch->engines[e];
            bool edge = false;
            for (const auto &ed : en.edges) {
                edge = edge || (ed.src == acc.level && ed.dst == out.level);
            }
            const bool quant = std::find(en.transforms.begin(), en.transforms.end(), "quant") != en.transforms.end();
            if (edge && quant && en.quant_channels > 0) {
                engine = static_cast<int>(e);
            }
        }
        if (engine < 0) {
            user_error(where(), ": ", m_.arch->name, " has no engine that requantises ", acc.level, " -> ", out.level,
                       " (an edge ", acc.level, "->", out.level, " with the transform quant and a quant_channels "
                       "parameter table); compute the epilogue on the vector unit there");
        }
        const DmaEngine &en = m_.arch->engines[static_cast<size_t>(engine)];
        for (const nir::BufferInfo *b : {&bias, &scale}) {
            const MemoryLevel *lv = m_.arch->find_level(b->level);
            if (!lv || lv->off_chip) {
                user_error(where(), ": ", b->name, " is in ", b->level, "; the FIX engine loads its parameters from an "
                           "on-chip level (stage it there, e.g. into L1)");
            }
        }
        if (bias.level != scale.level) {
            user_error(where(), ": the bias (", bias.name, ", in ", bias.level, ") and the scale (", scale.name, ", in ",
                       scale.level, ") must be staged into the same level (FIXPARAM reads both from one)");
        }
        // Classify the loops: the channel loop moves bias and scale by one element; no other loop moves them.
        Expr ia = r.acc->index, ib = r.bias->index, is = r.scale->index;
        std::vector<nir::Dim> dims;
        const NestLoop *channel = nullptr;
        std::vector<const NestLoop *> others;
        for (const NestLoop &l : loops) {
            auto co = nir::affine_coefficient(index, l.name), ca = nir::affine_coefficient(ia, l.name),
                 cb = nir::affine_coefficient(ib, l.name), cs = nir::affine_coefficient(is, l.name);
            if (!co || !ca || !cb || !cs) {
                return Stmt(); // (a tile shifted inwards) the loops inside this one may still be one copy
            }
            if (l.extent == 1) {
                continue; // its min is substituted below
            }
            if (*cb == 1 && *cs == 1) {
                if (channel) {
                    user_error(where(), ": two loops (", channel->name, ", ", l.name, ") move along the channels");
                }
                channel = &l;
            } else if (*cb != 0 || *cs != 0) {
                user_error(where(), ": loop ", l.name, " moves bias or scale by ", *cb, " / ", *cs,
                           " elements; only the channel loop may (by one)");
            } else {
                others.push_back(&l);
            }
        }
        if (!channel) {
            user_error(where(), ": no loop of ", req_.func, " walks the channels (bias and scale by one element)");
        }
        if (channel->extent > en.quant_channels) {
            user_error(where(), ": a tile of ", channel->extent, " channels; engine ", en.name, "'s parameter table holds ",
                       en.quant_channels, " (split the channel loop)");
        }
        auto dim_of = [&](const NestLoop &l) {
            return nir::Dim{l.extent, *nir::affine_coefficient(index, l.name), *nir::affine_coefficient(ia, l.name)};
        };
        dims.push_back(dim_of(*channel));
        // Inner to outer; merge an outer dimension that continues the previous one on both sides.
        for (auto it = others.rbegin(); it != others.rend(); ++it) {
            nir::Dim d = dim_of(**it);
            nir::Dim &p = dims.back();
            if (dims.size() > 1 && d.dst_stride == p.dst_stride * p.count && d.src_stride == p.src_stride * p.count) {
                p.count *= d.count;
            } else {
                dims.push_back(d);
            }
        }
        if (static_cast<int>(dims.size()) > en.max_dims) {
            user_error(where(), ": the tile needs a ", dims.size(), "-dimensional copy; engine ", en.name, " takes ",
                       en.max_dims, " (make the tile's rows contiguous, e.g. a full-width tile)");
        }
        for (const nir::Dim &d : dims) {
            if (d.count > en.max_count) {
                user_error(where(), ": a dimension of ", d.count, " elements exceeds engine ", en.name,
                           "'s max_count of ", en.max_count);
            }
        }
        auto at_min = [&](Expr e) {
            for (const NestLoop &l : loops) {
                e = substitute(l.name, l.min, e);
            }
            return simplify(e);
        };
        const uint32_t prov = m_.provenance_id_of(req_.directive_id, req_.func, top->name);
        nir::FixParamOp fp;
        fp.engine = engine;
        fp.bias = {bias.name, at_min(ib)};
        fp.scale = {scale.name, at_min(is)};
        fp.scale_type = *nir::dtype_of_type(r.scale->type);
        fp.out_type = *nir::dtype_of_type(r.out);
        fp.channels = static_cast<int>(channel->extent);
        fp.shift = r.shift;
        fp.relu = r.relu;
        fp.prov = prov;
        nir::DmaOp dma;
        dma.engine = engine;
        dma.dst = {st->name, at_min(index)};
        dma.src = {acc.name, at_min(ia)};
        dma.elem_bytes = r.out.bytes();
        dma.dims = dims;
        const auto &names = isa::dma_transform_names();
        dma.transform = static_cast<int>(std::find(names.begin(), names.end(), "quant") - names.begin());
        dma.prov = prov;
        return Block::make(fp.make(), dma.make()); // the lets are substituted into both

    }
};

} // namespace

Stmt tensorize_fix(nir::NpuModule &m, const TensorizeRequest &req, const Stmt &body) {
    FixTensorizer t(m, req);
    return t.mutate(body);
}

} // namespace tessel
