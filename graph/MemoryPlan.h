#ifndef TESSEL_GRAPH_MEMORYPLAN_H
#define TESSEL_GRAPH_MEMORYPLAN_H

// GM memory planning for a graph after its passes (docs/models.md). The
// kernels run in the graph's order, one step each (a fused group is one step,
// at its last node; views and folded constants are no step). Every activation
// tensor that goes to GM (graph inputs, outputs, kernels' results; not views,
// which share their source's buffer, and not a fused group's intermediates,
// which stay on chip) lives from the step that writes it to the last step
// that reads it or one of its views (graph inputs from the first step, graph
// outputs to the last), and gets an offset in one arena: greedy by size, the
// largest first, each at the best-fitting gap among the tensors already placed
// whose lifetimes overlap its own. Constants are placed once, in their own
// region, in order of first use. Halide-free.

#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::graph {

struct PlannedTensor {
    std::string name;
    int64_t bytes = 0;        // the tensor's bytes
    int64_t size = 0;         // bytes rounded up to the alignment (what it occupies)
    int64_t offset = 0;       // in its region
    int first = 0, last = 0;  // the steps it is live in, inclusive
    bool constant = false;    // in the constants region
    std::vector<std::string> views; // tensors that are views of it (same offset)
};

struct GroupOnChip {
    std::string group;        // the fused group's name
    std::vector<std::string> tensors; // its intermediates
    int64_t bytes = 0;        // their bytes: each would be written to GM and read back
};

struct MemoryPlan {
    int64_t alignment = 0;
    std::vector<std::string> steps;       // the kernels in order (a node's or a group's name)
    std::vector<PlannedTensor> tensors;   // arena tensors by offset, then constants by offset
    int64_t arena_peak = 0;               // the arena's size: the highest offset + size
    int64_t lower_bound = 0;              // the most bytes (aligned) live at one step
    int lower_bound_step = 0;             // the step where that is
    int64_t constant_bytes = 0;           // the constants region's size
    std::vector<GroupOnChip> on_chip;
};

/** Plans `g`'s GM. `alignment` is GM's buffer alignment (the ArchSpec's). */
MemoryPlan plan_memory(const Graph &g, int64_t alignment);

/** Checks that no two arena tensors live at the same step overlap in memory and
 * that each fits the arena; an InternalError naming both otherwise. */
void check_memory_plan(const MemoryPlan &p);

/** The plan as text: one line per tensor (offset, bytes, lifetime, views),
 * the peak beside the lower bound, the bytes each fused group keeps off GM. */
std::string print_memory_plan(const MemoryPlan &p);

} // namespace tessel::graph

#endif
