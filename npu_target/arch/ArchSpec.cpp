// ArchSpec: JSON <-> struct, validation, presets and look-ups. The schema is
// documented field by field in docs/arch-format.md; every message names the
// origin, the field path and the problem.
#include "npu_target/arch/ArchSpec.h"

#include "npu_target/arch/ArchPresets.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"
#include "npu_target/isa/InstrTable.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace tessel {

using json = nlohmann::json;

namespace {

/** The pipe names the ISA knows (the simulator maps them to isa::Pipe). */
std::vector<std::string> known_pipes() {
    std::vector<std::string> v;
    for (int p = 0; p < static_cast<int>(isa::Pipe::ALL); p++) {
        v.push_back(isa::pipe_name(static_cast<isa::Pipe>(p)));
    }
    return v;
}

std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v) {
        s += (s.empty() ? "" : ", ") + x;
    }
    return s;
}

bool contains(const std::vector<std::string> &v, const std::string &x) {
    for (const auto &y : v) {
        if (y == x) {
            return true;
        }
    }
    return false;
}

// Physical bounds (docs/arch-format.md, "Bounds"): far outside any real NPU, and
// inside what the simulator's and the cost model's arithmetic holds exactly.
constexpr double kMinRate = 1e-3;               // bytes/cycle: one byte every thousand cycles
constexpr double kMaxRate = 1e6;                // bytes/cycle
constexpr int64_t kMaxOnChipLevelBytes = 1ll << 30;  // 1 GiB per on-chip level (and the L2)
constexpr int64_t kMaxOffChipBytes = 1ll << 40;      // 1 TiB of GM
constexpr uint64_t kMaxOnChipTotalBytes = 4ull << 30; // every on-chip level of every core, simulated in host memory

