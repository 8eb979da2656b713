#ifndef TESSEL_NPU_TARGET_SIM_MACHINE_H
#define TESSEL_NPU_TARGET_SIM_MACHINE_H

// Internal state of the simulator (not installed, not for other modules):
// memories, the L2, per-core pipes and flags, and the functional/timing
// entry points that Simulator.cpp chains. See docs/simulator.md.

#include "npu_target/sim/Simulator.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessel::sim::detail {

constexpr uint64_t kNever = UINT64_MAX;
using isa::kConstLevel;

/** A byte range [lo, hi) of one memory level (GM ranges use GM addresses). */
struct Range {
    int level = 0; // index into ArchSpec::memories, or kStackLevel / kConstLevel
    uint64_t lo = 0, hi = 0;
    bool write = false;
};

/** An access still in flight, for the race check. */
struct AccessRec {
    Range r;
    int pipe = 0;
    uint32_t pc = 0;
    uint64_t until = 0; // reads: end of the instruction; writes: when the data is visible
    uint64_t seq = 0;   // issue order (program order on this core)
};

/** The GM: the kernel arguments, placed at gm_arg_addresses(). */
struct GmSegment {
    uint64_t base = 0, size = 0;
    uint8_t *data = nullptr;
    int arg = 0;
};

/** Bytes of one GM read as the L2 served them. */
struct L2Read {
    int64_t hit = 0;     // bytes read from resident sectors
    int64_t miss = 0;    // bytes read from sectors that were not resident
    int64_t fetched = 0; // bytes the misses brought from GM: whole sectors
};

/**
 * Capacity-limited LRU of GM lines, shared by every core. A line is filled in sectors: a
 * miss fetches the sectors the read touches (not the whole line), so a strided read of part
 * of a line does not make the rest of it resident.
 */
class L2Cache {
public:
    void configure(uint64_t capacity_bytes, uint64_t line_bytes, uint64_t sector_bytes);
    /** Reads [addr, addr + len): the missing sectors are fetched (inserting the line, evicting the LRU line). */
    L2Read read(uint64_t addr, uint64_t len);
    /** Write-allocate: the sectors [addr, addr + len) touches become resident. */
    void write(uint64_t addr, uint64_t len);
    bool enabled() const { return capacity_lines_ > 0; }

private:
    /** The line's resident-sector mask (inserting the line, empty, if absent); marks it most recent. */
    uint64_t &line(uint64_t index);
    /** Calls f(the line's sector mask, the sector's bit, bytes of [addr, addr + len) in it) per sector touched. */
    template <typename F>
    void each_sector(uint64_t addr, uint64_t len, F f);
    uint64_t capacity_lines_ = 0, line_bytes_ = 512, sector_bytes_ = 32;
    struct Line {
        std::list<uint64_t>::iterator at;
        uint64_t sectors = 0; // bit i: sector i is resident
    };
    std::list<uint64_t> lru_; // front = most recent
    std::unordered_map<uint64_t, Line> where_;
};

/** A non-scalar instruction waiting in a pipe queue, register operands captured at issue. */
struct Queued {
    uint32_t pc = 0;
    uint64_t enq = 0;
    int64_t ra = 0, rb = 0, rc = 0, rd = 0;
    uint64_t seq = 0; // issue order
};

struct PipeState {
    std::string name;
    size_t depth = 32;
    std::deque<Queued> q;
    uint64_t next_start = 0;    // in order: the next instruction starts no earlier
    uint64_t last_complete = 0; // latest "visible" time of started instructions
    uint64_t last_pop = 0;      // when the head last left the queue (unblocks a full queue)
    std::deque<uint64_t> inflight; // DMA descriptors in flight (visible times)
    uint64_t busy = 0, stall = 0, instructions = 0;
    isa::Op last_op = isa::Op::NOP;
    uint64_t last_end = 0;
};

/** An engine's requantisation parameters, loaded by FIXPARAM (docs/isa-semantics.md). */
struct QuantState {
    std::vector<int32_t> bias, scale; // per channel; empty = nothing loaded
    int shift = 0;
    bool relu = false;
    DType out = DType::Int8;
};

struct Core {
    int id = 0;
    std::vector<QuantState> quant; // per engine
    std::vector<std::vector<uint8_t>> mem; // per level; empty for off-chip levels
    std::vector<uint8_t> stack;
    std::vector<int64_t> regs;
    uint32_t pc = 0;
    uint64_t fe_time = 0;
    bool ended = false;
    std::vector<PipeState> pipes;                    // internal pipe ids; 0 = S (front end)
    std::vector<std::deque<uint64_t>> flags;         // [(src*P + dst)*E + event] fire times
    std::vector<AccessRec> recent;                   // accesses possibly still in flight, or that ran
                                                     // ahead of an earlier-issued instruction
    uint64_t issued = 0;                             // instructions issued so far (program order)
    uint64_t cur_seq = 0;                            // issue number of the instruction executing
    double gm_port_free = 0;                         // per-core GM port (gm_shared_rw_port)
};

/** Result of a DMA's functional copy, as the timing model needs it. */
struct DmaCost {
    int64_t bytes = 0;
    uint64_t transfer = 0;    // cycles after setup
    double gm_bytes = 0;      // bytes that used the GM (misses and writes), for the shared channel
    int edge = 0;             // index of the edge within its engine
    bool all_l2_hits = false; // a GM read served entirely by the L2 (latency = l2_latency)
};

/** Memo of the bank-conflict cost of one repeat of contiguous operands. */
struct ConflictKey {
    std::array<int64_t, 5> v{};
};
struct ConflictMemo {
    ConflictKey key;
    uint64_t extra = 0;
    bool valid = false;
};

/** Why a run was stopped by its budget. */
enum class Budget { Instructions, Cycles };

