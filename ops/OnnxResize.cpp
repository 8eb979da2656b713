// ONNX Resize (and Upsample) as a generator: onnx_resize (docs/onnx.md).
//
// Interpolation is separable: one pass per resized dimension, innermost first, as
// ONNX's reference (onnx/backend/test/case/node/resize.py, interpolate_nd) nests
// it. For each output position o of a dimension, configure() computes in double
// precision what the reference computes: the source coordinate x_ori from the
// coordinate_transformation_mode, the coefficients of `mode` (nearest: the one
// neighbour nearest_mode picks; linear: 2; cubic: 4, with cubic_coeff_a and
// exclude_outside) and the neighbours' indices, clamped into the input (the
// reference pads with the edge). A pass is then
//   pass(..., o, ...) = sum over k of C_k(o) * src(..., I_k(o), ...)   [+ E(o)]
// with I_k and C_k 1-D Funcs of tables of selects on o (constants per position;
// I_k clamped into the input where it is read, for bounds inference) and C_k the
// coefficients; E(o) is the extrapolation value where tf_crop_and_resize maps o
// outside the input (its coefficients are then 0). Nearest reads one neighbour,
// with no arithmetic (exact in every type).
//
// The tables are per position, so the innermost dimension's reads are gathers
// (scalar code on the NPU); the outer dimensions' reads are rows. fp16 and bf16
// are interpolated in fp32 and rounded once.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace Halide;

