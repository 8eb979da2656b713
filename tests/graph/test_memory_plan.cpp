// GM memory planning (graph/MemoryPlan.h) on tiny graphs after the passes.
#include "graph/GraphImport.h"
#include "graph/MemoryPlan.h"
#include "graph/passes/Passes.h"
#include "npu_target/common/Error.h"
#include "tests/graph/ModelBuilder.h"

#include <gtest/gtest.h>

using namespace tessel;
using namespace tessel::graph;
using tessel::test::ModelBuilder;

namespace {

Graph compiled(const ModelBuilder &b, const std::string &name) {
    Graph g = import_onnx_graph(b.save(tessel::test::model_dir() + "/" + name));
    run_graph_passes(g);
    return g;
}

const PlannedTensor &planned(const MemoryPlan &p, const std::string &name) {
    for (const auto &t : p.tensors) {
        if (t.name == name) {
            return t;
        }
    }
    throw std::runtime_error("not planned: " + name);
}

bool is_planned(const MemoryPlan &p, const std::string &name) {
    for (const auto &t : p.tensors) {
        if (t.name == name) {
            return true;
        }
    }
    return false;
}

TEST(MemoryPlan, ChainReusesTheBufferTwoStepsBack) {
    // x -> a -> b -> c -> y, 100 floats each (400 B, aligned to 512).
    ModelBuilder b;
    b.input("x", {100}).output("y", 1);
    b.node("Relu", {"x"}, {"a"}, "k0");
    b.node("Sigmoid", {"a"}, {"b"}, "k1");
    b.node("Neg", {"b"}, {"c"}, "k2");
    b.node("Abs", {"c"}, {"y"}, "k3");
    MemoryPlan p = plan_memory(compiled(b, "chain.onnx"), 512);
    EXPECT_EQ(p.steps, (std::vector<std::string>{"k0", "k1", "k2", "k3"}));
    EXPECT_EQ(planned(p, "x").first, 0);
    EXPECT_EQ(planned(p, "x").last, 0);
    EXPECT_EQ(planned(p, "a").first, 0);
    EXPECT_EQ(planned(p, "a").last, 1);
    EXPECT_EQ(planned(p, "y").last, 3);
    EXPECT_EQ(planned(p, "x").size, 512);
    // Two buffers suffice: at each step one tensor is read and one written.
    EXPECT_EQ(p.lower_bound, 1024);
    EXPECT_EQ(p.arena_peak, 1024);
    EXPECT_EQ(planned(p, "b").offset, planned(p, "x").offset);
    EXPECT_NE(planned(p, "a").offset, planned(p, "b").offset);
    EXPECT_NO_THROW(check_memory_plan(p));
}

TEST(MemoryPlan, ASmallTensorReusesTheSpaceOfDeadLargeOnes) {
    // x and big0 (4 KiB) are dead by step 2; small and s (1 KiB) and y reuse their space.
    ModelBuilder b;
    b.input("x", {1024}).init_i64("half", {1}, {256}).output("y", 1).output("s", 1);
    b.node("Relu", {"x"}, {"big0"}, "k0");                     // step 0: big0
    b.node("Sigmoid", {"big0"}, {"big1"}, "k1");               // step 1: big0 -> big1
    b.node("Slice", {"big1", "zero", "half"}, {"small"}, "k2"); // step 2: big1 -> small (256 floats)
    b.node("Neg", {"big1"}, {"y"}, "k3");                      // step 3: big1 -> y
    b.node("Abs", {"small"}, {"s"}, "k4");                     // step 4
    b.constant_i64("zero", {1}, {0});
    // The Constant must come before its reader: move it to the front.
    auto *nodes = b.proto().mutable_graph()->mutable_node();
    std::rotate(nodes->begin(), nodes->end() - 1, nodes->end());
    Graph g = compiled(b, "bestfit.onnx");
    MemoryPlan p = plan_memory(g, 64);
    EXPECT_GE(p.arena_peak, p.lower_bound);
    EXPECT_NO_THROW(check_memory_plan(p));
    // Steps 3 and 4 hold two big tensors and a small one (big1, small, y; small, y, s);
    // one buffer per tensor would take 4 x 4 KiB + 2 x 1 KiB.
    EXPECT_EQ(p.lower_bound, 2 * 4096 + 1024);
    EXPECT_EQ(p.arena_peak, p.lower_bound) << print_memory_plan(p);
}

TEST(MemoryPlan, ViewsShareTheirSourceAndExtendItsLifetime) {
    ModelBuilder b;
    b.input("x", {2, 8}).init_i64("shape", {1}, {16}).output("y", 1).output("s", 2);
    b.node("Relu", {"x"}, {"a"}, "k0");
    b.node("Reshape", {"a", "shape"}, {"v"}, "view");
    b.node("Sigmoid", {"x"}, {"s"}, "k1");
    b.node("Neg", {"v"}, {"y"}, "k2"); // reads the view at step 2
    MemoryPlan p = plan_memory(compiled(b, "views.onnx"), 32);
    EXPECT_FALSE(is_planned(p, "v"));
    EXPECT_EQ(planned(p, "a").views, std::vector<std::string>{"v"});
    EXPECT_EQ(planned(p, "a").last, 2); // through its view
    EXPECT_FALSE(is_planned(p, "shape")); // a view's shape is metadata, not GM
    EXPECT_EQ(p.steps.size(), 3u);
}

TEST(MemoryPlan, FusedGroupIntermediatesStayOnChip) {
    ModelBuilder b;
    b.input("x", {1, 2, 4, 4}).init("W", {2, 2, 1, 1}, {1, 0, 0, 1}).init("B", {2}, {1, 2}).output("y", 4);
    b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
    b.node("Relu", {"c"}, {"y"}, "relu");
    MemoryPlan p = plan_memory(compiled(b, "fused.onnx"), 32);
    EXPECT_EQ(p.steps, std::vector<std::string>{"conv"});
    EXPECT_FALSE(is_planned(p, "c"));
    ASSERT_EQ(p.on_chip.size(), 1u);
    EXPECT_EQ(p.on_chip[0].tensors, std::vector<std::string>{"c"});
    EXPECT_EQ(p.on_chip[0].bytes, 2 * 4 * 4 * 4);
    // The weights are placed once, in order of use, aligned.
    EXPECT_TRUE(planned(p, "W").constant);
    EXPECT_EQ(planned(p, "W").offset, 0);
    EXPECT_EQ(planned(p, "B").offset, 32);
    EXPECT_EQ(p.constant_bytes, 64);
    const std::string text = print_memory_plan(p);
    EXPECT_NE(text.find("fused groups keep 128 B off GM"), std::string::npos) << text;
}

TEST(MemoryPlan, CheckRefusesOverlappingLiveTensors) {
    MemoryPlan p;
    p.alignment = 32;
    p.arena_peak = 64;
    p.tensors.push_back({"a", 64, 64, 0, 0, 2, false, {}});
    p.tensors.push_back({"b", 32, 32, 32, 1, 3, false, {}});
    EXPECT_THROW(check_memory_plan(p), InternalError);
    p.tensors[1].first = 3; // no longer live together
    EXPECT_NO_THROW(check_memory_plan(p));
}

} // namespace
