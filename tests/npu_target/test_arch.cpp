// ArchSpec: presets carry NPU_MODEL.md's figures; every validation error names
// the field path and the problem.
#include <unistd.h>
#include "npu_target/arch/ArchSpec.h"
#include "npu_target/arch/BankModel.h"
#include "npu_target/common/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace tessel;
using json = nlohmann::json;

namespace {

/** Parses `j` and returns the UserError message ("" if it loaded). */
std::string error_of(const json &j) {
    try {
        parse_arch(j.dump(), "t.json");
    } catch (const UserError &e) {
        return e.what();
    }
    return "";
}

json preset_json(const std::string &name) { return json::parse(load_arch(name).to_json()); }

} // namespace

TEST(ArchPresets, ListAndLoadFromAnyDirectory) {
    EXPECT_EQ(arch_presets(), (std::vector<std::string>{"ascend-like", "gemmini-like", "auto-int8"}));
    for (const auto &p : arch_presets()) {
        ArchSpec a = load_arch(p);
        EXPECT_EQ(a.name, p);
    }
}

TEST(ArchPresets, AscendLikeFigures) {
    ArchSpec a = load_arch("ascend-like");
    std::vector<std::string> levels;
    for (const auto &m : a.memories) levels.push_back(m.name);
    EXPECT_EQ(levels, (std::vector<std::string>{"GM", "L1", "L0A", "L0B", "L0C", "UB"}));
    EXPECT_DOUBLE_EQ(a.clock_hz, 1.8e9);
    EXPECT_EQ(a.chip.cores, 24);
    EXPECT_TRUE(a.find_level("GM")->off_chip);
    EXPECT_FALSE(a.find_level("UB")->off_chip);
    EXPECT_EQ(a.find_level("L1")->size_bytes, 512u * 1024);
    EXPECT_EQ(a.find_level("L0A")->size_bytes, 64u * 1024);
    EXPECT_EQ(a.find_level("L0C")->size_bytes, 128u * 1024);
    EXPECT_EQ(a.find_level("UB")->size_bytes, 192u * 1024);
    EXPECT_EQ(a.find_level("UB")->bank_groups, 16);
    EXPECT_EQ(a.find_level("UB")->banks_per_group, 3);
    EXPECT_EQ(a.matrix.macs_per_cycle(DType::FP16), 4096);
    EXPECT_EQ(a.matrix.macs_per_cycle(DType::Int8), 8192);
    EXPECT_EQ(a.matrix.macs_per_cycle(DType::FP32), 2048);
    EXPECT_EQ(a.matrix.macs_per_cycle(DType::Int16), 0);
    EXPECT_EQ(a.matrix.accumulators.at(DType::Int8), DType::Int32);
    EXPECT_EQ(a.vector.bytes_per_repeat, 256);
    EXPECT_EQ(a.vector.cycles_for("exp"), 2);
    EXPECT_EQ(a.vector.cycles_for("rsqrt"), 4);
    EXPECT_EQ(a.vector.cycles_for("add"), 1);
    const DmaEdge *e = nullptr;
    const DmaEngine *mte2 = a.engine_for("GM", "UB", &e);
    ASSERT_NE(mte2, nullptr);
    EXPECT_EQ(mte2->name, "MTE2");
    EXPECT_EQ(mte2->setup_cycles, 64);
    EXPECT_DOUBLE_EQ(e->bytes_per_cycle, 32);
    a.engine_for("L1", "L0B", &e);
    EXPECT_DOUBLE_EQ(e->bytes_per_cycle, 256);
    EXPECT_EQ(a.engine_for("UB", "GM")->name, "MTE3");
    EXPECT_EQ(a.engine_for("L0C", "UB")->name, "FIX");
    EXPECT_EQ(a.engine_for("GM", "L0C"), nullptr);
    EXPECT_EQ(a.chip.l2_bytes, 192u << 20);
    EXPECT_DOUBLE_EQ(a.chip.l2_rd_bytes_per_cycle, 110);
    EXPECT_EQ(a.chip.l2_latency, 241);
    EXPECT_DOUBLE_EQ(a.chip.gm_bytes_per_cycle, 32);
    EXPECT_EQ(a.sync.event_ids_per_pair, 8);
    // Peak fp16 per core: 2 * 4096 * 1.8e9 = 14.7 TFLOPS (NPU_MODEL 6.2).
    EXPECT_NEAR(2.0 * a.matrix.macs_per_cycle(DType::FP16) * a.clock_hz / 1e12, 14.7, 0.05);
}

