// NumPy .npy files (format versions 1.0, 2.0 and 3.0): a magic string, a
// header that is a Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }, then the array's bytes. Only little-endian C-order arrays
// of fixed-size numeric types are read.
#include "graph/TensorFile.h"

#include "npu_target/common/Error.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <sstream>

namespace tessel::graph {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct Descr {
    char kind; // f i u b
    int bytes;
    ElemType type;
};

const Descr kDescrs[] = {
    {'f', 4, ElemType::Float32}, {'f', 2, ElemType::Float16}, {'f', 8, ElemType::Float64},
    {'i', 1, ElemType::Int8},    {'u', 1, ElemType::UInt8},   {'i', 2, ElemType::Int16},
    {'u', 2, ElemType::UInt16},  {'i', 4, ElemType::Int32},   {'u', 4, ElemType::UInt32},
    {'i', 8, ElemType::Int64},   {'u', 8, ElemType::UInt64},  {'b', 1, ElemType::Bool},
};

// A cursor over the header text: the dict literal NumPy writes, nothing more.
class HeaderParser {
public:
    HeaderParser(const std::string &text, const std::string &origin) : s_(text), origin_(origin) {}

    [[noreturn]] void fail(const std::string &what) const {
        std::string shown = s_.substr(0, 120);
        for (char &c : shown) {
            if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) {
                c = '?';
            }
        }
        user_error(origin_, ": malformed .npy header at character ", pos_ + 1, ": ", what, " (header: \"", shown,
                   s_.size() > 120 ? "..." : "", "\")");
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
            pos_++;
        }
    }
    bool peek(char c) {
        skip_space();
        return pos_ < s_.size() && s_[pos_] == c;
    }
    void expect(char c) {
        if (!peek(c)) {
            fail(std::string("expected '") + c + "'");
        }
        pos_++;
    }
    std::string string_literal() {
        skip_space();
        if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) {
            fail("expected a quoted string");
        }
        char q = s_[pos_++];
        size_t end = s_.find(q, pos_);
        if (end == std::string::npos) {
            fail("unterminated string");
        }
        std::string v = s_.substr(pos_, end - pos_);
        pos_ = end + 1;
        return v;
    }
    bool boolean() {
        skip_space();
        for (const char *w : {"True", "False"}) {
            size_t n = std::strlen(w);
            if (s_.compare(pos_, n, w) == 0) {
                pos_ += n;
                return w[0] == 'T';
            }
        }
        fail("expected True or False");
    }
    std::vector<int64_t> int_tuple() {
        expect('(');
        std::vector<int64_t> v;
        while (!peek(')')) {
            if (!std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
                fail(s_[pos_] == '-' ? "a negative dimension" : "expected a dimension (a non-negative integer)");
            }
            int64_t x = 0;
            while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
                int digit = s_[pos_++] - '0';
                if (x > (std::numeric_limits<int64_t>::max() - digit) / 10) {
                    fail("a dimension larger than 2^63-1");
                }
                x = x * 10 + digit;
            }
            if (pos_ < s_.size() && s_[pos_] == 'L') { // Python 2's long literals
                pos_++;
            }
            v.push_back(x);
            if (static_cast<int>(v.size()) > kMaxTensorRank) {
                fail("more than " + std::to_string(kMaxTensorRank) + " dimensions");
            }
            if (!peek(',')) {
                break;
            }
            pos_++;
        }
        expect(')');
        return v;
    }
    bool at_end() {
        skip_space();
        return pos_ == s_.size();
    }

private:
    const std::string &s_;
    const std::string &origin_;
    size_t pos_ = 0;
};

struct Header {
    ElemType type = ElemType::Float32;
    std::vector<int64_t> shape;
};

[[noreturn]] void bad_descr(const std::string &d, const std::string &origin, const std::string &why) {
    user_error(origin, ": unsupported .npy dtype '", d.substr(0, 40), "': ", why);
}

ElemType parse_descr(const std::string &d, const std::string &origin) {
    auto bad = [&](const std::string &why) { bad_descr(d, origin, why); };
    if (d.size() < 3) {
        bad("not a NumPy type string such as '<f4'");
    }
    char order = d[0];
    if (order == '>') {
        bad("big-endian; Tessel reads little-endian arrays ('<')");
    }
    if (order != '<' && order != '|' && order != '=') {
        bad("not a NumPy type string such as '<f4'");
    }
    int size = 0;
    for (size_t i = 2; i < d.size(); i++) {
        if (!std::isdigit(static_cast<unsigned char>(d[i])) || size > 1000) {
            bad("not a NumPy type string such as '<f4'");
        }
        size = size * 10 + (d[i] - '0');
    }
    for (const Descr &x : kDescrs) {
        if (x.kind == d[1] && x.bytes == size) {
            return x.type;
        }
    }
    bad_descr(d, origin, "Tessel reads float16/32/64, int8/16/32/64, uint8/16/32/64 and bool (b1)");
}

