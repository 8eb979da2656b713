// The instruction table, encoder/decoder and assembler/disassembler.
#include "IsaTestPrograms.h"

#include "npu_target/common/Error.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace tessel;
using namespace tessel::isa;

namespace {

void expect_same(const Instr &a, const Instr &b, const std::string &what) {
    EXPECT_EQ(a.op, b.op) << what;
    EXPECT_EQ(a.dtype, b.dtype) << what;
    EXPECT_EQ(a.dtype2, b.dtype2) << what;
    EXPECT_EQ(a.rd, b.rd) << what;
    EXPECT_EQ(a.ra, b.ra) << what;
    EXPECT_EQ(a.rb, b.rb) << what;
    EXPECT_EQ(a.rc, b.rc) << what;
    EXPECT_EQ(a.level, b.level) << what;
    EXPECT_EQ(a.engine, b.engine) << what;
    EXPECT_EQ(a.dst_level, b.dst_level) << what;
    EXPECT_EQ(a.src_level, b.src_level) << what;
    EXPECT_EQ(a.desc, b.desc) << what;
    EXPECT_EQ(a.src_pipe, b.src_pipe) << what;
    EXPECT_EQ(a.dst_pipe, b.dst_pipe) << what;
    EXPECT_EQ(a.event, b.event) << what;
    EXPECT_EQ(a.rows, b.rows) << what;
    EXPECT_EQ(a.stride, b.stride) << what;
    EXPECT_EQ(a.row_stride, b.row_stride) << what;
    EXPECT_EQ(a.m, b.m) << what;
    EXPECT_EQ(a.k, b.k) << what;
    EXPECT_EQ(a.n, b.n) << what;
    EXPECT_EQ(a.aux, b.aux) << what;
    EXPECT_EQ(a.imm, b.imm) << what;
    EXPECT_EQ(a.prov, b.prov) << what;
}

using test::error_of;

} // namespace

TEST(InstrTable, OneRowPerOpInOrderWithUniqueOpcodesAndMnemonics) {
    ASSERT_EQ(all_ops().size(), static_cast<size_t>(Op::NUM_OPS));
    std::set<int> opcodes;
    std::set<std::string> mnemonics;
    for (size_t i = 0; i < all_ops().size(); i++) {
        const OpInfo &o = all_ops()[i];
        EXPECT_EQ(static_cast<size_t>(o.op), i);
        EXPECT_NE(o.opcode, 0) << o.mnemonic;
        EXPECT_TRUE(opcodes.insert(o.opcode).second) << "opcode reused: " << o.mnemonic;
        EXPECT_TRUE(mnemonics.insert(o.mnemonic).second) << o.mnemonic;
        EXPECT_LE(o.encoded_bytes(), kInstrBytes) << o.mnemonic;
        EXPECT_STRNE(o.semantics, "") << o.mnemonic;
        EXPECT_STRNE(o.cost, "") << o.mnemonic;
        EXPECT_EQ(&op_info(o.op), &o);
        EXPECT_EQ(op_by_opcode(o.opcode), &o);
        EXPECT_EQ(op_by_mnemonic(o.mnemonic), &o);
        std::set<Field> fields;
        for (const auto &f : o.operands) {
            EXPECT_TRUE(fields.insert(f.field).second) << o.mnemonic << " names a field twice";
        }
    }
    EXPECT_EQ(op_by_opcode(0), nullptr);
    EXPECT_EQ(op_info(Op::MMAD).pipe, Pipe::M);
    EXPECT_EQ(op_info(Op::DMA).pipe_rule, PipeRule::Engine);
    EXPECT_STREQ(pipe_name(Pipe::MTE2), "MTE2");
}

TEST(InstrTable, NoTwoOpsShareAnEncoding) {
    // Distinct opcode bytes are what makes encodings disjoint; check it on the
    // encoded words too: every op's sample decodes back to the same op.
    for (const auto &o : all_ops()) {
        uint8_t w[kInstrBytes];
        encode_instr(test::sample_instr(o.op, 1), w);
        EXPECT_EQ(w[0], o.opcode);
        EXPECT_EQ(decode_instr(w).op, o.op);
    }
}

TEST(InstrTable, InstrPipeResolvesEnginesAndFlags) {
    ArchSpec a = load_arch("ascend-like");
    Instr d = test::sample_instr(Op::DMA, 0);
    d.engine = 1;
    EXPECT_EQ(instr_pipe(d, a), Pipe::MTE1);
    EXPECT_EQ(instr_pipe(test::sample_instr(Op::SET_FLAG, 0), a), Pipe::MTE2);
    EXPECT_EQ(instr_pipe(test::sample_instr(Op::WAIT_FLAG, 0), a), Pipe::V);
    EXPECT_EQ(instr_pipe(test::sample_instr(Op::VADD, 0), a), Pipe::V);
    d.engine = 9;
    EXPECT_EQ(error_of([&] { instr_pipe(d, a); }), "dma: engine index 9 does not exist in ascend-like (4 engines)");
}

