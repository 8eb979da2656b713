// The binary program format: round trip, every loader error, mutation
// robustness, and the arch check.
#include <unistd.h>
#include "IsaTestPrograms.h"

#include "npu_target/common/Error.h"
#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"

#include <gtest/gtest.h>

#include <random>

using namespace tessel;
using namespace tessel::isa;

namespace {

using test::error_of;

void put32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        b[at + i] = uint8_t(v >> (8 * i));
    }
}

/** Recomputes the trailing checksum after an edit. */
void reseal(std::vector<uint8_t> &b) { put32(b, b.size() - 4, crc32(b.data(), b.size() - 4)); }

/** Byte offset of the first byte of `tag`'s payload. */
size_t section_payload(const std::vector<uint8_t> &b, const char *tag) {
    for (size_t i = 0; i + 8 <= b.size(); i++) {
        if (std::equal(tag, tag + 4, b.begin() + i)) {
            return i + 8;
        }
    }
    return 0;
}

Program small_program() {
    ArchSpec a = load_arch("ascend-like");
    return test::sample_program(a);
}

} // namespace

TEST(Binary, RoundTrip) {
    Program p = small_program();
    std::vector<uint8_t> b = write_program(p);
    Program q = read_program(b, "p.tsl");
    EXPECT_EQ(write_program(q), b);
    EXPECT_EQ(q.kernel_name, p.kernel_name);
    EXPECT_EQ(q.args.size(), 3u);
    EXPECT_EQ(q.args[1].shape, (std::vector<int64_t>{64, 256}));
    EXPECT_TRUE(q.args[1].is_output);
    EXPECT_EQ(q.descs[1].transform, 1);
    EXPECT_EQ(q.descs[0].bytes(), 256 * 16 * 2);
    EXPECT_EQ(q.constants, p.constants);
    EXPECT_EQ(q.code.size(), p.code.size());
    EXPECT_EQ(q.code[1].prov, p.code[1].prov);
    EXPECT_EQ(q.provenance[2].func, "A_in_UB");
    std::string path = testing::TempDir() + "/p_" + std::to_string(::getpid()) + ".tsl";
    write_program_file(p, path);
    EXPECT_EQ(write_program(read_program_file(path)), b);
    EXPECT_EQ(crc32(reinterpret_cast<const uint8_t *>("123456789"), 9), 0xcbf43926u); // the CRC-32 check value
}

