// ONNX's reductions over chosen axes, one generator each: onnx_reduce_mean,
// onnx_reduce_sum, onnx_reduce_max, onnx_reduce_min (docs/onnx.md).
//
// `shape` is the tensor as the ONNX runner (graph/OnnxOpsReduce.cpp) views it,
// outermost first, with neighbouring dimensions that are all reduced or all kept
// merged and extent-1 dimensions dropped (ReduceMean of 1x64x56x56 over H and W
// is 64x3136 with axis 1 reduced); `axes` lists the reduced dimensions of that
// view (';' between). The output has the view's rank with the reduced
// dimensions 1 (64x1): `--schedule auto` bands an output and the inputs of its
// rank along the same outermost dimension, which then holds whole input rows.
// keepdims is the runner's shape function.
//
// The reduction runs in stages, one per reduced dimension, innermost first:
// each stage is a Func with one update over one reduction variable, so that a
// schedule (`--schedule auto`) can vectorise it on its own: the innermost
// reduced dimension across the reduction (a vector reduction over a dense row),
// an outer one across the kept rows beside it. Sums and means accumulate in
// fp32 for float types (fp16 and bf16 rounded once at the end) and in the
// element type for integers (wrapping, which is ONNX's int64 sum modulo the
// type). Mean is the fp32 sum divided by the element count (floats only).
// Max starts from the type's lowest finite value (a row of -inf gives the
// lowest float, not -inf). The vector unit reduces with sum and max only, so
// Min is c - max(c - x): c = 0 for floats (exact negation), -1 for signed
// integers and the type's maximum for unsigned ones (c - x reverses the order
// without overflow).

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace Halide;

enum class R { Mean, Sum, Max, Min };

const char *onnx_name(R op) {
    switch (op) {
    case R::Mean: return "ReduceMean";
    case R::Sum: return "ReduceSum";
    case R::Max: return "ReduceMax";
    case R::Min: return "ReduceMin";
    }
    return "?";
}

template <R OP>
class OnnxReduce : public Halide::Generator<OnnxReduce<OP>> {
public:
    Halide::GeneratorParam<std::string> shape{"shape", "64x3136"};
    Halide::GeneratorParam<std::string> axes{"axes", "1"};
    Halide::GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Halide::GeneratorInput<Halide::Buffer<>> *X = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> dims;   // the view, outermost first
    std::set<int> reduced;   // indices into dims
    std::vector<int> kept;   // indices into dims of the kept dimensions, outermost first
    std::vector<Func> stages;
    Func op{"op"};

