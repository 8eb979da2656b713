// ONNX operators, matrix products and convolutions: MatMul, Gemm, Conv, ConvTranspose,
// and BatchNormalization (graph/OnnxMap.h, docs/onnx.md).
#include "graph/OnnxMap.h"

namespace tessel::graph::onnx_map {

namespace {

const char *const kMatrixTypes = "MatMul takes float32, float16, bfloat16 and int32 tensors here";

bool matrix_dtype(Ctx &c, std::string &dtype, bool integers) {
    if (!c.same_dtype_inputs(2, dtype)) {
        return false;
    }
    if (dtype == "fp32" || dtype == "fp16" || dtype == "bf16" || (integers && dtype == "int32")) {
        return true;
    }
    return c.skip(
        c.node.op_type + " of " + elem_name(c.input(0)->type) + ": " +
        (integers ? std::string(kMatrixTypes) : c.node.op_type + " takes float tensors here"));
}

// NumPy's matmul: a 1-D A is one row (the row dropped from Y), a 1-D B one column;
// the batch dimensions broadcast, and neighbouring ones that broadcast alike merge.
bool map_matmul(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({}) || !matrix_dtype(c, dtype, true) || !c.outputs_single()) {
        return false;
    }
    Dims a = c.input(0)->dims, b = c.input(1)->dims;
    if (a.empty() || b.empty()) {
        return c.skip("MatMul of a scalar: ONNX requires tensors of rank 1 or more");
    }
    const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    if (a_vec) {
        a.insert(a.begin(), 1);
    }
    if (b_vec) {
        b.push_back(1);
    }
    const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
    if (b[b.size() - 2] != K) {
        return c.skip("MatMul of " + join_dims(c.input(0)->dims) + " and " +
                      join_dims(c.input(1)->dims) + ": the inner dimensions " + std::to_string(K) +
                      " and " + std::to_string(b[b.size() - 2]) + " differ");
    }
    const Dims ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    const size_t nb = std::max(ab.size(), bb.size());
    Dims out_batch(nb), av(nb, 1), bv(nb, 1);
    for (size_t d = 0; d < nb; d++) { // aligned at the innermost batch dimension
        const int64_t x = d + ab.size() >= nb ? ab[d + ab.size() - nb] : 1;
        const int64_t y = d + bb.size() >= nb ? bb[d + bb.size() - nb] : 1;
        if (x != y && x != 1 && y != 1) {
            return c.skip("MatMul: batch dimensions " + join_dims(ab) + " and " + join_dims(bb) +
                          " do not broadcast");
        }
        out_batch[d] = std::max(x, y);
        av[d] = x;
        bv[d] = y;
    }
    // Merge neighbouring batch dimensions where each operand is full or broadcast alike.
    Dims batch, a_batch, b_batch;
    std::pair<bool, bool> last{false, false};
    for (size_t d = 0; d < nb; d++) {
        if (out_batch[d] == 1) {
            continue;
        }
        const std::pair<bool, bool> pattern{av[d] == 1, bv[d] == 1};
        if (!batch.empty() && pattern == last) {
            batch.back() *= out_batch[d];
            a_batch.back() *= av[d];
            b_batch.back() *= bv[d];
        } else {
            batch.push_back(out_batch[d]);
            a_batch.push_back(av[d]);
            b_batch.push_back(bv[d]);
        }
        last = pattern;
    }
    Dims onnx_out = out_batch;
    if (!a_vec) {
        onnx_out.push_back(M);
    }
    if (!b_vec) {
        onnx_out.push_back(N);
    }
    auto with = [](Dims d, int64_t x, int64_t y) {
        d.push_back(x);
        d.push_back(y);
        return d;
    };
    c.m.generator = "onnx_matmul";
    c.m.params["M"] = std::to_string(M);
    c.m.params["N"] = std::to_string(N);
    c.m.params["K"] = std::to_string(K);
    c.m.params["batch"] = join_dims(batch);
    c.m.params["a_batch"] = join_dims(a_batch);
    c.m.params["b_batch"] = join_dims(b_batch);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "A", with(a_batch, M, K), std::nullopt});
    c.m.inputs.push_back({1, "B", with(b_batch, K, N), std::nullopt});
    c.m.outputs.push_back({0, "Y", with(batch, M, N), onnx_out});
    return true;
}