/** Reads one JSON document with field paths for messages. */
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string &path, const std::string &msg) const {
        user_error(origin_, ": ", path.empty() ? std::string("(top level)") : path, ": ", msg);
    }

    static std::string at(const std::string &path, const std::string &key) {
        return path.empty() ? key : path + "." + key;
    }
    static std::string at(const std::string &path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

    const json &object(const json &j, const std::string &path) const {
        if (!j.is_object()) {
            fail(path, "expected an object (got " + shown(j) + ")");
        }
        return j;
    }
    const json &array(const json &j, const std::string &path) const {
        if (!j.is_array()) {
            fail(path, "expected an array (got " + shown(j) + ")");
        }
        return j;
    }

    /** Rejects keys not in `allowed` ("note" is always allowed: free text, not part of the spec). */
    void keys(const json &o, const std::string &path, const std::vector<std::string> &allowed) const {
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (it.key() != "note" && !contains(allowed, it.key())) {
                fail(path, "unknown key '" + it.key() + "' (known: " + join(allowed) + ")");
            }
        }
    }

    const json *find(const json &o, const std::string &path, const std::string &key, bool required) const {
        auto it = o.find(key);
        if (it == o.end()) {
            if (required) {
                fail(path, "missing required key '" + key + "'");
            }
            return nullptr;
        }
        return &*it;
    }

    std::string str(const json &o, const std::string &path, const std::string &key, bool required,
                    const std::string &def = "") const {
        const json *v = find(o, path, key, required);
        if (!v) {
            return def;
        }
        if (!v->is_string()) {
            fail(at(path, key), "expected a string (got " + shown(*v) + ")");
        }
        std::string s = v->get<std::string>();
        if (s.empty()) {
            fail(at(path, key), "must not be empty");
        }
        return s;
    }

    double num(const json &o, const std::string &path, const std::string &key, bool required, double def,
               double lo, bool lo_strict, double hi = std::numeric_limits<double>::max()) const {
        const json *v = find(o, path, key, required);
        if (!v) {
            return def;
        }
        return num_value(*v, at(path, key), lo, lo_strict, hi);
    }

    double num_value(const json &v, const std::string &path, double lo, bool lo_strict,
                     double hi = std::numeric_limits<double>::max()) const {
        if (!v.is_number()) {
            fail(path, "expected a number (got " + shown(v) + ")");
        }
        double d = v.get<double>();
        if (!std::isfinite(d) || (lo_strict ? !(d > lo) : !(d >= lo))) {
            fail(path, std::string("must be ") + (lo_strict ? "> " : ">= ") + fmt(lo) + " (got " + shown(v) + ")");
        }
        if (d > hi) {
            fail(path, "must be <= " + fmt(hi) + " (got " + shown(v) + ")");
        }
        return d;
    }

    /** A rate in bytes per cycle, within the bounds every consumer's arithmetic holds
     * for (see kMinRate): a rate of 1e-300 would make a transfer's cycles overflow. */
    double rate(const json &o, const std::string &path, const std::string &key, bool required, double def = 0) const {
        const json *v = find(o, path, key, required);
        if (!v) {
            return def;
        }
        double d = num_value(*v, at(path, key), 0, true);
        if (d < kMinRate || d > kMaxRate) {
            fail(at(path, key), "must be a rate in [" + fmt(kMinRate) + ", " + fmt(kMaxRate) +
                                    "] bytes/cycle (got " + shown(*v) + "); slower or faster than any memory "
                                    "or engine, and it would overflow the simulator's cycle counts");
        }
        return d;
    }

    int64_t integer(const json &o, const std::string &path, const std::string &key, bool required, int64_t def,
                    int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max()) const {
        const json *v = find(o, path, key, required);
        if (!v) {
            return def;
        }
        return int_value(*v, at(path, key), lo, hi);
    }

    int64_t int_value(const json &v, const std::string &path, int64_t lo, int64_t hi) const {
        int64_t x = 0;
        if (v.is_number_unsigned()) {
            uint64_t u = v.get<uint64_t>();
            x = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                                 : static_cast<int64_t>(u);
        } else if (v.is_number_integer()) {
            x = v.get<int64_t>();
        } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
                   std::fabs(v.get<double>()) < 9e18) {
            x = static_cast<int64_t>(v.get<double>());
        } else {
            fail(path, "expected an integer (got " + shown(v) + ")");
        }
        if (x < lo || x > hi) {
            std::string range;
            if (hi == std::numeric_limits<int64_t>::max()) {
                range = lo == 1 ? "must be > 0" : "must be >= " + std::to_string(lo);
            } else {
                range = "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
            }
            fail(path, range + " (got " + shown(v) + ")");
        }
        return x;
    }

    bool boolean(const json &o, const std::string &path, const std::string &key, bool def) const {
        const json *v = find(o, path, key, false);
        if (!v) {
            return def;
        }
        if (!v->is_boolean()) {
            fail(at(path, key), "expected true or false (got " + shown(*v) + ")");
        }
        return v->get<bool>();
    }

    std::vector<std::string> strings(const json &o, const std::string &path, const std::string &key) const {
        std::vector<std::string> out;
        const json *v = find(o, path, key, false);
        if (!v) {
            return out;
        }
        std::string p = at(path, key);
        array(*v, p);
        for (size_t i = 0; i < v->size(); i++) {
            if (!(*v)[i].is_string() || (*v)[i].get<std::string>().empty()) {
                fail(at(p, i), "expected a non-empty string (got " + shown((*v)[i]) + ")");
            }
            out.push_back((*v)[i].get<std::string>());
        }
        return out;
    }

    DType dtype(const json &v, const std::string &path) const {
        if (!v.is_string()) {
            fail(path, "expected a dtype name (got " + shown(v) + ")");
        }
        return dtype_key(v.get<std::string>(), path);
    }
    DType dtype_key(const std::string &s, const std::string &path) const {
        auto t = parse_dtype(s);
        if (!t) {
            fail(path, "unknown dtype '" + s + "' (known: int8, uint8, int16, int32, fp16, bf16, fp32)");
        }
        return *t;
    }

    static std::string shown(const json &v) { return json_excerpt(v, 40); }
    static std::string fmt(double d) {
        std::ostringstream os;
        os << d;
        return os.str();
    }

private:
    std::string origin_;
};

bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

