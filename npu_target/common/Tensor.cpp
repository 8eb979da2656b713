#include "npu_target/common/Tensor.h"

#include <cmath>
#include <sstream>

namespace tessel {

Tensor::Tensor(std::string n, DType t, std::vector<int64_t> s)
    : name(std::move(n)), dtype(t), shape(std::move(s)) {
    data.assign(static_cast<size_t>(elements() * dtype_bytes(dtype)), 0);
}

int64_t Tensor::elements() const {
    int64_t n = 1;
    for (int64_t e : shape) {
        n *= e;
    }
    return n;
}

std::string Tensor::describe() const {
    std::ostringstream os;
    os << name << ": " << dtype_name(dtype) << "[";
    for (size_t i = shape.size(); i-- > 0;) {
        os << shape[i] << (i ? "x" : "");
    }
    os << "]";
    return os.str();
}

void fill_random(Tensor &t, std::mt19937_64 &rng) {
    const int64_t n = t.elements();
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        switch (t.dtype) {
        case DType::Int8:
            v = static_cast<double>(static_cast<int64_t>(rng() % 256) - 128);
            break;
        case DType::UInt8:
            v = static_cast<double>(rng() % 256);
            break;
        case DType::Int16:
            v = static_cast<double>(static_cast<int64_t>(rng() % 65536) - 32768);
            break;
        case DType::Int32:
            v = static_cast<double>(static_cast<int64_t>(rng() % (1u << 21)) - (1 << 20));
            break;
        default:
            v = unit(rng);
            break;
        }
        t.set(i, v);
    }
}

void poison(Tensor &t) {
    for (auto &b : t.data) {
        b = 0xA5;
    }
}

Comparison compare(const Tensor &got, const Tensor &want, double atol, double rtol) {
    Comparison c;
    c.equal_shape = got.shape == want.shape && got.dtype == want.dtype;
    if (!c.equal_shape) {
        c.message = "shape or type differs: got " + got.describe() + ", want " + want.describe();
        c.mismatches = -1;
        return c;
    }
    const int64_t n = got.elements();
    const bool exact = !dtype_is_float(got.dtype);
    for (int64_t i = 0; i < n; i++) {
        double g = got.get(i), w = want.get(i);
        // NaN equals NaN and an infinity the same infinity (Log, Sqrt, Reciprocal of
        // random inputs make both); NaN against a number is an infinite error.
        double err = g == w ? 0 : std::fabs(g - w);
        if (std::isnan(g) != std::isnan(w)) {
            err = INFINITY;
        } else if (std::isnan(g)) {
            err = 0;
        }
        if (err > c.max_abs_error) {
            c.max_abs_error = err;
        }
        bool bad = exact ? (g != w) : !(err <= atol + rtol * (std::isfinite(w) ? std::fabs(w) : 0.0));
        if (bad) {
            if (c.first_mismatch < 0) {
                c.first_mismatch = i;
            }
            c.mismatches++;
        }
    }
    std::ostringstream os;
    if (c.mismatches == 0) {
        os << "match: " << n << " elements, max abs error " << c.max_abs_error;
    } else {
        os << c.mismatches << " of " << n << " elements differ (first at flat index "
           << c.first_mismatch << ": got " << got.get(c.first_mismatch) << ", want "
           << want.get(c.first_mismatch) << "), max abs error " << c.max_abs_error;
    }
    c.message = os.str();
    return c;
}

} // namespace tessel