    std::string who() const { return std::string("onnx ") + onnx_name(OP); }

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (OP == R::Mean && !t.is_float()) {
            throw Halide::CompileError(who() + ": dtype must be fp32, fp16 or bf16 (a mean of integers is not "
                                               "supported)");
        }
        dims = tessel::ops::parse_int_list(shape, 'x', onnx_name(OP), "shape", 1);
        for (int a : tessel::ops::parse_int_list(axes, ';', onnx_name(OP), "axes", 0)) {
            if (a >= static_cast<int>(dims.size()) || !reduced.insert(a).second) {
                throw Halide::CompileError(who() + ": axes '" + std::string(axes) + "' must name distinct dimensions of " +
                                           "shape " + std::string(shape) + " (0 to " + std::to_string(dims.size() - 1) +
                                           ")");
            }
        }
        if (reduced.empty()) {
            throw Halide::CompileError(who() + ": axes is empty (the runner maps a reduction over no axis to a copy)");
        }
        for (int d = 0; d < static_cast<int>(dims.size()); d++) {
            if (!reduced.count(d)) {
                kept.push_back(d);
            }
        }
        X = this->template add_input<Halide::Buffer<>>("X", t, int(dims.size()));
        Y = this->template add_output<Halide::Buffer<>>("Y", t, int(dims.size()));
    }

    // The accumulator's type and the value each element contributes.
    Type acc_type() const { return t.is_float() ? Float(32) : t; }
    Expr flip_constant() const {
        if (t.is_float()) {
            return Expr(0.0f);
        }
        return t.is_uint() ? t.max() : Halide::Internal::make_const(t, -1);
    }
    Expr contribution(Expr x) const {
        Expr v = t.is_float() ? cast<float>(x) : x;
        return OP == R::Min ? cast(acc_type(), flip_constant() - v) : v;
    }

    void generate() {
        const int rank = static_cast<int>(dims.size());
        // One Var per view dimension, named by it (the same name in every Func).
        std::vector<Var> var;
        for (int d = 0; d < rank; d++) {
            var.push_back(Var("d" + std::to_string(d)));
        }
        // The current stage reads its producer at these view dimensions (outermost first);
        // the producer's arguments are the remaining ones, innermost first.
        std::vector<int> remaining(rank);
        for (int d = 0; d < rank; d++) {
            remaining[d] = d;
        }
        auto args_of = [&](const std::vector<int> &dims_left, int at, Expr r) {
            std::vector<Expr> a;
            for (auto it = dims_left.rbegin(); it != dims_left.rend(); ++it) {
                a.push_back(*it == at ? r : Expr(var[*it]));
            }
            return a;
        };
        std::function<Expr(const std::vector<Expr> &)> producer = [&](const std::vector<Expr> &a) {
            return contribution((*X)(a));
        };
        Expr identity = OP == R::Max || OP == R::Min ? acc_type().min() : Halide::Internal::make_zero(acc_type());
        if (acc_type().is_float() && (OP == R::Max || OP == R::Min)) {
            identity = Expr(std::numeric_limits<float>::lowest());
        }
        for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
            const int d = *it;
            std::vector<int> left;
            for (int k : remaining) {
                if (k != d) {
                    left.push_back(k);
                }
            }
            Func s("s" + std::to_string(stages.size()));
            std::vector<Var> pure;
            for (auto k = left.rbegin(); k != left.rend(); ++k) {
                pure.push_back(var[*k]);
            }
            RDom r(0, dims[d], "r" + std::to_string(stages.size()));
            Expr in = producer(args_of(remaining, d, r));
            s(pure) = identity;
            s(pure) = OP == R::Sum || OP == R::Mean ? s(pure) + in : max(s(pure), in);
            stages.push_back(s);
            remaining = left;
            producer = [s](const std::vector<Expr> &a) mutable { return s(a); };
        }
        std::vector<Expr> out_args;
        for (auto k = kept.rbegin(); k != kept.rend(); ++k) {
            out_args.push_back(var[*k]);
        }
        const std::vector<Var> out_vars(var.rbegin(), var.rend());
        Expr v = producer(out_args);
        int64_t count = 1;
        for (int d : reduced) {
            count *= dims[d];
        }
        if (OP == R::Mean) {
            v = v / static_cast<float>(count);
        } else if (OP == R::Min) {
            v = flip_constant() - v;
        }
        op(out_vars) = cast(t, v);
        (*Y)(out_vars) = op(out_vars);
        Region in_est, out_est;
        for (int d = rank - 1; d >= 0; d--) {
            in_est.push_back({0, dims[d]});
        }
        for (int d = rank - 1; d >= 0; d--) {
            out_est.push_back({0, reduced.count(d) ? 1 : dims[d]});
        }
        X->set_estimates(in_est);
        Y->set_estimates(out_est);
    }
};

using OnnxReduceMean = OnnxReduce<R::Mean>;
using OnnxReduceSum = OnnxReduce<R::Sum>;
using OnnxReduceMax = OnnxReduce<R::Max>;
using OnnxReduceMin = OnnxReduce<R::Min>;

} // namespace

#define TESSEL_ONNX_REDUCE_PARAMS(DTYPES)                                                                         \
    {{"shape", "64x3136", "the input's view, outermost first (neighbouring reduced or kept dimensions merged)"}, \
     {"axes", "1", "the reduced dimensions of the view, ';' between"},                                          \
     {"dtype", "fp32", "element type: " DTYPES}}
#define TESSEL_ONNX_ALL_TYPES "fp32, fp16, bf16, int8, uint8, int16, int32"

TESSEL_REGISTER_GENERATOR(OnnxReduceMean, onnx_reduce_mean, "ONNX ReduceMean: the mean over the given axes",
                          TESSEL_ONNX_REDUCE_PARAMS("fp32, fp16, bf16"))
TESSEL_REGISTER_GENERATOR(OnnxReduceSum, onnx_reduce_sum, "ONNX ReduceSum: the sum over the given axes",
                          TESSEL_ONNX_REDUCE_PARAMS(TESSEL_ONNX_ALL_TYPES))
TESSEL_REGISTER_GENERATOR(OnnxReduceMax, onnx_reduce_max, "ONNX ReduceMax: the maximum over the given axes",
                          TESSEL_ONNX_REDUCE_PARAMS(TESSEL_ONNX_ALL_TYPES))
TESSEL_REGISTER_GENERATOR(OnnxReduceMin, onnx_reduce_min, "ONNX ReduceMin: the minimum over the given axes",
                          TESSEL_ONNX_REDUCE_PARAMS(TESSEL_ONNX_ALL_TYPES))
