// The binary program format: writer, loader and program checks (Binary.h).
#include "npu_target/isa/Binary.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"
#include "npu_target/isa/InstrTable.h"

#include <array>
#include <fstream>
#include <limits>
#include <set>
#include <iterator>

namespace tessel::isa {

namespace {

constexpr size_t kDescBytes = 1 + 4 + 4 * 4 + 4 * 8 + 4 * 8 + 1;
const char *kSections[] = {"CODE", "DESC", "CNST", "PROV"};

class Writer {
public:
    std::vector<uint8_t> b;
    void u8(uint8_t v) { b.push_back(v); }
    void uint(uint64_t v, int bytes) {
        for (int i = 0; i < bytes; i++) {
            b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        }
    }
    void str(const std::string &s, const char *what) {
        if (s.size() > 0xffff) {
            user_error("cannot write program: ", what, " is ", s.size(), " bytes (at most 65535)");
        }
        uint(s.size(), 2);
        b.insert(b.end(), s.begin(), s.end());
    }
    void bytes(const std::vector<uint8_t> &v) { b.insert(b.end(), v.begin(), v.end()); }
    void patch32(size_t at, uint32_t v) {
        for (int i = 0; i < 4; i++) {
            b[at + i] = static_cast<uint8_t>(v >> (8 * i));
        }
    }
};

class Reader {
public:
    Reader(const std::vector<uint8_t> &b, size_t end, const std::string &origin) : b_(b), end_(end), origin_(origin) {}
    size_t pos = 0;

    [[noreturn]] void fail(const std::string &msg, size_t at) const {
        user_error(origin_, ": ", msg, " (at byte offset ", at, ")");
    }
    void need(size_t n, const char *what) const {
        if (n > end_ - pos) {
            fail(std::string("truncated ") + what + ": needs " + std::to_string(n) + " bytes, " +
                     std::to_string(end_ - pos) + " left",
                 pos);
        }
    }
    uint64_t uint(int bytes, const char *what) {
        need(bytes, what);
        uint64_t v = 0;
        for (int i = 0; i < bytes; i++) {
            v |= uint64_t(b_[pos + i]) << (8 * i);
        }
        pos += bytes;
        return v;
    }
    std::string str(const char *what) {
        size_t n = uint(2, what);
        need(n, what);
        std::string s(b_.begin() + pos, b_.begin() + pos + n);
        pos += n;
        return s;
    }

private:
    const std::vector<uint8_t> &b_;
    size_t end_;
    const std::string &origin_;
};

std::string instr_at(const Program &p, size_t i) {
    return "instruction " + std::to_string(i) + " (" + op_info(p.code[i].op).mnemonic + ")";
}

std::string level_list(const ArchSpec &a) {
    std::string s;
    for (const auto &m : a.memories) {
        s += (s.empty() ? "" : ", ") + m.name;
    }
    return s;
}

} // namespace

uint32_t crc32(const uint8_t *data, size_t n) {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            }
            t[i] = c;
        }
        return t;
    }();
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
    }
    return c ^ 0xffffffffu;
}

std::vector<uint8_t> write_program(const Program &p) {
    if (p.cores < 1 || p.cores > 0xffff) {
        user_error("cannot write program: cores = ", p.cores, " (must be in [1, 65535])");
    }
    if (p.args.size() > 0xffff) {
        user_error("cannot write program: ", p.args.size(), " arguments (at most 65535)");
    }
    Writer w;
    w.bytes({'T', 'S', 'S', 'L'});
    w.uint(kBinaryVersion, 2);
    w.uint(0, 2);
    w.uint(0, 4); // file size, patched below
    w.str(p.arch_name, "the arch name");
    w.str(p.arch_hash, "the arch hash");
    w.str(p.kernel_name, "the kernel name");
    w.uint(p.cores, 2);
    w.uint(p.args.size(), 2);
    for (const auto &a : p.args) {
        w.str(a.name, "an argument name");
        w.u8(static_cast<uint8_t>(a.dtype));
        w.u8(a.is_output ? 1 : 0);
        if (a.shape.size() > 255) {
            user_error("cannot write program: argument ", a.name, " has rank ", a.shape.size());
        }
        w.u8(static_cast<uint8_t>(a.shape.size()));
        for (int64_t d : a.shape) {
            w.uint(static_cast<uint64_t>(d), 8);
        }
    }
    auto section = [&](const char *tag, const std::vector<uint8_t> &payload) {
        w.bytes({uint8_t(tag[0]), uint8_t(tag[1]), uint8_t(tag[2]), uint8_t(tag[3])});
        w.uint(payload.size(), 4);
        w.bytes(payload);
    };
    section("CODE", encode_code(p.code));
    Writer d;
    d.uint(p.descs.size(), 4);
    for (const auto &x : p.descs) {
        d.u8(x.dims);
        d.uint(x.elem_bytes, 4);
        for (auto c : x.count) d.uint(c, 4);
        for (auto s : x.src_stride) d.uint(static_cast<uint64_t>(s), 8);
        for (auto s : x.dst_stride) d.uint(static_cast<uint64_t>(s), 8);
        d.u8(x.transform);
    }
    section("DESC", d.b);
    section("CNST", p.constants);
    Writer pr;
    pr.uint(p.provenance.size(), 4);
    for (const auto &x : p.provenance) {
        pr.str(x.directive_id, "a provenance directive id");
        pr.str(x.func, "a provenance func");
        pr.str(x.loop, "a provenance loop");
    }
    pr.uint(p.code.size(), 4);
    for (const auto &i : p.code) {
        pr.uint(i.prov, 4);
    }
    section("PROV", pr.b);
    w.patch32(8, static_cast<uint32_t>(w.b.size() + 4));
    w.uint(crc32(w.b.data(), w.b.size()), 4);
    return w.b;
}