MemoryLevel read_memory(const Reader &r, const json &j, const std::string &p) {
    r.object(j, p);
    r.keys(j, p,
           {"name", "size_bytes", "off_chip", "rd_bytes_per_cycle", "wr_bytes_per_cycle", "latency", "alignment",
            "bank_groups", "banks_per_group", "bank_row_bytes", "layouts"});
    MemoryLevel m;
    m.name = r.str(j, p, "name", true);
    m.off_chip = r.boolean(j, p, "off_chip", false);
    // The simulator holds every on-chip level of every core in host memory; GM is
    // addressed only where the kernel's arguments are placed.
    m.size_bytes = static_cast<uint64_t>(
        r.integer(j, p, "size_bytes", true, 0, 1, m.off_chip ? kMaxOffChipBytes : kMaxOnChipLevelBytes));
    m.rd_bytes_per_cycle = r.rate(j, p, "rd_bytes_per_cycle", true);
    m.wr_bytes_per_cycle = r.rate(j, p, "wr_bytes_per_cycle", true);
    m.latency = static_cast<int>(r.integer(j, p, "latency", false, 0, 0, 1 << 20));
    m.alignment = static_cast<int>(r.integer(j, p, "alignment", false, 32, 1, 1 << 20));
    if (!is_pow2(m.alignment)) {
        r.fail(Reader::at(p, "alignment"), "must be a power of two (got " + std::to_string(m.alignment) + ")");
    }
    m.bank_groups = static_cast<int>(r.integer(j, p, "bank_groups", false, 0, 0, 1024));
    m.banks_per_group = static_cast<int>(r.integer(j, p, "banks_per_group", false, 0, 0, 1024));
    m.bank_row_bytes = static_cast<int>(r.integer(j, p, "bank_row_bytes", false, 0, 0, 1 << 16));
    bool any = m.bank_groups || m.banks_per_group || m.bank_row_bytes;
    bool all = m.bank_groups && m.banks_per_group && m.bank_row_bytes;
    if (any && !all) {
        r.fail(p, "bank_groups, banks_per_group and bank_row_bytes must be all 0 (no bank model) or all > 0 (got " +
                      std::to_string(m.bank_groups) + ", " + std::to_string(m.banks_per_group) + ", " +
                      std::to_string(m.bank_row_bytes) + ")");
    }
    m.layouts = r.strings(j, p, "layouts");
    return m;
}

DmaEngine read_engine(const Reader &r, const json &j, const std::string &p) {
    r.object(j, p);
    r.keys(j, p,
           {"name", "pipe", "edges", "setup_cycles", "latency", "max_outstanding", "max_dims", "max_count",
            "burst_bytes", "align_bytes", "misalign_factor", "transforms", "quant_channels"});
    DmaEngine e;
    e.name = r.str(j, p, "name", true);
    e.pipe = r.str(j, p, "pipe", true);
    std::string ep = Reader::at(p, "edges");
    const json &edges = r.array(*r.find(j, p, "edges", true), ep);
    if (edges.empty()) {
        r.fail(ep, "an engine needs at least one edge");
    }
    for (size_t i = 0; i < edges.size(); i++) {
        std::string q = Reader::at(ep, i);
        r.object(edges[i], q);
        r.keys(edges[i], q, {"src", "dst", "bytes_per_cycle"});
        DmaEdge d;
        d.src = r.str(edges[i], q, "src", true);
        d.dst = r.str(edges[i], q, "dst", true);
        d.bytes_per_cycle = r.rate(edges[i], q, "bytes_per_cycle", true);
        e.edges.push_back(d);
    }
    e.setup_cycles = static_cast<int>(r.integer(j, p, "setup_cycles", false, 0, 0, 1 << 20));
    e.latency = static_cast<int>(r.integer(j, p, "latency", false, 0, 0, 1 << 20));
    e.max_outstanding = static_cast<int>(r.integer(j, p, "max_outstanding", false, 1, 1, 1024));
    e.max_dims = static_cast<int>(r.integer(j, p, "max_dims", false, 2, 1, 4));
    e.max_count = r.integer(j, p, "max_count", false, 4095, 1, std::numeric_limits<uint32_t>::max());
    e.burst_bytes = static_cast<int>(r.integer(j, p, "burst_bytes", false, 32, 1, 1 << 20));
    e.align_bytes = static_cast<int>(r.integer(j, p, "align_bytes", false, 32, 1, 1 << 20));
    if (!is_pow2(e.align_bytes)) {
        r.fail(Reader::at(p, "align_bytes"), "must be a power of two (got " + std::to_string(e.align_bytes) + ")");
    }
    e.misalign_factor = r.num(j, p, "misalign_factor", false, 1.0, 0.01, false);
    if (e.misalign_factor > 1.0) {
        r.fail(Reader::at(p, "misalign_factor"), "must be <= 1 (got " + Reader::fmt(e.misalign_factor) + ")");
    }
    e.transforms = r.strings(j, p, "transforms");
    e.quant_channels = static_cast<int>(r.integer(j, p, "quant_channels", false, 0, 0, 1 << 16));
    const auto &known = isa::dma_transform_names();
    for (size_t i = 0; i < e.transforms.size(); i++) {
        if (e.transforms[i] == "none" || !contains(known, e.transforms[i])) {
            std::vector<std::string> k(known.begin() + 1, known.end());
            r.fail(Reader::at(Reader::at(p, "transforms"), i),
                   "unknown transform '" + e.transforms[i] + "' (known: " + join(k) + ")");
        }
    }
    if (e.quant_channels > 0 && !contains(e.transforms, std::string("quant"))) {
        r.fail(Reader::at(p, "quant_channels"), "a quant parameter table needs the transform 'quant' in transforms");
    }
    return e;
}

