#include "npu_target/passes/TilingPlan.h"

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Collect : public IRVisitor {
public:
    explicit Collect(const nir::NpuModule &m) : m_(m) {}
    TilingPlan plan;

private:
    const nir::NpuModule &m_;
    std::vector<std::pair<std::string, int64_t>> loops_;
    using IRVisitor::visit;

    void visit(const For *op) override {
        const int64_t *e = as_const_int(op->extent);
        loops_.emplace_back(op->name, e ? *e : -1);
        op->body.accept(this);
        loops_.pop_back();
    }
    void visit(const Allocate *op) override {
        auto it = m_.buffers.find(op->name);
        if (it != m_.buffers.end() && op->name.find(".vtmp") == std::string::npos) {
            const nir::BufferInfo &b = it->second;
            TiledBuffer t;
            t.name = op->name;
            t.source = op->name;
            for (const auto &s : m_.schedule.staged) {
                if (s.func == op->name) {
                    t.source = s.source;
                }
            }
            t.level = b.level;
            for (const Expr &e : op->extents) {
                const int64_t *c = as_const_int(e);
                t.extents.push_back(c ? *c : -1);
            }
            t.bytes = b.bytes();
            t.buffers = b.buffers;
            t.directive = b.directive;
            t.loops = loops_;
            plan.buffers.push_back(t);
        }
        op->body.accept(this);
    }
};

} // namespace

TilingPlan tiling_plan(const nir::NpuModule &m) {
    Collect c(m);
    m.body.accept(&c);
    return c.plan;
}

} // namespace tessel
