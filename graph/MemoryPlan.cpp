// GM memory planning (graph/MemoryPlan.h).
#include "graph/MemoryPlan.h"

#include "npu_target/common/Error.h"

#include <algorithm>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

namespace tessel::graph {

namespace {

int64_t aligned(int64_t bytes, int64_t alignment) {
    return alignment > 1 ? (bytes + alignment - 1) / alignment * alignment : bytes;
}

// The step of each node: its own (a kernel), its group's (a fused node), -1 (a view).
std::vector<int> node_steps(const Graph &g, std::vector<std::string> &steps) {
    std::vector<int> last_member(g.groups.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (g.nodes[i].group >= 0) {
            last_member[g.nodes[i].group] = static_cast<int>(i);
        }
    }
    std::vector<int> step(g.nodes.size(), -1);
    std::vector<int> group_step(g.groups.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); i++) {
        const GraphNode &n = g.nodes[i];
        if (n.view || (n.group >= 0 && last_member[n.group] != static_cast<int>(i))) {
            continue;
        }
        step[i] = static_cast<int>(steps.size());
        if (n.group >= 0) {
            group_step[n.group] = step[i];
        }
        steps.push_back(n.group >= 0 ? g.groups[n.group].name : n.name);
    }
    for (size_t i = 0; i < g.nodes.size(); i++) {
        if (g.nodes[i].group >= 0) {
            step[i] = group_step[g.nodes[i].group];
        }
    }
    return step;
}

bool overlaps(const PlannedTensor &a, const PlannedTensor &b) { return a.first <= b.last && b.first <= a.last; }

} // namespace

MemoryPlan plan_memory(const Graph &g, int64_t alignment) {
    MemoryPlan p;
    p.alignment = alignment;
    const std::vector<int> step = node_steps(g, p.steps);
    const int last_step = std::max<int>(0, static_cast<int>(p.steps.size()) - 1);

    // Which tensors stay on chip: a fused node's output read by the next node of its group.
    std::map<std::string, PlannedTensor> arena, constants;
    for (const auto &[name, t] : g.tensors) {
        const GraphTensor &root = g.storage_of(name);
        if (t.producer >= 0 && g.nodes[t.producer].group >= 0 && !t.is_output &&
            step[t.producer] >= 0 && !t.consumers.empty()) {
            bool inside = true;
            for (int c : t.consumers) {
                inside = inside && g.nodes[c].group == g.nodes[t.producer].group;
            }
            if (inside) {
                GroupOnChip *oc = nullptr;
                for (auto &o : p.on_chip) {
                    oc = o.group == g.groups[g.nodes[t.producer].group].name ? &o : oc;
                }
                if (!oc) {
                    p.on_chip.push_back({g.groups[g.nodes[t.producer].group].name, {}, 0});
                    oc = &p.on_chip.back();
                }
                oc->tensors.push_back(name);
                oc->bytes += t.bytes();
                continue;
            }
        }
        if (t.constant()) {
            bool read = t.is_output;
            for (int c : t.consumers) {
                read = read || step[c] >= 0;
            }
            if (!read) {
                continue; // read by no kernel (a view's shape): metadata, not GM
            }
        }
        auto &region = root.constant() ? constants : arena;
        auto [it, fresh] = region.try_emplace(root.name);
        PlannedTensor &pt = it->second;
        if (fresh) {
            pt.name = root.name;
            pt.bytes = root.bytes();
            pt.size = aligned(pt.bytes, alignment);
            pt.constant = root.constant();
            pt.first = root.is_input || root.constant() ? 0
                       : root.producer >= 0 && step[root.producer] >= 0 ? step[root.producer]
                                                                        : 0;
            pt.last = pt.first;
            pt.first = root.constant() ? std::numeric_limits<int>::max() : pt.first; // constants: first use below
        }
        if (&root != &t) {
            pt.views.push_back(name);
        }
        for (int c : t.consumers) {
            if (step[c] >= 0) {
                pt.last = std::max(pt.last, step[c]);
                if (pt.constant) {
                    pt.first = std::min(pt.first, step[c]);
                }
            }
        }
        if (t.is_output) {
            pt.last = last_step;
            pt.first = pt.constant ? std::min(pt.first, last_step) : pt.first;
        }
    }

    // The arena: greedy by size, best fit among the placed tensors live at the same time.
    std::vector<PlannedTensor> order;
    for (auto &[name, t] : arena) {
        order.push_back(t);
    }
    std::sort(order.begin(), order.end(), [](const PlannedTensor &a, const PlannedTensor &b) {
        return a.size != b.size ? a.size > b.size : a.first != b.first ? a.first < b.first : a.name < b.name;
    });
    std::vector<PlannedTensor> placed;
    for (PlannedTensor t : order) {
        std::vector<const PlannedTensor *> live;
        for (const PlannedTensor &q : placed) {
            if (overlaps(q, t)) {
                live.push_back(&q);
            }
        }
        std::sort(live.begin(), live.end(), [](const PlannedTensor *a, const PlannedTensor *b) {
            return a->offset < b->offset;
        });
        int64_t pos = 0, best = -1, best_gap = std::numeric_limits<int64_t>::max();
        for (const PlannedTensor *q : live) {
            if (q->offset > pos && q->offset - pos >= t.size && q->offset - pos < best_gap) {
                best = pos;
                best_gap = q->offset - pos;
            }
            pos = std::max(pos, q->offset + q->size);
        }
        t.offset = best >= 0 ? best : pos;
        p.arena_peak = std::max(p.arena_peak, t.offset + t.size);
        placed.push_back(t);
    }
    std::sort(placed.begin(), placed.end(), [](const PlannedTensor &a, const PlannedTensor &b) {
        return a.offset != b.offset ? a.offset < b.offset : a.first < b.first;
    });
    for (int s = 0; s <= last_step; s++) {
        int64_t live = 0;
        for (const PlannedTensor &t : placed) {
            live += t.first <= s && s <= t.last ? t.size : 0;
        }
        if (live > p.lower_bound) {
            p.lower_bound = live;
            p.lower_bound_step = s;
        }
    }
    p.tensors = placed;

    // Constants: once each, in order of first use (then of first reference in the nodes).
    std::map<std::string, int> first_ref;
    for (const GraphNode &n : g.nodes) {
        for (const std::string &in : n.inputs) {
            first_ref.try_emplace(in, static_cast<int>(first_ref.size()));
        }
    }
    std::vector<PlannedTensor> cs;
    for (auto &[name, t] : constants) {
        t.first = std::min(t.first, last_step);
        t.last = std::max(t.last, t.first);
        cs.push_back(t);
    }
    std::sort(cs.begin(), cs.end(), [&first_ref](const PlannedTensor &a, const PlannedTensor &b) {
        return a.first != b.first ? a.first < b.first : first_ref[a.name] < first_ref[b.name];
    });
    for (PlannedTensor &t : cs) {
        t.offset = p.constant_bytes;
        p.constant_bytes += t.size;
        p.tensors.push_back(t);
    }
    check_memory_plan(p);
    return p;
}

