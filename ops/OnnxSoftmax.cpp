// ONNX Softmax and LogSoftmax along one axis (opset 13) as generators:
// onnx_softmax, onnx_logsoftmax (docs/onnx.md).
//
// `shape` is "OUTERxA" or "OUTERxAxINNER": the tensor as the ONNX runner
// (graph/OnnxOpsReduce.cpp) views it, the dimensions before the axis merged
// into OUTER, the axis A, the dimensions after it merged into INNER (omitted
// when 1, so that the softmax of the last axis reads dense rows). Opsets 11 and
// 12 flatten the tensor at the axis into 2-D and take the softmax of each row:
// the runner gives them as OUTERxA with A the flattened rest.
//
// In fp32 (fp16 and bf16 rounded once at the end), as ONNX's reference:
//   m = max over the axis of x                 (rowmax; the lowest finite float as identity)
//   e = exp(x - m)                             (expd)
//   s = sum over the axis of e                 (rowsum)
//   Softmax = e / s,  LogSoftmax = (x - m) - log(s)   (in this order: below)
// Each statistic is its own Func with one update over one reduction variable:
// `--schedule auto` vectorises it across the axis when the axis is innermost
// (a vector reduction over a dense row) and across INNER otherwise.

#include "dsl/Generator.h"
#include "ops/OnnxParams.h"

#include <limits>
#include <string>
#include <vector>

namespace {

using namespace Halide;

template <bool LOG>
class OnnxSoftmax : public Halide::Generator<OnnxSoftmax<LOG>> {
public:
    Halide::GeneratorParam<std::string> shape{"shape", "1536x128"};
    Halide::GeneratorParam<std::string> dtype{"dtype", "fp32"};

    Halide::GeneratorInput<Halide::Buffer<>> *X = nullptr;
    Halide::GeneratorOutput<Halide::Buffer<>> *Y = nullptr;

    Type t;
    std::vector<int> dims; // OUTER, A[, INNER]
    Func rowmax{"rowmax"}, expd{"expd"}, rowsum{"rowsum"}, shifted{"shifted"}, op{"op"};

    const char *name() const { return LOG ? "LogSoftmax" : "Softmax"; }

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        if (!t.is_float()) {
            throw Halide::CompileError(std::string("onnx ") + name() + ": dtype must be fp32, fp16 or bf16");
        }
        dims = tessel::ops::parse_int_list(shape, 'x', name(), "shape", 1);
        if (dims.size() != 2 && dims.size() != 3) {
            throw Halide::CompileError(std::string("onnx ") + name() + ": shape '" + std::string(shape) +
                                       "' must be OUTERxA or OUTERxAxINNER");
        }
        X = this->template add_input<Halide::Buffer<>>("X", t, int(dims.size()));
        Y = this->template add_output<Halide::Buffer<>>("Y", t, int(dims.size()));
    }

    void generate() {
        const bool inner = dims.size() == 3;
        Var i("i"), a("a"), o("o");
        RDom r(0, dims[1], "r");
        // Halide order: (i, a, o) with an inner dimension, else (a, o).
        auto at = [&](const Func &f, Expr along) {
            return inner ? f(i, along, o) : f(along, o);
        };
        auto x = [&](Expr along) { return cast<float>(inner ? (*X)(i, along, o) : (*X)(along, o)); };
        std::vector<Var> row = inner ? std::vector<Var>{i, o} : std::vector<Var>{o};
        std::vector<Var> all = inner ? std::vector<Var>{i, a, o} : std::vector<Var>{a, o};
        rowmax(row) = std::numeric_limits<float>::lowest();
        rowmax(row) = max(rowmax(row), x(r));
        expd(all) = exp(x(a) - rowmax(row));
        rowsum(row) = 0.0f;
        rowsum(row) += at(expd, r);
        if (LOG) {
            // (x - m) - log(s), the subtraction of log(s) an update of its own: in one
            // expression Halide's vector simplifier (and LLVM's fast math on the CPU)
            // reassociates it into x - (m + log(s)), which loses x's low bits when |x| is
            // large (an error of 2.4e-4 in test_logsoftmax_large_number, inputs 1e4).
            shifted(all) = x(a) - rowmax(row);
            shifted(all) = shifted(all) - log(rowsum(row));
            op(all) = cast(t, shifted(all));
        } else {
            op(all) = cast(t, expd(all) / rowsum(row));
        }
        (*Y)(all) = op(all);
        Region est;
        for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
            est.push_back({0, *it});
        }
        X->set_estimates(est);
        Y->set_estimates(est);
    }
};

using OnnxSoftmaxOp = OnnxSoftmax<false>;
using OnnxLogSoftmaxOp = OnnxSoftmax<true>;

} // namespace

TESSEL_REGISTER_GENERATOR(OnnxSoftmaxOp, onnx_softmax, "ONNX Softmax along one axis, fp32 statistics",
                          {{"shape", "1536x128", "OUTERxA or OUTERxAxINNER: the axis A between the merged "
                                                 "dimensions before and after it"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
TESSEL_REGISTER_GENERATOR(OnnxLogSoftmaxOp, onnx_logsoftmax, "ONNX LogSoftmax along one axis, fp32 statistics",
                          {{"shape", "1536x128", "OUTERxA or OUTERxAxINNER: the axis A between the merged "
                                                 "dimensions before and after it"},
                           {"dtype", "fp32", "element type: fp32, fp16, bf16"}})