TEST(ArchPresets, GemminiAndAutoInt8Figures) {
    ArchSpec g = load_arch("gemmini-like");
    EXPECT_EQ(g.memories.size(), 3u);
    EXPECT_EQ(g.matrix.macs_per_cycle(DType::Int8), 256);
    EXPECT_EQ(g.matrix.a_level, "SPAD");
    EXPECT_EQ(g.matrix.b_level, "SPAD");
    EXPECT_EQ(g.matrix.c_level, "ACC");
    EXPECT_EQ(g.find_level("SPAD")->size_bytes, 256u * 1024);
    EXPECT_EQ(g.find_level("ACC")->size_bytes, 64u * 1024);
    EXPECT_DOUBLE_EQ(g.chip.gm_bytes_per_cycle, 16);
    EXPECT_EQ(g.matrix.macs_per_cycle(DType::Int8) / g.chip.gm_bytes_per_cycle, 16); // ridge 16 MAC/B
    ArchSpec n = load_arch("auto-int8");
    EXPECT_EQ(n.matrix.macs_per_cycle(DType::Int8), 2048);
    EXPECT_EQ(n.matrix.macs_per_cycle(DType::FP16), 1024);
    EXPECT_EQ(n.find_level("CBUF")->size_bytes, 512u * 1024);
    EXPECT_EQ(n.find_level("SRAM")->size_bytes, 1024u * 1024);
    EXPECT_EQ(n.matrix.macs_per_cycle(DType::Int8) / n.chip.gm_bytes_per_cycle, 64); // ridge 64 MAC/B
    EXPECT_NEAR(2.0 * n.matrix.macs_per_cycle(DType::Int8) * n.clock_hz / 1e12, 4.1, 0.01);
    EXPECT_EQ(n.chip.gm_latency, 1024);
}

TEST(ArchSpec, JsonRoundTripAndHash) {
    for (const auto &p : arch_presets()) {
        ArchSpec a = load_arch(p);
        ArchSpec b = parse_arch(a.to_json(), "copy");
        EXPECT_EQ(a.to_json(), b.to_json());
        EXPECT_EQ(a.hash(), b.hash());
        EXPECT_EQ(a.hash().size(), 16u);
    }
    EXPECT_NE(load_arch("ascend-like").hash(), load_arch("gemmini-like").hash());
    json j = preset_json("ascend-like");
    j["memories"][1]["size_bytes"] = 1 << 20;
    EXPECT_NE(parse_arch(j.dump(), "x").hash(), load_arch("ascend-like").hash());
}

TEST(ArchSpec, LoadsAUserFile) {
    json j = preset_json("gemmini-like");
    j["name"] = "my-npu";
    std::string path = testing::TempDir() + "/my-npu_" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << j.dump(2);
    EXPECT_EQ(load_arch(path).name, "my-npu");
    try {
        load_arch("no-such-preset");
        FAIL();
    } catch (const UserError &e) {
        EXPECT_STREQ(e.what(), "no arch preset or file 'no-such-preset' (presets: ascend-like, gemmini-like, "
                               "auto-int8; a file must be a path to a .json ArchSpec)");
    }
}

TEST(ArchSpec, MalformedJsonNamesLineAndColumn) {
    std::string text = "{\n  \"name\": \"x\",\n  \"clock_hz\": 1e9,,\n}";
    try {
        parse_arch(text, "bad.json");
        FAIL();
    } catch (const UserError &e) {
        EXPECT_EQ(std::string(e.what()).rfind("bad.json:3:19: malformed JSON: ", 0), 0u) << e.what();
    }
}

TEST(ArchSpec, HostileJsonIsAMessageNotACrash) {
    // 80000 levels deep (the message used to print the value recursively: SIGSEGV)
    // and a number no double holds (nlohmann's raw out_of_range exception, exit 3).
    std::string deep = "{\"name\": " + std::string(80000, '[') + std::string(80000, ']') + "}";
    try {
        parse_arch(deep, "deep.json");
        FAIL();
    } catch (const UserError &e) {
        EXPECT_STREQ(e.what(), "deep.json:1:73: arrays and objects nested deeper than 64 levels (no Tessel file "
                               "nests more than a few)");
    }
    try {
        parse_arch("{\"name\": \"x\", \"clock_hz\": 1e400}", "big.json");
        FAIL();
    } catch (const UserError &e) {
        EXPECT_STREQ(e.what(), "big.json:1:27: number '1e400' is out of range (a JSON number must fit a 64-bit float, "
                               "|x| < 1.8e308)");
    }
}

