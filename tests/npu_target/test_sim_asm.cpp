// Hand-written assembly programs (tests/npu_target/programs/*.s) run on the
// simulator through the assembler, with the figures their headers state.
#include "SimTestUtil.h"

#include "npu_target/isa/Asm.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace tessel;

namespace {

std::string read_program_text(const std::string &name) {
    const char *root = std::getenv("TESSEL_SOURCE_DIR");
    std::string path = std::string(root ? root : ".") + "/tests/npu_target/programs/" + name;
    std::ifstream f(path);
    EXPECT_TRUE(f.good()) << path;
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

} // namespace

TEST(SimAsm, Copy16KiBRunsAtTheDocumentedEfficiency) {
    ArchSpec a = load_arch("ascend-like");
    isa::Program p = isa::assemble(read_program_text("copy_16k.s"), "copy_16k.s", &a);
    std::vector<Tensor> args{Tensor("x", DType::UInt8, {16384}), Tensor("y", DType::UInt8, {16384})};
    std::mt19937_64 rng(5);
    fill_random(args[0], rng);
    auto r = sim::simulate(p, a, args);
    EXPECT_EQ(args[1].data, args[0].data);
    EXPECT_EQ(test::edge(r, "GM", "UB").busy_cycles, 576u);
    // GM writes go into the write-back L2 at min(edge 64, L2 write 86) B/cycle: 64 + 16384/64.
    EXPECT_EQ(test::edge(r, "UB", "GM").busy_cycles, 320u);
    // li (1) + MTE2 576 + latency 500 (the flag fires when the data is visible)
    // + MTE3 320 + latency 500; the HBM drain of 16 KiB at 32 B/cycle (512) is shorter.
    EXPECT_EQ(r.cycles, 1u + 576 + 500 + 320 + 500);
    EXPECT_EQ(r.gm_write_drain_cycles, 512u);
}