/** A loop closed by a backward BLT (the selector's bottom test: counter + 1 < end), on core 0:
 * its current instance as far as it has run, for the budget's prediction (Budget.cpp). */
struct LoopStat {
    uint32_t top = 0;            // branch target: the first pc of the body
    uint64_t execs = 0;          // branch executions in this instance (completed iterations)
    int64_t first_ra = 0, last_ra = 0, last_rb = 0; // counter (after its step) and end
    uint64_t first_instr = 0, last_instr = 0;       // issued_total at the first and last execution
};

/** The stall reasons, interned once. */
struct StallNames {
    Name wait_flag{"wait_flag"}, barrier{"barrier"}, queue_full{"queue_full"}, dma_outstanding{"dma_outstanding"},
        fill_drain{"fill_drain"}, bank_conflict{"bank_conflict"};
};

struct Machine {
    const isa::Program &prog;
    const ArchSpec &arch;
    const SimOptions &opt;
    std::vector<Core> cores;
    std::vector<GmSegment> gm;
    L2Cache l2;
    std::vector<std::string> pipe_names;  // internal pipe id -> name
    std::vector<int> enum_pipe;           // isa::Pipe -> internal id (-1 absent)
    std::vector<int> engine_pipe;         // engine index -> internal id
    int vec_pipe = -1, mat_pipe = -1;
    int vec_level = -1, a_level = -1, b_level = -1, c_level = -1;
    int events = 8;
    double gm_channel_free = 0;           // shared aggregate GM channel
    SimReport report;
    std::vector<EdgeStats> edge_stats;    // [engine][edge] flattened
    std::vector<size_t> edge_base;        // engine -> first index in edge_stats
    std::vector<ConflictMemo> conflict_memo = std::vector<ConflictMemo>(1024);
    std::vector<Name> pipe_ids;           // internal pipe id -> interned name (trace events)
    std::vector<Name> level_ids;          // level -> interned name, filled on first use (level_id)
    StallNames stall;

    // ---- budgets (Budget.cpp) ----
    uint64_t issued_total = 0;            // instructions issued (every core), for max_instructions
    uint64_t now = 0;                     // start cycle of the pipe instruction executing
    std::vector<uint64_t> scalar_by_prov; // scalar-unit instructions executed, per provenance id
    std::unordered_map<uint32_t, LoopStat> loops; // per backward-BLT pc, core 0
    std::chrono::steady_clock::time_point started;
    /** Records one execution of the backward BLT at pc (counter ra, end rb). */
    void note_loop(uint32_t pc, const isa::Instr &in, int64_t ra, int64_t rb);
    /** Throws the SimError of an exhausted budget: what stopped, the scalar code and its
     * Funcs, the prediction of the whole run, and what to do. */
    [[noreturn]] void budget_exceeded(Budget b, const Core &c, uint32_t pc, uint64_t cycle) const;
    /** Throws that budget's error if an instruction starting at now would end past max_cycles
     * (checked before its work, so one huge instruction cannot run far past the budget). */
    void check_cycle_budget(const Core &c, uint32_t pc, uint64_t end) const {
        if (opt.max_cycles && end > opt.max_cycles) {
            budget_exceeded(Budget::Cycles, c, pc, end);
        }
    }
    Name level_id(int level);

    Machine(const isa::Program &p, const ArchSpec &a, const SimOptions &o) : prog(p), arch(a), opt(o) {}

    // ---- Memory.cpp ----
    void setup_memory(std::vector<Tensor> &args);
    /** Pointer to [addr, addr+len) in `level` of core c, or a SimError naming pc. */
    uint8_t *ptr(Core &c, int level, uint64_t addr, uint64_t len, uint32_t pc);
    bool is_gm(int level) const;
    std::string level_name(int level) const;
    /** Race check of `ranges` for an instruction of `pipe` starting at t; records them. */
    void check_and_record(Core &c, int pipe, uint32_t pc, uint64_t t, const Range *ranges, int n,
                          uint64_t read_until, uint64_t write_until);

    // ---- Scalar.cpp, Vector.cpp, Matrix.cpp, Dma.cpp ----
    /** Executes a scalar-unit instruction; returns its extra latency (cycles beyond issue). */
    uint64_t exec_scalar(Core &c, const isa::Instr &in, uint32_t pc, uint64_t t, bool &branched);
    /** Vector instruction: effect + cycle cost; fills ranges (up to 3) for the race check. */
    uint64_t exec_vector(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr,
                         uint64_t &conflict_cycles, int64_t &bytes);
    uint64_t exec_mmad(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr, int64_t &bytes);
    DmaCost exec_dma(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr);
    /** FIXPARAM: loads the engine's QuantState; returns the engine-busy cycles. */
    uint64_t exec_fixparam(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr);
};

/** The FIX requantisation of one int32 accumulator (docs/isa-semantics.md, "FIX
 * requantisation"): sat_out((wrap32(relu(wrap32(acc + bias)) * scale + 2^(shift-1))) >> shift). */
int32_t fix_requantize(int32_t acc, int32_t bias, int32_t scale, int shift, bool relu, DType out);

/** VREQUANT of one element (docs/isa-semantics.md): sat(round_half_away(a*mult / 2^shift) + zp). */
int32_t requantize(int32_t a, int32_t mult, int shift, int32_t zp, DType out);
/** A "pc N (MNEMONIC)" tag for messages. */
std::string instr_tag(uint32_t pc, const isa::Instr &in);
/** Cost-table name of a vector op ("add", "exp", "ln", ...). */
const char *vector_cost_name(isa::Op op);
int pipe_of_instr(const Machine &m, const isa::Instr &in, uint32_t pc); // internal pipe id
bool is_scalar_op(isa::Op op);

} // namespace tessel::sim::detail

#endif
