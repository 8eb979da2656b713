// Bounded runs and a bounded trace (issue 21, items 3 and 4): the instruction and
// cycle budgets and their messages (the scalar-code Func, the prediction), the
// per-instruction work bounds checked at load time and before an instruction's
// work, argument shapes against GM, the trace cap keeping the summary exact, and
// the streamed trace equal to the in-memory one.
#include "tests/common/BuildSlowdown.h"
#include "SimTestUtil.h"

#include "npu_target/isa/Asm.h"
#include "npu_target/isa/Binary.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

using namespace tessel;

namespace {

const ArchSpec &ascend() { return test::ascend_like(); }

std::string sim_error(const isa::Program &p, std::vector<Tensor> args, const sim::SimOptions &opt) {
    try {
        sim::simulate(p, ascend(), args, opt);
    } catch (const sim::SimError &e) {
        return e.what();
    }
    ADD_FAILURE() << "no SimError";
    return "";
}

template <typename F>
std::string user_error_of(F f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "";
}

isa::Program assemble(const std::string &text) { return isa::assemble(text, "t.s", &ascend()); }

// Scalar code of Func "C": an outer loop of 40 iterations around an inner loop of 50, six
// instructions per inner iteration (the selector's shape: body, addi, blt to the top).
const char *kScalarNest = R"(
.kernel "nest"
.prov 0 "" "" ""
.prov 1 "" "C" "C.s0.y"
.prov 2 "" "C" "C.s0.x"
        li r10, 0 @p1
        li r11, 40 @p1
outer:  li r12, 0 @p2
        li r13, 50 @p2
inner:  add r14, r14, r12 @p2
        mul r15, r14, r12 @p2
        add r16, r15, r10 @p2
        xor r17, r16, r14 @p2
        addi r12, r12, 1 @p2
        blt r12, r13, inner @p2
        addi r10, r10, 1 @p1
        blt r10, r11, outer @p1
        end
)";

} // namespace

