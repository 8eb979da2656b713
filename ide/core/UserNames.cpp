#include "ide/core/UserNames.h"

#include <cctype>

namespace tessel::ide {

std::string withoutHalideSuffixes(const std::string &text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); i++) {
        if (text[i] == '$' && i + 1 < text.size() &&
            std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
            while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
                i++;
            }
            continue;
        }
        out += text[i];
    }
    return out;
}

namespace {
void strip(std::string &s) {
    if (s.find('$') != std::string::npos) {
        s = withoutHalideSuffixes(s);
    }
}

void strip(std::vector<tessel::Diagnostic> &ds) {
    for (auto &d : ds) {
        strip(d.message);
    }
}

void strip(std::vector<tessel::isa::Provenance> &ps) {
    for (auto &p : ps) {
        strip(p.func);
        strip(p.loop);
    }
}
} // namespace

void useUserNames(tessel::CompileResult &r) {
    strip(r.diagnostics);
    for (std::string *t : {&r.stmt_text, &r.loop_nest, &r.npu_ir_text, &r.asm_text}) {
        strip(*t);
    }
    for (auto &[pass, text] : r.pass_dumps) {
        strip(text);
    }
    for (auto &l : r.lifetimes) {
        strip(l.name);
    }
    for (auto &b : r.tiling.buffers) {
        strip(b.name);
        strip(b.source);
        strip(b.origin);
        for (auto &loop : b.loops) {
            strip(loop.first);
        }
    }
    strip(r.program.provenance);
}

void useUserNames(tessel::RunReport &r) {
    strip(r.diagnostics);
    strip(r.comparison);
    strip(r.provenance);
}

} // namespace tessel::ide
