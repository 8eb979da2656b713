// 2-D pooling over NHWC: a K x K window with stride S, max or average, on
// int8/uint8 (average rounds half up in int32) or fp16/fp32 (average in fp32).
// The output is the valid region.

#include "dsl/Generator.h"

namespace {

using namespace Halide;

class Pooling : public Halide::Generator<Pooling> {
public:
    GeneratorParam<int> N{"N", 1};
    GeneratorParam<int> H{"H", 8};
    GeneratorParam<int> W{"W", 8};
    GeneratorParam<int> C{"C", 32};
    GeneratorParam<int> K{"K", 2};
    GeneratorParam<int> stride{"stride", 2};
    GeneratorParam<std::string> op{"op", "max"};
    GeneratorParam<std::string> dtype{"dtype", "int8"};

    Input<Buffer<>> *in = nullptr;
    Output<Buffer<>> out{"out", 4};

    Type t;
    Func pool{"pool"}, avg{"avg"};

    void configure() {
        t = tessel::halide_type(tessel::parse_dtype_param(dtype, "dtype"));
        const std::string o = op;
        if (o != "max" && o != "avg") {
            throw Halide::CompileError("pooling: op must be max or avg, got " + o);
        }
        if (K < 1 || stride < 1) {
            throw Halide::CompileError("pooling: K and stride must be positive");
        }
        in = add_input<Buffer<>>("in", t, 4);
    }

    void generate() {
        Var c("c"), x("x"), y("y"), n("n");
        const int k = K, st = stride;
        RDom r(0, k, 0, k, "r");
        Expr v = (*in)(c, x * st + r.x, y * st + r.y, n);
        if (std::string(op) == "max") {
            pool(c, x, y, n) = t.min();
            pool(c, x, y, n) = max(pool(c, x, y, n), v);
            out(c, x, y, n) = pool(c, x, y, n);
        } else {
            Type acc = t.is_float() ? Float(32) : Int(32);
            pool(c, x, y, n) = cast(acc, 0);
            pool(c, x, y, n) += cast(acc, v);
            Expr area = cast(acc, k * k);
            // The result in its own Func and out a copy of it: a schedule computes
            // avg per tile in the vector level, and the copy is a DMA to GM.
            avg(c, x, y, n) = t.is_float() ? cast(t, pool(c, x, y, n) / area)
                                           : cast(t, (pool(c, x, y, n) + (k * k) / 2) / area);
            out(c, x, y, n) = avg(c, x, y, n);
        }
        const int h_in = (H - 1) * st + k, w_in = (W - 1) * st + k;
        in->set_estimates({{0, C}, {0, w_in}, {0, h_in}, {0, N}});
        out.set_estimates({{0, C}, {0, W}, {0, H}, {0, N}});
    }
};

} // namespace

TESSEL_REGISTER_GENERATOR(Pooling, pooling, "max or average pooling over NHWC, K x K window, stride S",
                          {{"N", "1", "batch"},
                           {"H", "8", "output height"},
                           {"W", "8", "output width"},
                           {"C", "32", "channels"},
                           {"K", "2", "window size"},
                           {"stride", "2", "stride"},
                           {"op", "max", "max or avg"},
                           {"dtype", "int8", "int8, uint8, fp16 or fp32"}})
