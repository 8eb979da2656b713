// Assembler and disassembler (Asm.h). Operand syntax comes from the field kind
// of each operand in the instruction table.
#include "npu_target/isa/Asm.h"

#include "npu_target/arch/ArchSpec.h"
#include "npu_target/common/Error.h"
#include "npu_target/isa/Binary.h"
#include "npu_target/isa/InstrTable.h"

#include <cerrno>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace tessel::isa {

namespace {

std::string quote(const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c < 32 || c >= 127) {
            char buf[8];
            snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out + "\"";
}

std::string triple(const std::array<int32_t, 3> &v) {
    return std::to_string(v[0]) + "/" + std::to_string(v[1]) + "/" + std::to_string(v[2]);
}

template <typename T>
std::string slashed(const std::array<T, 4> &v) {
    return std::to_string(v[0]) + "/" + std::to_string(v[1]) + "/" + std::to_string(v[2]) + "/" + std::to_string(v[3]);
}

std::string level_text(int level, const ArchSpec *arch, bool scalar_mem) {
    if (scalar_mem && level == kStackLevel) {
        return "STACK";
    }
    if (scalar_mem && level == kConstLevel) {
        return "CONST";
    }
    if (arch && level < static_cast<int>(arch->memories.size())) {
        return arch->memories[level].name;
    }
    return "#" + std::to_string(level);
}

std::string instr_text(const Instr &ins, const ArchSpec *arch, const std::map<int64_t, std::string> *labels) {
    const OpInfo &info = op_info(ins.op);
    std::string m = info.mnemonic, args;
    for (const auto &o : info.operands) {
        std::string a;
        switch (o.field) {
        case Field::DType: m += std::string(".") + dtype_name(ins.dtype); continue;
        case Field::DType2: m += std::string(".") + dtype_name(ins.dtype2); continue;
        case Field::Rd: a = "r" + std::to_string(ins.rd); break;
        case Field::Ra: a = "r" + std::to_string(ins.ra); break;
        case Field::Rb: a = "r" + std::to_string(ins.rb); break;
        case Field::Rc: a = "r" + std::to_string(ins.rc); break;
        case Field::Imm: a = std::to_string(ins.imm); break;
        case Field::Target: {
            auto it = labels ? labels->find(ins.imm) : decltype(labels->end()){};
            a = (labels && it != labels->end()) ? it->second : std::to_string(ins.imm);
            break;
        }
        case Field::Level: a = level_text(ins.level, arch, true); break;
        case Field::DstLevel: a = level_text(ins.dst_level, arch, false); break;
        case Field::SrcLevel: a = level_text(ins.src_level, arch, false); break;
        case Field::Engine:
            a = (arch && ins.engine < arch->engines.size()) ? arch->engines[ins.engine].name
                                                            : "#" + std::to_string(ins.engine);
            break;
        case Field::Desc: a = "d" + std::to_string(ins.desc); break;
        case Field::SrcPipe: a = pipe_name(static_cast<Pipe>(ins.src_pipe)); break;
        case Field::DstPipe: a = pipe_name(static_cast<Pipe>(ins.dst_pipe)); break;
        case Field::Event: a = std::to_string(ins.event); break;
        case Field::Rows: a = std::to_string(ins.rows); break;
        case Field::Stride: a = triple(ins.stride); break;
        case Field::RowStride: a = triple(ins.row_stride); break;
        case Field::M: a = std::to_string(ins.m); break;
        case Field::K: a = std::to_string(ins.k); break;
        case Field::N: a = std::to_string(ins.n); break;
        case Field::Aux: a = std::to_string(ins.aux); break;
        case Field::Cmp: a = ins.aux < cmp_names().size() ? cmp_names()[ins.aux] : std::to_string(ins.aux); break;
        case Field::NUM_FIELDS: break;
        }
        args += (args.empty() ? " " : ", ") + a;
    }
    std::string s = m + args;
    if (ins.prov) {
        s += " @p" + std::to_string(ins.prov);
    }
    return s;
}

// ---- lexer ----
struct Tok {
    enum Kind { Word, Str, Comma, Colon } kind;
    std::string text;
    int col;
};

class Assembler {
public:
    Assembler(const std::string &origin, const ArchSpec *arch) : origin_(origin), arch_(arch) {}

