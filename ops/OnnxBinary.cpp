// ONNX's elementwise operators of two or more inputs with NumPy broadcasting,
// one generator each: onnx_add, onnx_sub, onnx_mul, onnx_div, onnx_pow,
// onnx_prelu, onnx_max, onnx_min (docs/onnx.md).
//
// `shapes` gives every input's ONNX shape, outermost dimension first, inputs
// separated by ';' ("3x4x5;5" is Add of a 3x4x5 tensor and a vector of 5).
// The output's shape is the broadcast of them (ONNX's multidirectional
// broadcasting, which is NumPy's: shapes aligned at their innermost dimension,
// a dimension of 1 stretched to the other's extent); PRelu's slope broadcasts
// to X (unidirectional). An input reads its broadcast dimensions at index 0.
// The ONNX runner (graph/OnnxOps.cpp) first merges neighbouring dimensions that
// broadcast alike (3x4x5 + 5 becomes 12x5 + 1x5), which changes no element's
// position in memory and gives the vector unit longer rows.
//
// Results are ONNX's definitions (onnx/defs/math/defs.cc), with the vector
// unit's operations only (add, sub, mul, div, min, max, exp, log, casts):
//  - Div: floats; on integers only uint8 (ONNX truncates, Halide floors: equal
//    for unsigned values), computed as trunc(float(a) / float(b)), exact for
//    8-bit values; a zero divisor gives 0 (ONNX leaves it undefined).
//  - Pow: |x|^y = exp(y log|x|), log clamped to +-FLT_MAX so that 0^0 and
//    inf^0 are 1; for x < 0 the sign is (-1)^y when y is an integer (y's
//    parity from y/2 - trunc(y/2)), as std::pow. Not ONNX's: a negative base
//    with a non-integer exponent gives +-|x|^y where ONNX gives NaN, and 0 to
//    a negative odd power gives NaN where ONNX gives +-inf.
//  - PRelu: max(x, 0) + slope * min(x, 0) (exact: one term is zero).
// fp16 and bf16 are computed in fp32 and rounded once at the end.

#include "dsl/Generator.h"

#include <cfloat>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace Halide;

enum class B { Add, Sub, Mul, Div, Pow, PRelu, Max, Min };

const char *onnx_name(B op) {
    switch (op) {
    case B::Add: return "Add";
    case B::Sub: return "Sub";
    case B::Mul: return "Mul";
    case B::Div: return "Div";
    case B::Pow: return "Pow";
    case B::PRelu: return "PRelu";
    case B::Max: return "Max";
    case B::Min: return "Min";
    }
    return "?";
}

using Shape = std::vector<int>; // outermost first, as ONNX writes it

std::string shape_text(const Shape &s) {
    std::ostringstream os;
    for (size_t i = 0; i < s.size(); i++) {
        os << (i ? "x" : "") << s[i];
    }
    return os.str();
}

std::vector<Shape> parse_shapes(const std::string &text, const std::string &who) {
    std::vector<Shape> out;
    std::stringstream all(text);
    std::string one;
    while (std::getline(all, one, ';')) {
        Shape s;
        std::stringstream dims(one);
        std::string d;
        while (std::getline(dims, d, 'x')) {
            size_t used = 0;
            int v = 0;
            try {
                v = std::stoi(d, &used);
            } catch (const std::exception &) {
                used = 0;
            }
            if (used != d.size() || d.empty() || v < 1) {
                throw Halide::CompileError(who + ": shapes '" + text + "': '" + one +
                                           "' is not a shape (extents >= 1 joined by x, e.g. 3x4x5)");
            }
            s.push_back(v);
        }
        if (s.empty()) {
            throw Halide::CompileError(who + ": shapes '" + text + "': an empty shape (a scalar is 1)");
        }
        out.push_back(s);
    }
    return out;
}

template <B OP>
class OnnxBinary : public Halide::Generator<OnnxBinary<OP>> {
public:
    Halide::GeneratorParam<std::string> shapes{"shapes", "4096;4096"};
    Halide::GeneratorParam<std::string> dtype{"dtype", "fp32"};

    std::vector<Halide::GeneratorInput<Halide::Buffer<>> *> in;
    Halide::GeneratorOutput<Halide::Buffer<>> *Y = nullptr;

    Type t;
    std::vector<Shape> in_shapes;
    Shape out_shape;
    Func op{"op"};

