#include "npu_target/common/TensorBinding.h"

#include "npu_target/common/Error.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace tessel {

namespace {

std::string from(const GivenTensor &g) { return g.origin.empty() ? std::string() : " (from '" + g.origin + "')"; }

std::string slot_names(const std::vector<TensorSlot> &slots) {
    std::string s;
    for (const auto &x : slots) {
        s += (s.empty() ? "" : ", ") + x.name;
    }
    return s.empty() ? "none" : s;
}

} // namespace

std::string shape_text(const std::vector<int64_t> &shape) {
    if (shape.empty()) {
        return "[] (a scalar)";
    }
    std::ostringstream os;
    for (size_t i = shape.size(); i-- > 0;) {
        os << shape[i] << (i ? "x" : "");
    }
    return os.str();
}

std::string coordinates_text(const std::vector<int64_t> &shape, int64_t i) {
    std::vector<int64_t> c(shape.size());
    for (size_t d = 0; d < shape.size(); d++) {
        c[d] = shape[d] ? i % shape[d] : 0;
        i = shape[d] ? i / shape[d] : 0;
    }
    std::ostringstream os;
    os << "[";
    for (size_t d = c.size(); d-- > 0;) {
        os << c[d] << (d ? ", " : "");
    }
    os << "]";
    return os.str();
}

std::vector<std::optional<GivenTensor>> bind_tensors(const std::vector<GivenTensor> &given,
                                                     const std::vector<TensorSlot> &slots, const std::string &role,
                                                     const std::string &owner) {
    std::vector<std::optional<GivenTensor>> bound(slots.size());
    for (const GivenTensor &g : given) {
        int slot = -1;
        for (size_t i = 0; i < slots.size(); i++) {
            if (slots[i].name == g.tensor.name) {
                slot = static_cast<int>(i);
            }
        }
        if (slot < 0 && g.position >= 0) {
            if (g.position >= static_cast<int>(slots.size())) {
                user_error("tensor '", g.tensor.name, "'", from(g), " is ", role, " ", g.position, " by its file name, but ",
                           owner, " has ", slots.size(), " ", role, slots.size() == 1 ? "" : "s", " (", slot_names(slots),
                           ")");
            }
            slot = g.position;
        }
        if (slot < 0) {
            user_error("tensor '", g.tensor.name, "'", from(g), " is not an ", role, " of ", owner, " (its ", role, "s: ",
                       slot_names(slots), ")");
        }
        const TensorSlot &s = slots[slot];
        if (bound[slot]) {
            user_error(role, " ", s.name, " is given twice: '", bound[slot]->tensor.name, "'", from(*bound[slot]),
                       " and '", g.tensor.name, "'", from(g));
        }
        std::string what = role + " " + s.name;
        if (g.tensor.name != s.name) {
            what += " (tensor '" + g.tensor.name + "'" + (g.origin.empty() ? "" : " from '" + g.origin + "'") + ")";
        } else {
            what += from(g);
        }
        if (g.tensor.dtype != s.dtype) {
            user_error(what, ": element type ", dtype_name(g.tensor.dtype), ", but ", owner, " takes ",
                       dtype_name(s.dtype), " for ", s.name);
        }
        if (g.tensor.shape != s.shape) {
            user_error(what, ": shape ", shape_text(g.tensor.shape), ", but ", owner, " takes ", shape_text(s.shape),
                       " for ", s.name);
        }
        TESSEL_INTERNAL_ASSERT(static_cast<int64_t>(g.tensor.data.size()) == g.tensor.elements() * dtype_bytes(g.tensor.dtype),
                               "tensor '", g.tensor.name, "' holds ", g.tensor.data.size(), " bytes");
        bound[slot] = g;
        bound[slot]->tensor.name = s.name;
    }
    return bound;
}

std::vector<Tensor> bind_inputs(const std::vector<GivenTensor> &given, const std::vector<TensorSlot> &slots,
                                const std::string &owner) {
    std::vector<std::optional<GivenTensor>> bound = bind_tensors(given, slots, "input", owner);
    std::vector<Tensor> out;
    for (size_t i = 0; i < slots.size(); i++) {
        if (!bound[i]) {
            std::string have;
            for (const GivenTensor &g : given) {
                have += (have.empty() ? "" : ", ") + ("'" + g.tensor.name + "'") + from(g);
            }
            user_error("no tensor given for input ", slots[i].name, " (", dtype_name(slots[i].dtype),
                       "[", shape_text(slots[i].shape), "]) of ", owner, "; given: ", have.empty() ? "none" : have);
        }
        out.push_back(std::move(bound[i]->tensor));
    }
    return out;
}

ExpectedComparison compare_expected(const Tensor &got, const GivenTensor &want, double rtol, double atol) {
    TESSEL_INTERNAL_ASSERT(got.shape == want.tensor.shape && got.dtype == want.tensor.dtype, "unchecked comparison");
    ExpectedComparison c;
    c.elements = got.elements();
    for (int64_t i = 0; i < c.elements; i++) {
        double g = got.get(i), w = want.tensor.get(i);
        double err = std::fabs(g - w);
        if (std::isnan(g) || std::isnan(w)) {
            err = std::isnan(g) && std::isnan(w) ? 0 : INFINITY;
        } else if (g == w) {
            err = 0; // inf == inf
        }
        if (!(err <= atol + rtol * std::fabs(w))) {
            c.mismatches++;
        }
        if (err > c.max_abs_error || (c.worst < 0 && err > 0)) {
            c.max_abs_error = err;
            c.worst = i;
        }
    }
    c.ok = c.mismatches == 0;
    std::ostringstream os;
    os << want.tensor.name << from(want) << ": ";
    if (c.ok) {
        os << "match (" << c.elements << " elements, |got - want| <= " << atol << " + " << rtol << " * |want|)";
    } else {
        os << c.mismatches << " of " << c.elements << " elements differ beyond |got - want| <= " << atol << " + " << rtol
           << " * |want|";
    }
    if (c.worst >= 0) {
        // 9 significant digits: a float's value exactly, so that got and want differ where they do.
        os << std::setprecision(9) << "; largest error " << c.max_abs_error << " at " << coordinates_text(got.shape, c.worst)
           << " (got " << got.get(c.worst) << ", want " << want.tensor.get(c.worst) << ")";
    } else {
        os << "; every element equal";
    }
    c.message = os.str();
    return c;
}

} // namespace tessel