Program read_program(const std::vector<uint8_t> &b, const std::string &origin) {
    auto fail = [&](const std::string &msg, size_t at) {
        user_error(origin, ": ", msg, " (at byte offset ", at, ")");
    };
    if (b.size() < 16) {
        fail("truncated: " + std::to_string(b.size()) + " bytes, the header alone needs 16", b.size());
    }
    if (b[0] != 'T' || b[1] != 'S' || b[2] != 'S' || b[3] != 'L') {
        std::string m;
        for (int i = 0; i < 4; i++) {
            m += (b[i] >= 32 && b[i] < 127) ? char(b[i]) : '?';
        }
        fail("not a Tessel program: magic is '" + m + "', expected 'TSSL'", 0);
    }
    uint16_t version = uint16_t(b[4] | (b[5] << 8));
    if (version != kBinaryVersion) {
        fail("format version " + std::to_string(version) + " is not supported (this build reads version " +
                 std::to_string(kBinaryVersion) + ")",
             4);
    }
    uint32_t size = uint32_t(b[8]) | uint32_t(b[9]) << 8 | uint32_t(b[10]) << 16 | uint32_t(b[11]) << 24;
    if (size > b.size()) {
        fail("truncated: the header says " + std::to_string(size) + " bytes, the file has " +
                 std::to_string(b.size()),
             b.size());
    }
    if (size < b.size()) {
        fail(std::to_string(b.size() - size) + " unexpected bytes after the end of the program (the header says " +
                 std::to_string(size) + " bytes)",
             size);
    }
    if (size < 20) {
        fail("declared size " + std::to_string(size) + " is smaller than a header", 8);
    }
    uint32_t stored = uint32_t(b[size - 4]) | uint32_t(b[size - 3]) << 8 | uint32_t(b[size - 2]) << 16 |
                      uint32_t(b[size - 1]) << 24;
    uint32_t computed = crc32(b.data(), size - 4);
    if (stored != computed) {
        char msg[96];
        snprintf(msg, sizeof msg, "checksum mismatch (stored 0x%08x, computed 0x%08x): the file is corrupt", stored,
                 computed);
        fail(msg, size - 4);
    }
    if (b[6] != 0 || b[7] != 0) {
        fail("flags must be 0", 6);
    }
    Reader r(b, size - 4, origin);
    r.pos = 12;
    Program p;
    p.arch_name = r.str("arch name");
    p.arch_hash = r.str("arch hash");
    p.kernel_name = r.str("kernel name");
    size_t at = r.pos;
    p.cores = static_cast<int>(r.uint(2, "cores"));
    if (p.cores < 1) {
        fail("cores is 0 (must be >= 1)", at);
    }
    size_t nargs = r.uint(2, "argument count");
    for (size_t i = 0; i < nargs; i++) {
        ArgDesc a;
        a.name = r.str("argument name");
        at = r.pos;
        uint64_t dt = r.uint(1, "argument dtype");
        if (dt >= static_cast<uint64_t>(kNumDTypes)) {
            fail("argument " + a.name + ": dtype " + std::to_string(dt) + " is not a dtype", at);
        }
        a.dtype = static_cast<DType>(dt);
        at = r.pos;
        uint64_t out = r.uint(1, "argument is_output");
        if (out > 1) {
            fail("argument " + a.name + ": is_output is " + std::to_string(out) + " (must be 0 or 1)", at);
        }
        a.is_output = out == 1;
        size_t rank = r.uint(1, "argument rank");
        for (size_t k = 0; k < rank; k++) {
            at = r.pos;
            int64_t d = static_cast<int64_t>(r.uint(8, "argument shape"));
            if (d < 0) {
                fail("argument " + a.name + ": shape[" + std::to_string(k) + "] is negative", at);
            }
            a.shape.push_back(d);
        }
        p.args.push_back(a);
    }
    std::vector<uint8_t> payload[4];
    size_t payload_at[4];
    for (int s = 0; s < 4; s++) {
        at = r.pos;
        r.need(8, "section header");
        std::string tag(b.begin() + r.pos, b.begin() + r.pos + 4);
        if (tag != kSections[s]) {
            fail("section " + std::to_string(s) + " is '" + tag + "', expected '" + kSections[s] + "'", at);
        }
        r.pos += 4;
        size_t len = r.uint(4, "section length");
        r.need(len, kSections[s]);
        payload_at[s] = r.pos;
        payload[s].assign(b.begin() + r.pos, b.begin() + r.pos + len);
        r.pos += len;
    }
    if (r.pos != size - 4) {
        fail(std::to_string(size - 4 - r.pos) + " unexpected bytes after the last section", r.pos);
    }
    try {
        p.code = decode_code(payload[0], payload_at[0]);
    } catch (const UserError &e) {
        user_error(origin, ": code: ", e.what());
    }
    Reader d(payload[1], payload[1].size(), origin);
    size_t ndesc = d.uint(4, "descriptor count");
    if (ndesc * kDescBytes != payload[1].size() - 4) {
        fail("DESC section holds " + std::to_string(payload[1].size() - 4) + " bytes for " + std::to_string(ndesc) +
                 " descriptors of " + std::to_string(kDescBytes) + " bytes",
             payload_at[1]);
    }
    for (size_t i = 0; i < ndesc; i++) {
        DmaDesc x;
        x.dims = static_cast<uint8_t>(d.uint(1, "desc"));
        x.elem_bytes = static_cast<uint32_t>(d.uint(4, "desc"));
        for (auto &c : x.count) c = static_cast<uint32_t>(d.uint(4, "desc"));
        for (auto &s : x.src_stride) s = static_cast<int64_t>(d.uint(8, "desc"));
        for (auto &s : x.dst_stride) s = static_cast<int64_t>(d.uint(8, "desc"));
        x.transform = static_cast<uint8_t>(d.uint(1, "desc"));
        p.descs.push_back(x);
    }
    p.constants = payload[2];
    Reader pr(payload[3], payload[3].size(), origin);
    size_t nprov = pr.uint(4, "provenance count");
    if (nprov > payload[3].size()) {
        fail("provenance count " + std::to_string(nprov) + " exceeds the PROV section", payload_at[3]);
    }
    for (size_t i = 0; i < nprov; i++) {
        Provenance x;
        x.directive_id = pr.str("provenance");
        x.func = pr.str("provenance");
        x.loop = pr.str("provenance");
        p.provenance.push_back(x);
    }
    size_t ids_at = payload_at[3] + pr.pos;
    size_t nids = pr.uint(4, "provenance id count");
    if (nids != p.code.size() || pr.pos + 4 * nids != payload[3].size()) {
        fail("PROV section has " + std::to_string(nids) + " instruction ids for " + std::to_string(p.code.size()) +
                 " instructions",
             ids_at);
    }
    for (auto &i : p.code) {
        i.prov = static_cast<ProvenanceId>(pr.uint(4, "provenance id"));
    }
    verify_program(p, origin);
    return p;
}

