// `tessel export` stops with a message naming the kernel: an unknown
// generator, a kernel that does not compile, a schedule that does not fit the
// arch, an unknown arch, a "best" schedule the database does not hold; and a "best" schedule
// the database does hold is the one exported.

#include "database/Canonical.h"
#include "database/ScheduleStore.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/arch/ArchSpec.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

const std::string kSrc = TESSEL_SOURCE_DIR;

struct Outcome {
    int exit_code = -1;
    std::string output; // stdout + stderr
};

fs::path fresh_dir(const std::string &name) {
    fs::path d = fs::temp_directory_path() / ("tessel_export_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

void write(const fs::path &p, const std::string &text) {
    std::ofstream(p) << text;
}

Outcome tessel_export(const fs::path &manifest, const fs::path &out, const std::string &extra = "") {
    std::string cmd = std::string(TESSEL_EXE) + " export --manifest " + manifest.string() + " -o " + out.string() +
                      " " + extra + " 2>&1";
    Outcome o;
    FILE *f = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        o.output.append(buf, n);
    }
    int status = pclose(f);
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

std::string kernel_json(const std::string &name, const std::string &gen, const std::string &params,
                        const std::string &extra = "") {
    return "{\"name\": \"" + name + "\", \"generator\": \"" + gen + "\", \"params\": \"" + params + "\"" + extra + "}";
}

std::string manifest(const std::vector<std::string> &kernels) {
    std::string s = "{\"library\": \"errs\", \"kernels\": [";
    for (size_t i = 0; i < kernels.size(); i++) {
        s += (i ? ", " : "") + kernels[i];
    }
    return s + "]}";
}

// A failed export writes no library, header or manifest.
void expect_nothing_written(const fs::path &out) {
    EXPECT_FALSE(fs::exists(out / "liberrs.a"));
    EXPECT_FALSE(fs::exists(out / "errs.h"));
    EXPECT_FALSE(fs::exists(out / "manifest.json"));
}

const std::string kSoftmaxParams = "ROWS=16,COLS=128,dtype=fp32";
const std::string kStagedSoftmax = ", \"schedule\": \"" + kSrc + "/samples/softmax/schedules/staged_vector.json\"";

} // namespace

TEST(ExportErrors, UnknownGeneratorNamesTheKernel) {
    fs::path d = fresh_dir("unknown");
    write(d / "k.json", manifest({kernel_json("mystery", "no_such_generator", "")}));
    Outcome o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1) << o.output;
    EXPECT_NE(o.output.find("kernel 'mystery': unknown generator 'no_such_generator'; known generators:"),
              std::string::npos) << o.output;
    expect_nothing_written(d / "out");
}

TEST(ExportErrors, KernelThatDoesNotCompileNamesTheKernelAndTheDirective) {
    fs::path d = fresh_dir("nocompile");
    write(d / "bad.json", R"({"version": 1, "directives": [{"id": "mmad", "kind": "tensorize", "func": "acc", "update": 0, "unit": "matrix"}]})");
    write(d / "k.json", manifest({kernel_json("good_softmax", "softmax", kSoftmaxParams, kStagedSoftmax),
                                  kernel_json("bad_gemm", "gemm", "M=64,N=64,K=64,dtype=int8", ", \"schedule\": \"bad.json\"")}));
    Outcome o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1) << o.output;
    EXPECT_NE(o.output.find("kernel 'bad_gemm' (gemm K=64,M=64,N=64,dtype=int8) does not compile for ascend-like:"),
              std::string::npos) << o.output;
    EXPECT_NE(o.output.find("directive mmad (tensorize acc.update(0))"), std::string::npos) << o.output;
    expect_nothing_written(d / "out");
}

TEST(ExportErrors, ScheduleForAnotherArchNamesTheKernel) {
    fs::path d = fresh_dir("arch");
    write(d / "k.json", manifest({kernel_json("sm_gemmini", "softmax", kSoftmaxParams,
                                              ", \"arch\": \"gemmini-like\", \"schedule\": \"" + kSrc +
                                                  "/samples/softmax/schedules/staged_vector.json\"")}));
    Outcome o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1) << o.output;
    EXPECT_NE(o.output.find("kernel 'sm_gemmini' (softmax COLS=128,ROWS=16,dtype=fp32) does not compile for gemmini-like"),
              std::string::npos) << o.output;
    EXPECT_NE(o.output.find("level 'UB' does not exist in gemmini-like"), std::string::npos) << o.output;
}

TEST(ExportErrors, UnknownArchNamesTheKernel) {
    fs::path d = fresh_dir("noarch");
    write(d / "k.json", manifest({kernel_json("sm_x", "softmax", kSoftmaxParams, ", \"arch\": \"no-such-npu\"")}));
    Outcome o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1) << o.output;
    EXPECT_NE(o.output.find("kernel 'sm_x': no arch preset or file 'no-such-npu'"), std::string::npos) << o.output;
    expect_nothing_written(d / "out");
}

