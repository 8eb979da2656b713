// ONNX Pad as a generator: onnx_pad (docs/onnx.md).
//
// `shape` is the input's shape as the runner views it (outermost first; leading
// dimensions without padding merged), `pads` every dimension's begin then every
// end (ONNX's order; negative values crop), `mode` constant, reflect or edge,
// `value` the constant. Output position t of a dimension reads input position
// t - begin, brought into the input:
//  - edge: clamp(t - begin, 0, S - 1);
//  - reflect: u = t - begin, min(max(u, -u), 2 (S - 1) - u) (mirrored about the
//    first and the last element, which are not repeated; ONNX asks pads < S);
//  - constant, no pad negative, a padded image of at most 32 KiB: the constant everywhere (the pure definition), then X
//    copied into the interior by an update over the padded dimensions (a reduction domain
//    `p`; the other dimensions stay pure, so a band copies only its part): no clamp and no
//    mask, a vector fill and a vector copy (scheduler/AutoSchedule's vector form);
//  - constant otherwise: clamped as edge, then 0 outside the input (tessel::ops::zero_outside:
//    min/max with per-position 1-D Funcs, exact), plus value * (1 - inside_1(t1) *
//    inside_2(t2) ...) when value is not 0 (inside_d is 1 inside, 0 outside).
// The index expressions carry likely(): Halide partitions each row's loop so that
// only the vectors at the border carry the clamp (scalar code), the interior
// reads plain runs. The vector unit has no select; the masks' selects are on
// 1-D Funcs of one row's or one column's length.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <string>
#include <vector>

namespace {

using namespace Halide;

class OnnxPad : public Halide::Generator<OnnxPad> {
public:
    GeneratorParam<std::string> shape{"shape", "64x56x56"};
    GeneratorParam<std::string> pads{"pads", "0;1;1;0;1;1"};
    GeneratorParam<std::string> mode{"mode", "constant"};
    GeneratorParam<double> value{"value", 0.0};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> in_shape, pb, pe;
    Func op{"op"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        in_shape = tessel::ops::parse_int_list(shape, 'x', "Pad", "shape", 1);
        std::vector<int> p = tessel::ops::parse_int_list(pads, ';', "Pad", "pads");
        const size_t r = in_shape.size();
        const std::string m = mode;
        if (m != "constant" && m != "reflect" && m != "edge") {
            throw Halide::CompileError("onnx Pad: mode must be constant, reflect or edge, got '" + m + "'");
        }
        if (p.size() != 2 * r) {
            throw Halide::CompileError("onnx Pad: pads '" + std::string(pads) + "' needs " + std::to_string(2 * r) +
                                       " entries (every begin, then every end) for a rank-" + std::to_string(r) +
                                       " shape");
        }
        pb.assign(p.begin(), p.begin() + r);
        pe.assign(p.begin() + r, p.end());
        for (size_t j = 0; j < r; j++) {
            if (in_shape[j] + pb[j] + pe[j] < 1) {
                throw Halide::CompileError("onnx Pad: dimension " + std::to_string(j) + " (extent " +
                                           std::to_string(in_shape[j]) + ") is cropped to nothing");
            }
            if (m == "reflect" && (pb[j] >= in_shape[j] || pe[j] >= in_shape[j])) {
                throw Halide::CompileError("onnx Pad: reflect pads of dimension " + std::to_string(j) +
                                           " must be below its extent " + std::to_string(in_shape[j]));
            }
        }
        X = add_input<Buffer<>>("X", t, int(r));
        Y = add_output<Buffer<>>("Y", t, int(r));
    }

