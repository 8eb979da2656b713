// ONNX's convolutions and BatchNormalization as generators: onnx_conv,
// onnx_convtranspose, onnx_batchnorm (docs/onnx.md). 1, 2 or 3 spatial
// dimensions; NCHW as ONNX has it (the kernel's layout is ONNX's: Halide's
// innermost dimension is the last spatial one).
//
// onnx_conv: Y[n, m, o...] = B[m] + sum over (c, k...) of
//   Xp[n, g Cg + c, o s + k d] * W[m, c, k...],  g = m / (M / group)
// where Xp is X with `pads` zeros around it: X read at the clamped position and
// bounded by min/max with per-position bounds (onnx_pad's constant mode does the
// same), so nothing needs a select on the vector unit, which has none.
//
// onnx_convtranspose: the full output F[n, m, i s + k d] += X[n, g Cg + c, i] *
// W[g Cg + c, m mod (M / group), k] (scattered, over the input and the kernel),
// then Y[n, m, y] = B[m] + F[n, m, y + pads_begin]: ONNX's definition with
// output_padding and output_shape already resolved into `out` and `pads` by
// the runner (graph/OnnxOpsMatrix.cpp).
//
// onnx_batchnorm (inference): Y = (X - mean[c]) / sqrt(var[c] + epsilon) *
// scale[c] + B[c], computed in this order as ONNX's reference does.
//
// Accumulation is in fp32 for float types; fp16 and bf16 results are rounded
// once at the end.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <climits>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace Halide;

using Ints = std::vector<int>;

Ints ints(const std::string &text, char sep, const char *op, const char *what, int min) {
    return tessel::ops::parse_int_list(text, sep, op, what, min);
}

void float_only(const Type &t, const char *op) {
    if (!t.is_float()) {
        throw Halide::CompileError(std::string("onnx ") + op +
                                   ": dtype must be fp32, fp16 or bf16");
    }
}

// The Region of an ONNX shape (outermost first) in Halide's order (innermost first).
Region region_of(const Ints &shape) {
    Region r;
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) {
        r.push_back({0, *it});
    }
    return r;
}

class OnnxConv : public Halide::Generator<OnnxConv> {
public:
    GeneratorParam<std::string> x{"x", "1x16x32x32"};
    GeneratorParam<std::string> w{"w", "16x16x3x3"};
    GeneratorParam<int> group{"group", 1};
    GeneratorParam<std::string> strides{"strides", "1;1"};
    GeneratorParam<std::string> dilations{"dilations", "1;1"};
    GeneratorParam<std::string> pads{"pads", "1;1;1;1"};
    GeneratorParam<bool> bias{"bias", false};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Input<Buffer<>> *Wt = nullptr;
    Input<Buffer<>> *B = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    Ints xs, ws, st, dl, pd, ys; // ONNX order: outermost first; pads begin then end
    int sr = 0;                  // spatial rank
    Func xp{"xp"}, acc{"acc"}, epi{"epi"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        float_only(t, "Conv");
        xs = ints(x, 'x', "Conv", "x", 1);
        ws = ints(w, 'x', "Conv", "w", 1);
        sr = static_cast<int>(xs.size()) - 2;
        st = ints(strides, ';', "Conv", "strides", 1);
        dl = ints(dilations, ';', "Conv", "dilations", 1);
        pd = ints(pads, ';', "Conv", "pads", 0);
        if (sr < 1 || sr > 3 || ws.size() != xs.size() || int(st.size()) != sr ||
            int(dl.size()) != sr || int(pd.size()) != 2 * sr) {
            throw Halide::CompileError(
                "onnx Conv: x and w must have rank 3 to 5, strides and dilations one entry "
                "per spatial dimension, pads two");
        }
        if (group < 1 || xs[1] % group != 0 || ws[0] % group != 0 || ws[1] * group != xs[1]) {
            throw Halide::CompileError("onnx Conv: " + std::to_string(xs[1]) + " input channels, " +
                                       std::to_string(ws[0]) + " filters of " +
                                       std::to_string(ws[1]) + " channels do not make " +
                                       std::to_string(int(group)) + " groups");
        }
        ys = {xs[0], ws[0]};
        for (int i = 0; i < sr; i++) {
            const int span = dl[i] * (ws[2 + i] - 1) + 1, padded = xs[2 + i] + pd[i] + pd[sr + i];
            if (padded < span) {
                throw Halide::CompileError("onnx Conv: spatial dimension " + std::to_string(i) +
                                           " is smaller than the kernel's span");
            }
            ys.push_back((padded - span) / st[i] + 1);
        }
        const int r = static_cast<int>(xs.size());
        X = add_input<Buffer<>>("X", t, r);
        Wt = add_input<Buffer<>>("W", t, r);
        if (bias) {
            B = add_input<Buffer<>>("B", t, 1);
        }
        Y = add_output<Buffer<>>("Y", t, r);
    }