// Gemm (opsets 11-13): Y = alpha A' B' + beta C, C optional and broadcast to M x N.
bool map_gemm(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"alpha", "beta", "transA", "transB"}) ||
        !matrix_dtype(c, dtype, false) || !c.outputs_single()) {
        return false;
    }
    const Dims &a = c.input(0)->dims, &b = c.input(1)->dims;
    if (a.size() != 2 || b.size() != 2) {
        return c.skip("Gemm of " + join_dims(a) + " and " + join_dims(b) +
                      ": A and B must be matrices");
    }
    const bool ta = c.int_attr("transA", 0) != 0, tb = c.int_attr("transB", 0) != 0;
    const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
    const int64_t KB = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
    if (K != KB) {
        return c.skip("Gemm: A' is " + std::to_string(M) + "x" + std::to_string(K) + " and B' " +
                      std::to_string(KB) + "x" + std::to_string(N) +
                      ": the inner dimensions differ");
    }
    const double alpha = c.float_attr("alpha", 1.0), beta = c.float_attr("beta", 1.0);
    c.m.generator = "onnx_gemm";
    c.m.params["M"] = std::to_string(M);
    c.m.params["N"] = std::to_string(N);
    c.m.params["K"] = std::to_string(K);
    c.m.params["transA"] = ta ? "true" : "false";
    c.m.params["transB"] = tb ? "true" : "false";
    c.m.params["alpha"] = number_text(alpha);
    c.m.params["beta"] = number_text(beta);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "A", a, std::nullopt});
    c.m.inputs.push_back({1, "B", b, std::nullopt});
    const FileTensor *ct =
        c.node.inputs.size() > 2 && !c.node.inputs[2].empty() ? c.input(2) : nullptr;
    if (ct && beta != 0) {
        if (ct->type != c.input(0)->type) {
            return c.skip("Gemm: C is " + std::string(elem_name(ct->type)) + ", A and B " +
                          elem_name(c.input(0)->type));
        }
        if (ct->dims.size() > 2) {
            return c.skip("Gemm: C of rank " + std::to_string(ct->dims.size()) +
                          " does not broadcast to a matrix");
        }
        Dims cd = ct->dims;
        while (cd.size() < 2) {
            cd.insert(cd.begin(), 1);
        }
        if ((cd[0] != 1 && cd[0] != M) || (cd[1] != 1 && cd[1] != N)) {
            return c.skip("Gemm: C " + join_dims(ct->dims) + " does not broadcast to " +
                          std::to_string(M) + "x" + std::to_string(N));
        }
        c.m.params["c"] = join_dims(cd);
        c.m.inputs.push_back({2, "C", cd, std::nullopt});
    }
    c.m.outputs.push_back({0, "Y", {M, N}, {M, N}});
    return true;
}

// The ints of attribute `name`, or `n` copies of `def` when it is absent; a skip when
// it has another length.
bool ints_attr(Ctx &c, const char *name, size_t n, int64_t def, Dims &out) {
    const OnnxAttribute *a = c.node.attribute(name);
    if (!a) {
        out.assign(n, def);
        return true;
    }
    if (a->ints.size() != n) {
        return c.skip(c.node.op_type + ": attribute " + name + " has " +
                      std::to_string(a->ints.size()) + " values for " + std::to_string(n) +
                      " dimensions");
    }
    out = a->ints;
    return true;
}

struct ConvGeometry {
    Dims x, w;               // the ONNX shapes of X and W
    size_t sr = 0;           // spatial rank
    Dims strides, dilations; // per spatial dimension
    Dims kernel;             // W's spatial dimensions
    int64_t group = 1;
    std::string auto_pad; // NOTSET, SAME_UPPER, SAME_LOWER, VALID
};

