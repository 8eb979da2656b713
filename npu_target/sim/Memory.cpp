// Memories of the simulated chip: the GM (kernel arguments), each core's
// on-chip levels, the scalar stack, the shared L2, memory protection and the
// race check.

#include "npu_target/sim/Machine.h"

#include <algorithm>
#include <sstream>

namespace tessel::sim {

std::vector<uint64_t> gm_arg_addresses(const isa::Program &prog) {
    std::vector<uint64_t> out;
    uint64_t at = 0x10000;
    for (const auto &a : prog.args) {
        out.push_back(at);
        int64_t n = 1;
        for (int64_t e : a.shape) {
            n *= e;
        }
        uint64_t bytes = static_cast<uint64_t>(n) * static_cast<uint64_t>(dtype_bytes(a.dtype));
        at += (bytes + 4095) / 4096 * 4096;
        at += 4096; // a guard page between arguments: an overrun never lands in the next one
    }
    return out;
}

namespace detail {

void L2Cache::configure(uint64_t capacity_bytes, uint64_t line_bytes, uint64_t sector_bytes) {
    line_bytes_ = line_bytes ? line_bytes : 512;
    sector_bytes_ = sector_bytes && line_bytes_ % sector_bytes == 0 && line_bytes_ / sector_bytes <= 64 ? sector_bytes
                                                                                                       : line_bytes_;
    capacity_lines_ = capacity_bytes / line_bytes_;
    lru_.clear();
    where_.clear();
}

uint64_t &L2Cache::line(uint64_t index) {
    auto it = where_.find(index);
    if (it != where_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.at);
        return it->second.sectors;
    }
    if (where_.size() >= capacity_lines_) {
        where_.erase(lru_.back());
        lru_.pop_back();
    }
    lru_.push_front(index);
    Line &l = where_[index];
    l.at = lru_.begin();
    return l.sectors;
}

template <typename F>
void L2Cache::each_sector(uint64_t addr, uint64_t len, F f) {
    for (uint64_t a = addr, end = addr + len; a < end;) {
        uint64_t &sectors = line(a / line_bytes_);
        const uint64_t line_end = std::min(end, (a / line_bytes_ + 1) * line_bytes_);
        while (a < line_end) {
            const uint64_t upto = std::min(line_end, (a / sector_bytes_ + 1) * sector_bytes_);
            f(sectors, uint64_t{1} << ((a % line_bytes_) / sector_bytes_), static_cast<int64_t>(upto - a));
            a = upto;
        }
    }
}

L2Read L2Cache::read(uint64_t addr, uint64_t len) {
    L2Read r;
    if (capacity_lines_ == 0) {
        r.miss = r.fetched = static_cast<int64_t>(len);
        return r;
    }
    each_sector(addr, len, [&](uint64_t &sectors, uint64_t bit, int64_t bytes) {
        if (sectors & bit) {
            r.hit += bytes;
        } else {
            r.miss += bytes;
            r.fetched += static_cast<int64_t>(sector_bytes_);
            sectors |= bit;
        }
    });
    return r;
}

void L2Cache::write(uint64_t addr, uint64_t len) {
    if (capacity_lines_ > 0) {
        each_sector(addr, len, [](uint64_t &sectors, uint64_t bit, int64_t) { sectors |= bit; });
    }
}

void Machine::setup_memory(std::vector<Tensor> &args) {
    if (args.size() != prog.args.size()) {
        throw SimError("simulate: the program '" + prog.kernel_name + "' takes " +
                       std::to_string(prog.args.size()) + " arguments, " + std::to_string(args.size()) +
                       " were given");
    }
    std::vector<uint64_t> addr = gm_arg_addresses(prog);
    for (size_t i = 0; i < args.size(); ++i) {
        const auto &d = prog.args[i];
        int64_t n = 1;
        for (int64_t e : d.shape) {
            n *= e;
        }
        int64_t want = n * dtype_bytes(d.dtype);
        if (args[i].bytes() != want || args[i].dtype != d.dtype) {
            std::ostringstream os;
            os << "simulate: argument " << i << " ('" << d.name << "') must be " << dtype_name(d.dtype) << " of "
               << want << " bytes; got " << dtype_name(args[i].dtype) << " of " << args[i].bytes() << " bytes";
            throw SimError(os.str());
        }
        gm.push_back(GmSegment{addr[i], static_cast<uint64_t>(want), args[i].data.data(), static_cast<int>(i)});
    }
    for (auto &c : cores) {
        c.mem.resize(arch.memories.size());
        for (size_t l = 0; l < arch.memories.size(); ++l) {
            if (!arch.memories[l].off_chip) {
                c.mem[l].assign(arch.memories[l].size_bytes, 0);
            }
        }
        c.stack.assign(arch.scalar.stack_bytes, 0);
        c.regs.assign(static_cast<size_t>(std::max(arch.scalar.registers, 2 + static_cast<int>(args.size()))), 0);
        for (size_t i = 0; i < args.size(); ++i) {
            c.regs[1 + i] = static_cast<int64_t>(addr[i]);
        }
    }
    l2.configure(arch.chip.l2_bytes, static_cast<uint64_t>(std::max(1, arch.chip.l2_line_bytes)),
                 static_cast<uint64_t>(std::max(1, arch.chip.l2_sector_bytes)));
}

Name Machine::level_id(int level) {
    if (level < 0) {
        return Name();
    }
    const size_t i = static_cast<size_t>(level);
    if (i >= level_ids.size()) {
        level_ids.resize(i + 1);
    }
    if (level_ids[i].empty()) {
        level_ids[i] = Name(level_name(level));
    }
    return level_ids[i];
}

bool Machine::is_gm(int level) const {
    return level >= 0 && level < static_cast<int>(arch.memories.size()) && arch.memories[level].off_chip;
}

std::string Machine::level_name(int level) const {
    if (level == isa::kStackLevel) {
        return "STACK";
    }
    if (level == kConstLevel) {
        return "CONST";
    }
    if (level >= 0 && level < static_cast<int>(arch.memories.size())) {
        return arch.memories[level].name;
    }
    return "level#" + std::to_string(level);
}

namespace {
std::string hex(uint64_t v) {
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
}
} // namespace

uint8_t *Machine::ptr(Core &c, int level, uint64_t addr, uint64_t len, uint32_t pc) {
    const isa::Instr &in = prog.code[pc];
    auto fail = [&](const std::string &why) -> uint8_t * {
        std::ostringstream os;
        os << "memory protection: core " << c.id << " " << instr_tag(pc, in) << " accesses " << level_name(level)
           << " [" << hex(addr) << ", " << hex(addr + len) << ") (" << len << " bytes): " << why;
        throw SimError(os.str());
    };
    if (addr + len < addr) {
        return fail("the address range wraps around");
    }
    if (level == isa::kStackLevel) {
        if (addr + len > c.stack.size()) {
            return fail("the scalar stack has " + std::to_string(c.stack.size()) + " bytes");
        }
        return c.stack.data() + addr;
    }
    if (level == kConstLevel) {
        if (addr + len > prog.constants.size()) {
            return fail("the constant pool has " + std::to_string(prog.constants.size()) + " bytes");
        }
        return const_cast<uint8_t *>(prog.constants.data()) + addr;
    }
    if (level < 0 || level >= static_cast<int>(arch.memories.size())) {
        return fail("no such memory level in arch '" + arch.name + "'");
    }
    if (arch.memories[level].off_chip) {
        for (const auto &s : gm) {
            if (addr >= s.base && addr + len <= s.base + s.size) {
                return s.data + (addr - s.base);
            }
        }
        return fail("outside every argument buffer");
    }
    auto &m = c.mem[level];
    if (addr + len > m.size()) {
        return fail(level_name(level) + " has " + std::to_string(m.size()) + " bytes");
    }
    return m.data() + addr;
}

void Machine::check_and_record(Core &c, int pipe, uint32_t pc, uint64_t t, const Range *ranges, int n,
                               uint64_t read_until, uint64_t write_until) {
    // Keep an access while it may still be in flight, or while an instruction
    // issued before it has not executed yet (that one must not touch its bytes).
    uint64_t oldest_pending = c.cur_seq;
    for (size_t p = 1; p < c.pipes.size(); ++p) {
        if (!c.pipes[p].q.empty()) {
            oldest_pending = std::min(oldest_pending, c.pipes[p].q.front().seq);
        }
    }
    auto &rec = c.recent;
    rec.erase(std::remove_if(rec.begin(), rec.end(),
                             [t, oldest_pending](const AccessRec &a) { return a.until <= t && a.seq < oldest_pending; }),
              rec.end());
    const uint64_t seq = c.cur_seq;
    if (opt.check_races) {
        for (int i = 0; i < n; ++i) {
            const Range &r = ranges[i];
            if (r.hi <= r.lo) {
                continue;
            }
            for (const auto &a : rec) {
                if (a.pipe == pipe || a.r.level != r.level || a.r.hi <= r.lo || r.hi <= a.r.lo) {
                    continue;
                }
                if (!a.r.write && !r.write) {
                    continue;
                }
                if (a.until <= t && a.seq < seq) {
                    continue; // an earlier instruction that has finished: ordered
                }
                const isa::Instr &other = prog.code[a.pc];
                const isa::Instr &self = prog.code[pc];
                std::ostringstream os;
                if (a.until <= t) {
                    // It finished before this one started, but it comes later in the program:
                    // it ran ahead of this instruction without waiting for it.
                    os << "race on core " << c.id << " at cycle " << t << ": " << instr_tag(pc, self) << " on pipe "
                       << pipe_names[pipe] << " " << (r.write ? "writes" : "reads") << " " << level_name(r.level)
                       << " [" << hex(std::max(r.lo, a.r.lo)) << ", " << hex(std::min(r.hi, a.r.hi)) << "), which "
                       << instr_tag(a.pc, other) << " on pipe " << pipe_names[a.pipe] << ", later in the program, "
                       << (a.r.write ? "wrote" : "read") << " before it (cycle " << a.until
                       << "); add set_flag/wait_flag (or a barrier) between " << pipe_names[pipe] << " and "
                       << pipe_names[a.pipe];
                    throw SimError(os.str());
                }
                os << "race on core " << c.id << " at cycle " << t << ": " << instr_tag(pc, self) << " on pipe "
                   << pipe_names[pipe] << " " << (r.write ? "writes" : "reads") << " " << level_name(r.level) << " ["
                   << hex(std::max(r.lo, a.r.lo)) << ", " << hex(std::min(r.hi, a.r.hi)) << ") while "
                   << instr_tag(a.pc, other) << " on pipe " << pipe_names[a.pipe] << " is still "
                   << (a.r.write ? "writing" : "reading") << " it (until cycle " << a.until
                   << "); add set_flag/wait_flag between " << pipe_names[a.pipe] << " and " << pipe_names[pipe];
                throw SimError(os.str());
            }
        }
    }
    for (int i = 0; i < n; ++i) {
        if (ranges[i].hi <= ranges[i].lo) {
            continue;
        }
        uint64_t until = ranges[i].write ? write_until : read_until;
        rec.push_back(AccessRec{ranges[i], pipe, pc, until, seq});
    }
}

} // namespace detail
} // namespace tessel::sim
