// The exported NPU entry points run the program `tessel run` compiles for the
// same schedule, and give the same results and cycle count on the same inputs;
// the host entry points give Halide's CPU result. The library is exported at
// build time by tessel_add_kernel_library() from tests/consumer/kernels.json.

#include "export_test_kernels.h"

#include "dsl/Compile.h"
#include "dsl/HalidePipeline.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"
#include "npu_target/sim/Simulator.h"

#include <gtest/gtest.h>

#include <regex>
#include <functional>

using namespace tessel;

namespace {

const std::string kDir = std::string(TESSEL_SOURCE_DIR) + "/tests/consumer/";

struct Kernel {
    std::string generator;
    ParamMap params;
    std::string schedule;
    std::function<int(tessel_device *, std::vector<halide_buffer_t *> &, uint64_t *)> npu;
    std::function<int(std::vector<halide_buffer_t *> &)> cpu;
    std::function<const unsigned char *(size_t *)> program;
    std::string schedule_hash;
};

Kernel gemm64_kernel() {
    Kernel k;
    k.generator = "gemm";
    k.params = {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"dtype", "int8"}};
    k.schedule = kDir + "gemm64_tensorized.json";
    k.npu = [](tessel_device *d, std::vector<halide_buffer_t *> &b, uint64_t *c) {
        return gemm64_profiled(d, b[0], b[1], b[2], c);
    };
    k.cpu = [](std::vector<halide_buffer_t *> &b) { return gemm64_cpu(b[0], b[1], b[2]); };
    k.program = gemm64_program;
    k.schedule_hash = GEMM64_SCHEDULE_HASH;
    return k;
}

Kernel softmax16_kernel() {
    Kernel k;
    k.generator = "softmax";
    k.params = {{"ROWS", "16"}, {"COLS", "128"}, {"dtype", "fp32"}};
    k.schedule = std::string(TESSEL_SOURCE_DIR) + "/samples/softmax/schedules/staged_vector.json";
    k.npu = [](tessel_device *d, std::vector<halide_buffer_t *> &b, uint64_t *c) {
        return softmax16_profiled(d, b[0], b[1], c);
    };
    k.cpu = [](std::vector<halide_buffer_t *> &b) { return softmax16_cpu(b[0], b[1]); };
    k.program = softmax16_program;
    k.schedule_hash = SOFTMAX16_SCHEDULE_HASH;
    return k;
}

halide_type_t halide_type_of_tensor(const Tensor &t) {
    switch (t.dtype) {
    case DType::Int8: return halide_type_t(halide_type_int, 8);
    case DType::Int32: return halide_type_t(halide_type_int, 32);
    case DType::FP32: return halide_type_t(halide_type_float, 32);
    default: ADD_FAILURE() << "unexpected type"; return halide_type_t(halide_type_int, 8);
    }
}

halide_buffer_t wrap(Tensor &t, std::vector<halide_dimension_t> &dims) {
    dims.clear();
    int32_t stride = 1;
    for (int64_t e : t.shape) {
        dims.push_back(halide_dimension_t(0, static_cast<int32_t>(e), stride));
        stride *= static_cast<int32_t>(e);
    }
    halide_buffer_t b{};
    b.host = t.data.data();
    b.type = halide_type_of_tensor(t);
    b.dimensions = static_cast<int32_t>(dims.size());
    b.dim = dims.data();
    return b;
}

std::string without_name_numbers(const std::string &text) {
    return std::regex_replace(text, std::regex("\\$[0-9]+"), "");
}

class ExportEntry : public ::testing::TestWithParam<std::string> {};

} // namespace