void check_memory_plan(const MemoryPlan &p) {
    for (size_t i = 0; i < p.tensors.size(); i++) {
        const PlannedTensor &a = p.tensors[i];
        const int64_t region = a.constant ? p.constant_bytes : p.arena_peak;
        if (a.offset < 0 || a.offset + a.size > region || a.size < a.bytes) {
            internal_error("memory plan: '", a.name, "' at ", a.offset, " + ", a.size, " is outside its region of ",
                           region, " bytes");
        }
        if (p.alignment > 1 && a.offset % p.alignment) {
            internal_error("memory plan: '", a.name, "' at ", a.offset, " is not ", p.alignment, "-byte aligned");
        }
        for (size_t j = i + 1; j < p.tensors.size(); j++) {
            const PlannedTensor &b = p.tensors[j];
            const bool same_time = a.constant || overlaps(a, b);
            if (a.constant == b.constant && same_time && a.offset < b.offset + b.size && b.offset < a.offset + a.size) {
                internal_error("memory plan: '", a.name, "' [", a.offset, ", ", a.offset + a.size, ") and '", b.name,
                               "' [", b.offset, ", ", b.offset + b.size, ") overlap while both are live");
            }
        }
    }
}

std::string print_memory_plan(const MemoryPlan &p) {
    std::ostringstream os;
    int arena = 0, constants = 0;
    for (const PlannedTensor &t : p.tensors) {
        (t.constant ? constants : arena)++;
    }
    os << "== memory plan: " << p.steps.size() << " kernels, " << arena << " tensors in the arena, " << constants
       << " constants; GM alignment " << p.alignment << " B ==\n";
    os << "arena peak " << bytes_text(p.arena_peak) << ", lower bound " << bytes_text(p.lower_bound)
       << " (the most bytes live at one step: step " << p.lower_bound_step;
    if (p.lower_bound_step < static_cast<int>(p.steps.size())) {
        os << ", " << p.steps[p.lower_bound_step];
    }
    os << ")";
    if (p.lower_bound > 0) {
        os << std::fixed << std::setprecision(3) << ": peak / lower bound = " << double(p.arena_peak) / p.lower_bound;
    }
    os << "\n";
    os << "  " << std::left << std::setw(12) << "offset" << std::setw(12) << "bytes" << std::setw(10) << "steps"
       << "tensor\n";
    auto line = [&os](const PlannedTensor &t) {
        os << "  " << std::left << std::setw(12) << t.offset << std::setw(12) << t.bytes << std::setw(10)
           << (std::to_string(t.first) + "-" + std::to_string(t.last)) << t.name;
        if (!t.views.empty()) {
            os << " (views:";
            for (const auto &v : t.views) {
                os << " " << v;
            }
            os << ")";
        }
        os << "\n";
    };
    for (const PlannedTensor &t : p.tensors) {
        if (!t.constant) {
            line(t);
        }
    }
    os << "constants " << bytes_text(p.constant_bytes) << ", each placed once; steps = first-last use\n";
    for (const PlannedTensor &t : p.tensors) {
        if (t.constant) {
            line(t);
        }
    }
    int64_t kept = 0;
    for (const GroupOnChip &o : p.on_chip) {
        kept += o.bytes;
    }
    os << "fused groups keep " << bytes_text(kept) << " off GM (without fusion each byte is written to GM and read "
       << "back: " << bytes_text(2 * kept) << " of GM traffic)\n";
    for (const GroupOnChip &o : p.on_chip) {
        os << "  " << o.group << ": " << o.bytes << " B (";
        for (size_t i = 0; i < o.tensors.size(); i++) {
            os << (i ? ", " : "") << o.tensors[i];
        }
        os << ")\n";
    }
    os << "kernels in order:";
    for (size_t i = 0; i < p.steps.size(); i++) {
        os << " " << i << ":" << p.steps[i];
    }
    os << "\n";
    return os.str();
}

} // namespace tessel::graph
