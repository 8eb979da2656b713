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

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace tessel::sim {

/** Default budgets (docs/simulator.md "Budgets"): measured on the 2-core CI machine, the
 * simulator runs 4-14 M scalar instructions/s (scalar GEMM with GM loads: 4 M/s under
 * load), so 50 M instructions stop an unscheduled (scalar-code) kernel in about 4-12 s;
 * scalar code costs up to ~50 cycles an instruction, so 5 * 10^9 cycles stays above what
 * 50 M scalar instructions take (an unscheduled 8x64 softmax: 1.1 G cycles, 31 M
 * instructions, must finish), 3500x the largest kernel of `tessel bench --all`. The trace cap keeps the IDE's recorded
 * trace near 48 bytes x 2 M = 96 MB (plus 24 bytes a traced access). 0 = unlimited for each. */
constexpr uint64_t kDefaultMaxInstructions = 50'000'000;
constexpr uint64_t kDefaultMaxCycles = 5'000'000'000;
constexpr uint64_t kDefaultMaxTraceEvents = 2'000'000;

/**
 * An interned name (a pipe, a memory level, a stall reason): two bytes in a
 * TraceEvent instead of a std::string, read like one (compare with strings,
 * convert to const std::string &, print). The table is process-wide,
 * append-only and safe to read from any thread; "" is id 0.
 */
class Name {
public:
    Name() = default;
    explicit Name(const std::string &s);
    explicit Name(const char *s) : Name(std::string(s)) {}
    const std::string &str() const;
    operator const std::string &() const { return str(); }
    bool empty() const { return id_ == 0; }
    uint16_t id() const { return id_; }
    const char *c_str() const { return str().c_str(); }

    friend bool operator==(Name a, Name b) { return a.id_ == b.id_; }
    friend bool operator!=(Name a, Name b) { return a.id_ != b.id_; }
    friend bool operator==(Name a, const std::string &b) { return a.str() == b; }
    friend bool operator!=(Name a, const std::string &b) { return a.str() != b; }
    friend bool operator==(const std::string &a, Name b) { return a == b.str(); }
    friend bool operator!=(const std::string &a, Name b) { return a != b.str(); }
    friend bool operator==(Name a, const char *b) { return a.str() == b; }
    friend bool operator!=(Name a, const char *b) { return a.str() != b; }
    friend bool operator<(Name a, Name b) { return a.str() < b.str(); }
    friend std::string operator+(Name a, const char *b) { return a.str() + b; }
    friend std::string operator+(const std::string &a, Name b) { return a + b.str(); }
    friend std::ostream &operator<<(std::ostream &os, Name n) { return os << n.str(); }

private:
    uint16_t id_ = 0;
};

class TraceSink;

/** Shared between a run and whoever waits for it (the IDE's compile service):
 * `cancel` set from any thread stops the run at its next check (every 4096
 * issued instructions) with a SimCancelled error; `issued` is the count of
 * instructions issued so far, for progress. */
struct RunControl {
    std::atomic<bool> cancel{false};
    std::atomic<uint64_t> issued{0};
};

struct SimOptions {
    bool trace = true;        // record TraceEvents in SimReport::trace (up to max_trace_events)
    uint64_t max_cycles = kDefaultMaxCycles;             // 0 = no limit; otherwise a SimError past this cycle
    uint64_t max_instructions = kDefaultMaxInstructions; // 0 = no limit; otherwise a SimError past this many issued
    uint64_t max_trace_events = kDefaultMaxTraceEvents;  // 0 = no limit; events past it are counted, not recorded
    TraceSink *trace_sink = nullptr; // also (or only) hand each recorded event to this, as it happens
    bool check_races = true;  // report unsynchronised cross-pipe accesses as SimErrors
    RunControl *control = nullptr; // cancel and progress (null: neither)
};

/** A byte range [lo, hi) of memory level `level` (index into ArchSpec::memories;
 * GM ranges use GM addresses) that a traced instruction read or wrote. */
struct TraceAccess {
    uint64_t lo = 0, hi = 0;
    int level = 0;
    bool write = false;
    TraceAccess() = default;
    TraceAccess(int l, uint64_t a, uint64_t b, bool w) : lo(a), hi(b), level(l), write(w) {}
};

/** One executed instruction (or one flag wait) on one core's pipe: 48
 * bytes (names interned; the accesses live in SimReport::trace_accesses). */
struct TraceEvent {
    uint64_t start = 0, end = 0; // [start, end): the unit is busy (WAIT_FLAG: blocked)
    int64_t bytes = 0;           // DMA bytes moved; vector/matrix bytes written
    uint32_t pc = 0;
    isa::ProvenanceId prov = 0;
    uint32_t first_access = 0;   // index into SimReport::trace_accesses
    uint16_t core = 0;
    Name pipe;
    Name src, dst;               // memory levels (DMA, vector, matrix)
    Name stall;                  // why it started late or ran long ("" if it did not)
    isa::Op op = isa::Op::NOP;
    uint8_t num_accesses = 0;    // DMA, vector, matrix: the ranges it read and wrote (what the race check sees)
};

/** Receives each recorded trace event as the simulator makes it (tessel sim --trace streams
 * them to a file this way instead of holding them). Exceptions it throws end the run. */
class TraceSink {
public:
    virtual ~TraceSink() = default;
    virtual void event(const TraceEvent &e) = 0;
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
    std::vector<TraceEvent> trace;     // recorded events (SimOptions::trace), at most max_trace_events
    std::vector<TraceAccess> trace_accesses; // TraceEvent::first_access indexes it; see accesses()
    // The trace cap: past SimOptions::max_trace_events, events are counted but not recorded
    // (nor streamed). Busy, stall, instruction and edge figures come from counters and stay exact.
    bool trace_truncated = false;
    uint64_t trace_events = 0;          // events the run produced, recorded or not
    uint64_t trace_recorded = 0;        // events recorded (in trace and/or handed to the sink)
    uint64_t trace_cut_cycle = 0;       // start cycle of the first event not recorded
    int64_t l2_hit_bytes = 0, l2_miss_bytes = 0;
    int64_t gm_read_bytes = 0;         // bytes read from GM (HBM/DRAM): the L2's sector fills when there is
                                       // one (l2_miss_bytes counts only the bytes asked for), else the
                                       // burst-rounded bytes read
    int64_t gm_write_bytes = 0;        // bytes written to GM (through the L2 when there is one)
    uint64_t gm_write_drain_cycles = 0; // gm_write_bytes at the GM write rate: the run cannot end before
                                        // the write-back L2 has drained them to HBM
    int cores = 1;

    /** The ranges event e read and wrote. */
    struct Accesses {
        const TraceAccess *b = nullptr, *e = nullptr;
        const TraceAccess *begin() const { return b; }
        const TraceAccess *end() const { return e; }
        size_t size() const { return static_cast<size_t>(e - b); }
    };
    Accesses accesses(const TraceEvent &ev) const {
        const TraceAccess *p = trace_accesses.data() + ev.first_access;
        return {p, p + ev.num_accesses};
    }
    /** Appends an event and its accesses (the simulator; tests building synthetic traces). */
    void add_event(TraceEvent ev, const std::vector<TraceAccess> &acc = {});
    /** "trace: 2000000 of 336000000 events recorded (stopped at cycle N; ...)", or "" if complete. */
    std::string trace_cut_note() const;
};

/** A program error found while simulating: out-of-bounds access, race,
 * deadlock, bad operands. The message names the instruction (pc, mnemonic). */
class SimError : public UserError {
public:
    explicit SimError(const std::string &msg) : UserError(msg) {}
};

/** The run was cancelled through SimOptions::control (not an error of the program). */
class SimCancelled : public SimError {
public:
    explicit SimCancelled(const std::string &msg) : SimError(msg) {}
};

/** Runs `prog`. `args` follow Program::args (same count, dtype and byte size);
 * output arguments are written in place (so are inputs the program writes). */
SimReport simulate(const isa::Program &prog, const ArchSpec &arch, std::vector<Tensor> &args,
                   const SimOptions &opt = SimOptions{});

/**
 * Chrome/Perfetto trace-event JSON written as the events come: one track per core and
 * pipe (named when first seen), "X" events with args pc/bytes/src/dst/provenance
 * (directive, func, loop)/stall; finish() closes it with otherData (kernel, arch, cycles,
 * and where a capped trace stops). A failed write (a full disk) is a UserError naming `what`.
 */
class ChromeTraceWriter : public TraceSink {
public:
    ChromeTraceWriter(std::ostream &os, const isa::Program &prog, std::string what = "the trace");
    void event(const TraceEvent &e) override;
    void finish(const SimReport &r);
    /** Closes the JSON of a run that stopped with an error (otherData.error = message). */
    void finish_with_error(const std::string &message);

private:
    void check();
    void close(const std::string &other);
    std::ostream &os_;
    const isa::Program &prog_;
    std::string what_;
    std::vector<std::string> prov_args_;         // per provenance id: its ,"provenance":... args text
    std::vector<std::vector<int>> tid_;          // [core][pipe name id] -> track id (0 = not yet named)
    int next_tid_ = 1;
    bool first_ = true, closed_ = false;
};

/** A ChromeTraceWriter to a file (`tessel sim --trace`, `tessel run --trace`): the
 * constructor opens it (a UserError if it cannot); record() runs a simulation that has
 * this as its SimOptions::trace_sink and closes the JSON with the report, or with the
 * error the run threw (then rethrown), so the file is valid JSON either way. */
class TraceFile : public TraceSink {
public:
    TraceFile(const std::string &path, const isa::Program &prog);
    ~TraceFile() override;
    void event(const TraceEvent &e) override;
    /** The file for `path` set as opt's trace sink, or nullptr (and nothing set) when path is "". */
    static std::unique_ptr<TraceFile> open(const std::string &path, const isa::Program &prog, SimOptions &opt);
    /** Calls run() (it simulates and returns a reference to its SimReport) and, with a file,
     * closes the file's JSON after it. */
    template <typename F>
    static void record(TraceFile *file, F run) {
        if (!file) {
            run();
            return;
        }
        try {
            file->finish(run());
        } catch (const UserError &e) {
            file->finish_with_error(e.what());
            throw;
        }
    }

private:
    void finish(const SimReport &r);
    void finish_with_error(const std::string &message);
    std::unique_ptr<std::ofstream> os_;
    std::unique_ptr<ChromeTraceWriter> writer_;
};

/** The whole trace as Chrome/Perfetto JSON (ChromeTraceWriter over r.trace). */
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