TEST(Encoding, EveryOpRoundTrips) {
    for (const auto &o : all_ops()) {
        for (int seed = 0; seed < 3; seed++) {
            Instr i = test::sample_instr(o.op, seed);
            uint8_t w[kInstrBytes];
            encode_instr(i, w);
            Instr back = decode_instr(w);
            back.prov = i.prov; // prov is not in the word
            expect_same(back, i, o.mnemonic);
            for (int b = o.encoded_bytes(); b < kInstrBytes; b++) {
                EXPECT_EQ(w[b], 0) << o.mnemonic << " reserved byte " << b;
            }
        }
    }
}

TEST(Encoding, UnusedFieldsAreNotEncoded) {
    Instr i = test::sample_instr(Op::ADD, 0);
    i.imm = 99;
    i.m = 7;
    uint8_t w[kInstrBytes];
    encode_instr(i, w);
    Instr back = decode_instr(w);
    EXPECT_EQ(back.imm, 0);
    EXPECT_EQ(back.m, 0);
    expect_same(back, normalized(Instr(i)), "normalized");
}

TEST(Encoding, Errors) {
    Instr i = test::sample_instr(Op::VADD, 0);
    i.stride[1] = 40000;
    EXPECT_EQ(error_of([&] { encode_code({Instr(), i}); }),
              "instruction 1 (vadd): stride[1] = 40000 does not fit in 16 signed bits");
    i = test::sample_instr(Op::BEQ, 0);
    i.imm = -1;
    EXPECT_EQ(error_of([&] { encode_code({i}); }), "instruction 0 (beq): target = -1 does not fit in 32 unsigned bits");

    uint8_t w[kInstrBytes] = {};
    EXPECT_EQ(error_of([&] { decode_instr(w, 64); }), "byte offset 64: unknown opcode 0x00");
    w[0] = 0x9f;
    EXPECT_EQ(error_of([&] { decode_instr(w, 64); }), "byte offset 64: unknown opcode 0x9f");
    encode_instr(test::sample_instr(Op::ADD, 0), w);
    w[20] = 5;
    EXPECT_EQ(error_of([&] { decode_instr(w, 32); }), "byte offset 52: reserved byte 20 of a add word is 0x05 (must be 0)");
    encode_instr(test::sample_instr(Op::VADD, 0), w);
    w[1] = 7;
    EXPECT_EQ(error_of([&] { decode_instr(w, 0); }), "byte offset 1: vadd dtype is 7, not a dtype (0..6)");
    encode_instr(test::sample_instr(Op::VADD, 0), w);
    w[6] = 0;
    w[7] = 0;
    EXPECT_EQ(error_of([&] { decode_instr(w, 0); }), "byte offset 6: vadd rows is 0 (must be >= 1)");
    encode_instr(test::sample_instr(Op::SET_FLAG, 0), w);
    w[2] = 9;
    EXPECT_EQ(error_of([&] { decode_instr(w, 0); }), "byte offset 2: set_flag dst_pipe is 9, not a pipe");
    encode_instr(test::sample_instr(Op::VCMPSEL, 0), w);
    w[op_info(Op::VCMPSEL).encoded_bytes() - 1] = 6;
    EXPECT_EQ(error_of([&] { decode_instr(w, 0); }), "byte offset 26: vcmpsel cmp is 6, not a compare code (0..5)");
    EXPECT_EQ(error_of([&] { decode_code(std::vector<uint8_t>(33), 10); }),
              "byte offset 10: code is 33 bytes, not a multiple of 32");
}