MatrixUnit read_matrix(const Reader &r, const json &j, const std::string &p) {
    r.object(j, p);
    r.keys(j, p, {"pipe", "shapes", "accumulators", "a_level", "b_level", "c_level", "fill_drain_cycles", "latency"});
    MatrixUnit m;
    m.pipe = r.str(j, p, "pipe", false, "M");
    std::string sp = Reader::at(p, "shapes");
    const json &shapes = r.object(*r.find(j, p, "shapes", true), sp);
    if (shapes.empty()) {
        r.fail(sp, "the matrix unit needs at least one dtype");
    }
    for (auto it = shapes.begin(); it != shapes.end(); ++it) {
        std::string q = Reader::at(sp, it.key());
        DType t = r.dtype_key(it.key(), q);
        if (!it->is_array() || it->size() != 3) {
            r.fail(q, "expected [m0, k0, n0] (got " + Reader::shown(*it) + ")");
        }
        MatrixShape s;
        s.m0 = static_cast<int>(r.int_value((*it)[0], Reader::at(q, 0), 1, 4096));
        s.k0 = static_cast<int>(r.int_value((*it)[1], Reader::at(q, 1), 1, 4096));
        s.n0 = static_cast<int>(r.int_value((*it)[2], Reader::at(q, 2), 1, 4096));
        m.shapes[t] = s;
    }
    std::string ap = Reader::at(p, "accumulators");
    const json &acc = r.object(*r.find(j, p, "accumulators", true), ap);
    for (auto it = acc.begin(); it != acc.end(); ++it) {
        std::string q = Reader::at(ap, it.key());
        DType t = r.dtype_key(it.key(), q);
        if (!m.shapes.count(t)) {
            r.fail(q, std::string("no matrix shape for ") + dtype_name(t));
        }
        m.accumulators[t] = r.dtype(*it, q);
    }
    for (const auto &kv : m.shapes) {
        if (!m.accumulators.count(kv.first)) {
            r.fail(ap, std::string("missing the accumulator dtype for ") + dtype_name(kv.first));
        }
    }
    m.a_level = r.str(j, p, "a_level", true);
    m.b_level = r.str(j, p, "b_level", true);
    m.c_level = r.str(j, p, "c_level", true);
    m.fill_drain_cycles = static_cast<int>(r.integer(j, p, "fill_drain_cycles", false, 0, 0, 1 << 20));
    m.latency = static_cast<int>(r.integer(j, p, "latency", false, 0, 0, 1 << 20));
    return m;
}

VectorUnit read_vector(const Reader &r, const json &j, const std::string &p) {
    r.object(j, p);
    r.keys(j, p, {"pipe", "level", "bytes_per_repeat", "block_bytes", "max_repeat", "cycles_per_repeat", "dtypes"});
    VectorUnit v;
    v.pipe = r.str(j, p, "pipe", false, "V");
    v.level = r.str(j, p, "level", true);
    v.bytes_per_repeat = static_cast<int>(r.integer(j, p, "bytes_per_repeat", true, 0, 1, 1 << 16));
    v.block_bytes = static_cast<int>(r.integer(j, p, "block_bytes", false, 32, 1, 1 << 16));
    if (v.bytes_per_repeat % v.block_bytes != 0) {
        r.fail(Reader::at(p, "bytes_per_repeat"), "must be a multiple of block_bytes " +
                                                      std::to_string(v.block_bytes) + " (got " +
                                                      std::to_string(v.bytes_per_repeat) + ")");
    }
    v.max_repeat = static_cast<int>(r.integer(j, p, "max_repeat", false, 255, 1, 65535));
    std::string cp = Reader::at(p, "cycles_per_repeat");
    const json &cyc = r.object(*r.find(j, p, "cycles_per_repeat", true), cp);
    const auto &ops = isa::vector_cost_keys();
    for (auto it = cyc.begin(); it != cyc.end(); ++it) {
        if (!contains(ops, it.key())) {
            r.fail(cp, "unknown vector op '" + it.key() + "' (known: " + join(ops) + ")");
        }
        v.cycles_per_repeat[it.key()] = static_cast<int>(r.int_value(*it, Reader::at(cp, it.key()), 1, 1 << 16));
    }
    if (!v.cycles_per_repeat.count("default")) {
        r.fail(cp, "missing required key 'default'");
    }
    std::string dp = Reader::at(p, "dtypes");
    const json *dts = r.find(j, p, "dtypes", true);
    r.array(*dts, dp);
    if (dts->empty()) {
        r.fail(dp, "the vector unit needs at least one dtype");
    }
    for (size_t i = 0; i < dts->size(); i++) {
        DType t = r.dtype((*dts)[i], Reader::at(dp, i));
        if (v.block_bytes % dtype_bytes(t) != 0) {
            r.fail(Reader::at(dp, i), std::string(dtype_name(t)) + " elements (" + std::to_string(dtype_bytes(t)) +
                                          " B) do not divide block_bytes " + std::to_string(v.block_bytes));
        }
        v.dtypes.push_back(t);
    }
    return v;
}