TEST(Binary, LoaderErrors) {
    std::vector<uint8_t> good = write_program(small_program());
    auto err = [&](std::vector<uint8_t> b) { return error_of([&] { read_program(b, "p.tsl"); }); };
    auto edited = [&](const std::function<void(std::vector<uint8_t> &)> &f, bool seal = true) {
        std::vector<uint8_t> b = good;
        f(b);
        if (seal) {
            reseal(b);
        }
        return err(b);
    };
    EXPECT_EQ(err({'T', 'S'}), "p.tsl: truncated: 2 bytes, the header alone needs 16 (at byte offset 2)");
    EXPECT_EQ(edited([](auto &b) { b[0] = 'X'; }, false),
              "p.tsl: not a Tessel program: magic is 'XSSL', expected 'TSSL' (at byte offset 0)");
    EXPECT_EQ(edited([](auto &b) { b[4] = 9; }, false),
              "p.tsl: format version 9 is not supported (this build reads version 1) (at byte offset 4)");
    std::vector<uint8_t> cut(good.begin(), good.end() - 10);
    EXPECT_EQ(err(cut), "p.tsl: truncated: the header says " + std::to_string(good.size()) + " bytes, the file has " +
                            std::to_string(cut.size()) + " (at byte offset " + std::to_string(cut.size()) + ")");
    std::vector<uint8_t> longer = good;
    longer.push_back(0);
    EXPECT_EQ(err(longer), "p.tsl: 1 unexpected bytes after the end of the program (the header says " +
                               std::to_string(good.size()) + " bytes) (at byte offset " + std::to_string(good.size()) +
                               ")");
    std::string corrupt = edited([](auto &b) { b[40] ^= 0x10; }, false);
    EXPECT_EQ(corrupt.rfind("p.tsl: checksum mismatch (stored 0x", 0), 0u) << corrupt;
    EXPECT_NE(corrupt.find("the file is corrupt (at byte offset " + std::to_string(good.size() - 4) + ")"),
              std::string::npos);
    EXPECT_EQ(edited([](auto &b) { b[6] = 1; }), "p.tsl: flags must be 0 (at byte offset 6)");
    // The header strings: arch name at 12 ("ascend-like", 11 bytes).
    EXPECT_EQ(edited([](auto &b) { b[12] = 0xff; b[13] = 0xff; }),
              "p.tsl: truncated arch name: needs 65535 bytes, " + std::to_string(good.size() - 4 - 14) +
                  " left (at byte offset 14)");
    size_t code = section_payload(good, "CODE");
    EXPECT_EQ(edited([&](auto &b) { b[code] = 0xee; }),
              "p.tsl: code: byte offset " + std::to_string(code) + ": unknown opcode 0xee");
    EXPECT_EQ(edited([&](auto &b) { b[code + 31] = 1; }),
              "p.tsl: code: byte offset " + std::to_string(code + 31) + ": reserved byte 31 of a nop word is 0x01 (must be 0)");
    EXPECT_EQ(edited([&](auto &b) { b[code - 8] = 'X'; }),
              "p.tsl: section 0 is 'XODE', expected 'CODE' (at byte offset " + std::to_string(code - 8) + ")");
    // Branch target beyond the code: the first copy holds each op at its index.
    size_t beq = code + static_cast<size_t>(Op::BEQ) * kInstrBytes;
    EXPECT_EQ(edited([&](auto &b) { b[beq + 3] = 200; }),
              "p.tsl: instruction " + std::to_string(static_cast<int>(Op::BEQ)) + " (beq): branch target 200 is outside the code (" +
                  std::to_string(2 * static_cast<int>(Op::NUM_OPS)) + " instructions)");
    size_t dma = code + static_cast<size_t>(Op::DMA) * kInstrBytes;
    EXPECT_EQ(edited([&](auto &b) { b[dma + 6] = 9; }),
              "p.tsl: instruction " + std::to_string(static_cast<int>(Op::DMA)) + " (dma): descriptor d9 does not exist (2 descriptors)");
    size_t desc = section_payload(good, "DESC");
    EXPECT_EQ(edited([&](auto &b) { b[desc + 4] = 7; }), "p.tsl: descriptor d0: dims = 7 (must be 1..4)");
    EXPECT_EQ(edited([&](auto &b) { b[desc + 4 + 85] = 40; }),
              "p.tsl: descriptor d0: transform 40 is not a transform (0..8)");
    EXPECT_EQ(edited([&](auto &b) { b[desc] = 3; }),
              "p.tsl: DESC section holds 172 bytes for 3 descriptors of 86 bytes (at byte offset " +
                  std::to_string(desc) + ")");
    size_t prov = section_payload(good, "PROV");
    size_t ids = good.size() - 4 - 4 * 2 * static_cast<size_t>(Op::NUM_OPS);
    EXPECT_EQ(edited([&](auto &b) { b[ids + 4] = 9; }),
              "p.tsl: instruction 1 (li): provenance id 9 does not exist (3 entries)");
    EXPECT_EQ(edited([&](auto &b) { b[ids - 4] = 3; }),
              "p.tsl: PROV section has 3 instruction ids for " + std::to_string(2 * int(Op::NUM_OPS)) +
                  " instructions (at byte offset " + std::to_string(ids - 4) + ")");
    EXPECT_EQ(edited([&](auto &b) { b[prov] = 0xff; b[prov + 1] = 0xff; }),
              "p.tsl: provenance count 65535 exceeds the PROV section (at byte offset " + std::to_string(prov) + ")");
    // Argument table: the first argument's dtype byte follows its name "A".
    size_t arg0 = 12 + (2 + 11) + (2 + 16) + (2 + 15) + 2 + 2 + (2 + 1);
    EXPECT_EQ(edited([&](auto &b) { b[arg0] = 7; }),
              "p.tsl: argument A: dtype 7 is not a dtype (at byte offset " + std::to_string(arg0) + ")");
    EXPECT_EQ(edited([&](auto &b) { b[arg0 + 1] = 2; }),
              "p.tsl: argument A: is_output is 2 (must be 0 or 1) (at byte offset " + std::to_string(arg0 + 1) + ")");
    EXPECT_EQ(edited([&](auto &b) { b[arg0 + 3 + 7] = 0x80; }),
              "p.tsl: argument A: shape[0] is negative (at byte offset " + std::to_string(arg0 + 3) + ")");
    EXPECT_EQ(edited([&](auto &b) { b[arg0 - 7] = 0; }),
              "p.tsl: cores is 0 (must be >= 1) (at byte offset " + std::to_string(arg0 - 7) + ")");
    EXPECT_EQ(error_of([] { read_program_file("/nonexistent/x.tsl"); }), "cannot read program '/nonexistent/x.tsl': No such file or directory");
}

TEST(Binary, MutatedFilesErrorCleanlyOrReencode) {
    // 10,000 mutations: half keep the (now wrong) checksum, half are resealed so
    // that the field checks behind the checksum are exercised too.
    std::vector<uint8_t> good = write_program(small_program());
    std::mt19937 rng(12345);
    int errors = 0, loaded = 0;
    for (int iter = 0; iter < 10000; iter++) {
        std::vector<uint8_t> b = good;
        int flips = 1 + int(rng() % 4);
        for (int f = 0; f < flips; f++) {
            size_t at = rng() % b.size();
            b[at] ^= uint8_t(1u << (rng() % 8));
        }
        if (rng() % 8 == 0) {
            b.resize(rng() % b.size());
        } else if (iter % 2) {
            reseal(b);
        }
        try {
            Program p = read_program(b, "m.tsl");
            std::vector<uint8_t> again = write_program(p);
            EXPECT_EQ(write_program(read_program(again, "again")), again);
            loaded++;
        } catch (const UserError &) {
            errors++;
        }
    }
    EXPECT_EQ(errors + loaded, 10000);
    EXPECT_GT(errors, 5000);
}