    void generate() {
        const Type at = Float(32);
        Var c("c"), m("m"), n("n");
        std::vector<Var>
            sp; // spatial vars, Halide order (innermost first): sp[j] is ONNX spatial sr-1-j
        for (int j = 0; j < sr; j++) {
            sp.push_back(Var("s" + std::to_string(j)));
        }
        auto onnx_sp = [&](int j) { return sr - 1 - j; };
        bool padded = false;
        for (int p : pd) {
            padded = padded || p > 0;
        }
        std::vector<Var> xv = sp;
        xv.push_back(c);
        xv.push_back(n);
        // Zero padding without a select on the vector unit: each padded dimension reads
        // X at the clamped index (likely(): Halide partitions the row so that only the
        // border vectors carry the clamp), then min/max with 1-D bounds of the position,
        // +-inf inside and 0 outside, leaves the value inside and 0 outside, exactly.
        std::vector<Expr> xi0;
        std::vector<std::pair<int, int>> masked; // (Halide dimension, its ONNX extent)
        for (int j = 0; j < sr; j++) {
            const int o = onnx_sp(j), S = xs[2 + o], b = pd[o], e = pd[sr + o];
            Expr u = sp[j] - b;
            xi0.push_back(b == 0 && e == 0 ? u : clamp(likely(u), 0, S - 1));
            if (b != 0 || e != 0) {
                masked.push_back({j, S});
            }
        }
        xi0.push_back(c);
        xi0.push_back(n);
        Expr v = (*X)(xi0);
        for (auto [j, S] : masked) {
            v = tessel::ops::zero_outside(v, sp[j], pd[onnx_sp(j)], S, t, std::to_string(j));
        }
        // Unpadded, the product reads X itself: an operand the matrix form can stage.
        if (padded) {
            xp(xv) = v;
        }
        Region red;
        for (int j = 0; j < sr; j++) {
            red.push_back({0, ws[2 + onnx_sp(j)]});
        }
        red.push_back({0, ws[1]});
        RDom r(red, "r");
        const RVar rc = r[sr];
        std::vector<Var> yv = sp;
        yv.push_back(m);
        yv.push_back(n);
        const int mg = ws[0] / group;
        Expr ch = group == 1 ? Expr(rc) : (m / mg) * ws[1] + rc;
        std::vector<Expr> xi, wi;
        for (int j = 0; j < sr; j++) {
            const int o = onnx_sp(j);
            xi.push_back(sp[j] * st[o] + r[j] * dl[o]);
            wi.push_back(r[j]);
        }
        xi.push_back(ch);
        xi.push_back(n);
        wi.push_back(rc);
        wi.push_back(m);
        // The bias is an epilogue (Func epi), not the accumulator's initial value: the matrix
        // unit's accumulator starts at 0, and the output stays a plain copy of its last stage.
        acc(yv) = cast(at, 0);
        acc(yv) += cast(at, padded ? xp(xi) : (*X)(xi)) * cast(at, (*Wt)(wi));
        if (at == t && !bias) {
            (*Y)(yv) = acc(yv);
        } else {
            epi(yv) = cast(t, bias ? acc(yv) + cast(at, (*B)(m)) : acc(yv));
            (*Y)(yv) = epi(yv);
        }
        X->set_estimates(region_of(xs));
        Wt->set_estimates(region_of(ws));
        if (B) {
            B->set_estimates({{0, ws[0]}});
        }
        Y->set_estimates(region_of(ys));
    }
};