std::vector<double> parse_doubles(const std::string &text, const std::string &what) {
    std::vector<double> out;
    std::stringstream all(text);
    std::string one;
    while (std::getline(all, one, ';')) {
        size_t used = 0;
        double v = 0;
        try {
            v = std::stod(one, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used != one.size() || one.empty()) {
            throw Halide::CompileError("onnx Resize: " + what + " '" + text + "' is not a list of numbers");
        }
        out.push_back(v);
    }
    return out;
}

struct Taps {
    std::vector<std::vector<int>> idx;     // per output position, per tap
    std::vector<std::vector<double>> coef; // per output position, per tap
    std::vector<bool> outside;             // tf_crop_and_resize: the position extrapolates
};

class OnnxResize : public Halide::Generator<OnnxResize> {
public:
    GeneratorParam<std::string> shape{"shape", "1x256x28x28"};
    GeneratorParam<std::string> out{"out", "1x256x56x56"};
    GeneratorParam<std::string> scales{"scales", ""};
    GeneratorParam<std::string> roi{"roi", ""};
    GeneratorParam<std::string> mode{"mode", "nearest"};
    GeneratorParam<std::string> ctm{"coordinate_transformation_mode", "half_pixel"};
    GeneratorParam<std::string> nearest_mode{"nearest_mode", "round_prefer_floor"};
    GeneratorParam<double> cubic_a{"cubic_coeff_a", -0.75};
    GeneratorParam<int> exclude_outside{"exclude_outside", 0};
    GeneratorParam<double> extrapolation{"extrapolation_value", 0.0};
    GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Input<Buffer<>> *X = nullptr;
    Output<Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> in_shape, out_shape;
    std::vector<double> scale, roi_v;
    std::vector<Taps> taps; // per ONNX dimension (empty: not resized)

    std::vector<double> coeffs(double ratio) const {
        const std::string m = mode;
        if (m == "nearest") {
            const std::string nm = nearest_mode;
            if (ratio == 1) {
                return {0, 1};
            }
            const bool second = nm == "round_prefer_floor" ? ratio > 0.5
                                : nm == "round_prefer_ceil" ? ratio >= 0.5
                                : nm == "floor"             ? false
                                                            : true;
            return {second ? 0.0 : 1.0, second ? 1.0 : 0.0};
        }
        if (m == "linear") {
            return {1 - ratio, ratio};
        }
        const double A = cubic_a, r = ratio, q = 1 - ratio;
        return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
                ((A + 2) * q - (A + 3)) * q * q + 1, ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A};
    }

    Taps table(int j) const {
        const int S = in_shape[j], O = out_shape[j];
        const double sc = scale[j], width = sc * S;
        const std::string c = ctm;
        Taps tp;
        for (int x = 0; x < O; x++) {
            double xo = 0;
            bool outside = false;
            if (c == "align_corners") {
                xo = width == 1 ? 0 : x * double(S - 1) / (width - 1);
            } else if (c == "asymmetric") {
                xo = x / sc;
            } else if (c == "tf_crop_and_resize") {
                const double r0 = roi_v[j], r1 = roi_v[in_shape.size() + j];
                xo = width == 1 ? (r1 - r0) * (S - 1) / 2 : x * (r1 - r0) * (S - 1) / (width - 1);
                xo += r0 * (S - 1);
                outside = xo < 0 || xo > S - 1;
            } else if (c == "pytorch_half_pixel") {
                xo = width == 1 ? -0.5 : (x + 0.5) / sc - 0.5;
            } else if (c == "tf_half_pixel_for_nn") {
                xo = (x + 0.5) / sc;
            } else {
                xo = (x + 0.5) / sc - 0.5;
            }
            std::vector<int> idx;
            std::vector<double> cf;
            if (!outside) {
                const double xi = std::floor(xo);
                cf = coeffs(xo == xi ? 1.0 : xo - xi);
                const int n = static_cast<int>(cf.size()), pad = (n + 1) / 2, limit = S + 2 * pad;
                // The n indices nearest to x_ori in the edge-padded input, ties to the smaller.
                std::vector<int> all(limit);
                for (int i = 0; i < limit; i++) {
                    all[i] = i;
                }
                const double xp = xo + pad;
                std::stable_sort(all.begin(), all.end(), [&](int a, int b) {
                    const double da = std::abs(xp - a), db = std::abs(xp - b);
                    return da < db || (da == db && a < b);
                });
                all.resize(n);
                std::sort(all.begin(), all.end());
                double sum = 0;
                for (int i = 0; i < n; i++) {
                    idx.push_back(all[i] - pad);
                    if (exclude_outside && (idx[i] < 0 || idx[i] >= S)) {
                        cf[i] = 0;
                    }
                    sum += cf[i];
                }
                if (exclude_outside) {
                    for (double &v : cf) {
                        v /= sum;
                    }
                }
                for (int &i : idx) {
                    i = std::clamp(i, 0, S - 1);
                }
                if (std::string(mode) == "nearest") { // the neighbour whose coefficient is 1
                    const int pick = cf[0] == 1 ? idx[0] : idx[1];
                    idx = {pick};
                    cf = {1};
                }
            } else {
                const size_t n = std::string(mode) == "nearest" ? 1 : std::string(mode) == "linear" ? 2 : 4;
                idx.assign(n, 0);
                cf.assign(n, 0);
            }
            tp.idx.push_back(idx);
            tp.coef.push_back(cf);
            tp.outside.push_back(outside);
        }
        return tp;
    }

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        const std::string m = mode, c = ctm, nm = nearest_mode;
        if (m != "nearest" && m != "linear" && m != "cubic") {
            throw Halide::CompileError("onnx Resize: mode must be nearest, linear or cubic, got '" + m + "'");
        }
        if (c != "half_pixel" && c != "asymmetric" && c != "align_corners" && c != "pytorch_half_pixel" &&
            c != "tf_crop_and_resize" && c != "tf_half_pixel_for_nn") {
            throw Halide::CompileError("onnx Resize: coordinate_transformation_mode '" + c + "' is not one ONNX defines");
        }
        if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil") {
            throw Halide::CompileError("onnx Resize: nearest_mode '" + nm + "' is not one ONNX defines");
        }
        if (m != "nearest" && !t.is_float()) {
            throw Halide::CompileError("onnx Resize: " + m + " interpolation takes fp32, fp16 or bf16");
        }
        in_shape = tessel::ops::parse_int_list(shape, 'x', "Resize", "shape", 1);
        out_shape = tessel::ops::parse_int_list(out, 'x', "Resize", "out", 1);
        const size_t r = in_shape.size();
        if (out_shape.size() != r) {
            throw Halide::CompileError("onnx Resize: shape and out differ in rank");
        }
        if (std::string(scales).empty()) {
            for (size_t j = 0; j < r; j++) {
                scale.push_back(double(out_shape[j]) / in_shape[j]);
            }
        } else {
            scale = parse_doubles(scales, "scales");
        }
        if (!std::string(roi).empty()) {
            roi_v = parse_doubles(roi, "roi");
        }
        if (scale.size() != r || (c == "tf_crop_and_resize" && roi_v.size() != 2 * r)) {
            throw Halide::CompileError("onnx Resize: scales needs " + std::to_string(r) + " entries (and roi " +
                                       std::to_string(2 * r) + " with tf_crop_and_resize)");
        }
        for (size_t j = 0; j < r; j++) {
            if (scale[j] <= 0) {
                throw Halide::CompileError("onnx Resize: scale " + std::to_string(scale[j]) + " is not positive");
            }
            Taps tp = table(static_cast<int>(j));
            bool identity = in_shape[j] == out_shape[j];
            for (int x = 0; x < out_shape[j] && identity; x++) {
                for (size_t k = 0; k < tp.idx[x].size(); k++) {
                    identity = identity && !tp.outside[x] && (tp.coef[x][k] == 0 || (tp.coef[x][k] == 1 && tp.idx[x][k] == x));
                }
            }
            taps.push_back(identity ? Taps{} : tp);
        }
        X = add_input<Buffer<>>("X", t, int(r));
        Y = add_output<Buffer<>>("Y", t, int(r));
    }

    void generate() {
        const int r = static_cast<int>(in_shape.size());
        std::vector<Var> v;
        for (int d = 0; d < r; d++) { // Halide dimension d is ONNX dimension r - 1 - d
            v.push_back(Var("d" + std::to_string(d)));
        }
        std::vector<Expr> at(v.begin(), v.end());
        const bool nearest = std::string(mode) == "nearest";
        const Type ct = nearest ? t : Float(32);
        Func cur;
        for (int d = 0; d < r; d++) {
            const int j = r - 1 - d;
            const Taps &tp = taps[j];
            if (tp.idx.empty()) {
                continue;
            }
            const int O = out_shape[j], n = static_cast<int>(tp.idx[0].size());
            Expr sum;
            for (int k = 0; k < n; k++) {
                std::vector<int> index(O);
                std::vector<float> coef(O);
                for (int x = 0; x < O; x++) {
                    index[x] = tp.idx[x][k];
                    coef[x] = static_cast<float>(tp.coef[x][k]);
                }
                // The index as a Func of its own (clamped where it is read, which gives bounds
                // inference the input's range): the pass then loads it rather than evaluating a
                // tree of selects per lane of its (scalar) gather.
                Func ix("index_" + std::to_string(d) + "_" + std::to_string(k));
                ix(v[d]) = tessel::ops::table_select(v[d], index);
                std::vector<Expr> idx = at;
                idx[d] = clamp(ix(v[d]), 0, in_shape[j] - 1);
                Expr val = cur.defined() ? cur(idx) : cast(ct, (*X)(idx));
                if (!nearest) {
                    Func cf("coef_" + std::to_string(d) + "_" + std::to_string(k));
                    cf(v[d]) = tessel::ops::table_select(v[d], coef);
                    val = cf(v[d]) * val;
                }
                sum = k == 0 ? val : sum + val;
            }
            if (std::count(tp.outside.begin(), tp.outside.end(), true)) {
                std::vector<float> e(O);
                for (int x = 0; x < O; x++) {
                    e[x] = tp.outside[x] ? static_cast<float>(double(extrapolation)) : 0.0f;
                }
                Func ex("extrapolated_" + std::to_string(d));
                ex(v[d]) = tessel::ops::table_select(v[d], e);
                sum = sum + ex(v[d]);
            }
            Func pass("resize_" + std::to_string(d));
            pass(v) = sum;
            cur = pass;
        }
        Func res("res");
        res(v) = cur.defined() ? cast(t, cur(at)) : (*X)(at);
        (*Y)(v) = res(v);
        X->set_estimates(tessel::ops::onnx_region(in_shape));
        Y->set_estimates(tessel::ops::onnx_region(out_shape));
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxResize, onnx_resize,
                          "ONNX Resize: nearest, linear or cubic interpolation, separable, ONNX's coordinate modes",
                          {{"shape", "1x256x28x28", "the input's shape, outermost first"},
                           {"out", "1x256x56x56", "the output's shape"},
                           {"scales", "", "the scale per dimension, ';' between (empty: out / shape)"},
                           {"roi", "", "tf_crop_and_resize's region: every start, then every end"},
                           {"mode", "nearest", "nearest, linear or cubic"},
                           {"coordinate_transformation_mode", "half_pixel",
                            "half_pixel, asymmetric, align_corners, pytorch_half_pixel, tf_crop_and_resize, "
                            "tf_half_pixel_for_nn"},
                           {"nearest_mode", "round_prefer_floor", "round_prefer_floor, round_prefer_ceil, floor, ceil"},
                           {"cubic_coeff_a", "-0.75", "the cubic kernel's A"},
                           {"exclude_outside", "0", "1: coefficients of neighbours outside the input are 0, renormalised"},
                           {"extrapolation_value", "0", "tf_crop_and_resize's value outside the input"},
                           {"dtype", "fp32", "element type (linear and cubic: fp32, fp16, bf16)"}})