TEST(Binary, CheckAgainstArch) {
    ArchSpec a = load_arch("ascend-like");
    ArchSpec g = load_arch("gemmini-like");
    Program p = test::sample_program(a);
    check_program_against_arch(p, a); // passes
    EXPECT_EQ(error_of([&] { check_program_against_arch(p, g); }),
              "program 'sample \"kernel\"' was compiled for ascend-like (hash " + a.hash() +
                  "), not gemmini-like (hash " + g.hash() + ")");
    auto err = [&](const std::function<void(Program &)> &edit) {
        Program q = test::sample_program(a);
        edit(q);
        return error_of([&] { check_program_against_arch(q, a); });
    };
    size_t dma = static_cast<size_t>(Op::DMA);
    EXPECT_EQ(err([&](Program &q) { q.code[dma].dst_level = 9; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::DMA)) + " (dma): dst level 9 does not exist in ascend-like (6 "
              "levels: GM, L1, L0A, L0B, L0C, UB)");
    EXPECT_EQ(err([&](Program &q) { q.code[dma].engine = 4; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::DMA)) + " (dma): engine 4 does not exist in ascend-like (4 engines)");
    EXPECT_EQ(err([&](Program &q) { q.code[dma].engine = 1; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::DMA)) + " (dma): engine MTE1 has no edge GM->UB");
    EXPECT_EQ(err([&](Program &q) { q.descs[0].dims = 3; q.descs[0].count[2] = 2; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::DMA)) + " (dma): descriptor d0 has 3 dims; engine MTE2 takes at most 2");
    // d0 moves 2-byte elements; its innermost dimension is a contiguous run,
    // counted in 32-byte bursts (max_count 4095 of them = 65520 elements); a
    // strided innermost dimension and an outer one count up to 4095.
    const std::string at = "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::DMA)) + " (dma): ";
    // 65520 is within the engine's limit, but 2 MiB is more than UB holds (the work bound).
    EXPECT_EQ(err([&](Program &q) { q.descs[0].count[0] = 65520; }),
              at + "descriptor d0 moves 2096640 bytes GM->UB; UB of ascend-like holds 196608 bytes");
    EXPECT_EQ(err([&](Program &q) { q.descs[0].count[0] = 65521; }),
              at + "descriptor d0 count[0] = 65521 exceeds engine MTE2's limit of 65520 (max_count 4095)");
    EXPECT_EQ(err([&](Program &q) { q.descs[0].count[0] = 5000; q.descs[0].src_stride[0] = 4; }),
              at + "descriptor d0 count[0] = 5000 exceeds engine MTE2's limit of 4095 (max_count 4095)");
    EXPECT_EQ(err([&](Program &q) { q.descs[0].count[1] = 5000; }),
              at + "descriptor d0 count[1] = 5000 exceeds engine MTE2's limit of 4095 (max_count 4095)");
    EXPECT_EQ(err([&](Program &q) { q.descs[0].transform = 6; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::DMA)) + " (dma): engine MTE2 does not support transform relu");
    size_t ld = static_cast<size_t>(Op::LD);
    EXPECT_EQ(err([&](Program &q) { q.code[ld].level = 6; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::LD)) + " (ld): level 6 does not exist in ascend-like (6 levels: GM, "
              "L1, L0A, L0B, L0C, UB)");
    EXPECT_EQ(err([&](Program &q) { q.code[1].rd = 40; }),
              "program 'sample \"kernel\"' instruction 1 (li): rd = r40 but ascend-like has 32 registers");
    size_t set = static_cast<size_t>(Op::SET_FLAG);
    EXPECT_EQ(err([&](Program &q) { q.code[set].event = 8; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::SET_FLAG)) + " (set_flag): event 8 >= 8 event ids per pipe pair");
    size_t mm = static_cast<size_t>(Op::MMAD);
    EXPECT_EQ(err([&](Program &q) { q.code[mm].dtype = DType::Int16; }),
              "program 'sample \"kernel\"' instruction " + std::to_string(static_cast<int>(Op::MMAD)) + " (mmad): the matrix unit of ascend-like has no int16 shape");
    EXPECT_EQ(err([&](Program &q) { q.cores = 25; }), "program 'sample \"kernel\"' needs 25 cores; ascend-like has 24");
    // gemmini-like has no FIX pipe.
    Program gp;
    gp.kernel_name = "k";
    gp.arch_name = g.name;
    gp.arch_hash = g.hash();
    gp.code = {test::sample_instr(Op::SET_FLAG, 0), test::sample_instr(Op::END, 0)};
    check_program_against_arch(gp, g);
    gp.code[0].src_pipe = uint8_t(Pipe::FIX);
    EXPECT_EQ(error_of([&] { check_program_against_arch(gp, g); }),
              "program 'k' instruction 0 (set_flag): pipe FIX does not exist in gemmini-like");
}