    std::string who() const { return std::string("onnx ") + onnx_name(OP); }

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        const bool float_only = OP == B::Pow || OP == B::PRelu;
        if (float_only && !t.is_float()) {
            throw Halide::CompileError(who() + ": dtype must be fp32, fp16 or bf16");
        }
        if (OP == B::Div && !t.is_float() && t != UInt(8)) {
            throw Halide::CompileError(who() + ": integer division is supported for uint8 only (ONNX truncates, "
                                               "the NPU floors: the same for unsigned values)");
        }
        in_shapes = parse_shapes(shapes, who());
        const bool variadic = OP == B::Max || OP == B::Min;
        if (variadic ? in_shapes.size() > 8 : in_shapes.size() != 2) {
            throw Halide::CompileError(who() + ": shapes '" + std::string(shapes) + "' gives " +
                                       std::to_string(in_shapes.size()) + " inputs; it takes " +
                                       (variadic ? "1 to 8" : "2"));
        }
        size_t rank = 0;
        for (const Shape &s : in_shapes) {
            rank = std::max(rank, s.size());
        }
        out_shape.assign(rank, 1);
        for (size_t k = 0; k < in_shapes.size(); k++) {
            const Shape &s = in_shapes[k];
            for (size_t j = 0; j < s.size(); j++) {
                int &o = out_shape[rank - s.size() + j];
                if (s[j] != o && s[j] != 1 && o != 1) {
                    throw Halide::CompileError(who() + ": shapes " + std::string(shapes) +
                                               " do not broadcast (dimension " + std::to_string(j) + " of input " +
                                               std::to_string(k) + " is " + std::to_string(s[j]) + ", others " +
                                               std::to_string(o) + ")");
                }
                o = std::max(o, s[j]);
            }
        }
        if (OP == B::PRelu && out_shape != in_shapes[0]) {
            throw Halide::CompileError(who() + ": the slope " + shape_text(in_shapes[1]) +
                                       " must broadcast to X " + shape_text(in_shapes[0]) +
                                       " (unidirectional broadcasting)");
        }
        for (size_t k = 0; k < in_shapes.size(); k++) {
            in.push_back(this->template add_input<Halide::Buffer<>>(std::string(1, char('A' + k)), t,
                                                                   int(in_shapes[k].size())));
        }
        Y = this->template add_output<Halide::Buffer<>>("Y", t, int(rank));
    }

    // Input k at the output's coordinates (innermost first), broadcast dimensions at 0.
    Expr read(size_t k, const std::vector<Var> &v) {
        const Shape &s = in_shapes[k];
        const size_t rank = out_shape.size();
        std::vector<Expr> idx;
        for (size_t d = 0; d < s.size(); d++) { // Halide dimension d = ONNX dimension s.size() - 1 - d
            const int extent = s[s.size() - 1 - d];
            const int out_extent = out_shape[rank - 1 - d];
            idx.push_back(extent == 1 && out_extent != 1 ? Expr(0) : Expr(v[d]));
        }
        Expr e = (*in[k])(idx);
        return t.is_float() ? cast<float>(e) : e;
    }

    std::vector<Var> vars;
    std::vector<Func> stages;
    // e as a Func of its own, read back at the output's coordinates (one short vector
    // computation per stage; a schedule computes it per band, `auto` does).
    Expr stage(const std::string &name, Expr e) {
        Func f{name};
        f(vars) = e;
        stages.push_back(f);
        return f(vars);
    }

    Expr pow_of(Expr x, Expr y) {
        Expr xv = stage("x", x), yv = stage("y", y);
        Expr ax = stage("ax", max(xv, -xv));
        Expr r = stage("r", exp(yv * clamp(log(ax), -FLT_MAX, FLT_MAX)));
        // 1 where x < 0, 0 where x > 0 (1/2 at 0, where r is 0 or 1 and the sign does not matter).
        Expr neg = stage("neg", 0.5f - 0.5f * (xv / max(ax, 1e-30f)));
        // y's parity: y/2 - trunc(y/2) is 0 or +-1/2 for an integer y; beyond 2^24 every fp32 is even.
        Expr half = stage("half", clamp(yv, -16777216.0f, 16777216.0f) * 0.5f);
        Expr frac = stage("frac", half - cast<float>(cast<int>(half)));
        Expr odd = stage("odd", max(frac, -frac) * 2.0f);
        return (1.0f - 2.0f * neg * odd) * r;
    }

    void generate() {
        for (size_t d = 0; d < out_shape.size(); d++) {
            vars.push_back(Var("d" + std::to_string(d)));
        }
        const std::vector<Var> &v = vars;
        Expr a = read(0, v);
        Expr r;
        switch (OP) {
        case B::Add: r = a + read(1, v); break;
        case B::Sub: r = a - read(1, v); break;
        case B::Mul: r = a * read(1, v); break;
        case B::Div:
            if (t.is_float()) {
                r = a / read(1, v);
            } else {
                // uint8: trunc(a / b) in fp32 is exact (the quotient is at least 1/255 from the
                // next integer), which the vector unit computes; b = 0 gives 0 as in Halide.
                Expr b = read(1, v);
                Expr one = Halide::Internal::make_const(t, 1);
                r = cast(t, cast<int>(cast<float>(a) / cast<float>(max(b, one)))) * min(b, one);
            }
            break;
        case B::Pow: r = pow_of(a, read(1, v)); break;
        case B::PRelu: r = max(a, 0.0f) + read(1, v) * min(a, 0.0f); break;
        case B::Max:
        case B::Min:
            r = a;
            for (size_t k = 1; k < in.size(); k++) {
                r = OP == B::Max ? max(r, read(k, v)) : min(r, read(k, v));
            }
            break;
        }
        std::vector<Expr> vs(v.begin(), v.end());
        op(v) = t.is_float() ? cast(t, r) : r;
        (*Y)(v) = op(v);
        for (size_t k = 0; k < in.size(); k++) {
            const Shape &s = in_shapes[k];
            Region est;
            for (size_t d = 0; d < s.size(); d++) {
                est.push_back({0, s[s.size() - 1 - d]});
            }
            in[k]->set_estimates(est);
        }
        Region est;
        for (size_t d = 0; d < out_shape.size(); d++) {
            est.push_back({0, out_shape[out_shape.size() - 1 - d]});
        }
        Y->set_estimates(est);
    }
};