    void generate() {
        const int r = static_cast<int>(in_shape.size());
        const std::string m = mode;
        std::vector<Var> v;
        std::vector<Expr> idx;
        std::vector<std::pair<int, int>> padded; // (Halide dimension, ONNX dimension) of constant padding
        for (int d = 0; d < r; d++) { // Halide dimension d is ONNX dimension r - 1 - d
            const int j = r - 1 - d, S = in_shape[j];
            v.push_back(Var("d" + std::to_string(d)));
            Expr u = v[d] - pb[j];
            if (pb[j] <= 0 && pe[j] <= 0) {
                idx.push_back(u); // cropped or untouched: every position reads the input
            } else if (m == "reflect") {
                // (clamped as well, which changes nothing but gives bounds inference the input's range)
                idx.push_back(clamp(min(max(likely(u), -u), 2 * (S - 1) - u), 0, S - 1));
            } else {
                idx.push_back(clamp(likely(u), 0, S - 1));
                if (m == "constant") {
                    padded.emplace_back(d, j);
                }
            }
        }
        Expr val = (*X)(idx), all;
        for (auto [d, j] : padded) {
            const std::string n = std::to_string(d);
            val = tessel::ops::zero_outside(val, v[d], pb[j], in_shape[j], t, n);
            Expr in = tessel::ops::zero_outside(cast(t, 1), v[d], pb[j], in_shape[j], t, "inside_" + n);
            all = all.defined() ? all * in : in;
        }
        const double c = value;
        if (all.defined() && c != 0) {
            Expr cv = cast(t, Expr(c));
            val = val + cv * (cast(t, 1) - all);
        }
        // The fill-and-copy form computes a whole step of the unpadded outer dimensions (one
        // channel's padded image) at once, so it is taken only where that is at most 32 KiB
        // (the vector levels hold it double-buffered); larger images take the clamped form,
        // which a schedule can cut into rows.
        bool fill_copy = m == "constant" && !padded.empty();
        int64_t step_bytes = t.bytes();
        for (int d = 0; d < r; d++) {
            const int j = r - 1 - d;
            fill_copy = fill_copy && pb[j] >= 0 && pe[j] >= 0;
            if (pb[j] != 0 || pe[j] != 0) {
                step_bytes *= in_shape[j] + pb[j] + pe[j];
            }
        }
        fill_copy = fill_copy && step_bytes <= 32 * 1024;
        if (fill_copy) {
            // The constant everywhere, then the input copied into the interior: no clamp, no
            // mask, and a copy that is a plain block transfer.
            // The reduction covers the padded dimensions only; the others stay pure variables,
            // so that a band of them copies only its own part.
            Region box;
            for (int d = 0; d < r; d++) {
                const int j = r - 1 - d;
                if (pb[j] != 0 || pe[j] != 0) {
                    box.push_back({0, in_shape[j]});
                }
            }
            RDom rx(box, "p");
            std::vector<Expr> at, from;
            for (int d = 0, k = 0; d < r; d++) {
                const int j = r - 1 - d;
                if (pb[j] != 0 || pe[j] != 0) {
                    at.push_back(rx[k] + pb[j]);
                    from.push_back(rx[k]);
                    k++;
                } else {
                    at.push_back(v[d]);
                    from.push_back(v[d]);
                }
            }
            op(v) = cast(t, Expr(double(value)));
            op(at) = (*X)(from);
            // Without a schedule op is computed once, at root: Halide's default for a Func
            // with an update is its consumer's innermost loop, where this update (which writes
            // the whole interior) would need a buffer of a size that is not constant. A
            // schedule's compute_at replaces this.
            op.compute_root();
        } else {
            op(v) = val;
        }
        (*Y)(v) = op(v);
        std::vector<int> out_shape;
        for (int j = 0; j < r; j++) {
            out_shape.push_back(in_shape[j] + pb[j] + pe[j]);
        }
        X->set_estimates(tessel::ops::onnx_region(in_shape));
        Y->set_estimates(tessel::ops::onnx_region(out_shape));
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxPad, onnx_pad, "ONNX Pad: constant, reflect or edge padding (negative pads crop)",
                          {{"shape", "64x56x56", "the input's shape, outermost first"},
                           {"pads", "0;1;1;0;1;1", "every dimension's begin, then every end, ';' between"},
                           {"mode", "constant", "constant, reflect or edge"},
                           {"value", "0", "the constant of mode constant"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}})