    Program run(const std::string &text) {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            line_++;
            if (!line.empty() && line.back() == '\r') {
                line.pop_back();
            }
            toks_ = lex(line);
            i_ = 0;
            statement();
        }
        for (const auto &f : fixups_) {
            auto it = labels_.find(f.label);
            if (it == labels_.end()) {
                fail_at(f.line, f.col, "undefined label '" + f.label + "'");
            }
            p_.code[f.instr].imm = it->second;
        }
        for (size_t i = 0; i < p_.code.size(); i++) {
            const OpInfo &info = op_info(p_.code[i].op);
            if (info.uses(Field::Desc) && p_.code[i].desc >= p_.descs.size()) {
                fail_at(instr_line_[i], 1, "descriptor d" + std::to_string(p_.code[i].desc) + " is not defined by a .desc");
            }
        }
        verify_program(p_, origin_);
        if (arch_) {
            check_program_resources(p_, *arch_);
        }
        return p_;
    }

private:
    struct Fixup {
        size_t instr;
        std::string label;
        int line, col;
    };

    [[noreturn]] void fail_at(int line, int col, const std::string &msg) const {
        user_error(origin_, ":", line, ":", col, ": ", msg);
    }
    [[noreturn]] void fail(const Tok &t, const std::string &msg) const { fail_at(line_, t.col, msg); }
    [[noreturn]] void fail_eol(const std::string &msg) const {
        fail_at(line_, toks_.empty() ? 1 : toks_.back().col + static_cast<int>(toks_.back().text.size()), msg);
    }

