#include "npu_target/passes/AllocateBuffers.h"

#include "npu_target/common/Error.h"

#include <set>
#include <sstream>

namespace tessel {

using namespace Halide;
using namespace Halide::Internal;

namespace {

std::string kib(int64_t bytes) {
    std::ostringstream os;
    if (bytes % 1024 == 0) {
        os << bytes / 1024 << " KiB";
    } else {
        os << bytes << " B";
    }
    return os.str();
}

// The single-copy on-chip buffers that a DMA reads inside a loop nest, by the
// outermost loop around their Allocate. Such a copy-out (UB -> GM, UB -> L1,
// L0C -> UB) runs on its engine after the operations queued before it, often
// late in the iteration; a buffer that shared its bytes with an operation
// early in the body (a sibling scope, disjoint in program order) would make
// the next iteration's first operation wait for that copy-out: a false
// cross-pipe dependency around the loop. These buffers get loop-wide space.
enum class DmaSourceSpace { WholeNest, InnermostLoop, Scope };

class DmaReadInLoop : public IRVisitor {
public:
    explicit DmaReadInLoop(bool outermost) : outermost_(outermost) {}
    std::map<std::string, std::string> loop_of; // buffer -> the loop around its Allocate it holds space for
    std::set<std::string> dma_read;

private:
    bool outermost_;
    std::vector<std::string> loops_;
    using IRVisitor::visit;
    void visit(const For *op) override {
        loops_.push_back(op->name);
        IRVisitor::visit(op);
        loops_.pop_back();
    }
    void visit(const Allocate *op) override {
        if (!loops_.empty()) {
            loop_of.emplace(op->name, outermost_ ? loops_.front() : loops_.back());
        }
        IRVisitor::visit(op);
    }
    void visit(const Evaluate *op) override {
        if (auto d = nir::as_dma(op)) {
            dma_read.insert(d->src.buffer);
        }
        IRVisitor::visit(op);
    }
};

class Allocator : public IRVisitor {
public:
    Allocator(nir::NpuModule &m, const StartChooser &choose, DmaSourceSpace dma_sources) : m_(m), choose_(choose) {
        if (dma_sources != DmaSourceSpace::Scope) {
            DmaReadInLoop f(dma_sources == DmaSourceSpace::WholeNest);
            m.body.accept(&f);
            for (const auto &[name, loop] : f.loop_of) {
                auto b = m.buffers.find(name);
                if (f.dma_read.count(name) && b != m.buffers.end() && b->second.buffers == 1 && !b->second.is_arg) {
                    loop_wide_[loop].push_back(name);
                }
            }
        }
    }

private:
    nir::NpuModule &m_;
    std::map<std::string, int64_t> top_;       // level -> bytes in use
    std::map<std::string, std::vector<std::string>> live_; // level -> live buffers (for messages)
    int64_t counter_ = 0;
    std::set<std::string> held_; // placed at their rotation scope
    std::set<std::string> allocated_;
    const StartChooser &choose_;
    std::map<std::string, std::vector<std::string>> loop_wide_; // loop -> buffers placed for its whole body
    using IRVisitor::visit;

