// Reporting: Chrome/Perfetto trace JSON, the text summary, mnemonics.

#include "npu_target/sim/Machine.h"

#include "npu_target/isa/InstrTable.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

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

// ---- interned names ---------------------------------------------------------------

namespace {

constexpr size_t kMaxNames = 65535;

struct NameTable {
    std::mutex mu;
    std::unordered_map<std::string, uint16_t> ids;
    std::array<std::atomic<const std::string *>, kMaxNames + 1> names{};
    NameTable() {
        static const std::string empty;
        names[0].store(&empty, std::memory_order_release);
        ids.emplace("", 0);
    }
};

NameTable &name_table() {
    static NameTable *t = new NameTable; // never destroyed: names outlive every report
    return *t;
}

} // namespace

Name::Name(const std::string &s) {
    NameTable &t = name_table();
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.ids.find(s);
    if (it != t.ids.end()) {
        id_ = it->second;
        return;
    }
    if (t.ids.size() > kMaxNames) {
        user_error("the simulator's name table is full (", kMaxNames, " distinct pipe and memory names)");
    }
    id_ = static_cast<uint16_t>(t.ids.size());
    t.ids.emplace(s, id_);
    t.names[id_].store(new std::string(s), std::memory_order_release);
}

const std::string &Name::str() const {
    return *name_table().names[id_].load(std::memory_order_acquire);
}

void SimReport::add_event(TraceEvent ev, const std::vector<TraceAccess> &acc) {
    ev.first_access = static_cast<uint32_t>(trace_accesses.size());
    ev.num_accesses = static_cast<uint8_t>(acc.size());
    trace_accesses.insert(trace_accesses.end(), acc.begin(), acc.end());
    trace.push_back(ev);
}

std::string SimReport::trace_cut_note() const {
    if (!trace_truncated) {
        return "";
    }
    return "trace: the first " + std::to_string(trace_recorded) +
           " of " + std::to_string(trace_events) + " events recorded; it stops at cycle " +
           std::to_string(trace_cut_cycle) + " of " + std::to_string(cycles) +
           " (the trace cap, SimOptions::max_trace_events / --max-trace-events; 0 = unlimited). "
           "Busy, stall and edge figures count the whole run.";
}

// ---- Chrome / Perfetto JSON ---------------------------------------------------------

namespace {

void json_string(std::string &out, const std::string &s) {
    out += '"';
    for (unsigned char ch : s) {
        switch (ch) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (ch < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", ch);
                out += buf;
            } else {
                out += static_cast<char>(ch);
            }
        }
    }
    out += '"';
}

} // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream &os, const isa::Program &prog, std::string what)
    : os_(os), prog_(prog), what_(std::move(what)) {
    os_ << "{\"traceEvents\":[";
    check();
}

void ChromeTraceWriter::check() {
    if (!os_) {
        user_error("cannot write ", what_, " (a write failed: disk full or the file is not writable)");
    }
}