TEST_P(ExportEntry, SameProgramResultsAndCyclesAsTesselRun) {
    const Kernel k = GetParam() == "gemm64" ? gemm64_kernel() : softmax16_kernel();
    const uint64_t seed = 7;
    CompileRequest req;
    req.generator = k.generator;
    req.params = k.params;
    req.schedule = load_schedule(k.schedule);
    req.arch = "ascend-like";

    // What `tessel run` does for this schedule and seed.
    RunReport rep = run(req, seed);
    ASSERT_TRUE(rep.verified) << rep.comparison;
    ASSERT_TRUE(rep.cycles.has_value());
    CompileResult cr = compile(req);
    ASSERT_TRUE(cr.ok);
    EXPECT_EQ(cr.schedule_hash, k.schedule_hash) << "the header names the schedule the kernel was built from";
    size_t bytes = 0;
    const unsigned char *embedded = k.program(&bytes);
    // Halide numbers the names it makes per process (C, C$3, ...): compare the
    // programs with those suffixes removed.
    isa::Program emb = isa::read_program(std::vector<uint8_t>(embedded, embedded + bytes), "embedded program");
    EXPECT_EQ(without_name_numbers(isa::disassemble(emb)), without_name_numbers(isa::disassemble(cr.program)))
        << "the embedded program is the one the compiler makes for this schedule";

    // The same inputs tessel::run draws for this seed.
    HalidePipeline p = build_halide_pipeline(k.generator, cr.params);
    std::vector<Tensor> inputs = make_random_inputs(p, seed);
    std::vector<Tensor> want = run_on_cpu(p, inputs);
    ASSERT_EQ(want.size(), 1u);

    Tensor npu_out(want[0].name, want[0].dtype, want[0].shape), cpu_out = npu_out;
    poison(npu_out);
    poison(cpu_out);
    std::vector<std::vector<halide_dimension_t>> dims(inputs.size() + 1);
    std::vector<halide_buffer_t> raw;
    for (size_t i = 0; i < inputs.size(); i++) {
        raw.push_back(wrap(inputs[i], dims[i]));
    }
    raw.push_back(wrap(npu_out, dims.back()));
    std::vector<halide_buffer_t *> ptrs;
    for (auto &b : raw) {
        ptrs.push_back(&b);
    }
    tessel_device *dev = nullptr;
    ASSERT_EQ(tessel_device_open("ascend-like", &dev), TESSEL_OK) << tessel_last_error();
    uint64_t cycles = 0;
    ASSERT_EQ(k.npu(dev, ptrs, &cycles), TESSEL_OK) << export_test_kernels_last_error();
    EXPECT_EQ(static_cast<int64_t>(cycles), *rep.cycles) << "the exported entry point and tessel run disagree on cycles";

    // The simulator on the embedded program with the same inputs: bit for bit.
    std::vector<Tensor> args = inputs;
    args.emplace_back(want[0].name, want[0].dtype, want[0].shape);
    poison(args.back());
    sim::SimReport sr = sim::simulate(cr.program, load_arch("ascend-like"), args, sim::SimOptions{});
    EXPECT_EQ(npu_out.data, args.back().data) << "exported NPU output differs from the simulated program's";
    EXPECT_EQ(static_cast<int64_t>(sr.cycles), *rep.cycles);
    Comparison c = compare(npu_out, want[0], 1e-4, 1e-4);
    EXPECT_EQ(c.mismatches, 0) << c.message;

    ptrs.back() = nullptr;
    std::vector<halide_dimension_t> cdims;
    halide_buffer_t cbuf = wrap(cpu_out, cdims);
    ptrs.back() = &cbuf;
    ASSERT_EQ(k.cpu(ptrs), 0);
    EXPECT_EQ(cpu_out.data, want[0].data) << "the AOT host entry point differs from Halide's JIT result";
    tessel_device_close(dev);
}

INSTANTIATE_TEST_SUITE_P(Kernels, ExportEntry, ::testing::Values("gemm64", "softmax16"),
                         [](const auto &info) { return info.param; });

// A kernel launched on a device of another arch is refused, naming the kernel
// and both arches; a wrong element type names the argument.
TEST(ExportEntryErrors, WrongDeviceAndWrongType) {
    tessel_device *dev = nullptr;
    ASSERT_EQ(tessel_device_open("gemmini-like", &dev), TESSEL_OK) << tessel_last_error();
    Tensor a("A", DType::Int8, {64, 64}), b("B", DType::Int8, {64, 64}), c("C", DType::Int32, {64, 64});
    std::vector<halide_dimension_t> da, db, dc;
    halide_buffer_t ba = wrap(a, da), bb = wrap(b, db), bc = wrap(c, dc);
    EXPECT_EQ(gemm64(dev, &ba, &bb, &bc), TESSEL_ERROR_PROGRAM);
    std::string msg = export_test_kernels_last_error();
    EXPECT_NE(msg.find("gemm64: program 'gemm' was compiled for ascend-like"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not gemmini-like"), std::string::npos) << msg;
    tessel_device_close(dev);

    ASSERT_EQ(tessel_device_open(gemm64_arch(), &dev), TESSEL_OK);
    Tensor wrong("C", DType::FP32, {64, 64});
    std::vector<halide_dimension_t> dw;
    halide_buffer_t bw = wrap(wrong, dw);
    EXPECT_EQ(gemm64(dev, &ba, &bb, &bw), TESSEL_ERROR_INVALID_ARGUMENT);
    msg = export_test_kernels_last_error();
    EXPECT_NE(msg.find("gemm64: argument C: element type (code 2, 32 bits) differs from the kernel's (code 0, 32 bits)"),
              std::string::npos) << msg;
    tessel_device_close(dev);
}