class OnnxConvTranspose : public Halide::Generator<OnnxConvTranspose> {
public:
    GeneratorParam<std::string> x{"x", "1x16x16x16"};
    GeneratorParam<std::string> w{"w", "16x16x3x3"};
    GeneratorParam<int> group{"group", 1};
    GeneratorParam<std::string> strides{"strides", "2;2"};
    GeneratorParam<std::string> dilations{"dilations", "1;1"};
    GeneratorParam<std::string> pads{"pads", "1;1"};
    GeneratorParam<std::string> out{"out", "1x16x31x31"};
    GeneratorParam<bool> bias{"bias", false};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Input<Buffer<>> *Wt = nullptr;
    Input<Buffer<>> *B = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    Ints xs, ws, st, dl, pb, ys, fs; // pads: the begin pads only (the end follows from `out`)
    int sr = 0;
    Func full{"full"}, epi{"epi"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        float_only(t, "ConvTranspose");
        xs = ints(x, 'x', "ConvTranspose", "x", 1);
        ws = ints(w, 'x', "ConvTranspose", "w", 1);
        ys = ints(out, 'x', "ConvTranspose", "out", 1);
        sr = static_cast<int>(xs.size()) - 2;
        st = ints(strides, ';', "ConvTranspose", "strides", 1);
        dl = ints(dilations, ';', "ConvTranspose", "dilations", 1);
        pb = ints(pads, ';', "ConvTranspose", "pads",
                  INT_MIN); // negative: the output starts before the full one
        if (sr < 1 || sr > 3 || ws.size() != xs.size() || ys.size() != xs.size() ||
            int(st.size()) != sr || int(dl.size()) != sr || int(pb.size()) != sr) {
            throw Halide::CompileError(
                "onnx ConvTranspose: x, w and out must have rank 3 to 5; strides, "
                "dilations and pads (the begin pads) one entry per spatial dimension");
        }
        if (group < 1 || xs[1] != ws[0] || ws[0] % group != 0 || ys[1] != ws[1] * group ||
            ys[0] != xs[0]) {
            throw Halide::CompileError(
                "onnx ConvTranspose: the channels of x, w and out do not match with " +
                std::to_string(int(group)) + " groups");
        }
        fs = {xs[0], ys[1]};
        for (int i = 0; i < sr; i++) {
            fs.push_back(st[i] * (xs[2 + i] - 1) + dl[i] * (ws[2 + i] - 1) + 1);
            if (pb[i] >= fs.back()) {
                throw Halide::CompileError(
                    "onnx ConvTranspose: the begin pad of spatial dimension " + std::to_string(i) +
                    " crops the whole output");
            }
        }
        const int r = static_cast<int>(xs.size());
        X = add_input<Buffer<>>("X", t, r);
        Wt = add_input<Buffer<>>("W", t, r);
        if (bias) {
            B = add_input<Buffer<>>("B", t, 1);
        }
        Y = add_output<Buffer<>>("Y", t, r);
    }

