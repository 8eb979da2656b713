// One model compile (graph/ModelCompiler.h).
#include "graph/ModelCompiler.h"

#include "graph/passes/Passes.h"
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"

namespace tessel::graph {

std::string dump_after_names() { return "import, " + graph_pass_names() + ", all"; }

void check_dump_after(const std::set<std::string> &names) {
    for (const std::string &n : names) {
        bool known = n == "import" || n == "all";
        for (const GraphPass &p : graph_passes()) {
            known = known || n == p.name;
        }
        if (!known) {
            user_error("--dump-after ", n, ": no such pass (", dump_after_names(), ")");
        }
    }
}

int64_t gm_alignment(const std::string &arch) {
    const ArchSpec a = load_arch(arch);
    for (const MemoryLevel &m : a.memories) {
        if (m.off_chip) {
            return m.alignment;
        }
    }
    user_error(arch, ": the arch has no off-chip memory level (GM) to place a model's tensors in");
}

CompiledModel compile_model(const std::string &path, const ModelCompileOptions &o,
                            const std::function<void(const std::string &)> &dump) {
    check_dump_after(o.dump_after);
    const int64_t alignment = gm_alignment(o.arch);
    auto wanted = [&o](const std::string &pass) { return o.dump_after.count("all") || o.dump_after.count(pass); };
    CompiledModel r;
    r.graph = import_onnx_graph(path, o.import);
    if (dump && wanted("import")) {
        dump(print_graph(r.graph, "import"));
    }
    run_graph_passes(r.graph, [&](const std::string &pass, const Graph &g) {
        if (dump && wanted(pass)) {
            dump(print_graph(g, pass));
        }
    });
    check_supported(r.graph);
    r.plan = plan_memory(r.graph, alignment);
    return r;
}

} // namespace tessel::graph
