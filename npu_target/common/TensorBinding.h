#ifndef TESSEL_NPU_TARGET_COMMON_TENSORBINDING_H
#define TESSEL_NPU_TARGET_COMMON_TENSORBINDING_H

// Given tensors (read from files, or handed over by code) bound to the named
// inputs and outputs of a kernel, and outputs compared with expected ones at a
// tolerance. Plain data, no file I/O: `tessel run` (through the compile
// facade) and `tessel sim` share these rules (docs/tensors.md).

#include "npu_target/common/Tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel {

/** A tensor given for an input (or expected for an output). */
struct GivenTensor {
    Tensor tensor;      // tensor.name: the input or output it is for
    std::string origin; // where it came from, for messages (a file path); "" = given by the caller
    /** >= 0: when tensor.name is none of the kernel's inputs (outputs), it is
     * the position-th one, in the kernel's order (the ONNX test suite's
     * input_K.pb / output_K.pb, whose names are the model's, not the kernel's). */
    int position = -1;
};

/** A kernel input or output: name, type and shape (innermost first). */
struct TensorSlot {
    std::string name;
    DType dtype = DType::FP32;
    std::vector<int64_t> shape;
};

/** Binds `given` to `slots` by name (else by position) and checks each one's
 * type and shape. Returns one entry per slot, in slot order, named as the slot;
 * nullopt where nothing was given. `role` is "input" or "output", `owner` names
 * the kernel ("generator 'gemm'"). UserErrors, each naming the tensor and its
 * origin: a tensor that fits no slot, two for one slot, a wrong element type, a
 * wrong shape (both shapes shown). */
std::vector<std::optional<GivenTensor>> bind_tensors(const std::vector<GivenTensor> &given,
                                                     const std::vector<TensorSlot> &slots, const std::string &role,
                                                     const std::string &owner);

/** bind_tensors for inputs: every slot must be given (a UserError names the
 * first missing one and what was given). */
std::vector<Tensor> bind_inputs(const std::vector<GivenTensor> &given, const std::vector<TensorSlot> &slots,
                                const std::string &owner);

/** The result of comparing an output with its expected value. */
struct ExpectedComparison {
    bool ok = false;
    int64_t mismatches = 0;   // elements with |got - want| > atol + rtol * |want|
    int64_t elements = 0;
    double max_abs_error = 0; // largest |got - want| (NaN against a number counts as infinite)
    int64_t worst = -1;       // flat index of that element, -1 when every element is equal
    std::string message;      // "C (from F): match ..." or "... 3 of 64 elements differ ...; largest error ... at [i, j]"
};

/** Compares `got` with `want` (same type and shape: bind_tensors checked
 * them): an element passes when |got - want| <= atol + rtol * |want| (ONNX's
 * runner: numpy.testing.assert_allclose; NaN equals NaN), for every type. */
ExpectedComparison compare_expected(const Tensor &got, const GivenTensor &want, double rtol, double atol);

/** "[2, 3]": the flat index `i` of a tensor of `shape` (innermost first) as
 * coordinates outermost first, as ONNX and NumPy index. */
std::string coordinates_text(const std::vector<int64_t> &shape, int64_t i);

/** "4x8", outermost first ("[] (a scalar)" for no dimensions). */
std::string shape_text(const std::vector<int64_t> &shape);

} // namespace tessel

#endif
