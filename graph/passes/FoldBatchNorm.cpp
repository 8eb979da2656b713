// BatchNormalization folding (graph/passes/Passes.h). Inference BatchNorm is
// y = (x - mean) * s + B with s = scale / sqrt(var + epsilon), per channel
// (dimension 1). After a Conv y = W * x + b that only it reads, that is a Conv
// with weights W * s (output channel m scaled by s[m]) and bias (b - mean) * s + B.
// Elsewhere it is Mul(x, s) then Add(., B - mean * s) with the per-channel
// constants shaped Cx1x...x1 to broadcast over the spatial dimensions.
#include "graph/passes/HostEval.h"
#include "graph/passes/Passes.h"

#include <cmath>

namespace tessel::graph {

namespace {

struct BnParams {
    std::vector<double> s, shift; // y = x * s + shift
};

// The per-channel scale and shift of BatchNormalization node `n`, if its
// parameters are float32 constants of C elements and it is in inference form.
std::optional<BnParams> bn_params(const Graph &g, const GraphNode &n) {
    if (n.inputs.size() != 5 || n.int_attr("training_mode", 0) != 0) {
        return std::nullopt;
    }
    for (size_t k = 1; k < n.outputs.size(); k++) {
        if (!n.outputs[k].empty() && !g.tensor(n.outputs[k]).consumers.empty()) {
            return std::nullopt; // running mean/var outputs used: training form
        }
    }
    const GraphTensor &x = g.tensor(n.inputs[0]);
    if (x.type != ElemType::Float32 || x.dims.size() < 2) {
        return std::nullopt;
    }
    const int64_t c = x.dims[1];
    std::vector<std::vector<double>> p;
    for (size_t k = 1; k < 5; k++) {
        const GraphTensor &t = g.tensor(n.inputs[k]);
        if (!t.value || t.type != ElemType::Float32 || t.elements() != c) {
            return std::nullopt;
        }
        p.push_back(*float_values(*t.value));
    }
    const double eps = float(n.float_attr("epsilon", 1e-5));
    BnParams r;
    for (int64_t i = 0; i < c; i++) {
        const float s = float(p[0][i]) / std::sqrt(float(p[3][i]) + float(eps));
        r.s.push_back(s);
        r.shift.push_back(float(p[1][i]) - float(p[2][i]) * s);
    }
    return r;
}

std::string add_constant(Graph &g, const std::string &base, FileTensor v) {
    GraphTensor t;
    t.name = g.fresh_name(base);
    v.name = t.name;
    t.type = v.type;
    t.dims = v.dims;
    t.value = std::move(v);
    const std::string name = t.name;
    g.tensors[name] = std::move(t);
    return name;
}

// Folds into the Conv producing the BN's input; false when that is not possible.
bool fold_into_conv(Graph &g, size_t bn_index, const BnParams &p) {
    const GraphNode &bn = g.nodes[bn_index];
    const GraphTensor &x = g.tensor(bn.inputs[0]);
    if (x.producer < 0 || x.is_output || x.consumers.size() != 1) {
        return false;
    }
    GraphNode &conv = g.nodes[x.producer];
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2) {
        return false;
    }
    const GraphTensor &w = g.tensor(conv.inputs[1]);
    const bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
    if (!w.value || w.type != ElemType::Float32 || w.dims.empty() || w.dims[0] != int64_t(p.s.size()) ||
        (has_bias && !g.tensor(conv.inputs[2]).value)) {
        return false;
    }
    std::vector<double> wv = *float_values(*w.value);
    const int64_t m = w.dims[0], per = w.elements() / m;
    for (int64_t o = 0; o < m; o++) {
        for (int64_t i = 0; i < per; i++) {
            wv[o * per + i] = float(wv[o * per + i]) * float(p.s[o]);
        }
    }
    std::vector<double> b(m, 0.0);
    if (has_bias) {
        b = *float_values(*g.tensor(conv.inputs[2]).value);
    }
    for (int64_t o = 0; o < m; o++) {
        b[o] = float(b[o]) * float(p.s[o]) + float(p.shift[o]);
    }
    const std::string wn = add_constant(g, conv.name + ".bn_weight", tensor_of(ElemType::Float32, w.dims, wv));
    const std::string bname = add_constant(g, conv.name + ".bn_bias", tensor_of(ElemType::Float32, {m}, b));
    GraphNode &c = g.nodes[g.tensor(bn.inputs[0]).producer]; // re-fetched: tensors changed
    c.inputs.resize(3);
    c.inputs[1] = wn;
    c.inputs[2] = bname;
    c.outputs[0] = bn.outputs[0];
    return true;
}

} // namespace

void fold_batchnorm(Graph &g) {
    std::vector<bool> erase(g.nodes.size(), false);
    std::vector<std::pair<size_t, std::vector<GraphNode>>> replace;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const GraphNode &bn = g.nodes[i];
        if (bn.op_type != "BatchNormalization" || !bn.domain.empty()) {
            continue;
        }
        std::optional<BnParams> p = bn_params(g, bn);
        if (!p) {
            continue;
        }
        if (fold_into_conv(g, i, *p)) {
            erase[i] = true;
            continue;
        }
        // Mul and Add by Cx1x..x1 constants.
        const GraphTensor &x = g.tensor(bn.inputs[0]);
        std::vector<int64_t> cdims(x.dims.size() - 1, 1);
        cdims[0] = x.dims[1];
        const std::string s = add_constant(g, bn.name + ".scale", tensor_of(ElemType::Float32, cdims, p->s));
        const std::string sh = add_constant(g, bn.name + ".shift", tensor_of(ElemType::Float32, cdims, p->shift));
        GraphTensor mid = g.tensor(bn.outputs[0]);
        mid.name = g.fresh_name(bn.outputs[0] + ".scaled");
        mid.is_output = false;
        g.tensors[mid.name] = mid;
        GraphNode mul, add;
        mul.name = bn.name + ".mul";
        mul.op_type = "Mul";
        mul.inputs = {bn.inputs[0], s};
        mul.outputs = {mid.name};
        add.name = bn.name + ".add";
        add.op_type = "Add";
        add.inputs = {mid.name, sh};
        add.outputs = {bn.outputs[0]};
        replace.push_back({i, {mul, add}});
    }
    std::vector<GraphNode> nodes;
    size_t r = 0;
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (r < replace.size() && replace[r].first == i) {
            nodes.insert(nodes.end(), replace[r].second.begin(), replace[r].second.end());
            r++;
        } else if (!erase[i]) {
            nodes.push_back(std::move(g.nodes[i]));
        }
    }
    g.nodes = std::move(nodes);
    g.relink();
}

} // namespace tessel::graph
