#include "npu_target/passes/PassRunner.h"

#include "npu_target/common/Error.h"
#include "npu_target/lower/FoldVectorLoops.h"
#include "npu_target/lower/HoistAddresses.h"
#include "npu_target/lower/InferDma.h"
#include "npu_target/lower/PlaceBuffers.h"
#include "npu_target/lower/SelectVectorOps.h"
#include "npu_target/lower/Tensorize.h"
#include "npu_target/lower/Specialize.h"
#include "npu_target/lower/SplitCores.h"
#include "npu_target/passes/AdvanceHead.h"
#include "npu_target/passes/AllocateBuffers.h"
#include "npu_target/passes/BankPlacement.h"
#include "npu_target/passes/BufferCredits.h"
#include "npu_target/passes/CheckHazards.h"
#include "npu_target/passes/DeferTail.h"
#include "npu_target/passes/EarlySets.h"
#include "npu_target/passes/InsertSync.h"
#include "npu_target/passes/MultiBuffer.h"
#include "npu_target/passes/RingPanels.h"
#include "npu_target/passes/SelectInstructions.h"
#include "npu_target/passes/UniformRows.h"

#include <algorithm>
#include <chrono>
#include <functional>

namespace tessel {

namespace {

struct Pass {
    PassInfo info;
    std::function<nir::NpuModule(const nir::NpuModule &)> run;
};

const std::vector<Pass> &pass_table() {
    static const std::vector<Pass> table = {
        {{"specialize", "argument shapes become constants; asserts go; intrinsics lowered; simplified"}, specialize},
        {{"split_cores", "parallel(loop, cores): each core takes a contiguous chunk of the loop"}, split_cores},
        {{"place_buffers", "each argument in GM, each allocation in its stage/accumulate_in level"}, place_buffers},
        {{"infer_dma", "staging-copy loop nests become DMA descriptors on the edge's engine"}, infer_dma},
        {{"tensorize", "matrix-product loop nests marked by tensorize become MMAD on the matrix unit"}, tensorize},
        {{"select_vector_ops", "vector stores in the vector level become vector-unit operations"}, select_vector_ops},
        {{"fold_vector_loops", "loops around vector operations become the operations' repeat count"}, fold_vector_loops},
        {{"uniform_rows", "a vector-level buffer whose rows of G elements provably hold G equal values (a Tuple's per-row value repeated along a dimension) is kept as one element per row, and its operations compute one", true}, uniform_rows},
        {{"row_scalar_forms", "a per-row value read at element stride 0 against a full operand: the row-scalar form (VADDRS, VSUBRS, VMULRS ...), which fetches it once per row, not in every repeat", true}, row_scalar_forms},
        {{"multi_buffer", "buffers=N: N copies rotating with the loop they are staged at"}, multi_buffer},
        {{"ring_panels", "single-copy panels reloaded per loop iteration: pieces in a ring of slots, the next panel's loaded during this one", true}, ring_panels},
        {{"defer_tail", "a loop body's vector tail that waits for another pipe runs one iteration later, overlapping that pipe's work of the next iteration", true}, defer_tail},
        {{"advance_head", "a loop body's leading operations of other pipes (attention's score product) for iteration t + 1 run in iteration t, after its last use of what they write and its last work on their pipes", true}, advance_head},
        {{"allocate_buffers", "byte offsets per level with lifetimes; overflow is an error"},
         [](const nir::NpuModule &m) { return allocate_buffers(m); }},
        {{"bank_placement", "allocates again, each vector-level buffer started where its vector operations conflict least on the banks", true}, bank_placement},
        {{"insert_buffer_credits", "multi-buffered copies: flags as credits so the writer runs ahead"}, insert_buffer_credits},
        {{"insert_sync", "set_flag/wait_flag and barriers for every cross-pipe dependency"}, insert_sync},
        {{"early_sets", "a flag's set moves from the consumer to right after the operation the wait depends on, with its own event id, so the consumer does not wait for what the source pipe was given later", true}, early_sets},
        {{"check_hazards", "every cross-pipe RAW/WAR/WAW is ordered by the syncs in the IR, else the compile fails"}, check_hazards},
        {{"hoist_addresses", "the loop-invariant part of each NPU operation's index is computed once before the loop", true}, hoist_addresses},
    };
    return table;
}

} // namespace

const std::vector<PassInfo> &backend_passes() {
    static const std::vector<PassInfo> infos = [] {
        std::vector<PassInfo> v;
        for (const auto &p : pass_table()) {
            v.push_back(p.info);
        }
        v.push_back({"select_instructions", "NPU IR -> instructions, scalar register allocation with spilling"});
        return v;
    }();
    return infos;
}

BackendResult run_backend(const Halide::Internal::Stmt &lowered, const LowerInput &in, const PassOptions &opt) {
    TESSEL_INTERNAL_ASSERT(in.arch != nullptr);
    bool known = opt.dump_after.empty() || opt.dump_after == "all";
    for (const auto &p : backend_passes()) {
        known |= p.name == opt.dump_after;
    }
    if (!known) {
        std::string names;
        for (const auto &p : backend_passes()) {
            names += (names.empty() ? "" : ", ") + p.name;
        }
        user_error("--dump-after=", opt.dump_after, ": no such pass; passes: ", names, ", all");
    }
    for (const auto &name : opt.skip) {
        std::string optional;
        bool ok = false;
        for (const auto &p : backend_passes()) {
            if (p.optional) {
                optional += (optional.empty() ? "" : ", ") + p.name;
                ok |= p.name == name;
            }
        }
        if (!ok) {
            user_error("--skip-pass=", name, ": only optimisation passes can be skipped; they are: ", optional);
        }
    }
    BackendResult r;
    nir::NpuModule m;
    m.kernel_name = in.kernel_name;
    m.arch = in.arch;
    m.schedule = in.npu;
    m.args = in.args;
    m.body = lowered;
    std::string last_text;
    using clock = std::chrono::steady_clock;
    for (const auto &p : pass_table()) {
        if (std::find(opt.skip.begin(), opt.skip.end(), p.info.name) != opt.skip.end()) {
            continue;
        }
        auto t0 = clock::now();
        m = p.run(m);
        double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        std::string text = nir::to_string(m);
        bool changed = text != last_text;
        last_text = text;
        if (opt.time_passes) {
            r.timings.push_back({p.info.name, ms, changed});
        }
        if (changed && (opt.dump_after == "all" || opt.dump_after == p.info.name)) {
            r.dumps.emplace_back(p.info.name, text);
        }
        if (!m.overflow_message.empty()) {
            throw OverflowError(m.overflow_message, m.lifetimes);
        }
        if (p.info.name == "multi_buffer") {
            r.schedule_module = m;
        }
        if (opt.stop_after == p.info.name) {
            r.module = std::move(m);
            r.diagnostics = r.module.diagnostics;
            return r;
        }
    }
    auto t0 = clock::now();
    SelectedProgram sel = select_instructions(m);
    double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (opt.time_passes) {
        r.timings.push_back({"select_instructions", ms, true});
    }
    r.program = std::move(sel.program);
    r.diagnostics = m.diagnostics;
    r.diagnostics.insert(r.diagnostics.end(), sel.diagnostics.begin(), sel.diagnostics.end());
    r.module = std::move(m);
    return r;
}

} // namespace tessel
