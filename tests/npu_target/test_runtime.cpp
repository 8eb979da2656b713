// The C runtime (tessel_runtime.h) on the simulator, and the trace/summary output.

#include "SimTestUtil.h"

#include "npu_target/isa/Binary.h"
#include "npu_target/runtime/RuntimeCxx.h"

#include <nlohmann/json.hpp>

using namespace tessel;
using namespace tessel::test;

namespace {

/** out = in + 1 (fp32, 64 elements), with provenance on the vector op. */
isa::Program add_one(const ArchSpec &a) {
    ProgramBuilder b(a, "add_one");
    b.arg("in", DType::FP32, {64});
    b.arg("out", DType::FP32, {64}, true);
    b.p.provenance.push_back({"d3", "out", "out.s0.x.xo"});
    b.li(10, 0);
    b.li(20, 64);
    b.li(21, 0x3f800000); // 1.0f
    b.dma("MTE2", "UB", "GM", 10, 1, b.desc_contig(256));
    b.sync(Pipe::MTE2, Pipe::V);
    b.vec(Op::VADDS, DType::FP32, 10, 21, 10, 20).prov = 1;
    b.sync(Pipe::V, Pipe::MTE3);
    b.dma("MTE3", "GM", "UB", 2, 10, b.desc_contig(256));
    b.end();
    b.p.arch_hash = a.hash();
    return b.p;
}

} // namespace

TEST(Runtime, LoadBinaryLaunchReadProfileTrace) {
    tessel_device *dev = nullptr;
    ASSERT_EQ(tessel_device_open("ascend-like", &dev), TESSEL_OK) << tessel_last_error();
    ArchSpec a = load_arch("ascend-like");
    std::vector<uint8_t> bin = isa::write_program(add_one(a));
    tessel_program *prog = nullptr;
    ASSERT_EQ(tessel_program_load(dev, bin.data(), bin.size(), &prog), TESSEL_OK) << tessel_last_error();
    ASSERT_EQ(tessel_program_num_args(prog), 2);
    ASSERT_EQ(tessel_program_arg_bytes(prog, 0), 256u);
    tessel_buffer *in = nullptr, *out = nullptr;
    ASSERT_EQ(tessel_buffer_alloc(dev, 256, &in), TESSEL_OK);
    ASSERT_EQ(tessel_buffer_alloc(dev, 256, &out), TESSEL_OK);
    std::vector<float> x(64), y(64, -7.0f);
    for (int i = 0; i < 64; ++i) {
        x[i] = 0.5f * i;
    }
    ASSERT_EQ(tessel_buffer_write(in, 0, x.data(), 256), TESSEL_OK);
    ASSERT_EQ(tessel_buffer_write(out, 0, y.data(), 256), TESSEL_OK);
    tessel_buffer *args[] = {in, out};
    ASSERT_EQ(tessel_launch(dev, prog, args, 2), TESSEL_OK) << tessel_last_error();
    ASSERT_EQ(tessel_buffer_read(out, 0, y.data(), 256), TESSEL_OK);
    for (int i = 0; i < 64; ++i) {
        EXPECT_EQ(y[i], 0.5f * i + 1.0f);
    }
    tessel_profile prof;
    ASSERT_EQ(tessel_profile_get(dev, &prof), TESSEL_OK);
    EXPECT_GT(prof.cycles, 1000u); // two DMAs with 500-cycle latency
    EXPECT_EQ(prof.instructions, 11u);
    bool saw_v = false;
    for (int i = 0; i < prof.num_pipes; ++i) {
        if (std::string(prof.pipes[i].pipe) == "V") {
            saw_v = true;
            EXPECT_EQ(prof.pipes[i].busy_cycles, 2u); // vadds + its set_flag
        }
    }
    EXPECT_TRUE(saw_v);
    std::string summary = tessel_profile_summary(dev);
    EXPECT_NE(summary.find("MTE2 GM->UB"), std::string::npos) << summary;

    auto j = nlohmann::json::parse(tessel_trace_json(dev));
    int x_events = 0;
    bool prov_seen = false;
    for (const auto &e : j["traceEvents"]) {
        if (e["ph"] == "X") {
            x_events++;
            EXPECT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("pid") && e.contains("tid"));
            if (e["name"] == "vadds") {
                EXPECT_EQ(e["args"]["directive"], "d3");
                EXPECT_EQ(e["args"]["loop"], "out.s0.x.xo");
                EXPECT_EQ(e["args"]["src"], "UB");
                prov_seen = true;
            }
        }
    }
    EXPECT_EQ(x_events, 11);
    EXPECT_TRUE(prov_seen);

    tessel_buffer_free(in);
    tessel_buffer_free(out);
    tessel_program_free(prog);
    tessel_device_close(dev);
}

TEST(Runtime, ErrorsAreStatusCodesWithMessages) {
    tessel_device *dev = nullptr;
    EXPECT_EQ(tessel_device_open("no-such-preset", &dev), TESSEL_ERROR_ARCH);
    EXPECT_NE(std::string(tessel_last_error()).find("no-such-preset"), std::string::npos) << tessel_last_error();
    ASSERT_EQ(tessel_device_open("ascend-like", &dev), TESSEL_OK);
    uint8_t junk[40] = {1, 2, 3};
    tessel_program *prog = nullptr;
    EXPECT_EQ(tessel_program_load(dev, junk, sizeof junk, &prog), TESSEL_ERROR_PROGRAM);
    EXPECT_NE(std::string(tessel_last_error()).find("program binary"), std::string::npos) << tessel_last_error();

    ArchSpec a = load_arch("ascend-like");
    ASSERT_EQ(runtime::program_from_isa(dev, add_one(a), &prog), TESSEL_OK);
    tessel_buffer *small = nullptr;
    ASSERT_EQ(tessel_buffer_alloc(dev, 128, &small), TESSEL_OK);
    EXPECT_EQ(tessel_buffer_write(small, 100, junk, 40), TESSEL_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(tessel_last_error(), "tessel_buffer_write: [100, 140) is outside the buffer of 128 bytes");
    tessel_buffer *args[] = {small, small};
    EXPECT_EQ(tessel_launch(dev, prog, args, 1), TESSEL_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(tessel_last_error(), "tessel_launch: kernel 'add_one' takes 2 arguments, got 1");
    EXPECT_EQ(tessel_launch(dev, prog, args, 2), TESSEL_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(tessel_last_error(), "tessel_launch: argument 0 ('in') needs 256 bytes, the buffer has 128");
    tessel_profile prof;
    EXPECT_EQ(tessel_profile_get(dev, &prof), TESSEL_ERROR_INVALID_ARGUMENT);
    tessel_buffer_free(small);
    tessel_program_free(prog);
    tessel_device_close(dev);
}

TEST(Runtime, SimulatorErrorsBecomeExecutionErrors) {
    tessel_device *dev = nullptr;
    ASSERT_EQ(tessel_device_open("ascend-like", &dev), TESSEL_OK);
    ArchSpec a = load_arch("ascend-like");
    ProgramBuilder b(a, "stuck");
    b.flag(Op::WAIT_FLAG, Pipe::MTE2, Pipe::V, 0);
    b.end();
    tessel_program *prog = nullptr;
    ASSERT_EQ(runtime::program_from_isa(dev, b.p, &prog), TESSEL_OK);
    EXPECT_EQ(tessel_launch(dev, prog, nullptr, 0), TESSEL_ERROR_EXECUTION);
    EXPECT_NE(std::string(tessel_last_error()).find("deadlock"), std::string::npos);
    tessel_program_free(prog);
    tessel_device_close(dev);
}
