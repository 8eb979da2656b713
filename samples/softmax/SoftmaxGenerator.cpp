// Row softmax over the innermost dimension of a 2-D input:
//   m[y]      = max over x of in[y, x]                    (fp32)
//   e[y, x]   = exp(in[y, x] - m[y])                      (fp32)
//   s[y]      = sum over x of e[y, x]                     (fp32, in increasing x)
//   out[y, x] = e[y, x] / s[y], rounded to the input type
// In Halide order the input is in(x, y): x (COLS) innermost, y (ROWS) outer.
//
// Each statistic is its own Func so that a schedule can place every one of
// them in the vector unit's level and vectorise it: the row reductions
// ("rowmax", "rowsum": pure init + update over the RDom "r") vectorise across
// rows (strided loads of the tile), the elementwise stages ("expd", "norm")
// across columns (dense loads, the row statistic broadcast). The output is a
// plain copy of "norm", so its tile is written back by one DMA.

#include "dsl/Generator.h"

#include <limits>

namespace {

using namespace Halide;

class Softmax : public Halide::Generator<Softmax> {
public:
    GeneratorParam<int> ROWS{"ROWS", 64};
    GeneratorParam<int> COLS{"COLS", 256};
    GeneratorParam<std::string> dtype{"dtype", "fp16"};

    Input<Buffer<>> *in = nullptr;
    Output<Buffer<>> out{"out", 2};

    Type t;
    Func rowmax{"rowmax"}, expd{"expd"}, rowsum{"rowsum"}, norm{"norm"};

    void configure() {
        tessel::DType d = tessel::parse_dtype_param(dtype, "dtype");
        if (d != tessel::DType::FP16 && d != tessel::DType::FP32) {
            throw Halide::CompileError("softmax: dtype must be fp16 or fp32 (got " + std::string(dtype) + ")");
        }
        if (ROWS < 1 || COLS < 1) {
            throw Halide::CompileError("softmax: ROWS and COLS must be positive");
        }
        t = tessel::halide_type(d);
        in = add_input<Buffer<>>("in", t, 2);
    }

    void generate() {
        Var x("x"), y("y");
        RDom r(0, COLS, "r");
        // The lowest finite float (not -inf) as the identity of max: every
        // input is finite, and a machine without infinities handles it too.
        rowmax(y) = std::numeric_limits<float>::lowest();
        rowmax(y) = max(rowmax(y), cast<float>((*in)(r, y)));
        expd(x, y) = exp(cast<float>((*in)(x, y)) - rowmax(y));
        rowsum(y) = 0.0f;
        rowsum(y) += expd(r, y);
        norm(x, y) = cast(t, expd(x, y) / rowsum(y));
        out(x, y) = norm(x, y);

        in->set_estimates({{0, COLS}, {0, ROWS}});
        out.set_estimates({{0, COLS}, {0, ROWS}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Softmax, softmax, "row softmax over the innermost dimension, fp32 statistics",
                          {{"ROWS", "64", "rows (independent softmaxes)"},
                           {"COLS", "256", "columns (the softmax length, innermost)"},
                           {"dtype", "fp16", "element type of in and out: fp16 or fp32"}})
