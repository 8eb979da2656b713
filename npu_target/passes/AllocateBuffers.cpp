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

class Allocator : public IRVisitor {
public:
    Allocator(nir::NpuModule &m, const StartChooser &choose) : m_(m), choose_(choose) {}

private:
    nir::NpuModule &m_;
    std::map<std::string, int64_t> top_;       // level -> bytes in use
    std::map<std::string, std::vector<std::string>> live_; // level -> live buffers (for messages)
    int64_t counter_ = 0;
    std::set<std::string> held_; // placed at their rotation scope
    std::set<std::string> allocated_;
    const StartChooser &choose_;
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
    void visit(const For *op) override {
        std::vector<nir::BufferLifetime> held;
        std::map<std::string, int64_t> saved = top_;
        for (const auto &[name, b] : m_.buffers) {
            if (b.buffers > 1 && b.rotate_scope == op->name && !held_.count(name)) {
                held.push_back(place(name));
                held_.insert(name);
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

nir::NpuModule allocate_buffers(const nir::NpuModule &m, const StartChooser &choose) {
    nir::NpuModule r = m;
    r.lifetimes.clear();
    r.level_peak_bytes.clear();
    r.overflow_message.clear();
    Allocator a(r, choose);
    r.body.accept(&a);
    return r;
}

} // namespace tessel