void check_level(const Reader &r, const ArchSpec &a, const std::string &path, const std::string &name) {
    if (a.level_index(name) >= 0) {
        return;
    }
    std::vector<std::string> names;
    for (const auto &m : a.memories) {
        names.push_back(m.name);
    }
    r.fail(path, "no memory level '" + name + "' (levels: " + join(names) + ")");
}

void check_pipe(const Reader &r, const ArchSpec &a, const std::string &path, const std::string &pipe) {
    if (a.pipes.count(pipe)) {
        return;
    }
    std::vector<std::string> names;
    for (const auto &kv : a.pipes) {
        names.push_back(kv.first);
    }
    r.fail(path, "pipe '" + pipe + "' is not in pipes (pipes: " + join(names) + ")");
}

/** Cross-field checks, after every section has been read. */
void validate(const Reader &r, const ArchSpec &a) {
    std::set<std::string> seen;
    bool off_chip = false;
    for (size_t i = 0; i < a.memories.size(); i++) {
        const auto &m = a.memories[i];
        if (!seen.insert(m.name).second) {
            r.fail("memories[" + std::to_string(i) + "].name", "duplicate memory level '" + m.name + "'");
        }
        off_chip = off_chip || m.off_chip;
    }
    if (!off_chip) {
        r.fail("memories", "no level has off_chip: true (the GM level holding the kernel arguments)");
    }
    uint64_t on_chip = a.scalar.stack_bytes;
    for (const auto &m : a.memories) {
        on_chip += m.off_chip ? 0 : m.size_bytes;
    }
    if (on_chip * static_cast<uint64_t>(a.chip.cores) > kMaxOnChipTotalBytes) {
        r.fail("memories", "the on-chip levels and the scalar stack of " + std::to_string(a.chip.cores) + " core" +
                               (a.chip.cores == 1 ? "" : "s") + " total " + std::to_string(on_chip * a.chip.cores) +
                               " bytes; the simulator holds them in host memory and accepts at most " +
                               std::to_string(kMaxOnChipTotalBytes) + " (4 GiB)");
    }
    seen.clear();
    std::set<std::pair<std::string, std::string>> edges;
    for (size_t i = 0; i < a.engines.size(); i++) {
        const auto &e = a.engines[i];
        std::string p = "engines[" + std::to_string(i) + "]";
        if (!seen.insert(e.name).second) {
            r.fail(p + ".name", "duplicate engine '" + e.name + "'");
        }
        check_pipe(r, a, p + ".pipe", e.pipe);
        for (size_t k = 0; k < e.edges.size(); k++) {
            std::string q = p + ".edges[" + std::to_string(k) + "]";
            check_level(r, a, q + ".src", e.edges[k].src);
            check_level(r, a, q + ".dst", e.edges[k].dst);
            if (e.edges[k].src == e.edges[k].dst) {
                r.fail(q, "src and dst are the same level '" + e.edges[k].src + "'");
            }
            if (!edges.insert({e.edges[k].src, e.edges[k].dst}).second) {
                r.fail(q, "edge " + e.edges[k].src + "->" + e.edges[k].dst + " already belongs to another engine");
            }
        }
    }
    check_pipe(r, a, "matrix.pipe", a.matrix.pipe);
    check_level(r, a, "matrix.a_level", a.matrix.a_level);
    check_level(r, a, "matrix.b_level", a.matrix.b_level);
    check_level(r, a, "matrix.c_level", a.matrix.c_level);
    check_pipe(r, a, "vector.pipe", a.vector.pipe);
    check_level(r, a, "vector.level", a.vector.level);
    check_pipe(r, a, "scalar.pipe", a.scalar.pipe);
    if (a.find_level(a.vector.level)->off_chip) {
        r.fail("vector.level", "'" + a.vector.level + "' is off-chip; the vector unit works on an on-chip level");
    }
}