void verify_program(const Program &p, const std::string &origin) {
    auto fail = [&](const std::string &msg) { user_error(origin, ": ", msg); };
    if (p.cores < 1) {
        fail("cores = " + std::to_string(p.cores) + " (must be >= 1)");
    }
    for (size_t i = 0; i < p.descs.size(); i++) {
        const DmaDesc &d = p.descs[i];
        std::string at = "descriptor d" + std::to_string(i) + ": ";
        if (d.dims < 1 || d.dims > 4) {
            fail(at + "dims = " + std::to_string(d.dims) + " (must be 1..4)");
        }
        if (d.elem_bytes < 1) {
            fail(at + "elem_bytes = 0 (must be >= 1)");
        }
        for (int k = 0; k < 4; k++) {
            if (d.count[k] < 1) {
                fail(at + "count[" + std::to_string(k) + "] = 0 (must be >= 1)");
            }
            if (k >= d.dims && d.count[k] != 1) {
                fail(at + "count[" + std::to_string(k) + "] = " + std::to_string(d.count[k]) +
                     " beyond dims = " + std::to_string(d.dims) + " (must be 1)");
            }
        }
        if (d.transform >= dma_transform_names().size()) {
            fail(at + "transform " + std::to_string(d.transform) + " is not a transform (0.." +
                 std::to_string(dma_transform_names().size() - 1) + ")");
        }
    }
    for (size_t i = 0; i < p.code.size(); i++) {
        const Instr &ins = p.code[i];
        if (static_cast<size_t>(ins.op) >= static_cast<size_t>(Op::NUM_OPS)) {
            fail("instruction " + std::to_string(i) + ": invalid op " + std::to_string(int(ins.op)));
        }
        const OpInfo &info = op_info(ins.op);
        if (info.uses(Field::Desc) && ins.desc >= p.descs.size()) {
            fail(instr_at(p, i) + ": descriptor d" + std::to_string(ins.desc) + " does not exist (" +
                 std::to_string(p.descs.size()) + " descriptors)");
        }
        if (info.is_branch() && (ins.imm < 0 || ins.imm >= static_cast<int64_t>(p.code.size()))) {
            fail(instr_at(p, i) + ": branch target " + std::to_string(ins.imm) + " is outside the code (" +
                 std::to_string(p.code.size()) + " instructions)");
        }
        if ((ins.op == Op::SET_FLAG || ins.op == Op::WAIT_FLAG) &&
            (ins.src_pipe == uint8_t(Pipe::ALL) || ins.dst_pipe == uint8_t(Pipe::ALL))) {
            fail(instr_at(p, i) + ": flags connect two pipes; ALL is only for barrier");
        }
        if (ins.op == Op::ST && ins.level == kConstLevel) {
            fail(instr_at(p, i) + ": CONST is read-only");
        }
        if (ins.prov != 0 && ins.prov >= p.provenance.size()) {
            fail(instr_at(p, i) + ": provenance id " + std::to_string(ins.prov) + " does not exist (" +
                 std::to_string(p.provenance.size()) + " entries)");
        }
    }
}