TEST(Asm, RoundTripsEveryOpWithAndWithoutArch) {
    ArchSpec a = load_arch("ascend-like");
    Program p = test::sample_program(a);
    for (const ArchSpec *arch : std::vector<const ArchSpec *>{nullptr, &a}) {
        std::string text = disassemble(p, arch);
        Program q = assemble(text, "t.s", arch);
        EXPECT_EQ(q.kernel_name, p.kernel_name);
        EXPECT_EQ(q.arch_name, p.arch_name);
        EXPECT_EQ(q.arch_hash, p.arch_hash);
        EXPECT_EQ(q.cores, p.cores);
        ASSERT_EQ(q.args.size(), p.args.size());
        for (size_t k = 0; k < p.args.size(); k++) {
            EXPECT_EQ(q.args[k].name, p.args[k].name);
            EXPECT_EQ(q.args[k].dtype, p.args[k].dtype);
            EXPECT_EQ(q.args[k].shape, p.args[k].shape);
            EXPECT_EQ(q.args[k].is_output, p.args[k].is_output);
        }
        EXPECT_EQ(q.constants, p.constants);
        ASSERT_EQ(q.provenance.size(), p.provenance.size());
        EXPECT_EQ(q.provenance[1].loop, "C.s1.j.jo");
        // Binary identity covers the descriptors and every instruction field.
        EXPECT_EQ(write_program(q), write_program(p));
        ASSERT_EQ(q.code.size(), p.code.size());
        for (size_t k = 0; k < p.code.size(); k++) {
            expect_same(q.code[k], p.code[k], std::to_string(k));
        }
        EXPECT_EQ(disassemble(q, arch), text);
    }
    // With the arch, levels and engines print as names; without, as #N.
    EXPECT_NE(disassemble(p, &a).find("dma MTE2, UB, r"), std::string::npos);
    EXPECT_NE(disassemble(p).find("dma #0, #5, r"), std::string::npos);
    EXPECT_NE(disassemble(p).find("L1:\n"), std::string::npos); // a branch target label
}

TEST(Asm, HandWrittenProgram) {
    const char *text = R"(; copy a row in, add one, copy it out
.kernel "add1"
.arch "ascend-like" "0000000000000000"
.arg "x" fp16 128 in
.arg "y" fp16 128 out
.desc d0 dims=1 elem=256 count=1/1/1/1 src=0/0/0/0 dst=0/0/0/0 transform=none
        li r10, 0
        li r11, 128
        dma MTE2, UB, r10, GM, r1, d0
        set_flag MTE2, V, 0
        wait_flag MTE2, V, 0
        li r12, 15360          ; fp16 1.0
loop:   vadds.fp16 r10, r10, r12, r11, 1, 1/1/1, 0/0/0
        addi r13, r13, 1
        blt r13, r11, done
        jmp loop
done:   barrier ALL
        end
)";
    Program p = assemble(text, "add1.s");
    ASSERT_EQ(p.code.size(), 12u);
    EXPECT_EQ(p.code[2].op, Op::DMA);
    EXPECT_EQ(p.code[2].dst_level, 5);
    EXPECT_EQ(p.code[2].src_level, 0);
    EXPECT_EQ(p.code[2].rb, 1);
    EXPECT_EQ(p.code[6].op, Op::VADDS);
    EXPECT_EQ(p.code[6].rc, 10); // a
    EXPECT_EQ(p.code[6].rb, 12); // the scalar
    EXPECT_EQ(p.code[8].imm, 10);
    EXPECT_EQ(p.code[9].imm, 6);
    EXPECT_EQ(p.code[10].src_pipe, uint8_t(Pipe::ALL));
    EXPECT_EQ(p.args[0].shape, std::vector<int64_t>{128});
    EXPECT_EQ(p.descs[0].bytes(), 256);
}