// What Conv and ConvTranspose share: X and W's ranks, kernel_shape, strides, dilations, group.
bool conv_geometry(Ctx &c, ConvGeometry &g) {
    if (!c.input(0) || !c.input(1)) {
        return c.skip(c.node.op_type + " without X or W");
    }
    g.x = c.input(0)->dims;
    g.w = c.input(1)->dims;
    if (g.x.size() < 3 || g.x.size() > 5 || g.w.size() != g.x.size()) {
        return c.skip(c.node.op_type + " of X " + join_dims(g.x) + " and W " + join_dims(g.w) +
                      ": 1 to 3 spatial dimensions, W of X's rank");
    }
    g.sr = g.x.size() - 2;
    g.kernel.assign(g.w.begin() + 2, g.w.end());
    Dims ks;
    if (!ints_attr(c, "kernel_shape", g.sr, 0, ks) ||
        !ints_attr(c, "strides", g.sr, 1, g.strides) ||
        !ints_attr(c, "dilations", g.sr, 1, g.dilations)) {
        return false;
    }
    if (c.node.attribute("kernel_shape") && ks != g.kernel) {
        return c.skip(c.node.op_type + ": kernel_shape " + join_dims(ks) + " differs from W's " +
                      join_dims(g.kernel));
    }
    g.group = c.int_attr("group", 1);
    const OnnxAttribute *ap = c.node.attribute("auto_pad");
    g.auto_pad = ap ? ap->s : "NOTSET";
    if (g.auto_pad != "NOTSET" && g.auto_pad != "SAME_UPPER" && g.auto_pad != "SAME_LOWER" &&
        g.auto_pad != "VALID") {
        return c.skip(c.node.op_type + ": auto_pad '" + g.auto_pad + "' is not one ONNX defines");
    }
    for (size_t i = 0; i < g.sr; i++) {
        if (g.strides[i] < 1 || g.dilations[i] < 1) {
            return c.skip(c.node.op_type + ": strides and dilations must be positive");
        }
    }
    return true;
}

bool conv_bias(Ctx &c, int64_t channels) {
    if (c.node.inputs.size() < 3 || c.node.inputs[2].empty()) {
        return true;
    }
    const FileTensor *b = c.input(2);
    if (!b || b->dims != Dims{channels} || b->type != c.input(0)->type) {
        return c.skip(c.node.op_type + ": B must be " + std::to_string(channels) +
                      " values of X's type");
    }
    c.m.params["bias"] = "true";
    c.m.inputs.push_back({2, "B", b->dims, std::nullopt});
    return true;
}

// The kernel of a Conv or ConvTranspose node: its geometry as the generator's parameters,
// X, W and the optional bias (Y's channels), and Y (N x M x O...).
bool conv_kernel(Ctx &c, const ConvGeometry &g, const char *generator, const Dims &pads,
                 const std::string &dtype, const Dims &y) {
    c.m.generator = generator;
    c.m.params["x"] = join_dims(g.x);
    c.m.params["w"] = join_dims(g.w);
    c.m.params["group"] = std::to_string(g.group);
    c.m.params["strides"] = join_list(g.strides);
    c.m.params["dilations"] = join_list(g.dilations);
    c.m.params["pads"] = join_list(pads);
    c.m.params["dtype"] = dtype;
    c.m.inputs.push_back({0, "X", g.x, std::nullopt});
    c.m.inputs.push_back({1, "W", g.w, std::nullopt});
    if (!conv_bias(c, y[1])) {
        return false;
    }
    c.m.outputs.push_back({0, "Y", y, y});
    return true;
}

