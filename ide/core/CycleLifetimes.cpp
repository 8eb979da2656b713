#include "ide/core/CycleLifetimes.h"

#include <algorithm>
#include <map>

namespace tessel::ide {

namespace {

struct Access {
    int64_t start, end;
    bool write;
};

/** Intervals holding data: a write after a read starts the next one. */
std::vector<std::pair<int64_t, int64_t>> liveIntervals(std::vector<Access> acc) {
    std::stable_sort(acc.begin(), acc.end(), [](const Access &a, const Access &b) { return a.start < b.start; });
    std::vector<std::pair<int64_t, int64_t>> out;
    bool read = false;
    for (const Access &a : acc) {
        if (out.empty() || (a.write && read)) {
            out.push_back({a.start, a.end});
            read = !a.write;
            continue;
        }
        out.back().second = std::max(out.back().second, a.end);
        read = read || !a.write;
    }
    return out;
}

struct Placed {
    int level = -1;
    int64_t lo = 0, hi = 0; // every copy
    int64_t stride = 1;     // bytes from one copy to the next (rounded up to the level's alignment)
};

void widen(std::pair<int64_t, int64_t> &span, int64_t start, int64_t end) {
    if (span.first < 0) {
        span = {start, end};
        return;
    }
    span.first = std::min(span.first, start);
    span.second = std::max(span.second, end);
}

} // namespace

std::vector<CycleLifetime> cycleLifetimes(const std::vector<tessel::BufferLifetime> &lifetimes,
                                          const tessel::sim::SimReport &run,
                                          const std::vector<tessel::isa::Provenance> &provenance,
                                          const tessel::ArchSpec &arch) {
    std::vector<CycleLifetime> out(lifetimes.size());
    std::vector<Placed> placed(lifetimes.size());
    for (size_t i = 0; i < lifetimes.size(); ++i) {
        const auto &l = lifetimes[i];
        int copies = std::max(1, l.buffers);
        out[i].copies.assign(size_t(copies), {-1, -1});
        for (size_t m = 0; m < arch.memories.size(); ++m) {
            if (arch.memories[m].name == l.level) {
                int64_t align = std::max(1, arch.memories[m].alignment);
                int64_t stride = std::max<int64_t>(1, (l.bytes + align - 1) / align * align);
                placed[i] = {int(m), l.offset, l.offset + stride * (copies - 1) + l.bytes, stride};
            }
        }
    }
    std::vector<std::vector<std::vector<Access>>> perCopy(lifetimes.size());
    for (size_t i = 0; i < lifetimes.size(); ++i) {
        perCopy[i].resize(out[i].copies.size());
    }
    std::vector<size_t> hits;
    std::map<std::pair<size_t, int64_t>, bool> touched; // (buffer, copy) -> only written by this event
    for (const auto &e : run.trace) {
        touched.clear();
        const std::string &directive = e.prov < provenance.size() ? provenance[e.prov].directive_id : std::string();
        for (const auto &a : run.accesses(e)) {
            hits.clear();
            for (size_t i = 0; i < placed.size(); ++i) {
                const Placed &p = placed[i];
                if (p.level == a.level && int64_t(a.lo) < p.hi && int64_t(a.hi) > p.lo) {
                    hits.push_back(i);
                }
            }
            if (hits.size() > 1) { // shared addresses: prefer the buffers of the issuing directive
                std::vector<size_t> own;
                for (size_t i : hits) {
                    if (!directive.empty() && lifetimes[i].directive == directive) {
                        own.push_back(i);
                    }
                }
                if (!own.empty()) {
                    hits.swap(own);
                }
            }
            for (size_t i : hits) {
                CycleLifetime &c = out[i];
                const Placed &p = placed[i];
                std::pair<int64_t, int64_t> all{c.used ? c.first : -1, c.last};
                widen(all, int64_t(e.start), int64_t(e.end));
                c.first = all.first;
                c.last = all.second;
                c.used = true;
                c.accesses++;
                int64_t k0 = std::max<int64_t>(0, (int64_t(a.lo) - p.lo) / p.stride);
                int64_t k1 = std::min<int64_t>(int64_t(c.copies.size()) - 1, (int64_t(a.hi) - 1 - p.lo) / p.stride);
                for (int64_t k = k0; k <= k1; ++k) {
                    widen(c.copies[size_t(k)], int64_t(e.start), int64_t(e.end));
                    auto it = touched.try_emplace({i, k}, a.write).first;
                    it->second = it->second && a.write;
                }
            }
        }
        // An instruction that reads what it writes (accumulate, in place) updates, it does not overwrite.
        for (const auto &[at, writeOnly] : touched) {
            perCopy[at.first][size_t(at.second)].push_back({int64_t(e.start), int64_t(e.end), writeOnly});
        }
    }
    for (size_t i = 0; i < out.size(); ++i) {
        for (auto &acc : perCopy[i]) {
            out[i].live.push_back(liveIntervals(std::move(acc)));
        }
    }
    return out;
}

} // namespace tessel::ide