    std::vector<Tok> lex(const std::string &s) {
        std::vector<Tok> out;
        size_t i = 0;
        while (i < s.size()) {
            char c = s[i];
            if (c == ' ' || c == '\t') {
                i++;
            } else if (c == ';') {
                break;
            } else if (c == ',' || c == ':') {
                out.push_back({c == ',' ? Tok::Comma : Tok::Colon, std::string(1, c), int(i) + 1});
                i++;
            } else if (c == '"') {
                int col = int(i) + 1;
                std::string v;
                i++;
                while (true) {
                    if (i >= s.size()) {
                        fail_at(line_, col, "unterminated string");
                    }
                    char d = s[i++];
                    if (d == '"') {
                        break;
                    }
                    if (d != '\\') {
                        v += d;
                        continue;
                    }
                    if (i >= s.size()) {
                        fail_at(line_, col, "unterminated string");
                    }
                    char e = s[i++];
                    if (e == 'n') {
                        v += '\n';
                    } else if (e == 'x' && i + 2 <= s.size() && isxdigit((unsigned char)s[i]) &&
                               isxdigit((unsigned char)s[i + 1])) {
                        v += char(std::stoi(s.substr(i, 2), nullptr, 16));
                        i += 2;
                    } else if (e == '"' || e == '\\') {
                        v += e;
                    } else {
                        fail_at(line_, int(i) - 1, std::string("unknown escape '\\") + e + "'");
                    }
                }
                out.push_back({Tok::Str, v, col});
            } else {
                size_t j = i;
                while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != ',' && s[j] != ':' && s[j] != ';' &&
                       s[j] != '"') {
                    j++;
                }
                out.push_back({Tok::Word, s.substr(i, j - i), int(i) + 1});
                i = j;
            }
        }
        return out;
    }

    bool at_end() const { return i_ >= toks_.size(); }
    const Tok &next(const char *what) {
        if (at_end()) {
            fail_eol(std::string("expected ") + what);
        }
        return toks_[i_++];
    }
    const Tok &word(const char *what) {
        const Tok &t = next(what);
        if (t.kind != Tok::Word) {
            fail(t, std::string("expected ") + what + ", found '" + t.text + "'");
        }
        return t;
    }
    std::string str(const char *what) {
        const Tok &t = next(what);
        if (t.kind != Tok::Str) {
            fail(t, std::string("expected ") + what + " (a quoted string), found '" + t.text + "'");
        }
        return t.text;
    }
    void end_of_line() {
        if (!at_end()) {
            fail(toks_[i_], "unexpected '" + toks_[i_].text + "'");
        }
    }

    int64_t integer(const Tok &t, const std::string &s, const char *what) {
        if (s.empty()) {
            fail(t, std::string("expected ") + what + ", found '" + t.text + "'");
        }
        errno = 0;
        char *e = nullptr;
        long long v = std::strtoll(s.c_str(), &e, 0);
        if (*e != 0 || errno == ERANGE || s[0] == ' ') {
            fail(t, std::string("expected ") + what + " (an integer), found '" + s + "'");
        }
        return v;
    }

    const ArchSpec &arch(const Tok &t) {
        if (arch_) {
            return *arch_;
        }
        if (!loaded_) {
            if (p_.arch_name.empty()) {
                fail(t, "'" + t.text + "' is a name; names need the arch (add an .arch directive first, or use #N)");
            }
            try {
                loaded_ = std::make_unique<ArchSpec>(load_arch(p_.arch_name));
            } catch (const UserError &e) {
                fail(t, "'" + t.text + "' needs the arch " + p_.arch_name + ", which did not load: " + e.what());
            }
        }
        return *loaded_;
    }

    int64_t level(const Tok &t, bool scalar_mem) {
        if (t.text.size() > 1 && t.text[0] == '#') {
            return integer(t, t.text.substr(1), "a level index");
        }
        if (scalar_mem && t.text == "STACK") {
            return kStackLevel;
        }
        if (scalar_mem && t.text == "CONST") {
            return kConstLevel;
        }
        const ArchSpec &a = arch(t);
        int i = a.level_index(t.text);
        if (i < 0) {
            std::string names;
            for (const auto &m : a.memories) {
                names += (names.empty() ? "" : ", ") + m.name;
            }
            fail(t, "no memory level '" + t.text + "' in " + a.name + " (levels: " + names + ")");
        }
        return i;
    }

    int64_t engine(const Tok &t) {
        if (t.text.size() > 1 && t.text[0] == '#') {
            return integer(t, t.text.substr(1), "an engine index");
        }
        const ArchSpec &a = arch(t);
        for (size_t i = 0; i < a.engines.size(); i++) {
            if (a.engines[i].name == t.text) {
                return static_cast<int64_t>(i);
            }
        }
        fail(t, "no engine '" + t.text + "' in " + a.name);
    }

    std::vector<int64_t> split_ints(const Tok &t, size_t n, const char *what) {
        std::vector<int64_t> v;
        size_t start = 0;
        while (true) {
            size_t slash = t.text.find('/', start);
            v.push_back(integer(t, t.text.substr(start, slash - start), what));
            if (slash == std::string::npos) {
                break;
            }
            start = slash + 1;
        }
        if (v.size() != n) {
            fail(t, std::string("expected ") + what + " as " + std::to_string(n) + " values a/b/...; found '" + t.text +
                        "'");
        }
        return v;
    }

    void check_fits(const Tok &t, const Operand &o, int64_t v) {
        if (!operand_fits(o, v)) {
            fail(t, std::string(field_name(o.field)) + " = " + std::to_string(v) + " is out of range for " +
                        std::to_string(8 * o.bytes) + "-bit field");
        }
    }

    void statement() {
        if (at_end()) {
            return;
        }
        // labels
        while (toks_.size() > i_ + 1 && toks_[i_].kind == Tok::Word && toks_[i_ + 1].kind == Tok::Colon) {
            const Tok &t = toks_[i_];
            if (!labels_.emplace(t.text, static_cast<int64_t>(p_.code.size())).second) {
                fail(t, "label '" + t.text + "' is defined twice");
            }
            i_ += 2;
        }
        if (at_end()) {
            return;
        }
        const Tok &t = word("an instruction or directive");
        if (t.text[0] == '.') {
            directive(t);
        } else {
            instruction(t);
        }
        end_of_line();
    }

    void directive(const Tok &t) {
        if (t.text == ".kernel") {
            p_.kernel_name = str("the kernel name");
        } else if (t.text == ".arch") {
            p_.arch_name = str("the arch name");
            p_.arch_hash = str("the arch hash");
        } else if (t.text == ".cores") {
            const Tok &v = word("the core count");
            int64_t n = integer(v, v.text, "the core count");
            if (n < 1 || n > 65535) {
                fail(v, "cores must be in [1, 65535] (got " + v.text + ")");
            }
            p_.cores = static_cast<int>(n);
        } else if (t.text == ".arg") {
            ArgDesc a;
            a.name = str("the argument name");
            const Tok &dt = word("a dtype");
            auto d = parse_dtype(dt.text);
            if (!d) {
                fail(dt, "unknown dtype '" + dt.text + "'");
            }
            a.dtype = *d;
            const Tok &sh = word("a shape (e.g. 256x128, innermost first, or scalar)");
            if (sh.text != "scalar") {
                size_t start = 0;
                while (true) {
                    size_t x = sh.text.find('x', start);
                    int64_t n = integer(sh, sh.text.substr(start, x - start), "a shape extent");
                    if (n < 0) {
                        fail(sh, "shape extents must be >= 0");
                    }
                    a.shape.push_back(n);
                    if (x == std::string::npos) {
                        break;
                    }
                    start = x + 1;
                }
            }
            const Tok &io = word("in or out");
            if (io.text != "in" && io.text != "out") {
                fail(io, "expected in or out, found '" + io.text + "'");
            }
            a.is_output = io.text == "out";
            p_.args.push_back(a);
        } else if (t.text == ".desc") {
            desc();
        } else if (t.text == ".const") {
            const Tok &h = word("hex bytes");
            if (h.text.size() % 2) {
                fail(h, "hex bytes need an even number of digits");
            }
            for (size_t k = 0; k < h.text.size(); k += 2) {
                if (!isxdigit((unsigned char)h.text[k]) || !isxdigit((unsigned char)h.text[k + 1])) {
                    fail(h, "not a hex digit pair: '" + h.text.substr(k, 2) + "'");
                }
                p_.constants.push_back(static_cast<uint8_t>(std::stoi(h.text.substr(k, 2), nullptr, 16)));
            }
        } else if (t.text == ".prov") {
            const Tok &id = word("the provenance id");
            if (integer(id, id.text, "the provenance id") != static_cast<int64_t>(p_.provenance.size())) {
                fail(id, "provenance ids must be consecutive from 0; expected " + std::to_string(p_.provenance.size()));
            }
            Provenance pv;
            pv.directive_id = str("the directive id");
            pv.func = str("the func");
            pv.loop = str("the loop");
            p_.provenance.push_back(pv);
        } else {
            fail(t, "unknown directive '" + t.text + "' (known: .kernel, .arch, .cores, .arg, .desc, .const, .prov)");
        }
    }

    void desc() {
        const Tok &id = word("the descriptor name dN");
        if (id.text != "d" + std::to_string(p_.descs.size())) {
            fail(id, "descriptors must be numbered in order; expected d" + std::to_string(p_.descs.size()));
        }
        DmaDesc d;
        std::set<std::string> seen;
        while (!at_end()) {
            const Tok &kv = word("key=value");
            size_t eq = kv.text.find('=');
            std::string k = kv.text.substr(0, eq), v = eq == std::string::npos ? "" : kv.text.substr(eq + 1);
            if (eq == std::string::npos || !seen.insert(k).second) {
                fail(kv, eq == std::string::npos ? "expected key=value, found '" + kv.text + "'"
                                                 : "'" + k + "' given twice");
            }
            Tok vt{Tok::Word, v, kv.col + static_cast<int>(eq) + 1};
            if (k == "dims") {
                int64_t n = integer(vt, v, "dims");
                if (n < 1 || n > 4) {
                    fail(vt, "dims must be 1..4 (got " + v + ")");
                }
                d.dims = static_cast<uint8_t>(n);
            } else if (k == "elem") {
                int64_t n = integer(vt, v, "elem bytes");
                if (n < 1 || n > 0xffffffffll) {
                    fail(vt, "elem must be >= 1 (got " + v + ")");
                }
                d.elem_bytes = static_cast<uint32_t>(n);
            } else if (k == "count") {
                auto c = split_ints(vt, 4, "count");
                for (int q = 0; q < 4; q++) {
                    if (c[q] < 1 || c[q] > 0xffffffffll) {
                        fail(vt, "counts must be >= 1 (got " + v + ")");
                    }
                    d.count[q] = static_cast<uint32_t>(c[q]);
                }
            } else if (k == "src" || k == "dst") {
                auto c = split_ints(vt, 4, "byte strides");
                for (int q = 0; q < 4; q++) {
                    (k == "src" ? d.src_stride : d.dst_stride)[q] = c[q];
                }
            } else if (k == "transform") {
                const auto &names = dma_transform_names();
                size_t q = 0;
                while (q < names.size() && names[q] != v) {
                    q++;
                }
                if (q == names.size()) {
                    fail(vt, "unknown transform '" + v + "'");
                }
                d.transform = static_cast<uint8_t>(q);
            } else {
                fail(kv, "unknown descriptor key '" + k + "' (known: dims, elem, count, src, dst, transform)");
            }
        }
        p_.descs.push_back(d);
    }

    void instruction(const Tok &t) {
        std::vector<std::string> parts;
        size_t start = 0;
        while (true) {
            size_t dot = t.text.find('.', start);
            parts.push_back(t.text.substr(start, dot - start));
            if (dot == std::string::npos) {
                break;
            }
            start = dot + 1;
        }
        const OpInfo *info = op_by_mnemonic(parts[0]);
        if (!info) {
            fail(t, "unknown instruction '" + parts[0] + "'");
        }
        Instr ins;
        ins.op = info->op;
        size_t suffix = 1;
        bool first = true;
        for (const auto &o : info->operands) {
            if (o.field == Field::DType || o.field == Field::DType2) {
                if (suffix >= parts.size()) {
                    fail(t, std::string(info->mnemonic) + " needs a ." + field_name(o.field) + " suffix (" +
                                info->syntax() + ")");
                }
                auto d = parse_dtype(parts[suffix]);
                if (!d) {
                    fail(t, "unknown dtype '" + parts[suffix] + "'");
                }
                (o.field == Field::DType ? ins.dtype : ins.dtype2) = *d;
                suffix++;
                continue;
            }
            if (at_end()) {
                fail_eol(std::string("missing operand ") + field_name(o.field) + " (" + info->syntax() + ")");
            }
            if (!first) {
                const Tok &c = next("','");
                if (c.kind != Tok::Comma) {
                    fail(c, "expected ',' before " + std::string(field_name(o.field)) + ", found '" + c.text + "'");
                }
            }
            first = false;
            operand(*info, o, ins);
        }
        if (suffix < parts.size()) {
            fail(t, std::string(info->mnemonic) + " takes " + std::to_string(suffix - 1) + " dtype suffix(es)");
        }
        if (!at_end() && toks_[i_].kind == Tok::Word && toks_[i_].text.rfind("@p", 0) == 0) {
            const Tok &pt = toks_[i_++];
            int64_t v = integer(pt, pt.text.substr(2), "a provenance id");
            if (v < 0 || v > 0xffffffffll) {
                fail(pt, "provenance id out of range");
            }
            ins.prov = static_cast<ProvenanceId>(v);
        }
        instr_line_.push_back(line_);
        p_.code.push_back(ins);
    }

    void operand(const OpInfo &info, const Operand &o, Instr &ins) {
        const Tok &t = word(field_name(o.field));
        auto reg = [&]() -> uint8_t {
            if (t.text.size() < 2 || t.text[0] != 'r') {
                fail(t, std::string("expected a register rN for ") + field_name(o.field) + ", found '" + t.text + "'");
            }
            int64_t v = integer(t, t.text.substr(1), "a register number");
            if (v < 0 || v > 255) {
                fail(t, "register number out of range: " + t.text);
            }
            return static_cast<uint8_t>(v);
        };
        auto num = [&](const char *what) {
            int64_t v = integer(t, t.text, what);
            check_fits(t, o, v);
            return v;
        };
        switch (o.field) {
        case Field::Rd: ins.rd = reg(); break;
        case Field::Ra: ins.ra = reg(); break;
        case Field::Rb: ins.rb = reg(); break;
        case Field::Rc: ins.rc = reg(); break;
        case Field::Imm: ins.imm = num("an immediate"); break;
        case Field::Target:
            if (!t.text.empty() && (isdigit((unsigned char)t.text[0]) || t.text[0] == '-')) {
                ins.imm = num("a branch target");
            } else {
                fixups_.push_back({p_.code.size(), t.text, line_, t.col});
            }
            break;
        case Field::Level: ins.level = static_cast<uint8_t>(checked(t, o, level(t, true))); break;
        case Field::DstLevel: ins.dst_level = static_cast<uint8_t>(checked(t, o, level(t, false))); break;
        case Field::SrcLevel: ins.src_level = static_cast<uint8_t>(checked(t, o, level(t, false))); break;
        case Field::Engine: ins.engine = static_cast<uint8_t>(checked(t, o, engine(t))); break;
        case Field::Desc:
            if (t.text.size() < 2 || t.text[0] != 'd') {
                fail(t, "expected a descriptor dN, found '" + t.text + "'");
            }
            ins.desc = static_cast<uint16_t>(checked(t, o, integer(t, t.text.substr(1), "a descriptor number")));
            break;
        case Field::SrcPipe:
        case Field::DstPipe: {
            Pipe p;
            if (!parse_pipe(t.text, p)) {
                fail(t, "unknown pipe '" + t.text + "' (pipes: S, V, M, MTE1, MTE2, MTE3, FIX, ALL)");
            }
            (o.field == Field::SrcPipe ? ins.src_pipe : ins.dst_pipe) = static_cast<uint8_t>(p);
            break;
        }
        case Field::Event: ins.event = static_cast<uint8_t>(num("an event id")); break;
        case Field::Rows:
            ins.rows = static_cast<uint16_t>(num("a row count"));
            if (ins.rows == 0) {
                fail(t, "rows must be >= 1");
            }
            break;
        case Field::Stride:
        case Field::RowStride: {
            auto v = split_ints(t, 3, field_name(o.field));
            for (int e = 0; e < 3; e++) {
                check_fits(t, o, v[e]);
                (o.field == Field::Stride ? ins.stride : ins.row_stride)[e] = static_cast<int32_t>(v[e]);
            }
            break;
        }
        case Field::M: ins.m = static_cast<uint16_t>(num("m")); break;
        case Field::K: ins.k = static_cast<uint16_t>(num("k")); break;
        case Field::N: ins.n = static_cast<uint16_t>(num("n")); break;
        case Field::Aux: ins.aux = static_cast<uint32_t>(num("an integer")); break;
        case Field::Cmp: {
            const auto &names = cmp_names();
            size_t q = 0;
            while (q < names.size() && names[q] != t.text) {
                q++;
            }
            if (q == names.size()) {
                fail(t, "unknown compare '" + t.text + "' (lt, le, eq, ne, gt, ge)");
            }
            ins.aux = static_cast<uint32_t>(q);
            break;
        }
        case Field::DType:
        case Field::DType2:
        case Field::NUM_FIELDS: break;
        }
        (void)info;
    }

    int64_t checked(const Tok &t, const Operand &o, int64_t v) {
        check_fits(t, o, v);
        return v;
    }

    std::string origin_;
    const ArchSpec *arch_;
    std::unique_ptr<ArchSpec> loaded_;
    Program p_;
    int line_ = 0;
    std::vector<Tok> toks_;
    size_t i_ = 0;
    std::map<std::string, int64_t> labels_;
    std::vector<Fixup> fixups_;
    std::vector<int> instr_line_;
};

} // namespace