bool map_conv(Ctx &c) {
    ConvGeometry g;
    std::string dtype;
    if (!c.only_attributes({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}) ||
        !matrix_dtype(c, dtype, false) || !conv_geometry(c, g) || !c.outputs_single()) {
        return false;
    }
    if (g.group < 1 || g.x[1] % g.group != 0 || g.w[0] % g.group != 0 ||
        g.w[1] * g.group != g.x[1]) {
        return c.skip("Conv: X has " + std::to_string(g.x[1]) + " channels, W " + join_dims(g.w) +
                      ", group " + std::to_string(g.group) + ": the channels do not match");
    }
    Dims pads;
    if (!ints_attr(c, "pads", 2 * g.sr, 0, pads)) {
        return false;
    }
    Dims y = {g.x[0], g.w[0]};
    for (size_t i = 0; i < g.sr; i++) {
        const int64_t in = g.x[2 + i], span = g.dilations[i] * (g.kernel[i] - 1) + 1;
        if (g.auto_pad == "VALID") {
            pads[i] = pads[g.sr + i] = 0;
        } else if (g.auto_pad != "NOTSET") {
            const int64_t out = (in + g.strides[i] - 1) / g.strides[i];
            const int64_t total = std::max<int64_t>(0, (out - 1) * g.strides[i] + span - in);
            const int64_t small = total / 2;
            pads[i] = g.auto_pad == "SAME_UPPER" ? small : total - small;
            pads[g.sr + i] = total - pads[i];
        }
        if (pads[i] < 0 || pads[g.sr + i] < 0) {
            return c.skip("Conv: negative pads");
        }
        const int64_t padded = in + pads[i] + pads[g.sr + i];
        if (padded < span) {
            return c.skip("Conv: spatial dimension " + std::to_string(i) + " (" +
                          std::to_string(in) + " padded to " + std::to_string(padded) +
                          ") is smaller than the kernel's span " + std::to_string(span));
        }
        y.push_back((padded - span) / g.strides[i] + 1);
    }
    return conv_kernel(c, g, "onnx_conv", pads, dtype, y);
}