// RunControl (the IDE's Cancel): a run without budgets stops at the next check after the flag
// is set from another thread, with SimCancelled; the issued count is published as it runs.
TEST(SimBudget, RunControlCancelsAnUnboundedRun) {
    isa::Program p = assemble(".kernel \"spin\"\nloop: jmp loop\n");
    sim::RunControl control;
    sim::SimOptions opt;
    opt.max_instructions = 0;
    opt.max_cycles = 0;
    opt.trace = false;
    opt.control = &control;
    std::thread canceller([&] {
        while (control.issued.load() < 100'000) {
            std::this_thread::yield();
        }
        control.cancel = true;
    });
    std::vector<Tensor> args;
    std::string msg;
    bool cancelled = false;
    try {
        sim::simulate(p, ascend(), args, opt);
    } catch (const sim::SimCancelled &e) {
        cancelled = true;
        msg = e.what();
    }
    canceller.join();
    ASSERT_TRUE(cancelled);
    EXPECT_NE(msg.find("the run was cancelled at cycle"), std::string::npos) << msg;
    EXPECT_GE(control.issued.load(), 100'000u);
    EXPECT_EQ(control.issued.load() % 4096, 0u); // published at the checks
}

TEST(SimBudget, InstructionBudgetStopsWithWhatToDo) {
    isa::Program p = assemble(".kernel \"spin\"\nloop: jmp loop\n");
    sim::SimOptions opt;
    opt.max_instructions = 1000;
    std::string msg = sim_error(p, {}, opt);
    EXPECT_NE(msg.find("simulation exceeded max_instructions = 1000 on core 0 at pc 0 (jmp): the run was stopped by "
                       "its instruction budget after 1000 instructions"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("to finish: raise the budget (--max-instructions N, 0 = no limit"), std::string::npos) << msg;
}

TEST(SimBudget, CycleBudgetStopsWithWhatToDo) {
    isa::Program p = assemble(".kernel \"spin\"\nloop: jmp loop\n");
    sim::SimOptions opt;
    opt.max_cycles = 5000;
    std::string msg = sim_error(p, {}, opt);
    EXPECT_NE(msg.find("simulation exceeded max_cycles = 5000 on core 0 at pc 0 (jmp): the run was stopped by its "
                       "cycle budget"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("(--max-cycles N, 0 = no limit"), std::string::npos) << msg;
}

TEST(SimBudget, AnInfiniteLoopStopsByTheDefaultBudget) {
    isa::Program p = assemble(".kernel \"spin\"\nloop: jmp loop\n");
    sim::SimOptions opt; // the defaults
    opt.trace = false;
    auto t0 = std::chrono::steady_clock::now();
    std::string msg = sim_error(p, {}, opt);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_NE(msg.find("simulation exceeded max_instructions = " + std::to_string(sim::kDefaultMaxInstructions)),
              std::string::npos)
        << msg;
    EXPECT_LT(s, 30.0 * tessel::test::kBuildSlowdown);
}

TEST(SimBudget, ScalarCodeIsNamedAndTheWholeRunPredicted) {
    isa::Program p = assemble(kScalarNest);
    sim::SimOptions all;
    all.max_instructions = 0;
    all.trace = false;
    std::vector<Tensor> none;
    const uint64_t total = sim::simulate(p, ascend(), none, all).instructions;
    sim::SimOptions opt;
    opt.max_instructions = 3000;
    std::string msg = sim_error(p, {}, opt);
    EXPECT_NE(msg.find("Func 'C' runs as scalar code (100.0% of them)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("outermost counted loop C.s0.y at pc 2-11: 9 of 40 iterations done"), std::string::npos) << msg;
    EXPECT_NE(msg.find("or schedule 'C' for the vector or matrix unit"), std::string::npos) << msg;
    // "needs about N instructions": within 2 % of the run's real count.
    size_t at = msg.find("needs about ");
    ASSERT_NE(at, std::string::npos) << msg;
    double predicted = std::stod(msg.substr(at + 12));
    EXPECT_NEAR(predicted, double(total), 0.02 * double(total)) << msg;
}

TEST(SimBudget, AHugeVectorInstructionIsRejectedAtLoad) {
    std::string msg = user_error_of([] {
        assemble(".kernel \"big\"\n li r5, 64\n vadd.fp16 r0, r0, r0, r5, 60000, 0/0/0, 0/0/0\n end\n");
    });
    EXPECT_EQ(msg, "program 'big' instruction 1 (vadd): 60000 repeat rows; the vector unit of ascend-like repeats at most 255 "
                   "times (vector.max_repeat)");
}

TEST(SimBudget, AHugeElementCountStopsBeforeItsWork) {
    // Stride 0 everywhere: 10^12 elements would fit any range check; the row bound rejects it.
    isa::Program p = assemble(".kernel \"big\"\n li r5, 1000000000000\n vadd.fp16 r0, r0, r0, r5, 255, 0/0/0, 0/0/0\n end\n");
    sim::SimOptions opt;
    opt.max_cycles = 1000;
    auto t0 = std::chrono::steady_clock::now();
    std::string msg = sim_error(p, {}, opt);
    EXPECT_NE(msg.find("core 0 pc 1 (vadd): element count 1000000000000 per row (fp16) exceeds what UB holds (196608 "
                       "bytes = 98304 elements)"),
              std::string::npos)
        << msg;
    // A legal but long one (255 rows of 98304 fp16: 195840 repeats) stops at --max-cycles 1000 before computing.
    p = assemble(".kernel \"long\"\n li r5, 98304\n vadd.fp16 r0, r0, r0, r5, 255, 1/1/1, 0/0/0\n end\n");
    msg = sim_error(p, {}, opt);
    EXPECT_NE(msg.find("simulation exceeded max_cycles = 1000 on core 0 at pc 1 (vadd)"), std::string::npos) << msg;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

TEST(SimBudget, ADescriptorLargerThanItsLevelIsRejectedAtLoad) {
    // Strides 0 on both sides: 4095^3 x 32 bytes through one 32-byte window.
    std::string msg = user_error_of([] {
        assemble(".kernel \"bcast\"\n.arg \"x\" uint8 32 in\n"
                 ".desc d0 dims=3 elem=32 count=1/4095/4095/1 src=32/0/0/0 dst=32/0/0/0 transform=none\n"
                 " li r10, 0\n dma MTE2, UB, r10, GM, r1, d0\n end\n");
    });
    EXPECT_EQ(msg, "program 'bcast' instruction 1 (dma): descriptor d0 moves 536608800 bytes GM->UB; UB of ascend-like "
                   "holds 196608 bytes");
}

TEST(SimBudget, AnArgumentLargerThanGmIsRejectedBeforeAllocation) {
    std::string msg = user_error_of([] {
        assemble(".kernel \"huge\"\n.arg \"x\" fp32 1099511627776x1024 in\n end\n");
    });
    EXPECT_EQ(msg, "program 'huge' argument 'x' (fp32 1099511627776x1024) needs 4503599627370496 bytes; with the "
                   "arguments before it that is more than GM of ascend-like holds (34359738368 bytes)");
    // An overflowing product is caught too.
    msg = user_error_of([] { assemble(".kernel \"huge\"\n.arg \"x\" fp32 4294967296x4294967296x16 in\n end\n"); });
    EXPECT_NE(msg.find("needs more than 2^62 bytes"), std::string::npos) << msg;
}

namespace {

// A loop of DMA in, two vector ops, DMA out, with flags: every pipe busy and stalling.
isa::Program traced_program() {
    return assemble(R"(
.kernel "loop"
.arg "x" fp16 4096 in
.arg "y" fp16 4096 out
.desc d0 dims=1 elem=32 count=16/1/1/1 src=32/0/0/0 dst=32/0/0/0 transform=none
        li r10, 0
        li r11, 16
        li r12, 0
        li r13, 256
top:    dma MTE2, UB, r12, GM, r1, d0
        set_flag MTE2, V, 0
        wait_flag MTE2, V, 0
        vadd.fp16 r12, r12, r12, r13, 1, 1/1/1, 0/0/0
        vmul.fp16 r12, r12, r12, r13, 1, 1/1/1, 0/0/0
        set_flag V, MTE3, 0
        wait_flag V, MTE3, 0
        dma MTE3, GM, r2, UB, r12, d0
        set_flag MTE3, MTE2, 0
        wait_flag MTE3, MTE2, 0
        addi r1, r1, 512
        addi r2, r2, 512
        addi r10, r10, 1
        blt r10, r11, top
        end
)");
}

sim::SimReport run_traced(const isa::Program &p, uint64_t cap, sim::TraceSink *sink = nullptr, bool keep = true) {
    std::vector<Tensor> args{Tensor("x", DType::FP16, {4096}), Tensor("y", DType::FP16, {4096})};
    sim::SimOptions opt;
    opt.max_trace_events = cap;
    opt.trace_sink = sink;
    opt.trace = keep;
    return sim::simulate(p, ascend(), args, opt);
}

} // namespace

TEST(SimTrace, TheCapKeepsTheSummaryExact) {
    isa::Program p = traced_program();
    sim::SimReport full = run_traced(p, 0);
    sim::SimReport cut = run_traced(p, 25);
    ASSERT_GT(full.trace.size(), 100u);
    EXPECT_FALSE(full.trace_truncated);
    EXPECT_TRUE(cut.trace_truncated);
    EXPECT_EQ(cut.trace.size(), 25u);
    EXPECT_EQ(cut.trace_events, full.trace.size());
    EXPECT_EQ(cut.trace_cut_cycle, full.trace[25].start);
    EXPECT_EQ(cut.cycles, full.cycles);
    EXPECT_EQ(cut.instructions, full.instructions);
    ASSERT_EQ(cut.pipes.size(), full.pipes.size());
    for (size_t i = 0; i < full.pipes.size(); ++i) {
        EXPECT_EQ(cut.pipes[i].busy_cycles, full.pipes[i].busy_cycles) << full.pipes[i].pipe;
        EXPECT_EQ(cut.pipes[i].stall_cycles, full.pipes[i].stall_cycles) << full.pipes[i].pipe;
        EXPECT_EQ(cut.pipes[i].instructions, full.pipes[i].instructions) << full.pipes[i].pipe;
    }
    ASSERT_EQ(cut.edges.size(), full.edges.size());
    for (size_t i = 0; i < full.edges.size(); ++i) {
        EXPECT_EQ(cut.edges[i].bytes, full.edges[i].bytes);
        EXPECT_EQ(cut.edges[i].busy_cycles, full.edges[i].busy_cycles);
        EXPECT_EQ(cut.edges[i].descriptors, full.edges[i].descriptors);
    }
    // The recorded events are the full trace's first ones, accesses included.
    for (size_t i = 0; i < cut.trace.size(); ++i) {
        EXPECT_EQ(cut.trace[i].start, full.trace[i].start);
        EXPECT_EQ(cut.trace[i].pipe, full.trace[i].pipe);
        EXPECT_EQ(cut.accesses(cut.trace[i]).size(), full.accesses(full.trace[i]).size());
    }
    std::string s = sim::summarize(cut);
    EXPECT_NE(s.find("trace: the first 25 of " + std::to_string(full.trace.size()) + " events recorded; it stops at cycle " +
                     std::to_string(cut.trace_cut_cycle) + " of " + std::to_string(full.cycles)),
              std::string::npos)
        << s;
    EXPECT_EQ(sim::summarize(full).find("trace: the first"), std::string::npos);
    auto j = nlohmann::json::parse(sim::trace_to_chrome_json(cut, p));
    EXPECT_EQ(j["otherData"]["trace_truncated"], true);
    EXPECT_EQ(j["otherData"]["trace_cut_cycle"], cut.trace_cut_cycle);
}

TEST(SimTrace, StreamedJsonEqualsTheInMemoryJson) {
    isa::Program p = traced_program();
    for (uint64_t cap : {uint64_t(0), uint64_t(40)}) {
        std::ostringstream streamed;
        sim::ChromeTraceWriter w(streamed, p);
        sim::SimReport r = run_traced(p, cap, &w);
        w.finish(r);
        EXPECT_EQ(streamed.str(), sim::trace_to_chrome_json(r, p)) << "cap " << cap;
        // Streaming alone (nothing kept in memory) writes the same file.
        std::ostringstream only;
        sim::ChromeTraceWriter w2(only, p);
        sim::SimReport r2 = run_traced(p, cap, &w2, false);
        w2.finish(r2);
        EXPECT_TRUE(r2.trace.empty());
        EXPECT_EQ(only.str(), streamed.str()) << "cap " << cap;
        auto j = nlohmann::json::parse(streamed.str());
        EXPECT_EQ(j["otherData"]["cycles"], r.cycles);
        EXPECT_GT(j["traceEvents"].size(), r.trace.size()); // the events and the track names
    }
}

TEST(SimTrace, AFailedTraceWriteIsAnError) {
    isa::Program p = traced_program();
    std::ofstream full("/dev/full");
    ASSERT_TRUE(full.good());
    std::string msg = user_error_of([&] {
        sim::ChromeTraceWriter w(full, p, "the trace to '/dev/full'");
        sim::SimReport r = run_traced(p, 0, &w, false);
        w.finish(r);
    });
    EXPECT_EQ(msg, "cannot write the trace to '/dev/full' (a write failed: disk full or the file is not writable)");
}

TEST(SimTrace, EventsAreSmall) {
    // Four interned names instead of four std::strings; the accesses live beside the events.
    EXPECT_LE(sizeof(sim::TraceEvent), 48u);
    EXPECT_EQ(sim::Name("MTE2"), "MTE2");
    EXPECT_EQ(sim::Name("MTE2").id(), sim::Name(std::string("MTE2")).id());
    EXPECT_TRUE(sim::Name().empty());
    EXPECT_EQ(sim::Name("GM") + "->" + sim::Name("UB"), "GM->UB");
}