using OnnxAdd = OnnxBinary<B::Add>;
using OnnxSub = OnnxBinary<B::Sub>;
using OnnxMul = OnnxBinary<B::Mul>;
using OnnxDiv = OnnxBinary<B::Div>;
using OnnxPow = OnnxBinary<B::Pow>;
using OnnxPRelu = OnnxBinary<B::PRelu>;
using OnnxMax = OnnxBinary<B::Max>;
using OnnxMin = OnnxBinary<B::Min>;

} // namespace

#define TESSEL_ONNX_SHAPES {"shapes", "4096;4096", "the inputs' ONNX shapes, outermost first, ';' between inputs (3x4x5;5)"}
#define TESSEL_ONNX_ANY {"dtype", "fp32", "element type: fp32, fp16, bf16, int8, uint8, int16, int32"}

TESSEL_REGISTER_GENERATOR(OnnxAdd, onnx_add, "ONNX Add: Y = A + B, broadcasting", {TESSEL_ONNX_SHAPES, TESSEL_ONNX_ANY})
TESSEL_REGISTER_GENERATOR(OnnxSub, onnx_sub, "ONNX Sub: Y = A - B, broadcasting", {TESSEL_ONNX_SHAPES, TESSEL_ONNX_ANY})
TESSEL_REGISTER_GENERATOR(OnnxMul, onnx_mul, "ONNX Mul: Y = A * B, broadcasting", {TESSEL_ONNX_SHAPES, TESSEL_ONNX_ANY})
TESSEL_REGISTER_GENERATOR(OnnxDiv, onnx_div, "ONNX Div: Y = A / B, broadcasting (integers: uint8)",
                          {TESSEL_ONNX_SHAPES, {"dtype", "fp32", "element type: fp32, fp16, bf16, uint8"}})
TESSEL_REGISTER_GENERATOR(OnnxPow, onnx_pow, "ONNX Pow: Y = A ^ B, broadcasting",
                          {TESSEL_ONNX_SHAPES, {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
TESSEL_REGISTER_GENERATOR(OnnxPRelu, onnx_prelu, "ONNX PRelu: Y = A < 0 ? B A : A, B broadcast to A",
                          {TESSEL_ONNX_SHAPES, {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
TESSEL_REGISTER_GENERATOR(OnnxMax, onnx_max, "ONNX Max: elementwise maximum of 1 to 8 inputs, broadcasting",
                          {{"shapes", "4096;4096", "the inputs' ONNX shapes, outermost first, ';' between inputs"},
                           TESSEL_ONNX_ANY})
TESSEL_REGISTER_GENERATOR(OnnxMin, onnx_min, "ONNX Min: elementwise minimum of 1 to 8 inputs, broadcasting",
                          {{"shapes", "4096;4096", "the inputs' ONNX shapes, outermost first, ';' between inputs"},
                           TESSEL_ONNX_ANY})