TEST(ExportErrors, MissingDatabaseRecordNamesTheKernel) {
    fs::path d = fresh_dir("nobest");
    tessel::db::ScheduleStore::open((d / "empty.db").string()); // an empty database
    write(d / "k.json", manifest({kernel_json("sm_best", "softmax", kSoftmaxParams, ", \"schedule\": \"best\"")}));
    Outcome o = tessel_export(d / "k.json", d / "out", "--db " + (d / "empty.db").string());
    EXPECT_EQ(o.exit_code, 1) << o.output;
    EXPECT_NE(o.output.find("kernel 'sm_best': schedule \"best\": no verified result in " + (d / "empty.db").string() +
                            " for softmax (COLS=128,ROWS=16,dtype=fp32) on ascend-like (arch hash " +
                            tessel::load_arch("ascend-like").hash() + ")"),
              std::string::npos) << o.output;
    expect_nothing_written(d / "out");

    Outcome missing = tessel_export(d / "k.json", d / "out", "--db " + (d / "absent.db").string());
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.output.find("kernel 'sm_best': schedule \"best\": the database " + (d / "absent.db").string() +
                                  " does not exist"),
              std::string::npos) << missing.output;
}

TEST(ExportErrors, ManifestMistakesNameTheKernel) {
    fs::path d = fresh_dir("manifest");
    write(d / "k.json", manifest({kernel_json("twice", "softmax", ""), kernel_json("twice", "softmax", "")}));
    Outcome o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_NE(o.output.find("kernel 'twice' is listed twice"), std::string::npos) << o.output;

    write(d / "k.json", manifest({kernel_json("sm", "softmax", ""), kernel_json("sm_cpu", "softmax", "")}));
    o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_NE(o.output.find("kernel 'sm_cpu' would define sm_cpu, which kernel 'sm' defines"), std::string::npos)
        << o.output;

    write(d / "k.json", manifest({kernel_json("not-an-identifier", "softmax", "")}));
    o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_NE(o.output.find("kernel 'not-an-identifier': the name must be a C identifier"), std::string::npos)
        << o.output;

    write(d / "k.json", manifest({kernel_json("sm", "softmax", "ROWS=16,WIDTH=3")}));
    o = tessel_export(d / "k.json", d / "out");
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_NE(o.output.find("kernel 'sm': generator 'softmax' has no parameter 'WIDTH'"), std::string::npos)
        << o.output;
}

// The database's fastest verified schedule is the one exported (its hash in
// the header and the manifest); two kernels of one generator in one library.
TEST(ExportFromDatabase, BestScheduleIsExported) {
    fs::path d = fresh_dir("best");
    const std::string sched_path = kSrc + "/samples/softmax/schedules/staged_vector.json";
    tessel::ScheduleSpec spec = tessel::load_schedule(sched_path);
    tessel::ArchSpec arch = tessel::load_arch("ascend-like");
    {
        auto store = tessel::db::ScheduleStore::open((d / "t.db").string());
        tessel::db::RunRecord r;
        r.generator = "softmax";
        r.params_json = tessel::db::params_to_json({{"ROWS", "16"}, {"COLS", "128"}, {"dtype", "fp32"}});
        r.arch_name = arch.name;
        r.arch_json = arch.to_json(-1);
        r.arch_hash = arch.hash();
        r.schedule_json = tessel::schedule_to_json(spec);
        r.schedule_hash = tessel::schedule_hash(spec);
        r.result.verified = true;
        r.result.simulated_cycles = 7280;
        store.record_run(r);
    }
    write(d / "k.json", manifest({kernel_json("sm_a", "softmax", kSoftmaxParams, ", \"schedule\": \"best\""),
                                  kernel_json("sm_b", "softmax", "ROWS=8,COLS=64,dtype=fp32")}));
    Outcome o = tessel_export(d / "k.json", d / "out", "--db " + (d / "t.db").string());
    ASSERT_EQ(o.exit_code, 0) << o.output;
    std::stringstream header, mf;
    header << std::ifstream(d / "out" / "errs.h").rdbuf();
    mf << std::ifstream(d / "out" / "manifest.json").rdbuf();
    const std::string hash = tessel::schedule_hash(spec);
    EXPECT_NE(header.str().find("#define SM_A_SCHEDULE_HASH \"" + hash + "\""), std::string::npos) << header.str();
    EXPECT_NE(header.str().find("int sm_b_cpu(struct halide_buffer_t *in_buffer, struct halide_buffer_t *out_buffer);"),
              std::string::npos) << header.str();
    EXPECT_NE(mf.str().find("\"schedule_hash\": \"" + hash + "\""), std::string::npos);
    EXPECT_NE(mf.str().find("\"schedule_source\": \"best in " + (d / "t.db").string()), std::string::npos) << mf.str();
    EXPECT_TRUE(fs::exists(d / "out" / "liberrs.a"));
}