    void visit(const Evaluate *op) override {
        counter_++;
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        counter_++;
        IRVisitor::visit(op);
    }
    std::map<std::string, int64_t> offsets_of(const std::vector<std::string> &names) const {
        std::map<std::string, int64_t> r;
        for (const auto &n : names) {
            r[n] = m_.buffers.at(n).offset;
        }
        return r;
    }
    // Places `name` on top of its level's stack and opens its lifetime.
    nir::BufferLifetime place(const std::string &name) {
        nir::BufferInfo &b = m_.buffers.at(name);
        const MemoryLevel &L = *m_.arch->find_level(b.level);
        const int64_t align = std::max(1, L.alignment);
        const int64_t copy = b.copy_bytes(*m_.arch);
        const int64_t total = copy * b.buffers;
        int64_t at = (top_[b.level] + align - 1) / align * align;
        bool overflow = false;
        if (static_cast<uint64_t>(at + total) > L.size_bytes) {
            std::ostringstream os;
            os << "buffer " << name << " (" << b.elems << " x " << b.type << " = " << kib(b.bytes());
            if (b.buffers > 1) {
                os << ", buffers=" << b.buffers;
            }
            os << ") does not fit in " << L.name << ": needs " << kib(at + total) << " with the buffers live here";
            for (const auto &n : live_[b.level]) {
                os << (n == live_[b.level].front() ? " (" : ", ") << n;
            }
            if (!live_[b.level].empty()) {
                os << ")";
            }
            os << "; " << L.name << " has " << kib(static_cast<int64_t>(L.size_bytes));
            if (!b.directive.empty()) {
                os << " [directive " << b.directive << "]";
            }
            if (m_.overflow_message.empty()) {
                m_.overflow_message = os.str();
            }
            overflow = true;
        }
        if (!overflow) {
            at = choose_ ? choose_(name, at, total, L, align, offsets_of(live_[b.level])) : at;
        }
        b.offset = at;
        top_[b.level] = at + total;
        m_.level_peak_bytes[b.level] = std::max(m_.level_peak_bytes[b.level], top_[b.level]);
        live_[b.level].push_back(name);
        nir::BufferLifetime lt;
        lt.name = name;
        lt.level = b.level;
        lt.offset = at;
        lt.bytes = copy;
        lt.buffers = b.buffers;
        lt.first = counter_;
        lt.directive = b.directive;
        lt.overflow = overflow;
        return lt;
    }
    // Closes the lifetime opened by place(); the caller restores the stack top.
    void release(nir::BufferLifetime lt) {
        lt.last = counter_;
        m_.lifetimes.push_back(lt);
        live_[lt.level].pop_back();
    }

    // A multi-buffered buffer whose copies rotate across this loop
    // (multi_buffer's rotate_scope) holds its space for the whole loop: a reader
    // may still use a copy after the inner loop ends, until the credits return.
    // So does a single-copy buffer a DMA reads in this loop's body (DmaReadInLoop).
    void visit(const For *op) override {
        std::vector<nir::BufferLifetime> held;
        std::map<std::string, int64_t> saved = top_;
        for (const auto &[name, b] : m_.buffers) {
            if (b.buffers > 1 && b.rotate_scope == op->name && !held_.count(name)) {
                held.push_back(place(name));
                held_.insert(name);
            }
        }
        if (auto w = loop_wide_.find(op->name); w != loop_wide_.end()) {
            for (const auto &name : w->second) {
                if (!held_.count(name)) {
                    held.push_back(place(name));
                    held_.insert(name);
                }
            }
        }
        IRVisitor::visit(op);
        for (size_t i = held.size(); i-- > 0;) {
            held_.erase(held[i].name);
            release(held[i]);
        }
        top_ = saved;
    }
    void visit(const Allocate *op) override {
        // Offsets are kept per name: a second allocation of a name would share
        // the first one's placement whatever else is live at it.
        if (!allocated_.insert(op->name).second) {
            internal_error("allocate_buffers: buffer ", op->name,
                           " is allocated twice; a pass that copies an allocation must rename the copy");
        }
        if (held_.count(op->name)) {
            op->body.accept(this);
            return;
        }
        const std::map<std::string, int64_t> saved = top_;
        nir::BufferLifetime lt = place(op->name);
        op->body.accept(this);
        release(lt);
        top_ = saved;
    }
};

} // namespace

nir::NpuModule allocate_buffers(const nir::NpuModule &m) { return allocate_buffers(m, StartChooser()); }

namespace {

nir::NpuModule allocate(const nir::NpuModule &m, const StartChooser &choose, DmaSourceSpace dma_sources) {
    nir::NpuModule r = m;
    r.lifetimes.clear();
    r.level_peak_bytes.clear();
    r.overflow_message.clear();
    Allocator a(r, choose, dma_sources);
    r.body.accept(&a);
    return r;
}

} // namespace

nir::NpuModule allocate_buffers(const nir::NpuModule &m, const StartChooser &choose) {
    // Loop-wide space for the DMA sources is a speed choice: when it does not
    // fit for the whole nest, it is tried for the innermost loop, then the
    // buffers share space as their scopes allow (and the error, if that does
    // not fit either, is the scoped allocation's).
    nir::NpuModule r;
    for (DmaSourceSpace s : {DmaSourceSpace::WholeNest, DmaSourceSpace::InnermostLoop, DmaSourceSpace::Scope}) {
        r = allocate(m, choose, s);
        if (r.overflow_message.empty()) {
            break;
        }
    }
    return r;
}

} // namespace tessel