    void generate() {
        const Type at = Float(32);
        Var m("m"), n("n");
        std::vector<Var> sp;
        for (int j = 0; j < sr; j++) {
            sp.push_back(Var("s" + std::to_string(j)));
        }
        auto onnx_sp = [&](int j) { return sr - 1 - j; };
        std::vector<Var> fv = sp;
        fv.push_back(m);
        fv.push_back(n);
        full(fv) = cast(at, 0);
        Region red;
        for (int j = 0; j < sr; j++) {
            red.push_back({0, xs[2 + onnx_sp(j)]});
        }
        for (int j = 0; j < sr; j++) {
            red.push_back({0, ws[2 + onnx_sp(j)]});
        }
        const int cg = ws[0] / group, mg = ws[1];
        red.push_back({0, cg});
        RDom r(red, "r");
        const RVar rc = r[2 * sr];
        Expr ch = group == 1 ? Expr(rc) : (m / mg) * cg + rc;
        std::vector<Expr> lhs, xi, wi;
        for (int j = 0; j < sr; j++) {
            const int o = onnx_sp(j);
            lhs.push_back(r[j] * st[o] + r[sr + j] * dl[o]);
            xi.push_back(r[j]);
            wi.push_back(r[sr + j]);
        }
        lhs.push_back(m);
        lhs.push_back(n);
        xi.push_back(ch);
        xi.push_back(n);
        wi.push_back(group == 1 ? Expr(m) : m % mg);
        wi.push_back(ch);
        full(lhs) += cast(at, (*X)(xi)) * cast(at, (*Wt)(wi));
        // Output positions past the full output (output_padding), or before it (an
        // output_shape larger than the full output), have no contribution: zero, read at a
        // clamped position so that `full` has exactly the scatter's extent.
        std::vector<Expr> crop;
        std::vector<int> beyond;
        for (int j = 0; j < sr; j++) {
            const int o = onnx_sp(j);
            Expr u = sp[j] + pb[o];
            const bool past = pb[o] + ys[2 + o] > fs[2 + o] || pb[o] < 0;
            crop.push_back(past ? clamp(likely(u), 0, fs[2 + o] - 1) : u);
            if (past) {
                beyond.push_back(j);
            }
        }
        crop.push_back(m);
        crop.push_back(n);
        Expr y = full(crop);
        for (int j : beyond) {
            const int o = onnx_sp(j);
            y = tessel::ops::zero_outside(y, sp[j], -pb[o], fs[2 + o], at, std::to_string(j));
        }
        if (bias) {
            y = y + cast(at, (*B)(m));
        }
        epi(fv) = cast(t, y);
        (*Y)(fv) = epi(fv);
        X->set_estimates(region_of(xs));
        Wt->set_estimates(region_of(ws));
        if (B) {
            B->set_estimates({{0, ys[1]}});
        }
        Y->set_estimates(region_of(ys));
    }
};

class OnnxBatchNorm : public Halide::Generator<OnnxBatchNorm> {
public:
    GeneratorParam<int> N{"N", 1};
    GeneratorParam<int> C{"C", 64};
    GeneratorParam<int> S{"S", 3136};
    GeneratorParam<float> epsilon{"epsilon", 1e-5f};
    GeneratorParam<bool> training{"training", false};
    GeneratorParam<float> momentum{"momentum", 0.9f};
    GeneratorParam<std::string> output{"output", "Y"};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Input<Buffer<>> *scale = nullptr;
    Input<Buffer<>> *B = nullptr;
    Input<Buffer<>> *mean = nullptr;
    Input<Buffer<>> *var = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    Func op{"op"}, msum{"msum"}, vsum{"vsum"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        float_only(t, "BatchNormalization");
        if (N < 1 || C < 1 || S < 1) {
            throw Halide::CompileError("onnx BatchNormalization: N, C and S must be positive");
        }
        const std::string o = output;
        if (o != "Y" && (!training || (o != "running_mean" && o != "running_var"))) {
            throw Halide::CompileError(
                "onnx BatchNormalization: output '" + o +
                "' is not Y (or, in training mode, running_mean or running_var)");
        }
        // Only what the output reads: Y in training mode needs no given statistics, a
        // running statistic only its own.
        X = add_input<Buffer<>>("X", t, 3);
        if (o == "Y") {
            scale = add_input<Buffer<>>("scale", t, 1);
            B = add_input<Buffer<>>("B", t, 1);
        }
        if (!training || o == "running_mean") {
            mean = add_input<Buffer<>>("mean", t, 1);
        }
        if (!training || o == "running_var") {
            var = add_input<Buffer<>>("var", t, 1);
        }
        Y = add_output<Buffer<>>(o, t, o == "Y" ? 3 : 1);
    }

