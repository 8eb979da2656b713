#ifndef TESSEL_NPU_TARGET_SIM_SIMULATOR_H
#define TESSEL_NPU_TARGET_SIM_SIMULATOR_H

// The NPU simulator: runs an isa::Program on an ArchSpec, functionally exact
// (bit-exact for every dtype; see docs/isa-semantics.md) and cycle-approximate
// (a discrete-event model of the scalar front end, the in-order pipes, the DMA
// engines, the L2 and the shared GM; see docs/simulator.md for the formulas).
// Halide-free and Qt-free.

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/Tensor.h"
#include "npu_target/isa/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::sim {

struct SimOptions {
    bool trace = true;        // record one TraceEvent per executed instruction
    uint64_t max_cycles = 0;  // 0 = no limit; otherwise a SimError past this cycle
    bool check_races = true;  // report unsynchronised cross-pipe accesses as SimErrors
};

/** A byte range [lo, hi) of memory level `level` (index into ArchSpec::memories;
 * GM ranges use GM addresses) that a traced instruction read or wrote. */
struct TraceAccess {
    int level = 0;
    uint64_t lo = 0, hi = 0;
    bool write = false;
};

/** One executed instruction (or one flag wait) on one core's pipe. */
struct TraceEvent {
    int core = 0;
    std::string pipe;
    uint64_t start = 0, end = 0; // [start, end): the unit is busy (WAIT_FLAG: blocked)
    uint32_t pc = 0;
    isa::Op op = isa::Op::NOP;
    int64_t bytes = 0;           // DMA bytes moved; vector/matrix bytes written
    std::string src, dst;        // memory levels (DMA, vector, matrix)
    isa::ProvenanceId prov = 0;
    std::string stall;           // why it started late or ran long ("" if it did not)
    std::vector<TraceAccess> accesses; // DMA, vector, matrix: the ranges it read and wrote (what the race check sees)
};

struct PipeStats {
    std::string pipe;
    uint64_t busy_cycles = 0;
    double busy_pct = 0;         // of SimReport::cycles
    uint64_t instructions = 0;
    uint64_t stall_cycles = 0;   // head instruction present but blocked (flag, outstanding, queue full)
    int core = 0;
};

/** One src->dst edge of a transfer engine, summed over cores. */
struct EdgeStats {
    std::string engine, src, dst;
    int64_t bytes = 0;
    uint64_t busy_cycles = 0;    // engine busy (setup + transfer) for descriptors on this edge
    double achieved_bytes_per_cycle = 0; // bytes / busy_cycles
    uint64_t descriptors = 0;
};

struct SimReport {
    uint64_t cycles = 0;         // last completion over every pipe of every core
    uint64_t instructions = 0;   // executed instructions (every pipe, every core)
    std::vector<PipeStats> pipes;
    std::vector<EdgeStats> edges;
    std::vector<TraceEvent> trace;
    int64_t l2_hit_bytes = 0, l2_miss_bytes = 0;
    int64_t gm_write_bytes = 0;        // bytes written to GM (through the L2 when there is one)
    uint64_t gm_write_drain_cycles = 0; // gm_write_bytes at the GM write rate: the run cannot end before
                                        // the write-back L2 has drained them to HBM
    int cores = 1;
};

/** A program error found while simulating: out-of-bounds access, race,
 * deadlock, bad operands. The message names the instruction (pc, mnemonic). */
class SimError : public UserError {
public:
    explicit SimError(const std::string &msg) : UserError(msg) {}
};

/** Runs `prog`. `args` follow Program::args (same count, dtype and byte size);
 * output arguments are written in place (so are inputs the program writes). */
SimReport simulate(const isa::Program &prog, const ArchSpec &arch, std::vector<Tensor> &args,
                   const SimOptions &opt = SimOptions{});

/** Chrome/Perfetto trace-event JSON: one track per core and pipe, "X" events
 * with args bytes/src/dst/provenance (directive, func, loop). */
std::string trace_to_chrome_json(const SimReport &r, const isa::Program &prog);

/** Human-readable summary: total cycles, busy % per pipe, bytes and achieved
 * B/cycle per engine edge, L2 hits/misses. */
std::string summarize(const SimReport &r);

/** The mnemonic of an opcode ("VADD"), as printed in error messages. */
const char *op_mnemonic(isa::Op op);

/** GM address at which argument i is placed at launch (register r(1+i) holds it):
 * arguments are laid out from 0x10000 upwards, each 4 KiB-aligned. */
std::vector<uint64_t> gm_arg_addresses(const isa::Program &prog);

} // namespace tessel::sim

#endif