void check_program_resources(const Program &p, const ArchSpec &a) {
    // Arguments: laid out in GM as the simulator places them (sim::gm_arg_addresses), before
    // anything is allocated for them.
    uint64_t gm_bytes = 0;
    std::string gm_name = "GM";
    for (const auto &m : a.memories) {
        if (m.off_chip) {
            gm_bytes = m.size_bytes;
            gm_name = m.name;
            break;
        }
    }
    const uint64_t kMax = std::numeric_limits<uint64_t>::max() / 4;
    uint64_t at = 0x10000;
    for (const auto &arg : p.args) {
        uint64_t bytes = static_cast<uint64_t>(dtype_bytes(arg.dtype));
        std::string shape;
        for (int64_t d : arg.shape) {
            shape += (shape.empty() ? "" : "x") + std::to_string(d);
            if (d < 0) {
                user_error("program '", p.kernel_name, "' argument '", arg.name, "': shape extent ", d, " is negative");
            }
            bytes = d == 0 || bytes <= kMax / static_cast<uint64_t>(d) ? bytes * static_cast<uint64_t>(d) : kMax + 1;
        }
        at = bytes > kMax || at > kMax ? kMax + 1 : at + (bytes + 4095) / 4096 * 4096 + 4096;
        if (gm_bytes && (bytes > gm_bytes || at - 0x10000 > gm_bytes)) {
            user_error("program '", p.kernel_name, "' argument '", arg.name, "' (", dtype_name(arg.dtype), " ",
                       shape.empty() ? "scalar" : shape, ") needs ",
                       bytes > kMax ? std::string("more than 2^62") : std::to_string(bytes),
                       " bytes; with the arguments before it that is more than ", gm_name, " of ", a.name, " holds (",
                       gm_bytes, " bytes)");
        }
    }
    // Work per instruction: a vector instruction's repeat rows and a DMA's bytes are bounded
    // by the arch, so one instruction cannot take unbounded time (docs/simulator.md "Budgets").
    for (size_t i = 0; i < p.code.size(); i++) {
        const Instr &ins = p.code[i];
        if (op_info(ins.op).unit == Unit::Vector && ins.rows > a.vector.max_repeat) {
            user_error("program '", p.kernel_name, "' ", instr_at(p, i), ": ", ins.rows,
                       " repeat rows; the vector unit of ", a.name, " repeats at most ", a.vector.max_repeat,
                       " times (vector.max_repeat)");
        }
        if (ins.op == Op::DMA && ins.desc < p.descs.size() && ins.src_level < a.memories.size() &&
            ins.dst_level < a.memories.size()) {
            const MemoryLevel &s = a.memories[ins.src_level], &d = a.memories[ins.dst_level];
            const MemoryLevel &bound = !d.off_chip ? d : !s.off_chip ? s : d;
            const DmaDesc &dd = p.descs[ins.desc];
            uint64_t bytes = dd.elem_bytes;
            for (int k = 0; k < dd.dims && k < 4; k++) {
                bytes = bytes <= kMax / std::max<uint64_t>(1, dd.count[k]) ? bytes * dd.count[k] : kMax + 1;
            }
            if (bytes > bound.size_bytes) {
                user_error("program '", p.kernel_name, "' ", instr_at(p, i), ": descriptor d", ins.desc, " moves ",
                           bytes > kMax ? std::string("more than 2^62") : std::to_string(bytes), " bytes ", s.name,
                           "->", d.name, "; ", bound.name, " of ", a.name, " holds ", bound.size_bytes, " bytes");
            }
        }
    }
}