Header parse_header(const std::string &text, const std::string &origin) {
    HeaderParser p(text, origin);
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    p.expect('{');
    while (!p.peek('}')) {
        std::string key = p.string_literal();
        p.expect(':');
        bool *seen = nullptr;
        if (key == "descr") {
            seen = &seen_descr;
            std::string d = p.string_literal();
            h.type = parse_descr(d, origin);
        } else if (key == "fortran_order") {
            seen = &seen_order;
            if (p.boolean()) {
                user_error(origin, ": the array is in Fortran order (fortran_order: True); Tessel reads C-order arrays "
                                   "(numpy.ascontiguousarray before numpy.save)");
            }
        } else if (key == "shape") {
            seen = &seen_shape;
            h.shape = p.int_tuple();
        } else {
            p.fail("unknown key '" + key.substr(0, 40) + "' (a .npy header has descr, fortran_order and shape)");
        }
        if (*seen) {
            p.fail("key '" + key + "' given twice");
        }
        *seen = true;
        if (!p.peek(',')) {
            break;
        }
        p.expect(',');
    }
    p.expect('}');
    if (!p.at_end()) {
        p.fail("text after the closing '}'");
    }
    if (!seen_descr || !seen_order || !seen_shape) {
        p.fail(std::string("missing key '") + (!seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape") + "'");
    }
    return h;
}

uint32_t read_le(const std::vector<uint8_t> &b, size_t at, int bytes) {
    uint32_t v = 0;
    for (int i = 0; i < bytes; i++) {
        v |= static_cast<uint32_t>(b[at + i]) << (8 * i);
    }
    return v;
}

} // namespace

FileTensor parse_npy_tensor(const std::vector<uint8_t> &bytes, const std::string &origin) {
    if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
        user_error(origin, ": not a .npy file (it does not start with \\x93NUMPY)");
    }
    if (bytes.size() < kMagicLen + 2) {
        user_error(origin, ": truncated .npy file: ", bytes.size(), " bytes, it ends inside the version");
    }
    const int major = bytes[6], minor = bytes[7];
    if (major < 1 || major > 3 || minor != 0) {
        user_error(origin, ": .npy format version ", major, ".", minor, " is not supported (1.0, 2.0 and 3.0 are)");
    }
    const size_t len_bytes = major == 1 ? 2 : 4;
    const size_t header_start = kMagicLen + 2 + len_bytes;
    if (bytes.size() < header_start) {
        user_error(origin, ": truncated .npy file: ", bytes.size(), " bytes, it ends inside the header length");
    }
    const uint64_t header_len = read_le(bytes, kMagicLen + 2, static_cast<int>(len_bytes));
    if (header_len > bytes.size() - header_start) {
        user_error(origin, ": truncated .npy file: the header is ", header_len, " bytes, but only ",
                   bytes.size() - header_start, " follow");
    }
    std::string text(bytes.begin() + header_start, bytes.begin() + header_start + header_len);
    Header h = parse_header(text, origin);
    FileTensor t;
    t.type = h.type;
    t.dims = h.shape;
    const int64_t n = checked_element_count(t.dims, elem_bytes(t.type), origin);
    const uint64_t need = static_cast<uint64_t>(n) * elem_bytes(t.type);
    const uint64_t have = bytes.size() - header_start - header_len;
    if (have < need) {
        user_error(origin, ": truncated .npy file: shape ", t.describe(), " needs ", need, " bytes of data, the file has ",
                   have);
    }
    if (have > need) {
        user_error(origin, ": ", have - need, " bytes after the data of a ", t.describe(),
                   " array (", need, " bytes): not a single .npy array");
    }
    t.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header_start + header_len), bytes.end());
    return t;
}

std::string encode_npy_tensor(const FileTensor &t, const std::string &origin) {
    std::string d;
    for (const Descr &x : kDescrs) {
        if (x.type == t.type) {
            d = std::string(x.bytes == 1 ? "|" : "<") + x.kind + std::to_string(x.bytes);
        }
    }
    if (d.empty()) {
        user_error(origin, ": NumPy has no ", elem_name(t.type), " type; write this tensor as .pb");
    }
    std::ostringstream os;
    os << "{'descr': '" << d << "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < t.dims.size(); i++) {
        os << (i ? ", " : "") << t.dims[i];
    }
    os << (t.dims.size() == 1 ? ",), }" : "), }");
    std::string header = os.str();
    // Version 1.0 unless the header needs more than 65535 bytes; padded with
    // spaces and a newline so that the data starts at a multiple of 64.
    const int major = header.size() + 1 + 64 + 10 > 65535 ? 2 : 1;
    const size_t preamble = kMagicLen + 2 + (major == 1 ? 2 : 4);
    size_t total = preamble + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header.push_back('\n');
    std::string out(kMagic, kMagicLen);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    for (size_t i = 0; i < (major == 1 ? 2u : 4u); i++) {
        out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
    }
    out += header;
    out.append(t.data.begin(), t.data.end());
    return out;
}

} // namespace tessel::graph