struct Case {
    std::function<void(json &)> edit;
    std::string message;
};

TEST(ArchSpec, ValidationErrorsNameFieldAndProblem) {
    std::vector<Case> cases = {
        {[](json &j) { j["memories"][2]["size_bytes"] = -5; }, "t.json: memories[2].size_bytes: must be in [1, 1073741824] (got -5)"},
        {[](json &j) { j["memories"][0]["sise"] = 5; },
         "t.json: memories[0]: unknown key 'sise' (known: name, size_bytes, off_chip, rd_bytes_per_cycle, "
         "wr_bytes_per_cycle, latency, alignment, bank_groups, banks_per_group, bank_row_bytes, layouts)"},
        {[](json &j) { j["engines"][0]["edges"][1]["dst"] = "L9"; },
         "t.json: engines[0].edges[1].dst: no memory level 'L9' (levels: GM, L1, L0A, L0B, L0C, UB)"},
        {[](json &j) { j["engines"][1]["edges"][0]["src"] = "UB"; j["engines"][1]["edges"][0]["dst"] = "UB"; },
         "t.json: engines[1].edges[0]: src and dst are the same level 'UB'"},
        {[](json &j) { j["engines"][1]["edges"][0] = {{"src", "GM"}, {"dst", "L1"}, {"bytes_per_cycle", 1}}; },
         "t.json: engines[1].edges[0]: edge GM->L1 already belongs to another engine"},
        {[](json &j) { j["engines"][0]["edges"][0]["bytes_per_cycle"] = 0; },
         "t.json: engines[0].edges[0].bytes_per_cycle: must be > 0 (got 0)"},
        {[](json &j) { j["engines"][0]["pipe"] = "MTE9"; },
         "t.json: engines[0].pipe: pipe 'MTE9' is not in pipes (pipes: FIX, M, MTE1, MTE2, MTE3, S, V)"},
        {[](json &j) { j["engines"][0]["max_dims"] = 5; }, "t.json: engines[0].max_dims: must be in [1, 4] (got 5)"},
        {[](json &j) { j["engines"][0]["misalign_factor"] = 1.5; },
         "t.json: engines[0].misalign_factor: must be <= 1 (got 1.5)"},
        {[](json &j) { j["engines"][0]["transforms"][0] = "rotate"; },
         "t.json: engines[0].transforms[0]: unknown transform 'rotate' (known: nd2nz, nz2nd, pad, transpose, quant, "
         "relu, load2d, im2col)"},
        {[](json &j) { j["engines"][0]["align_bytes"] = 48; },
         "t.json: engines[0].align_bytes: must be a power of two (got 48)"},
        {[](json &j) { j["engines"][0].erase("edges"); }, "t.json: engines[0]: missing required key 'edges'"},
        {[](json &j) { j["engines"][0]["edges"] = json::array(); },
         "t.json: engines[0].edges: an engine needs at least one edge"},
        {[](json &j) { j["vector"]["bytes_per_repeat"] = 250; },
         "t.json: vector.bytes_per_repeat: must be a multiple of block_bytes 32 (got 250)"},
        {[](json &j) { j["vector"]["cycles_per_repeat"].erase("default"); },
         "t.json: vector.cycles_per_repeat: missing required key 'default'"},
        {[](json &j) { j["vector"]["cycles_per_repeat"]["expp"] = 3; },
         "t.json: vector.cycles_per_repeat: unknown vector op 'expp' (known: default, add, sub, mul, div, max, min, "
         "adds, muls, maxs, mins, shrs, exp, log, sqrt, rsqrt, relu, abs, mov, muladd, cast, cmpsel, dup, redsum, redmax, "
         "requant)"},
        {[](json &j) { j["vector"]["level"] = "GM"; },
         "t.json: vector.level: 'GM' is off-chip; the vector unit works on an on-chip level"},
        {[](json &j) { j["vector"]["block_bytes"] = 3; j["vector"]["bytes_per_repeat"] = 255; },
         "t.json: vector.dtypes[2]: int16 elements (2 B) do not divide block_bytes 3"},
        {[](json &j) { j["vector"]["dtypes"][0] = "int7"; },
         "t.json: vector.dtypes[0]: unknown dtype 'int7' (known: int8, uint8, int16, int32, fp16, bf16, fp32)"},
        {[](json &j) { j["matrix"]["shapes"]["fp16"] = {16, 0, 16}; },
         "t.json: matrix.shapes.fp16[1]: must be in [1, 4096] (got 0)"},
        {[](json &j) { j["matrix"]["shapes"]["fp16"] = {16, 16}; },
         "t.json: matrix.shapes.fp16: expected [m0, k0, n0] (got [16,16])"},
        {[](json &j) { j["matrix"]["accumulators"].erase("int8"); },
         "t.json: matrix.accumulators: missing the accumulator dtype for int8"},
        {[](json &j) { j["matrix"]["accumulators"]["int16"] = "int32"; },
         "t.json: matrix.accumulators.int16: no matrix shape for int16"},
        {[](json &j) { j["matrix"].erase("c_level"); }, "t.json: matrix: missing required key 'c_level'"},
        {[](json &j) { j["matrix"]["a_level"] = "L0X"; },
         "t.json: matrix.a_level: no memory level 'L0X' (levels: GM, L1, L0A, L0B, L0C, UB)"},
        {[](json &j) { j["matrix"]["pipe"] = "FIX2"; },
         "t.json: matrix.pipe: pipe 'FIX2' is not in pipes (pipes: FIX, M, MTE1, MTE2, MTE3, S, V)"},
        {[](json &j) { j["pipes"]["Q"] = 4; }, "t.json: pipes: unknown pipe 'Q' (known: S, V, M, MTE1, MTE2, MTE3, FIX)"},
        {[](json &j) { j["pipes"]["V"] = 0; }, "t.json: pipes.V: must be in [1, 65536] (got 0)"},
        {[](json &j) { j["memories"][1]["name"] = "GM"; }, "t.json: memories[1].name: duplicate memory level 'GM'"},
        {[](json &j) { j["memories"][0]["off_chip"] = false; j["memories"][0]["size_bytes"] = 1 << 20; },
         "t.json: memories: no level has off_chip: true (the GM level holding the kernel arguments)"},
        {[](json &j) { j["memories"][0]["off_chip"] = "yes"; },
         "t.json: memories[0].off_chip: expected true or false (got \"yes\")"},
        {[](json &j) { j["memories"][5]["bank_groups"] = 0; },
         "t.json: memories[5]: bank_groups, banks_per_group and bank_row_bytes must be all 0 (no bank model) or all "
         "> 0 (got 0, 3, 32)"},
        {[](json &j) { j["memories"][1]["alignment"] = 24; },
         "t.json: memories[1].alignment: must be a power of two (got 24)"},
        {[](json &j) { j["memories"][1]["size_bytes"] = "big"; },
         "t.json: memories[1].size_bytes: expected an integer (got \"big\")"},
        {[](json &j) { j["memories"][1]["latency"] = 2.5; },
         "t.json: memories[1].latency: expected an integer (got 2.5)"},
        {[](json &j) { j["memories"][1].erase("name"); }, "t.json: memories[1]: missing required key 'name'"},
        {[](json &j) { j["memories"] = json::array(); }, "t.json: memories: needs 1 to 254 levels (got 0)"},
        {[](json &j) { j["clock_hz"] = -1; }, "t.json: clock_hz: must be >= 1e+06 (got -1)"},
        {[](json &j) { j["clock_hz"] = 1e12; }, "t.json: clock_hz: must be <= 1e+11 (got 1000000000000.0)"},
        // Values the validator once accepted and the simulator then got wrong or died of.
        {[](json &j) { j["memories"][1]["size_bytes"] = 8589934592ll; },
         "t.json: memories[1].size_bytes: must be in [1, 1073741824] (got 8589934592)"},
        {[](json &j) { j["scalar"]["stack_bytes"] = 1ll << 62; },
         "t.json: scalar.stack_bytes: must be in [0, 1048576] (got 4611686018427387904)"},
        {[](json &j) { j["engines"][0]["edges"][0]["bytes_per_cycle"] = 1e-300; },
         "t.json: engines[0].edges[0].bytes_per_cycle: must be a rate in [0.001, 1e+06] bytes/cycle (got 1e-300); "
         "slower or faster than any memory or engine, and it would overflow the simulator's cycle counts"},
        {[](json &j) { j["chip"]["gm_bytes_per_cycle"] = 1e-300; },
         "t.json: chip.gm_bytes_per_cycle: must be a rate in [0.001, 1e+06] bytes/cycle (got 1e-300); "
         "slower or faster than any memory or engine, and it would overflow the simulator's cycle counts"},
        {[](json &j) { j["memories"][1]["rd_bytes_per_cycle"] = 1e300; },
         "t.json: memories[1].rd_bytes_per_cycle: must be a rate in [0.001, 1e+06] bytes/cycle (got 1e+300); "
         "slower or faster than any memory or engine, and it would overflow the simulator's cycle counts"},
        {[](json &j) { j["engines"][0]["misalign_factor"] = 1e-300; },
         "t.json: engines[0].misalign_factor: must be >= 0.01 (got 1e-300)"},
        {[](json &j) { j["chip"]["cores"] = 65535; },
         "t.json: memories: the on-chip levels and the scalar stack of 65535 cores total 64691957760 bytes; the "
         "simulator holds them in host memory and accepts at most 4294967296 (4 GiB)"},
        {[](json &j) { j["colour"] = "red"; },
         "t.json: (top level): unknown key 'colour' (known: name, description, clock_hz, memories, engines, matrix, "
         "vector, scalar, pipes, sync, chip)"},
        {[](json &j) { j["chip"]["cores"] = 0; }, "t.json: chip.cores: must be in [1, 65535] (got 0)"},
        {[](json &j) { j["chip"]["gm_aggregate_bytes_per_cycle"] = 16; },
         "t.json: chip.gm_aggregate_bytes_per_cycle: must be >= gm_bytes_per_cycle 32 (got 16)"},
        {[](json &j) { j["chip"]["l2_sector_bytes"] = 48; },
         "t.json: chip.l2_sector_bytes: must divide l2_line_bytes 512 into at most 64 sectors (got 48)"},
        {[](json &j) { j["chip"]["l2_sector_bytes"] = 4; },
         "t.json: chip.l2_sector_bytes: must divide l2_line_bytes 512 into at most 64 sectors (got 4)"},
        {[](json &j) { j["chip"].erase("l2_rd_bytes_per_cycle"); },
         "t.json: chip: missing required key 'l2_rd_bytes_per_cycle'"},
        {[](json &j) { j["scalar"]["registers"] = 300; }, "t.json: scalar.registers: must be in [2, 255] (got 300)"},
        {[](json &j) { j["sync"]["event_ids_per_pair"] = 0; },
         "t.json: sync.event_ids_per_pair: must be in [1, 256] (got 0)"},
        {[](json &j) { j["matrix"] = 3; }, "t.json: matrix: expected an object (got 3)"},
    };
    for (const auto &c : cases) {
        json j = preset_json("ascend-like");
        c.edit(j);
        EXPECT_EQ(error_of(j), c.message);
    }
    // The unmodified preset passes (so each case above fails for its own reason).
    EXPECT_EQ(error_of(preset_json("ascend-like")), "");
}