void ChromeTraceWriter::event(const TraceEvent &e) {
    std::string out;
    auto sep = [&] {
        if (!first_) {
            out += ',';
        }
        first_ = false;
    };
    if (tid_.size() <= e.core) {
        tid_.resize(e.core + 1u);
    }
    auto &tracks = tid_[e.core];
    if (tracks.empty()) {
        tracks.assign(1, 0);
        sep();
        out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(e.core) +
               ",\"args\":{\"name\":\"core " + std::to_string(e.core) + "\"}}";
    }
    if (tracks.size() <= e.pipe.id()) {
        tracks.resize(e.pipe.id() + 1u, 0);
    }
    int &tid = tracks[e.pipe.id()];
    if (tid == 0) {
        tid = next_tid_++;
        sep();
        out += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(e.core) +
               ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
        json_string(out, e.pipe.str());
        out += "}}";
    }
    sep();
    out += "{\"ph\":\"X\",\"name\":\"";
    out += op_mnemonic(e.op);
    out += "\",\"cat\":";
    json_string(out, e.pipe.str());
    out += ",\"pid\":" + std::to_string(e.core) + ",\"tid\":" + std::to_string(tid) +
           ",\"ts\":" + std::to_string(e.start) + ",\"dur\":" + std::to_string(e.end - e.start) +
           ",\"args\":{\"pc\":" + std::to_string(e.pc) + ",\"bytes\":" + std::to_string(e.bytes) + ",\"src\":";
    json_string(out, e.src.str());
    out += ",\"dst\":";
    json_string(out, e.dst.str());
    if (prov_args_.size() <= e.prov) {
        prov_args_.resize(e.prov + 1u);
    }
    std::string &pa = prov_args_[e.prov];
    if (pa.empty()) {
        pa = ",\"provenance\":" + std::to_string(e.prov);
        if (e.prov < prog_.provenance.size()) {
            const auto &p = prog_.provenance[e.prov];
            pa += ",\"directive\":";
            json_string(pa, p.directive_id);
            pa += ",\"func\":";
            json_string(pa, p.func);
            pa += ",\"loop\":";
            json_string(pa, p.loop);
        }
    }
    out += pa;
    if (!e.stall.empty()) {
        out += ",\"stall\":";
        json_string(out, e.stall.str());
    }
    out += "}}";
    os_ << out;
    check();
}

void ChromeTraceWriter::close(const std::string &other) {
    if (closed_) {
        return;
    }
    closed_ = true;
    std::string out = "],\"displayTimeUnit\":\"ns\",\"otherData\":{\"kernel\":";
    json_string(out, prog_.kernel_name);
    out += ",\"arch\":";
    json_string(out, prog_.arch_name);
    out += ",\"time_unit\":\"1 us = 1 cycle\"" + other + "}}";
    os_ << out;
    os_.flush();
    check();
}

void ChromeTraceWriter::finish(const SimReport &r) {
    std::string other = ",\"cycles\":" + std::to_string(r.cycles);
    if (r.trace_truncated) {
        other += ",\"trace_truncated\":true,\"trace_events\":" + std::to_string(r.trace_events) +
                 ",\"trace_cut_cycle\":" + std::to_string(r.trace_cut_cycle);
    }
    close(other);
}

void ChromeTraceWriter::finish_with_error(const std::string &message) {
    std::string other = ",\"error\":";
    json_string(other, message);
    close(other);
}

TraceFile::TraceFile(const std::string &path, const isa::Program &prog)
    : os_(std::make_unique<std::ofstream>(path, std::ios::binary)) {
    if (!*os_) {
        user_error("cannot write the trace to '", path, "'");
    }
    writer_ = std::make_unique<ChromeTraceWriter>(*os_, prog, "the trace to '" + path + "'");
}

TraceFile::~TraceFile() = default;

std::unique_ptr<TraceFile> TraceFile::open(const std::string &path, const isa::Program &prog, SimOptions &opt) {
    if (path.empty()) {
        return nullptr;
    }
    auto f = std::make_unique<TraceFile>(path, prog);
    opt.trace_sink = f.get();
    return f;
}

void TraceFile::event(const TraceEvent &e) { writer_->event(e); }

void TraceFile::finish(const SimReport &r) { writer_->finish(r); }

void TraceFile::finish_with_error(const std::string &message) {
    try {
        writer_->finish_with_error(message);
    } catch (const UserError &) {
        // the run's own error is the one to report
    }
}

std::string trace_to_chrome_json(const SimReport &r, const isa::Program &prog) {
    std::ostringstream os;
    ChromeTraceWriter w(os, prog);
    for (const auto &e : r.trace) {
        w.event(e);
    }
    w.finish(r);
    return os.str();
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
    if (r.trace_truncated) {
        os << r.trace_cut_note() << "\n";
    }
    return os.str();
}

} // namespace tessel::sim