std::string disassemble_instr(const Instr &i, const ArchSpec *arch) { return instr_text(i, arch, nullptr); }

std::string disassemble(const Program &p, const ArchSpec *arch) {
    std::ostringstream os;
    os << ".kernel " << quote(p.kernel_name) << "\n";
    os << ".arch " << quote(p.arch_name) << " " << quote(p.arch_hash) << "\n";
    os << ".cores " << p.cores << "\n";
    for (const auto &a : p.args) {
        std::string shape;
        for (auto d : a.shape) {
            shape += (shape.empty() ? "" : "x") + std::to_string(d);
        }
        os << ".arg " << quote(a.name) << " " << dtype_name(a.dtype) << " " << (shape.empty() ? "scalar" : shape)
           << " " << (a.is_output ? "out" : "in") << "\n";
    }
    for (size_t i = 0; i < p.descs.size(); i++) {
        const DmaDesc &d = p.descs[i];
        std::string t = d.transform < dma_transform_names().size() ? dma_transform_names()[d.transform] : "?";
        os << ".desc d" << i << " dims=" << int(d.dims) << " elem=" << d.elem_bytes << " count=" << slashed(d.count)
           << " src=" << slashed(d.src_stride) << " dst=" << slashed(d.dst_stride) << " transform=" << t
           << "   ; " << d.bytes() << " bytes\n";
    }
    for (size_t i = 0; i < p.constants.size(); i += 32) {
        os << ".const ";
        for (size_t k = i; k < p.constants.size() && k < i + 32; k++) {
            char buf[4];
            snprintf(buf, sizeof buf, "%02x", p.constants[k]);
            os << buf;
        }
        os << "\n";
    }
    for (size_t i = 0; i < p.provenance.size(); i++) {
        const auto &pv = p.provenance[i];
        os << ".prov " << i << " " << quote(pv.directive_id) << " " << quote(pv.func) << " " << quote(pv.loop)
           << "\n";
    }
    std::map<int64_t, std::string> labels;
    for (const auto &ins : p.code) {
        if (op_info(ins.op).is_branch()) {
            labels[ins.imm] = "L" + std::to_string(ins.imm);
        }
    }
    for (size_t i = 0; i < p.code.size(); i++) {
        auto it = labels.find(static_cast<int64_t>(i));
        if (it != labels.end()) {
            os << it->second << ":\n";
        }
        os << "    " << instr_text(p.code[i], arch, &labels) << "\n";
    }
    return os.str();
}

Program assemble(const std::string &text, const std::string &origin, const ArchSpec *arch) {
    return Assembler(origin, arch).run(text);
}

} // namespace tessel::isa