    void generate() {
        Var s("s"), c("c"), n("n");
        auto f = [](Expr e) { return cast(Float(32), e); };
        // Inference: the given statistics. Training (ONNX's training_mode): the batch's own,
        // over N and the spatial positions, the variance the population one (NumPy's var).
        Expr m = mean ? f((*mean)(c)) : Expr(), v = var ? f((*var)(c)) : Expr();
        if (training) {
            RDom r(0, S, 0, N, "r");
            const float count = float(int(S)) * float(int(N));
            msum(c) = 0.0f;
            msum(c) += f((*X)(r.x, c, r.y));
            Func bmean("bmean");
            bmean(c) = msum(c) / count;
            vsum(c) = 0.0f;
            Expr d = f((*X)(r.x, c, r.y)) - bmean(c);
            vsum(c) += d * d;
            Func bvar("bvar");
            bvar(c) = vsum(c) / count;
            const std::string o = output;
            if (o != "Y") {
                // running = given * momentum + batch * (1 - momentum)
                Expr given = o == "running_mean" ? m : v,
                     batch = o == "running_mean" ? bmean(c) : bvar(c);
                op(c) = cast(t, given * float(momentum) + batch * (1.0f - float(momentum)));
                (*Y)(c) = op(c);
                X->set_estimates({{0, S}, {0, C}, {0, N}});
                (mean ? mean : var)->set_estimates({{0, C}});
                Y->set_estimates({{0, C}});
                return;
            }
            m = bmean(c);
            v = bvar(c);
        }
        Expr y = (f((*X)(s, c, n)) - m) / sqrt(v + float(epsilon)) * f((*scale)(c)) + f((*B)(c));
        op(s, c, n) = cast(t, y);
        (*Y)(s, c, n) = op(s, c, n);
        X->set_estimates({{0, S}, {0, C}, {0, N}});
        for (auto *p : {scale, B, mean, var}) {
            if (p) {
                p->set_estimates({{0, C}});
            }
        }
        Y->set_estimates({{0, S}, {0, C}, {0, N}});
    }
};

// onnx_im2col: the columns of a convolution, so that the convolution is one matrix
// product on the matrix unit (onnx_matmul): for X (N x C x spatial...) and a kernel
// K..., Col[n, c, k..., o...] = Xp[n, c, o s + k d] (Xp: X with `pads` zeros), which
// read as N x (C K1 K2 ...) x (O1 O2 ...) is the B of Y[n] = W (M x C K1 K2 ...) x
// Col[n], and Y is then N x M x (O1 O2 ...): ONNX's NCHW. The model compiler lowers a
// Conv to it (docs/models.md); padding as in onnx_conv (clamped reads bounded by
// min/max with Funcs of (o, k)).
class OnnxIm2Col : public Halide::Generator<OnnxIm2Col> {
public:
    GeneratorParam<std::string> x{"x", "1x64x56x56"};
    GeneratorParam<std::string> kernel{"kernel", "3x3"};
    GeneratorParam<std::string> strides{"strides", "1;1"};
    GeneratorParam<std::string> dilations{"dilations", "1;1"};
    GeneratorParam<std::string> pads{"pads", "1;1;1;1"};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Output<Buffer<>> *Col = nullptr;

    Type t;
    Ints xs, ks, st, dl, pd, os;
    int sr = 0;
    Func op{"op"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        xs = ints(x, 'x', "Im2Col", "x", 1);
        ks = ints(kernel, 'x', "Im2Col", "kernel", 1);
        sr = static_cast<int>(xs.size()) - 2;
        st = ints(strides, ';', "Im2Col", "strides", 1);
        dl = ints(dilations, ';', "Im2Col", "dilations", 1);
        pd = ints(pads, ';', "Im2Col", "pads", 0);
        if (sr < 1 || sr > 3 || int(ks.size()) != sr || int(st.size()) != sr ||
            int(dl.size()) != sr || int(pd.size()) != 2 * sr) {
            throw Halide::CompileError(
                "onnx Im2Col: x must have rank 3 to 5; kernel, strides and dilations one "
                "entry per spatial dimension, pads two");
        }
        for (int i = 0; i < sr; i++) {
            const int span = dl[i] * (ks[i] - 1) + 1, padded = xs[2 + i] + pd[i] + pd[sr + i];
            if (padded < span) {
                throw Halide::CompileError("onnx Im2Col: spatial dimension " + std::to_string(i) +
                                           " is smaller than the kernel's span");
            }
            os.push_back((padded - span) / st[i] + 1);
        }
        X = add_input<Buffer<>>("X", t, 2 + sr);
        Col = add_output<Buffer<>>("Col", t, 2 + 2 * sr);
    }