TEST(Asm, ErrorsNameLineAndColumn) {
    std::string head = ".kernel \"k\"\n";
    std::vector<std::pair<std::string, std::string>> cases = {
        {"  frob r1\n", "t.s:2:3: unknown instruction 'frob'"},
        {"  add r1, r2\n", "t.s:2:13: missing operand rb (add rd, ra, rb)"},
        {"  add r1 r2, r3\n", "t.s:2:10: expected ',' before ra, found 'r2'"},
        {"  add r1, x2, r3\n", "t.s:2:11: expected a register rN for ra, found 'x2'"},
        {"  add r1, r2, r3, r4\n", "t.s:2:17: unexpected ','"},
        {"  li r1, 12z\n", "t.s:2:10: expected an immediate (an integer), found '12z'"},
        {"  vadd r1, r2, r3, r4, 1, 1/1/1, 0/0/0\n", "t.s:2:3: vadd needs a .dtype suffix (vadd.<dtype> ra, rb, rc, rd, "
                                                    "rows, s0/s1/s2, rs0/rs1/rs2)"},
        {"  vadd.fp17 r1, r2, r3, r4, 1, 1/1/1, 0/0/0\n", "t.s:2:3: unknown dtype 'fp17'"},
        {"  vadd.fp16 r1, r2, r3, r4, 0, 1/1/1, 0/0/0\n", "t.s:2:29: rows must be >= 1"},
        {"  vadd.fp16 r1, r2, r3, r4, 1, 1/1, 0/0/0\n",
         "t.s:2:32: expected stride as 3 values a/b/...; found '1/1'"},
        {"  vadd.fp16 r1, r2, r3, r4, 1, 1/1/40000, 0/0/0\n",
         "t.s:2:32: stride = 40000 is out of range for 16-bit field"},
        {"  vcmpsel.fp16 r1, r2, r3, r4, 1, 1/1/1, 0/0/0, lx\n",
         "t.s:2:49: unknown compare 'lx' (lt, le, eq, ne, gt, ge)"},
        {"  jmp nowhere\n", "t.s:2:7: undefined label 'nowhere'"},
        {"a: nop\na: nop\n", "t.s:3:1: label 'a' is defined twice"},
        {"  set_flag MTE2, W, 0\n", "t.s:2:18: unknown pipe 'W' (pipes: S, V, M, MTE1, MTE2, MTE3, FIX, ALL)"},
        {"  dma #0, #5, r1, #0, r2, d0\n", "t.s:2:1: descriptor d0 is not defined by a .desc"},
        {"  ld.fp16 r1, UB, r2, 0\n",
         "t.s:2:15: 'UB' is a name; names need the arch (add an .arch directive first, or use #N)"},
        {".arch \"ascend-like\" \"x\"\n  ld.fp16 r1, UX, r2, 0\n",
         "t.s:3:15: no memory level 'UX' in ascend-like (levels: GM, L1, L0A, L0B, L0C, UB)"},
        {".arch \"nonesuch\" \"x\"\n  ld.fp16 r1, UB, r2, 0\n",
         "t.s:3:15: 'UB' needs the arch nonesuch, which did not load: no arch preset or file 'nonesuch' (presets: "
         "ascend-like, gemmini-like, auto-int8; a file must be a path to a .json ArchSpec)"},
        {".arch \"ascend-like\" \"x\"\n  dma DMA9, UB, r1, GM, r2, d0\n", "t.s:3:7: no engine 'DMA9' in ascend-like"},
        {"  ld.fp16 r1, #300, r2, 0\n", "t.s:2:15: level = 300 is out of range for 8-bit field"},
        {".desc d1 dims=1\n", "t.s:2:7: descriptors must be numbered in order; expected d0"},
        {".desc d0 dims=5\n", "t.s:2:15: dims must be 1..4 (got 5)"},
        {".desc d0 colour=5\n", "t.s:2:10: unknown descriptor key 'colour' (known: dims, elem, count, src, dst, transform)"},
        {".desc d0 transform=spin\n", "t.s:2:20: unknown transform 'spin'"},
        {".arg \"x\" fp16 12xq in\n", "t.s:2:15: expected a shape extent (an integer), found 'q'"},
        {".arg \"x\" fp16 12 both\n", "t.s:2:18: expected in or out, found 'both'"},
        {".cores 0\n", "t.s:2:8: cores must be in [1, 65535] (got 0)"},
        {".prov 1 \"a\" \"b\" \"c\"\n", "t.s:2:7: provenance ids must be consecutive from 0; expected 0"},
        {".kernel \"abc\n", "t.s:2:9: unterminated string"},
        {".const 0g\n", "t.s:2:8: not a hex digit pair: '0g'"},
        {".bogus\n", "t.s:2:1: unknown directive '.bogus' (known: .kernel, .arch, .cores, .arg, .desc, .const, .prov)"},
        {"  nop @p3\n", "t.s: instruction 0 (nop): provenance id 3 does not exist (0 entries)"},
        {"  jmp 5\n", "t.s: instruction 0 (jmp): branch target 5 is outside the code (1 instructions)"},
    };
    for (const auto &c : cases) {
        EXPECT_EQ(error_of([&] { assemble(head + c.first, "t.s"); }), c.second) << c.first;
    }
}

TEST(Docs, IsaMarkdownMatchesTheTable) {
    const char *src = std::getenv("TESSEL_SOURCE_DIR");
    std::string root = src ? src : ".";
    std::ifstream in(root + "/docs/isa.md");
    ASSERT_TRUE(in) << "docs/isa.md not found under " << root;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string doc = ss.str();
    const std::string begin = "<!-- BEGIN GENERATED: tessel isa --markdown -->\n";
    const std::string end = "<!-- END GENERATED -->";
    size_t b = doc.find(begin), e = doc.find(end);
    ASSERT_NE(b, std::string::npos);
    ASSERT_NE(e, std::string::npos);
    EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), isa_markdown_table())
        << "docs/isa.md is out of date: regenerate the table with `tessel isa --markdown`";
}