json matrix_to_json(const MatrixUnit &m) {
    json shapes = json::object(), acc = json::object();
    for (const auto &kv : m.shapes) {
        shapes[dtype_name(kv.first)] = {kv.second.m0, kv.second.k0, kv.second.n0};
    }
    for (const auto &kv : m.accumulators) {
        acc[dtype_name(kv.first)] = dtype_name(kv.second);
    }
    return {{"pipe", m.pipe},       {"shapes", shapes},   {"accumulators", acc},
            {"a_level", m.a_level}, {"b_level", m.b_level}, {"c_level", m.c_level},
            {"fill_drain_cycles", m.fill_drain_cycles}, {"latency", m.latency}};
}

json vector_to_json(const VectorUnit &v) {
    json dts = json::array();
    for (auto t : v.dtypes) {
        dts.push_back(dtype_name(t));
    }
    return {{"pipe", v.pipe},
            {"level", v.level},
            {"bytes_per_repeat", v.bytes_per_repeat},
            {"block_bytes", v.block_bytes},
            {"max_repeat", v.max_repeat},
            {"cycles_per_repeat", v.cycles_per_repeat},
            {"dtypes", dts}};
}

} // namespace

int64_t MatrixUnit::macs_per_cycle(DType t) const {
    auto it = shapes.find(t);
    if (it == shapes.end()) {
        return 0;
    }
    return int64_t(it->second.m0) * it->second.k0 * it->second.n0;
}

int VectorUnit::cycles_for(const std::string &op) const {
    auto it = cycles_per_repeat.find(op);
    if (it != cycles_per_repeat.end()) {
        return it->second;
    }
    it = cycles_per_repeat.find("default");
    return it == cycles_per_repeat.end() ? 1 : it->second;
}

const MemoryLevel *ArchSpec::find_level(const std::string &n) const {
    int i = level_index(n);
    return i < 0 ? nullptr : &memories[i];
}