    void generate() {
        // Halide order (innermost first): o (sr of them, last ONNX spatial first), k (sr), c, n.
        std::vector<Var> ov, kv;
        for (int j = 0; j < sr; j++) {
            ov.push_back(Var("o" + std::to_string(j)));
            kv.push_back(Var("k" + std::to_string(j)));
        }
        Var c("c"), n("n");
        std::vector<Var> all = ov;
        all.insert(all.end(), kv.begin(), kv.end());
        all.push_back(c);
        all.push_back(n);
        std::vector<Expr> idx;
        std::vector<int> masked;
        for (int j = 0; j < sr; j++) {
            const int o = sr - 1 - j, S = xs[2 + o];
            Expr pos = ov[j] * st[o] + kv[j] * dl[o] - pd[o];
            const bool edge = pd[o] > 0 || pd[sr + o] > 0;
            idx.push_back(edge ? clamp(likely(pos), 0, S - 1) : pos);
            if (edge) {
                masked.push_back(j);
            }
        }
        idx.push_back(c);
        idx.push_back(n);
        Expr v = (*X)(idx);
        for (int j : masked) {
            const int o = sr - 1 - j;
            v = tessel::ops::zero_outside(v, {ov[j], kv[j]}, ov[j] * st[o] + kv[j] * dl[o] - pd[o],
                                          xs[2 + o], t, std::to_string(j));
        }
        op(all) = v;
        (*Col)(all) = op(all);
        X->set_estimates(region_of(xs));
        Region ce;
        for (int j = 0; j < sr; j++) {
            ce.push_back({0, os[sr - 1 - j]});
        }
        for (int j = 0; j < sr; j++) {
            ce.push_back({0, ks[sr - 1 - j]});
        }
        ce.push_back({0, xs[1]});
        ce.push_back({0, xs[0]});
        Col->set_estimates(ce);
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(
    OnnxConv, onnx_conv,
    "ONNX Conv: 1-3 spatial dimensions, pads, strides, dilations, groups, optional bias",
    {{"x", "1x16x32x32", "X's shape N x C x spatial..."},
     {"w", "16x16x3x3", "W's shape M x C/group x kernel..."},
     {"group", "1", "groups (C and M divisible by it)"},
     {"strides", "1;1", "one per spatial dimension"},
     {"dilations", "1;1", "one per spatial dimension"},
     {"pads", "1;1;1;1", "the begin pads, then the end pads, one per spatial dimension"},
     {"bias", "false", "B (M values) is an input"},
     {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
TESSEL_REGISTER_GENERATOR(
    OnnxConvTranspose, onnx_convtranspose,
    "ONNX ConvTranspose: 1-3 spatial dimensions, strides, dilations, groups, pads, bias",
    {{"x", "1x16x16x16", "X's shape N x C x spatial..."},
     {"w", "16x16x3x3", "W's shape C x M/group x kernel..."},
     {"group", "1", "groups"},
     {"strides", "2;2", "one per spatial dimension"},
     {"dilations", "1;1", "one per spatial dimension"},
     {"pads", "1;1", "the begin pads, one per spatial dimension"},
     {"out", "1x16x31x31", "Y's shape (output_padding and output_shape resolved)"},
     {"bias", "false", "B (M values) is an input"},
     {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
TESSEL_REGISTER_GENERATOR(
    OnnxBatchNorm, onnx_batchnorm,
    "ONNX BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B (training: the "
    "batch's statistics)",
    {{"N", "1", "batch"},
     {"C", "64", "channels (ONNX's dimension 1)"},
     {"S", "3136", "spatial elements per channel (the product of the dimensions after C)"},
     {"epsilon", "1e-05", "added to the variance"},
     {"training", "false", "ONNX's training_mode: the batch's statistics"},
     {"momentum", "0.9", "training: running = given * momentum + batch * (1 - momentum)"},
     {"output", "Y", "Y, or in training mode running_mean or running_var (one kernel each)"},
     {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
TESSEL_REGISTER_GENERATOR(
    OnnxIm2Col, onnx_im2col,
    "The columns of a convolution: Col[n, c, k..., o...] = Xp[n, c, o s + k d], for Conv as "
    "one matrix product",
    {{"x", "1x64x56x56", "X's shape N x C x spatial..."},
     {"kernel", "3x3", "the kernel's spatial shape"},
     {"strides", "1;1", "one per spatial dimension"},
     {"dilations", "1;1", "one per spatial dimension"},
     {"pads", "1;1;1;1", "the begin pads, then the end pads, one per spatial dimension"},
     {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