// The bank model (arch/BankModel.h), one repeat of 256 bytes on ascend-like's
// UB (16 groups x 3 banks of 32-byte rows): a read and a write walking the
// same banks in step cost a cycle per repeat, the same two 256 bytes apart
// cost nothing, and a stride-0 read in a group the other read covers costs a
// cycle.
TEST(BankModel, ConflictsOfOneRepeat) {
    const ArchSpec a = load_arch("ascend-like");
    const MemoryLevel &ub = *a.find_level("UB");
    ASSERT_TRUE(has_bank_model(ub));
    const uint64_t period = 16 * 3 * 32;
    BankAccess same[2] = {{0, 1, 0, 2, false}, {period, 1, 0, 2, true}};
    EXPECT_EQ(bank_conflict_cycles(ub, same, 2, 0, 0, 128), 1u);
    BankAccess apart[2] = {{0, 1, 0, 2, false}, {period + 256, 1, 0, 2, true}};
    EXPECT_EQ(bank_conflict_cycles(ub, apart, 2, 0, 0, 128), 0u);
    BankAccess in_place[2] = {{0, 1, 0, 2, false}, {0, 1, 0, 2, true}};
    EXPECT_EQ(bank_conflict_cycles(ub, in_place, 2, 0, 0, 128), 0u);
    BankAccess bcast_hit[2] = {{0, 1, 0, 2, false}, {period + 3 * 32, 0, 0, 2, false}};
    EXPECT_EQ(bank_conflict_cycles(ub, bcast_hit, 2, 0, 0, 128), 1u);
    BankAccess bcast_miss[2] = {{0, 1, 0, 2, false}, {period + 8 * 32, 0, 0, 2, false}};
    EXPECT_EQ(bank_conflict_cycles(ub, bcast_miss, 2, 0, 0, 128), 0u);
}