int ArchSpec::level_index(const std::string &n) const {
    for (size_t i = 0; i < memories.size(); i++) {
        if (memories[i].name == n) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

const DmaEngine *ArchSpec::engine_for(const std::string &src, const std::string &dst, const DmaEdge **edge) const {
    for (const auto &e : engines) {
        for (const auto &d : e.edges) {
            if (d.src == src && d.dst == dst) {
                if (edge) {
                    *edge = &d;
                }
                return &e;
            }
        }
    }
    return nullptr;
}

std::string ArchSpec::to_json(int indent) const {
    json mems = json::array();
    for (const auto &m : memories) {
        mems.push_back({{"name", m.name},
                        {"size_bytes", m.size_bytes},
                        {"off_chip", m.off_chip},
                        {"rd_bytes_per_cycle", m.rd_bytes_per_cycle},
                        {"wr_bytes_per_cycle", m.wr_bytes_per_cycle},
                        {"latency", m.latency},
                        {"alignment", m.alignment},
                        {"bank_groups", m.bank_groups},
                        {"banks_per_group", m.banks_per_group},
                        {"bank_row_bytes", m.bank_row_bytes},
                        {"layouts", m.layouts}});
    }
    json engs = json::array();
    for (const auto &e : engines) {
        json edges = json::array();
        for (const auto &d : e.edges) {
            edges.push_back({{"src", d.src}, {"dst", d.dst}, {"bytes_per_cycle", d.bytes_per_cycle}});
        }
        engs.push_back({{"name", e.name},
                        {"pipe", e.pipe},
                        {"edges", edges},
                        {"setup_cycles", e.setup_cycles},
                        {"latency", e.latency},
                        {"max_outstanding", e.max_outstanding},
                        {"max_dims", e.max_dims},
                        {"max_count", e.max_count},
                        {"burst_bytes", e.burst_bytes},
                        {"align_bytes", e.align_bytes},
                        {"misalign_factor", e.misalign_factor},
                        {"transforms", e.transforms}});
        if (e.quant_channels > 0) {
            engs.back()["quant_channels"] = e.quant_channels;
        }
    }
    json j = {
        {"name", name},
        {"description", description},
        {"clock_hz", clock_hz},
        {"memories", mems},
        {"engines", engs},
        {"matrix", matrix_to_json(matrix)},
        {"vector", vector_to_json(vector)},
        {"scalar",
         {{"pipe", scalar.pipe},
          {"issue_cycles", scalar.issue_cycles},
          {"registers", scalar.registers},
          {"stack_bytes", scalar.stack_bytes}}},
        {"pipes", pipes},
        {"sync", {{"event_ids_per_pair", sync.event_ids_per_pair}, {"barrier", sync.barrier}}},
        {"chip",
         {{"cores", chip.cores},
          {"l2_bytes", chip.l2_bytes},
          {"l2_line_bytes", chip.l2_line_bytes},
          {"l2_sector_bytes", chip.l2_sector_bytes},
          {"l2_rd_bytes_per_cycle", chip.l2_rd_bytes_per_cycle},
          {"l2_wr_bytes_per_cycle", chip.l2_wr_bytes_per_cycle},
          {"l2_latency", chip.l2_latency},
          {"gm_bytes_per_cycle", chip.gm_bytes_per_cycle},
          {"gm_aggregate_bytes_per_cycle", chip.gm_aggregate_bytes_per_cycle},
          {"gm_latency", chip.gm_latency},
          {"gm_shared_rw_port", chip.gm_shared_rw_port}}},
    };
    if (description.empty()) {
        j.erase("description");
    }
    return j.dump(indent);
}

std::string ArchSpec::hash() const {
    std::string text = to_json(-1);
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

ArchSpec parse_arch(const std::string &json_text, const std::string &origin) {
    json root = parse_json_input(json_text, origin);
    Reader r(origin);
    r.object(root, "");
    r.keys(root, "",
           {"name", "description", "clock_hz", "memories", "engines", "matrix", "vector", "scalar", "pipes", "sync",
            "chip"});
    ArchSpec a;
    a.name = r.str(root, "", "name", true);
    if (root.contains("description")) {
        a.description = r.str(root, "", "description", false);
    }
    a.clock_hz = r.num(root, "", "clock_hz", true, 0, 1e6, false, 1e11);

    const json &pipes = r.object(*r.find(root, "", "pipes", true), "pipes");
    auto known = known_pipes();
    for (auto it = pipes.begin(); it != pipes.end(); ++it) {
        if (!contains(known, it.key())) {
            r.fail("pipes", "unknown pipe '" + it.key() + "' (known: " + join(known) + ")");
        }
        a.pipes[it.key()] = static_cast<int>(r.int_value(*it, "pipes." + it.key(), 1, 1 << 16));
    }

    const json &mems = r.array(*r.find(root, "", "memories", true), "memories");
    if (mems.empty() || mems.size() > 254) {
        r.fail("memories", "needs 1 to 254 levels (got " + std::to_string(mems.size()) + ")");
    }
    for (size_t i = 0; i < mems.size(); i++) {
        a.memories.push_back(read_memory(r, mems[i], Reader::at("memories", i)));
    }
    const json &engs = r.array(*r.find(root, "", "engines", true), "engines");
    if (engs.empty() || engs.size() > 255) {
        r.fail("engines", "needs 1 to 255 engines (got " + std::to_string(engs.size()) + ")");
    }
    for (size_t i = 0; i < engs.size(); i++) {
        a.engines.push_back(read_engine(r, engs[i], Reader::at("engines", i)));
    }
    a.matrix = read_matrix(r, *r.find(root, "", "matrix", true), "matrix");
    a.vector = read_vector(r, *r.find(root, "", "vector", true), "vector");

    if (const json *s = r.find(root, "", "scalar", false)) {
        r.object(*s, "scalar");
        r.keys(*s, "scalar", {"pipe", "issue_cycles", "registers", "stack_bytes"});
        a.scalar.pipe = r.str(*s, "scalar", "pipe", false, "S");
        a.scalar.issue_cycles = static_cast<int>(r.integer(*s, "scalar", "issue_cycles", false, 1, 1, 1 << 16));
        a.scalar.registers = static_cast<int>(r.integer(*s, "scalar", "registers", false, 32, 2, 255));
        a.scalar.stack_bytes = static_cast<uint64_t>(r.integer(*s, "scalar", "stack_bytes", false, 4096, 0, 1 << 20));
    }
    if (const json *s = r.find(root, "", "sync", false)) {
        r.object(*s, "sync");
        r.keys(*s, "sync", {"event_ids_per_pair", "barrier"});
        a.sync.event_ids_per_pair = static_cast<int>(r.integer(*s, "sync", "event_ids_per_pair", false, 8, 1, 256));
        a.sync.barrier = r.boolean(*s, "sync", "barrier", true);
    }
    const json &c = r.object(*r.find(root, "", "chip", true), "chip");
    r.keys(c, "chip",
           {"cores", "l2_bytes", "l2_line_bytes", "l2_sector_bytes", "l2_rd_bytes_per_cycle", "l2_wr_bytes_per_cycle", "l2_latency",
            "gm_bytes_per_cycle", "gm_aggregate_bytes_per_cycle", "gm_latency", "gm_shared_rw_port"});
    a.chip.cores = static_cast<int>(r.integer(c, "chip", "cores", true, 1, 1, 65535));
    a.chip.l2_bytes = static_cast<uint64_t>(r.integer(c, "chip", "l2_bytes", false, 0, 0, kMaxOnChipLevelBytes));
    a.chip.l2_line_bytes = static_cast<int>(r.integer(c, "chip", "l2_line_bytes", false, 512, 1, 1 << 20));
    a.chip.l2_sector_bytes =
        static_cast<int>(r.integer(c, "chip", "l2_sector_bytes", false, std::min(32, a.chip.l2_line_bytes), 1, 1 << 20));
    if (a.chip.l2_line_bytes % a.chip.l2_sector_bytes != 0 || a.chip.l2_line_bytes / a.chip.l2_sector_bytes > 64) {
        r.fail("chip.l2_sector_bytes", "must divide l2_line_bytes " + std::to_string(a.chip.l2_line_bytes) +
                                           " into at most 64 sectors (got " + std::to_string(a.chip.l2_sector_bytes) +
                                           ")");
    }
    bool l2 = a.chip.l2_bytes > 0;
    a.chip.l2_rd_bytes_per_cycle = l2 ? r.rate(c, "chip", "l2_rd_bytes_per_cycle", true) : r.num(c, "chip", "l2_rd_bytes_per_cycle", false, 0, 0, false, kMaxRate);
    a.chip.l2_wr_bytes_per_cycle = l2 ? r.rate(c, "chip", "l2_wr_bytes_per_cycle", true) : r.num(c, "chip", "l2_wr_bytes_per_cycle", false, 0, 0, false, kMaxRate);
    a.chip.l2_latency = static_cast<int>(r.integer(c, "chip", "l2_latency", false, 0, 0, 1 << 20));
    a.chip.gm_bytes_per_cycle = r.rate(c, "chip", "gm_bytes_per_cycle", true);
    a.chip.gm_aggregate_bytes_per_cycle =
        r.num(c, "chip", "gm_aggregate_bytes_per_cycle", false, a.chip.gm_bytes_per_cycle * a.chip.cores, 0, true,
              kMaxRate * 65536);
    if (a.chip.gm_aggregate_bytes_per_cycle < a.chip.gm_bytes_per_cycle) {
        r.fail("chip.gm_aggregate_bytes_per_cycle", "must be >= gm_bytes_per_cycle " +
                                                        Reader::fmt(a.chip.gm_bytes_per_cycle) + " (got " +
                                                        Reader::fmt(a.chip.gm_aggregate_bytes_per_cycle) + ")");
    }
    a.chip.gm_latency = static_cast<int>(r.integer(c, "chip", "gm_latency", false, 0, 0, 1 << 20));
    a.chip.gm_shared_rw_port = r.boolean(c, "chip", "gm_shared_rw_port", false);

    validate(r, a);
    return a;
}

std::vector<std::string> arch_presets() {
    std::vector<std::string> names;
    for (const auto &p : embedded_arch_presets()) {
        names.push_back(p.name);
    }
    return names;
}

ArchSpec load_arch(const std::string &preset_or_path) {
    for (const auto &p : embedded_arch_presets()) {
        if (preset_or_path == p.name) {
            return parse_arch(p.json, p.name + ".json");
        }
    }
    std::error_code ec;
    if (!std::filesystem::exists(preset_or_path, ec)) {
        user_error("no arch preset or file '", preset_or_path, "' (presets: ", join(arch_presets()),
                   "; a file must be a path to a .json ArchSpec)");
    }
    return parse_arch(read_input_file(preset_or_path, "arch file", 16ull << 20), preset_or_path);
}

} // namespace tessel