// ConvTranspose: the full output is s (in - 1) + output_padding + (k - 1) d + 1 per
// spatial dimension; pads (or output_shape, or auto_pad) crop it.
bool map_convtranspose(Ctx &c) {
    ConvGeometry g;
    std::string dtype;
    if (!c.only_attributes({"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                            "output_shape", "pads", "strides"}) ||
        !matrix_dtype(c, dtype, false) || !conv_geometry(c, g) || !c.outputs_single()) {
        return false;
    }
    if (g.group < 1 || g.x[1] != g.w[0] || g.w[0] % g.group != 0) {
        return c.skip("ConvTranspose: X has " + std::to_string(g.x[1]) + " channels, W " +
                      join_dims(g.w) + ", group " + std::to_string(g.group) +
                      ": the channels do not match");
    }
    Dims pads, opad;
    if (!ints_attr(c, "pads", 2 * g.sr, 0, pads) ||
        !ints_attr(c, "output_padding", g.sr, 0, opad)) {
        return false;
    }
    const OnnxAttribute *os = c.node.attribute("output_shape");
    Dims oshape;
    if (os) {
        oshape = os->ints;
        if (oshape.size() == g.sr + 2) { // written with N and C
            oshape.erase(oshape.begin(), oshape.begin() + 2);
        }
        if (oshape.size() != g.sr) {
            return c.skip("ConvTranspose: output_shape " + join_dims(os->ints) + " for " +
                          std::to_string(g.sr) + " spatial dimensions");
        }
    }
    Dims y = {g.x[0], g.w[1] * g.group}, begin(g.sr);
    for (size_t i = 0; i < g.sr; i++) {
        const int64_t full =
            g.strides[i] * (g.x[2 + i] - 1) + opad[i] + (g.kernel[i] - 1) * g.dilations[i] + 1;
        int64_t out = 0;
        if (os || (g.auto_pad == "SAME_UPPER" || g.auto_pad == "SAME_LOWER")) {
            out = os ? oshape[i] : g.x[2 + i] * g.strides[i];
            const int64_t total = full - out;
            // Floor division, as ONNX's reference (Python) computes it: an output_shape one
            // larger than the full output pads at the end, as output_padding does.
            const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            begin[i] = g.auto_pad == "SAME_UPPER" ? half : total - half;
        } else {
            if (g.auto_pad == "VALID") {
                pads.assign(2 * g.sr, 0);
            }
            begin[i] = pads[i];
            out = full - pads[i] - pads[g.sr + i];
        }
        if (out < 1 || begin[i] >= full) {
            return c.skip("ConvTranspose: spatial dimension " + std::to_string(i) + " is empty (" +
                          std::to_string(begin[i]) + " cropped at the start, " +
                          std::to_string(out) + " elements)");
        }
        y.push_back(out);
    }
    c.m.params["out"] = join_dims(y);
    return conv_kernel(c, g, "onnx_convtranspose", begin, dtype, y);
}

// BatchNormalization per channel (ONNX's dimension 1). In training mode (training_mode 1,
// opset 14+) Y uses the batch's mean and variance, and the running_mean / running_var
// outputs are kernels of their own (OnnxMapping::more), as LayerNormalization's statistics.
bool map_batchnorm(Ctx &c) {
    std::string dtype;
    if (!c.only_attributes({"epsilon", "momentum", "training_mode", "spatial"}) ||
        !c.same_dtype_inputs(5, dtype)) {
        return false;
    }
    const bool training = c.int_attr("training_mode", 0) != 0;
    if (c.node.outputs.empty() || c.node.outputs[0].empty()) {
        return c.skip("BatchNormalization without its output Y");
    }
    if (!training && !c.outputs_single()) {
        return false;
    }
    if (c.node.outputs.size() > 3) {
        return c.skip("BatchNormalization's saved_mean / saved_var outputs (opsets before 14) are "
                      "not supported");
    }
    if (c.int_attr("spatial", 1) != 1) {
        return c.skip(
            "BatchNormalization with spatial = 0 (per-element statistics, opsets before 9)");
    }
    if (dtype != "fp32" && dtype != "fp16" && dtype != "bf16") {
        return c.skip("BatchNormalization takes float tensors");
    }
    const Dims &x = c.input(0)->dims;
    if (x.size() < 2) {
        return c.skip("BatchNormalization of " + join_dims(x) + ": X needs a channel dimension");
    }
    const int64_t C = x[1];
    int64_t S = 1;
    for (size_t d = 2; d < x.size(); d++) {
        S *= x[d];
    }
    const char *names[] = {"scale", "B", "mean", "var"};
    for (int k = 1; k <= 4; k++) {
        if (c.input(k)->dims != Dims{C}) {
            return c.skip("BatchNormalization: " + std::string(names[k - 1]) + " is " +
                          join_dims(c.input(k)->dims) + ", not the " + std::to_string(C) +
                          " channels of X");
        }
    }
    auto kernel = [&](const std::string &output) {
        OnnxMapping k;
        k.generator = "onnx_batchnorm";
        k.params["N"] = std::to_string(x[0]);
        k.params["C"] = std::to_string(C);
        k.params["S"] = std::to_string(S);
        k.params["epsilon"] = number_text(c.float_attr("epsilon", 1e-5));
        k.params["dtype"] = dtype;
        if (training) {
            k.params["training"] = "true";
            k.params["momentum"] = number_text(c.float_attr("momentum", 0.9));
            k.params["output"] = output;
        }
        k.inputs.push_back({0, "X", {x[0], C, S}, std::nullopt});
        for (int i = 1; i <= 4; i++) {
            // What the generator reads: in training mode Y takes scale and B, a running
            // statistic its given one.
            const bool used =
                !training || (output == "Y" ? i <= 2 : i == (output == "running_mean" ? 3 : 4));
            if (used) {
                k.inputs.push_back({i, names[i - 1], {C}, std::nullopt});
            }
        }
        if (output == "Y") {
            k.outputs.push_back({0, "Y", {x[0], C, S}, x});
        } else {
            k.outputs.push_back({output == "running_mean" ? 1 : 2, output, {C}, {C}});
        }
        return k;
    };
    c.m = kernel("Y");
    for (size_t k = 1; training && k < c.node.outputs.size(); k++) {
        if (!c.node.outputs[k].empty()) {
            c.m.more.push_back(kernel(k == 1 ? "running_mean" : "running_var"));
        }
    }
    if (!c.m.more.empty()) {
        c.m.note = std::to_string(c.m.more.size()) + " more kernel" +
                   (c.m.more.size() > 1 ? "s" : "") + " for the running statistics";
    }
    return true;
}

} // namespace

void add_matrix_ops(OpTable &t) {
    t.push_back({"MatMul", map_matmul});
    t.push_back({"Gemm", map_gemm});
    t.push_back({"Conv", map_conv});
    t.push_back({"ConvTranspose", map_convtranspose});
    t.push_back({"BatchNormalization", map_batchnorm});
}

} // namespace tessel::graph::onnx_map