void check_program_against_arch(const Program &p, const ArchSpec &a) {
    std::string h = a.hash();
    if (p.arch_hash != h || p.arch_name != a.name) {
        user_error("program '", p.kernel_name, "' was compiled for ", p.arch_name, " (hash ", p.arch_hash, "), not ",
                   a.name, " (hash ", h, ")");
    }
    if (p.cores > a.chip.cores) {
        user_error("program '", p.kernel_name, "' needs ", p.cores, " cores; ", a.name, " has ", a.chip.cores);
    }
    auto fail = [&](size_t i, const std::string &msg) {
        user_error("program '", p.kernel_name, "' ", instr_at(p, i), ": ", msg);
    };
    auto check_level = [&](size_t i, const char *what, int level) {
        if (level >= static_cast<int>(a.memories.size())) {
            fail(i, std::string(what) + " " + std::to_string(level) + " does not exist in " + a.name + " (" +
                        std::to_string(a.memories.size()) + " levels: " + level_list(a) + ")");
        }
    };
    auto check_engine = [&](size_t i, int engine) {
        if (engine >= static_cast<int>(a.engines.size())) {
            fail(i, "engine " + std::to_string(engine) + " does not exist in " + a.name + " (" +
                        std::to_string(a.engines.size()) + " engines)");
        }
    };
    std::set<int> quant_loaded; // engines a fixparam earlier in the code loads
    for (size_t i = 0; i < p.code.size(); i++) {
        const Instr &ins = p.code[i];
        const OpInfo &info = op_info(ins.op);
        for (const auto &o : info.operands) {
            int r = -1;
            switch (o.field) {
            case Field::Rd: r = ins.rd; break;
            case Field::Ra: r = ins.ra; break;
            case Field::Rb: r = ins.rb; break;
            case Field::Rc: r = ins.rc; break;
            default: break;
            }
            if (r >= a.scalar.registers) {
                fail(i, std::string(field_name(o.field)) + " = r" + std::to_string(r) + " but " + a.name + " has " +
                            std::to_string(a.scalar.registers) + " registers");
            }
        }
        if (info.uses(Field::Level) && ins.level != kStackLevel && ins.level != kConstLevel) {
            check_level(i, "level", ins.level);
        }
        if (ins.op == Op::DMA) {
            check_engine(i, ins.engine);
            check_level(i, "dst level", ins.dst_level);
            check_level(i, "src level", ins.src_level);
            const DmaEngine &e = a.engines[ins.engine];
            const std::string &src = a.memories[ins.src_level].name, &dst = a.memories[ins.dst_level].name;
            bool has = false;
            for (const auto &ed : e.edges) {
                has = has || (ed.src == src && ed.dst == dst);
            }
            if (!has) {
                fail(i, "engine " + e.name + " has no edge " + src + "->" + dst);
            }
            const DmaDesc &d = p.descs[ins.desc];
            if (d.dims > e.max_dims) {
                fail(i, "descriptor d" + std::to_string(ins.desc) + " has " + std::to_string(d.dims) +
                            " dims; engine " + e.name + " takes at most " + std::to_string(e.max_dims));
            }
            for (int k = 0; k < d.dims; k++) {
                const int64_t limit = e.count_limit(k, d.elem_bytes, contiguous_run(d));
                if (d.count[k] > limit) {
                    fail(i, "descriptor d" + std::to_string(ins.desc) + " count[" + std::to_string(k) + "] = " +
                                std::to_string(d.count[k]) + " exceeds engine " + e.name + "'s limit of " +
                                std::to_string(limit) + " (max_count " + std::to_string(e.max_count) + ")");
                }
            }
            const std::string &t = dma_transform_names()[d.transform];
            bool ok = d.transform == 0;
            for (const auto &x : e.transforms) {
                ok = ok || x == t;
            }
            if (!ok) {
                fail(i, "engine " + e.name + " does not support transform " + t);
            }
            if (t == "quant") {
                if (!quant_loaded.count(ins.engine)) {
                    fail(i, "a quant DMA on engine " + e.name + " with no earlier fixparam loading its parameters");
                }
                if (d.elem_bytes != 1 && d.elem_bytes != 2) {
                    fail(i, "a quant DMA writes int8, uint8 or int16 elements (descriptor d" +
                                std::to_string(ins.desc) + " has elem_bytes " + std::to_string(d.elem_bytes) + ")");
                }
            }
        }
        if (ins.op == Op::FIXPARAM) {
            check_engine(i, ins.engine);
            check_level(i, "src level", ins.src_level);
            const DmaEngine &e = a.engines[ins.engine];
            bool has = false;
            for (const auto &x : e.transforms) {
                has = has || x == "quant";
            }
            if (!has || e.quant_channels < 1) {
                fail(i, "engine " + e.name + " of " + a.name + " has no requantisation (transform quant with a " +
                            "quant_channels parameter table)");
            }
            if (ins.n < 1 || ins.n > e.quant_channels) {
                fail(i, std::to_string(ins.n) + " channels; engine " + e.name + "'s parameter table holds 1.." +
                            std::to_string(e.quant_channels));
            }
            if (a.memories[ins.src_level].off_chip) {
                fail(i, "the parameters must come from an on-chip level, not " + a.memories[ins.src_level].name);
            }
            if (dtype_is_float(ins.dtype)) {
                fail(i, std::string("the scale must be an integer type, not ") + dtype_name(ins.dtype));
            }
            if (ins.dtype2 != DType::Int8 && ins.dtype2 != DType::UInt8 && ins.dtype2 != DType::Int16) {
                fail(i, std::string("the result type must be int8, uint8 or int16, not ") + dtype_name(ins.dtype2));
            }
            if (ins.aux >= 64) {
                fail(i, "aux " + std::to_string(ins.aux) + ": shift in bits 0-4 and relu in bit 5 only");
            }
            quant_loaded.insert(ins.engine);
        }
        if (ins.op == Op::SET_FLAG || ins.op == Op::WAIT_FLAG) {
            for (uint8_t pp : {ins.src_pipe, ins.dst_pipe}) {
                std::string n = pipe_name(static_cast<Pipe>(pp));
                if (!a.pipes.count(n)) {
                    fail(i, "pipe " + n + " does not exist in " + a.name);
                }
            }
            if (ins.event >= a.sync.event_ids_per_pair) {
                fail(i, "event " + std::to_string(ins.event) + " >= " + std::to_string(a.sync.event_ids_per_pair) +
                            " event ids per pipe pair");
            }
        }
        if (ins.op == Op::MMAD && !a.matrix.shapes.count(ins.dtype)) {
            fail(i, std::string("the matrix unit of ") + a.name + " has no " + dtype_name(ins.dtype) + " shape");
        }
        if (info.unit == Unit::Vector) {
            bool ok = false;
            for (auto t : a.vector.dtypes) {
                ok = ok || t == ins.dtype;
            }
            if (!ok) {
                fail(i, std::string("the vector unit of ") + a.name + " does not compute on " + dtype_name(ins.dtype));
            }
        }
    }
    check_program_resources(p, a); // after the field checks above: their messages are the more specific
}

Program read_program_file(const std::string &path) {
    return read_program(read_input_bytes(path, "program", 256ull << 20), path);
}

void write_program_file(const Program &p, const std::string &path) {
    std::vector<uint8_t> b = write_program(p);
    write_output_file(path, std::string(b.begin(), b.end()), "program");
}

} // namespace tessel::isa
