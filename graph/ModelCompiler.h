#ifndef TESSEL_GRAPH_MODELCOMPILER_H
#define TESSEL_GRAPH_MODELCOMPILER_H

// One model compile (`tessel model compile`, docs/models.md): import
// (graph/GraphImport.h), the graph passes (graph/passes/Passes.h) with the
// graph printed after the ones asked for, the check that every remaining node
// has a kernel, and the GM memory plan (graph/MemoryPlan.h) at the arch's GM
// alignment. Halide-free: it decides what is a kernel and where tensors live;
// compiling the kernels is the kernel level's (the compile facade's).

#include "graph/Graph.h"
#include "graph/GraphImport.h"
#include "graph/MemoryPlan.h"

#include <functional>
#include <set>
#include <string>

namespace tessel::graph {

struct ModelCompileOptions {
    std::string arch = "ascend-like";   // a preset or an ArchSpec file
    ImportOptions import;
    /** Print the graph after these passes ("import" is the graph as read; "all" every one). */
    std::set<std::string> dump_after;
};

struct CompiledModel {
    Graph graph;        // after every pass
    MemoryPlan plan;
};

/** "import, fold-constants, ..., all": what --dump-after takes. */
std::string dump_after_names();
/** A UserError for a --dump-after name that is not a pass, "import" or "all". */
void check_dump_after(const std::set<std::string> &names);

/** Compiles `path`; `dump` receives each requested graph print as it happens. */
CompiledModel compile_model(const std::string &path, const ModelCompileOptions &o,
                            const std::function<void(const std::string &)> &dump = {});

/** The GM alignment of an arch: its off-chip level's. */
int64_t gm_alignment(const std::string &arch);

} // namespace tessel::graph

#endif
