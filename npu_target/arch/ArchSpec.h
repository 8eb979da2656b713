#ifndef TESSEL_NPU_TARGET_ARCH_ARCHSPEC_H
#define TESSEL_NPU_TARGET_ARCH_ARCHSPEC_H

// ArchSpec: the one description of the NPU, read by the compiler, the cost
// model, the simulator and the IDE. Plain data; loaded from JSON (a preset name
// or a file) and validated so that every consumer can trust it. Figures and
// their sources are in ../shared/NPU_MODEL.md; the JSON schema is documented in
// docs/arch-format.md. All rates are per core, per cycle, unless marked shared.

#include "npu_target/common/DType.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/** One memory level (GM, L1, L0A, L0B, L0C, UB, ...). */
struct MemoryLevel {
    std::string name;
    uint64_t size_bytes = 0;
    bool off_chip = false;   // GM: kernel arguments live here (addressed through argument buffers)
    double rd_bytes_per_cycle = 0;
    double wr_bytes_per_cycle = 0;
    int latency = 0;         // cycles
    int alignment = 32;      // required alignment of buffers placed in this level, bytes
    // Bank model (used for the vector unit's operand level; 0 = no conflicts modelled).
    int bank_groups = 0;
    int banks_per_group = 0;
    int bank_row_bytes = 0;
    std::vector<std::string> layouts; // layouts the level can hold ("ND", "NZ", ...)
};

/** One src->dst edge of a transfer engine. */
struct DmaEdge {
    std::string src; // memory level names
    std::string dst;
    double bytes_per_cycle = 0;
};

/** A transfer engine (MTE2, MTE1, MTE3, FIX, or a single DMA). */
struct DmaEngine {
    std::string name;
    std::string pipe;            // the pipe its instructions queue on
    std::vector<DmaEdge> edges;
    int setup_cycles = 0;        // engine busy per descriptor
    int latency = 0;             // data visible this many cycles after the transfer ends
    int max_outstanding = 1;     // descriptors in flight
    int max_dims = 2;            // descriptor dimensionality
    int64_t max_count = 4095;    // per-dimension count limit
    int burst_bytes = 32;        // contiguous runs are charged in whole bursts
    int align_bytes = 32;        // GM addresses not aligned to this pay misalign_factor
    double misalign_factor = 1.0;// bandwidth multiplier for misaligned transfers (<= 1)
    std::vector<std::string> transforms; // "nd2nz", "pad", "transpose", "quant", "relu", ...
    /** Entries of the engine's per-channel requantisation parameter table (FIXPARAM
     * loads it, a `quant` DMA applies it); 0 = the engine has none. */
    int quant_channels = 0;

    /** The element-count limit of descriptor dimension `dim` for elements of `elem_bytes`.
     * A contiguous innermost dimension is a run counted in bursts (NPU_MODEL: "2-D
     * descriptor in 32 B units, count <= 4095"), so it may hold max_count bursts of
     * bytes; every other dimension counts repeats, at most max_count. */
    int64_t count_limit(int dim, int64_t elem_bytes, bool contiguous) const {
        if (dim == 0 && contiguous && elem_bytes > 0 && burst_bytes > elem_bytes) {
            return max_count * burst_bytes / elem_bytes;
        }
        return max_count;
    }
};

struct MatrixShape {
    int m0 = 0, k0 = 0, n0 = 0;
};

/** The matrix (cube) unit: per-dtype fractal shape, accumulator type, operand levels. */
struct MatrixUnit {
    std::string pipe = "M";
    std::map<DType, MatrixShape> shapes; // input dtype -> m0 x k0 x n0 per cycle
    std::map<DType, DType> accumulators; // input dtype -> accumulator dtype
    std::string a_level, b_level, c_level; // e.g. L0A, L0B, L0C
    int fill_drain_cycles = 0;  // charged when a matmul does not follow another back-to-back
    int latency = 0;            // issue -> result visible in c_level
    int64_t macs_per_cycle(DType t) const; // m0*k0*n0 for t, 0 if unsupported
};

/** The vector unit: repeats of bytes_per_repeat over operands in `level`. */
struct VectorUnit {
    std::string pipe = "V";
    std::string level;          // operand level, e.g. UB
    int bytes_per_repeat = 256;
    int block_bytes = 32;
    int max_repeat = 255;
    std::map<std::string, int> cycles_per_repeat; // op name -> cycles; "default" required
    std::vector<DType> dtypes;  // element types it computes on
    int cycles_for(const std::string &op) const;
};

struct ScalarUnit {
    std::string pipe = "S";
    int issue_cycles = 1;
    int registers = 32;         // general-purpose 64-bit registers (r0 reads as zero)
    uint64_t stack_bytes = 4096;// scalar local memory for spills
};

struct SyncModel {
    int event_ids_per_pair = 8; // set_flag/wait_flag ids per (src, dst) pipe pair
    bool barrier = true;
};

/** The chip: cores sharing L2 and GM (HBM/DRAM) bandwidth. */
struct ChipModel {
    int cores = 1;
    uint64_t l2_bytes = 0;            // 0 = no L2: every GM access at the GM rate
    int l2_line_bytes = 512;
    int l2_sector_bytes = 32;         // fill granularity: a miss fetches the sectors it touches
    double l2_rd_bytes_per_cycle = 0; // per core
    double l2_wr_bytes_per_cycle = 0;
    int l2_latency = 0;
    double gm_bytes_per_cycle = 0;    // per core (HBM/DRAM)
    double gm_aggregate_bytes_per_cycle = 0; // all cores together
    int gm_latency = 0;
    bool gm_shared_rw_port = false;   // reads and writes share one GM port (NPU_MODEL 6.5)
};

struct ArchSpec {
    std::string name;
    std::string description;
    double clock_hz = 1e9;
    std::vector<MemoryLevel> memories;
    std::vector<DmaEngine> engines;
    MatrixUnit matrix;
    VectorUnit vector;
    ScalarUnit scalar;
    std::map<std::string, int> pipes; // pipe name -> queue depth
    SyncModel sync;
    ChipModel chip;

    const MemoryLevel *find_level(const std::string &n) const;
    int level_index(const std::string &n) const; // -1 if absent
    /** The engine with an edge src->dst (and that edge), or nullptr. */
    const DmaEngine *engine_for(const std::string &src, const std::string &dst, const DmaEdge **edge = nullptr) const;
    /** Canonical JSON text (sorted keys, no whitespace variation); hash() is of this. */
    std::string to_json(int indent = 2) const;
    /** 64-bit FNV-1a of the canonical JSON, printed as 16 hex digits. */
    std::string hash() const;
};

/** Names of the shipped presets: ascend-like, gemmini-like, auto-int8. */
std::vector<std::string> arch_presets();
/** A preset name or a path to a JSON file. Throws UserError naming the field and
 * the problem (unknown key, negative size, an edge to a missing level, ...). */
ArchSpec load_arch(const std::string &preset_or_path);
/** Parses and validates JSON text; `origin` names the source in messages. */
ArchSpec parse_arch(const std::string &json_text, const std::string &origin);

} // namespace tessel

#endif
