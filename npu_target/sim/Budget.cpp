// The run budgets (SimOptions::max_instructions, max_cycles): the bookkeeping the
// prediction needs (backward-branch loops on core 0, scalar instructions per
// provenance) and the message of a run stopped by its budget: what stopped it,
// which Funcs run as scalar code, how long the whole run would take, what to do.
// docs/simulator.md "Budgets" states the prediction's assumptions.

#include "npu_target/sim/Machine.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace tessel::sim::detail {

void Machine::note_loop(uint32_t pc, const isa::Instr &in, int64_t ra, int64_t rb) {
    LoopStat &l = loops[pc];
    if (l.execs == 0 || ra <= l.last_ra) { // first run, or the counter went back: a new instance
        l = LoopStat{};
        l.top = static_cast<uint32_t>(in.imm);
        l.first_ra = ra;
        l.first_instr = issued_total;
    }
    l.execs++;
    l.last_ra = ra;
    l.last_rb = rb;
    l.last_instr = issued_total;
}

namespace {

std::string pct(uint64_t part, uint64_t whole) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
    return buf;
}

std::string seconds(double s) {
    char buf[32];
    if (s < 100) {
        std::snprintf(buf, sizeof buf, "%.1f s", s);
    } else if (s < 7200) {
        std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
    } else {
        std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
    }
    return buf;
}

/** One enclosing loop with what its current instance has shown. */
struct Level {
    uint32_t branch_pc = 0;
    const LoopStat *s = nullptr;
    int64_t trips() const { return s->last_rb - (s->first_ra - 1); } // end - min
};

} // namespace

