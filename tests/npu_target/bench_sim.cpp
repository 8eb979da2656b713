// Simulator speed (not a unit test): prints a table. Run:
//   build-sim/tests/bench_sim
// 1. functional matrix-unit work: MMAD 128x128x128 fp16 and int8 tiles in a
//    scalar loop (MAC/s of host time);
// 2. timing simulation: a loop of small DMA / vector / flag / scalar
//    instructions (simulated instructions per second of host time).
#include "SimTestUtil.h"

#include <chrono>
#include <cstdio>

using namespace tessel;
using namespace tessel::test;

namespace {

double seconds_of(const std::function<void()> &f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/** r5 = 0; loop: body; r5 += 1; if r5 < iters goto loop; end. */
void loop(ProgramBuilder &b, int64_t iters, const std::function<void()> &body) {
    b.li(5, 0);
    b.li(6, iters);
    uint32_t top = b.pc();
    body();
    b.addi(5, 5, 1);
    Instr br;
    br.op = Op::BLT;
    br.ra = 5;
    br.rb = 6;
    br.imm = top;
    b.emit(br);
    b.end();
}

void bench_mmad(const ArchSpec &a, DType t, int dim, int64_t iters) {
    ProgramBuilder b(a);
    b.li(2, 0);
    b.li(3, 0);
    b.li(4, 0);
    loop(b, iters, [&]() { b.mmad(t, 2, 3, 4, uint16_t(dim), uint16_t(dim), uint16_t(dim), false); });
    sim::SimOptions opt;
    opt.trace = false;
    std::vector<Tensor> args;
    sim::SimReport r;
    double s = seconds_of([&]() { r = sim::simulate(b.p, a, args, opt); });
    double macs = double(dim) * dim * dim * iters;
    std::printf("%-44s %10.3f s  %8.2f G MAC/s  (%llu simulated cycles)\n",
                (std::string("functional MMAD ") + dtype_name(t) + " " + std::to_string(dim) + "^3 x " +
                 std::to_string(iters)).c_str(),
                s, macs / s / 1e9, static_cast<unsigned long long>(r.cycles));
}

/** Loop body: DMA 256 B GM->UB, flags, two vector ops on `elems` elements of
 * `t`, flags back, ADDI + BLT: 9 instructions per iteration. */
void bench_timing(const ArchSpec &a, int64_t iters, bool trace, DType t, int elems) {
    ProgramBuilder b(a);
    b.arg("in", DType::FP16, {1024});
    b.li(10, 0);
    b.li(11, 4096);
    b.li(20, elems);
    uint16_t d = b.desc_contig(256);
    loop(b, iters, [&]() {
        b.dma("MTE2", "UB", "GM", 10, 1, d);
        b.sync(Pipe::MTE2, Pipe::V);
        b.vec(Op::VADD, t, 11, 10, 10, 20);
        b.vec(Op::VMULS, t, 11, 20, 11, 20);
        b.sync(Pipe::V, Pipe::MTE2);
    });
    sim::SimOptions opt;
    opt.trace = trace;
    std::vector<Tensor> args{Tensor("in", DType::FP16, {1024})};
    sim::SimReport r;
    double s = seconds_of([&]() { r = sim::simulate(b.p, a, args, opt); });
    std::printf("%-44s %10.3f s  %8.2f M instr/s  (%llu instructions, %llu cycles)\n",
                ("timing loop, vector " + std::to_string(elems) + " x " + dtype_name(t) + (trace ? " +trace" : ""))
                    .c_str(),
                s,
                double(r.instructions) / s / 1e6, static_cast<unsigned long long>(r.instructions),
                static_cast<unsigned long long>(r.cycles));
}

} // namespace

int main() {
    ArchSpec a = load_arch("ascend-like");
    std::printf("simulator speed on ascend-like (one core, Release build)\n");
    bench_mmad(a, DType::FP16, 128, 400);
    bench_mmad(a, DType::Int8, 128, 400);
    bench_timing(a, 200000, false, DType::FP32, 16);
    bench_timing(a, 200000, true, DType::FP32, 16);
    bench_timing(a, 200000, false, DType::FP16, 128);
    bench_timing(a, 200000, true, DType::FP16, 128);
    return 0;
}
