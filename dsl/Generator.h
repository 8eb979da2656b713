#ifndef TESSEL_DSL_GENERATOR_H
#define TESSEL_DSL_GENERATOR_H

// For generator authors: a Tessel generator is an ordinary Halide::Generator
// (GeneratorParams for shapes and types, Input<Buffer<>>/Output<Buffer<>>) that
//  - declares estimates on every input and output (they give the problem shape),
//  - defines only the algorithm: schedules are data (ScheduleSpec), applied later,
// and is registered with TESSEL_REGISTER_GENERATOR, which also records the
// documentation that `tessel list` prints.

#include "Halide.h"

#include "dsl/GeneratorInfo.h"
#include "npu_target/common/DType.h"

namespace tessel {

/** The host's JIT target, corrected for CPUs that Halide 14 misdetects. */
Halide::Target host_target();
/** The Halide type of a Tessel element type. */
Halide::Type halide_type(DType t);
/** The Tessel element type of a Halide type; throws UserError for types the NPU lacks. */
DType dtype_of(const Halide::Type &t, const std::string &what);
/** Parses a dtype GeneratorParam value, naming the parameter in the error. */
DType parse_dtype_param(const std::string &value, const std::string &param_name);
/** The accumulator type the matrix unit uses for an operand type
 * (fp16/bf16/fp32 -> fp32, int8/uint8/int16 -> int32). */
DType accumulator_of(DType t);

} // namespace tessel

#define TESSEL_REGISTER_GENERATOR(GEN_CLASS, GEN_NAME, SUMMARY, ...)                                \
    HALIDE_REGISTER_GENERATOR(GEN_CLASS, GEN_NAME)                                                  \
    namespace tessel_register_generator {                                                           \
    static const bool reg_info_##GEN_NAME =                                                         \
        ::tessel::register_generator_info(::tessel::GeneratorInfo{#GEN_NAME, SUMMARY, __VA_ARGS__}); \
    }

#endif