void Machine::budget_exceeded(Budget b, const Core &c, uint32_t pc, uint64_t cycle) const {
    const bool instr = b == Budget::Instructions;
    const uint64_t limit = instr ? opt.max_instructions : opt.max_cycles;
    const uint64_t done = instr ? issued_total - 1 : issued_total; // the instruction stopped did not run
    std::ostringstream os;
    os << "simulation exceeded " << (instr ? "max_instructions" : "max_cycles") << " = " << limit << " on core "
       << c.id << " at " << instr_tag(pc, prog.code.at(pc)) << ": the run was stopped by its "
       << (instr ? "instruction" : "cycle") << " budget after " << done << " instructions, at cycle " << cycle
       << ".";

    // Scalar code: which Funcs issue the scalar-unit instructions.
    uint64_t scalar = 0;
    for (uint64_t n : scalar_by_prov) {
        scalar += n;
    }
    std::vector<std::pair<uint64_t, std::string>> by_func; // instructions, Func
    for (size_t id = 0; id < scalar_by_prov.size(); ++id) {
        if (!scalar_by_prov[id]) {
            continue;
        }
        std::string f = id < prog.provenance.size() && !prog.provenance[id].func.empty() ? prog.provenance[id].func : "";
        auto it = std::find_if(by_func.begin(), by_func.end(), [&](const auto &x) { return x.second == f; });
        if (it == by_func.end()) {
            by_func.emplace_back(scalar_by_prov[id], f);
        } else {
            it->first += scalar_by_prov[id];
        }
    }
    std::sort(by_func.begin(), by_func.end(), [](const auto &x, const auto &y) {
        return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    std::string hot_func;
    if (done && scalar * 2 >= done) {
        os << "\n  scalar code: " << pct(scalar, done) << " of the instructions ran on the scalar unit";
        for (size_t i = 0; i < by_func.size() && i < 3; ++i) {
            if (by_func[i].first * 10 < scalar && i > 0) {
                break;
            }
            if (by_func[i].second.empty()) {
                os << (i ? "; " : ": ") << pct(by_func[i].first, scalar) << " from code with no Func provenance";
                continue;
            }
            if (hot_func.empty()) {
                hot_func = by_func[i].second;
            }
            os << (i ? "; " : ": ") << "Func '" << by_func[i].second << "' runs as scalar code ("
               << pct(by_func[i].first, scalar) << " of them)";
        }
        os << ". Nothing of it was vectorized or tensorized, so it computes one element per instruction.";
    }

    // Prediction: the loops around core 0's pc, from the outermost that has run twice in.
    const Core &c0 = cores.front();
    const uint32_t at = c0.pc;
    std::vector<Level> enclosing;
    for (const auto &kv : loops) {
        if (kv.second.top <= at && at <= kv.first) {
            enclosing.push_back(Level{kv.first, &kv.second});
        }
    }
    std::sort(enclosing.begin(), enclosing.end(), [](const Level &x, const Level &y) {
        return x.s->top != y.s->top ? x.s->top < y.s->top : x.branch_pc > y.branch_pc;
    });
    // Levels whose current instance has been seen (from the innermost outwards).
    size_t first_known = enclosing.size();
    while (first_known > 0 && enclosing[first_known - 1].s->execs >= 1 && enclosing[first_known - 1].trips() > 0) {
        --first_known;
    }
    size_t measured = enclosing.size(); // the outermost known level with two iterations done
    for (size_t i = first_known; i < enclosing.size(); ++i) {
        if (enclosing[i].s->execs >= 2) {
            measured = i;
            break;
        }
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (measured < enclosing.size()) {
        const Level &m = enclosing[measured];
        const double per_iter =
            static_cast<double>(m.s->last_instr - m.s->first_instr) / static_cast<double>(m.s->execs - 1);
        double remaining = static_cast<double>(m.trips() - static_cast<int64_t>(m.s->execs)) * per_iter -
                           static_cast<double>(done - m.s->last_instr);
        double one = per_iter * static_cast<double>(m.trips()); // one iteration of the level outside
        for (size_t j = measured; j-- > first_known;) {
            const Level &l = enclosing[j];
            remaining += static_cast<double>(std::max<int64_t>(0, l.trips() - static_cast<int64_t>(l.s->execs) - 1)) * one;
            one *= static_cast<double>(l.trips());
        }
        remaining = std::max(0.0, remaining);
        const double total = static_cast<double>(done) + remaining;
        const Level &outer = enclosing[first_known];
        const isa::Instr &bi = prog.code[outer.branch_pc];
        std::string loop_name = bi.prov < prog.provenance.size() ? prog.provenance[bi.prov].loop : "";
        const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
        const double cyc = done ? static_cast<double>(cycle) / static_cast<double>(done) : 0;
        char buf[64];
        os << "\n  prediction: the loop nest running now (outermost counted loop "
           << (loop_name.empty() ? std::string() : loop_name + " ") << "at pc " << outer.s->top << "-"
           << outer.branch_pc << ": " << outer.s->execs << " of " << outer.trips() << " iterations done";
        std::snprintf(buf, sizeof buf, "%.0f", per_iter);
        os << "; an iteration of the loop at pc " << m.s->top << "-" << m.branch_pc << " takes " << buf
           << " instructions) needs about ";
        std::snprintf(buf, sizeof buf, "%.0f", total);
        os << buf << " instructions and ";
        std::snprintf(buf, sizeof buf, "%.0f", total * cyc);
        os << buf << " cycles in all (at this run's cycles per instruction; code after it not counted)";
        if (rate > 0) {
            std::snprintf(buf, sizeof buf, "%.1f", rate / 1e6);
            os << ", about " << seconds(total / rate) << " of simulation at this run's " << buf << " M instructions/s";
        }
        os << ".";
    } else {
        os << "\n  prediction: none (no loop counted by a backward branch around pc " << at
           << " has run two iterations yet).";
    }
    os << "\n  to finish: raise the budget (" << (instr ? "--max-instructions N" : "--max-cycles N")
       << ", 0 = no limit; SimOptions::" << (instr ? "max_instructions" : "max_cycles") << ")";
    if (!hot_func.empty()) {
        os << ", or schedule '" << hot_func
           << "' for the vector or matrix unit (vectorize it, or tensorize its update; docs/schedule-format.md)";
    }
    os << ".";
    throw SimError(os.str());
}

} // namespace tessel::sim::detail
