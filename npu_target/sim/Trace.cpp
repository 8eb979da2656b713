// Reporting: Chrome/Perfetto trace JSON, the text summary, mnemonics.

#include "npu_target/sim/Machine.h"

#include "npu_target/isa/InstrTable.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <sstream>

namespace tessel::sim {

using isa::Op;

const char *op_mnemonic(Op op) {
    return static_cast<size_t>(op) < static_cast<size_t>(Op::NUM_OPS) ? isa::op_info(op).mnemonic : "?";
}

namespace detail {

const char *vector_cost_name(Op op) {
    const char *k = isa::op_info(op).cost_key;
    return k && *k ? k : "default";
}

} // namespace detail

std::string trace_to_chrome_json(const SimReport &r, const isa::Program &prog) {
    using nlohmann::json;
    json events = json::array();
    // Track ids: one per (core, pipe), numbered in order of first appearance.
    std::map<std::pair<int, std::string>, int> tid;
    std::map<int, bool> cores;
    for (const auto &e : r.trace) {
        auto key = std::make_pair(e.core, e.pipe);
        if (!tid.count(key)) {
            int id = static_cast<int>(tid.size()) + 1;
            tid[key] = id;
        }
        cores[e.core] = true;
    }
    for (const auto &kv : cores) {
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kv.first},
                          {"args", {{"name", "core " + std::to_string(kv.first)}}}});
    }
    for (const auto &kv : tid) {
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kv.first.first}, {"tid", kv.second},
                          {"args", {{"name", kv.first.second}}}});
    }
    for (const auto &e : r.trace) {
        json args = {{"pc", e.pc}, {"bytes", e.bytes}, {"src", e.src}, {"dst", e.dst}, {"provenance", e.prov}};
        if (e.prov < prog.provenance.size()) {
            const auto &p = prog.provenance[e.prov];
            args["directive"] = p.directive_id;
            args["func"] = p.func;
            args["loop"] = p.loop;
        }
        if (!e.stall.empty()) {
            args["stall"] = e.stall;
        }
        events.push_back({{"ph", "X"}, {"name", op_mnemonic(e.op)}, {"cat", e.pipe}, {"pid", e.core},
                          {"tid", tid[{e.core, e.pipe}]}, {"ts", e.start}, {"dur", e.end - e.start}, {"args", args}});
    }
    json doc = {{"traceEvents", events},
                {"displayTimeUnit", "ns"},
                {"otherData", {{"kernel", prog.kernel_name}, {"arch", prog.arch_name}, {"time_unit", "1 us = 1 cycle"},
                               {"cycles", r.cycles}}}};
    return doc.dump();
}

std::string summarize(const SimReport &r) {
    std::ostringstream os;
    char buf[256];
    os << "cycles: " << r.cycles << "   instructions: " << r.instructions << "   cores: " << r.cores << "\n";
    os << "pipe            busy cycles   busy %   instrs   stall cycles\n";
    for (const auto &p : r.pipes) {
        if (p.instructions == 0 && p.busy_cycles == 0) {
            continue;
        }
        std::string name = (r.cores > 1 ? "c" + std::to_string(p.core) + "." : std::string()) + p.pipe;
        std::snprintf(buf, sizeof buf, "%-14s %12llu  %6.1f%%  %7llu  %13llu\n", name.c_str(),
                      static_cast<unsigned long long>(p.busy_cycles), p.busy_pct,
                      static_cast<unsigned long long>(p.instructions), static_cast<unsigned long long>(p.stall_cycles));
        os << buf;
    }
    os << "engine edge             bytes   busy cycles   B/cycle   descriptors\n";
    for (const auto &e : r.edges) {
        if (e.descriptors == 0) {
            continue;
        }
        std::string name = e.engine + " " + e.src + "->" + e.dst;
        std::snprintf(buf, sizeof buf, "%-18s %11lld  %12llu  %8.2f  %12llu\n", name.c_str(),
                      static_cast<long long>(e.bytes), static_cast<unsigned long long>(e.busy_cycles),
                      e.achieved_bytes_per_cycle, static_cast<unsigned long long>(e.descriptors));
        os << buf;
    }
    os << "L2: " << r.l2_hit_bytes << " bytes hit, " << r.l2_miss_bytes << " bytes missed\n";
    return os.str();
}

} // namespace tessel::sim
