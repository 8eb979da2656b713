// The vector unit: what each vector instruction computes (bit-exactly; see
// docs/isa-semantics.md) and its cycle cost with the bank model (docs/simulator.md).
//
// Numeric rules: integer arithmetic is done in int64 and wraps to the width of
// the destination type on store (as C and Halide do); narrowing integer casts
// wrap; float->int truncates toward zero (NaN -> 0, out-of-range values clamp
// to int64 first, then wrap); fp16/bf16 are computed in binary32 and rounded to
// nearest even when stored.

#include "npu_target/arch/BankModel.h"
#include "npu_target/isa/InstrTable.h"
#include "npu_target/sim/Elements.h"
#include "npu_target/sim/Machine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessel::sim::detail {

using isa::Op;

namespace {

/** One vector operand: element (row r, index i) is at base + (r*rs + i*s) * esz. */
struct Opnd {
    uint8_t *base = nullptr;
    int64_t s = 1, rs = 0;
    int esz = 1;
    inline uint8_t *at(int64_t r, int64_t i) const { return base + (r * rs + i * s) * esz; }
};

template <DType T, typename F>
void map2(const Opnd &d, const Opnd &a, const Opnd &b, int rows, int64_t n, F f) {
    for (int r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < n; ++i) {
            store<T>(d.at(r, i), f(load<T>(a.at(r, i)), load<T>(b.at(r, i))));
        }
    }
}

template <DType T, typename F>
void map1(const Opnd &d, const Opnd &a, int rows, int64_t n, F f) {
    for (int r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < n; ++i) {
            store<T>(d.at(r, i), f(load<T>(a.at(r, i))));
        }
    }
}

bool cmp(uint32_t code, double x, double y) {
    switch (code) {
    case 0: return x < y;
    case 1: return x <= y;
    case 2: return x == y;
    case 3: return x != y;
    case 4: return x > y;
    default: return x >= y;
    }
}

/** Executes one vector op for element type T (d, a, b all of type T). */
template <DType T, typename Tag>
void vector_same_type(Op op, uint32_t aux, const Opnd &d, const Opnd &a, const Opnd &b, int64_t scalar_reg,
                      int rows, int64_t n, const Tag &tag) {
    using C = typename Elem<T>::C;
    constexpr bool fl = fdt(T);
    C sc;
    if constexpr (fl) {
        sc = bits_to_float(scalar_reg);
    } else {
        sc = scalar_reg;
    }
    auto needs_float = [&]() { throw SimError(tag() + ": " + op_mnemonic(op) + " needs a float dtype, got " + dtype_name(T)); };
    switch (op) {
    case Op::VADD: map2<T>(d, a, b, rows, n, [](C x, C y) { return x + y; }); return;
    case Op::VSUB: map2<T>(d, a, b, rows, n, [](C x, C y) { return x - y; }); return;
    case Op::VMUL: map2<T>(d, a, b, rows, n, [](C x, C y) { return x * y; }); return;
    case Op::VDIV:
        if constexpr (fl) {
            map2<T>(d, a, b, rows, n, [](C x, C y) { return x / y; });
        } else {
            map2<T>(d, a, b, rows, n, [](C x, C y) { return floor_div(x, y); });
        }
        return;
    case Op::VMAX: map2<T>(d, a, b, rows, n, [](C x, C y) { return x > y ? x : y; }); return;
    case Op::VMIN: map2<T>(d, a, b, rows, n, [](C x, C y) { return x < y ? x : y; }); return;
    case Op::VADDS: map1<T>(d, a, rows, n, [sc](C x) { return x + sc; }); return;
    case Op::VMULS: map1<T>(d, a, rows, n, [sc](C x) { return x * sc; }); return;
    case Op::VMAXS: map1<T>(d, a, rows, n, [sc](C x) { return x > sc ? x : sc; }); return;
    case Op::VMINS: map1<T>(d, a, rows, n, [sc](C x) { return x < sc ? x : sc; }); return;
    case Op::VSHRS:
        if constexpr (fl) {
            throw SimError(tag() + ": vshrs needs an integer dtype, got " + dtype_name(T));
        } else {
            const int64_t bits = 8 * dtype_bytes(T);
            if (scalar_reg < 0 || scalar_reg >= bits) {
                throw SimError(tag() + ": vshrs shift " + std::to_string(scalar_reg) + " is outside 0.." +
                               std::to_string(bits - 1) + " for " + dtype_name(T));
            }
            map1<T>(d, a, rows, n, [scalar_reg](C x) { return static_cast<C>(x >> scalar_reg); });
        }
        return;
    case Op::VDUP:
        for (int r = 0; r < rows; ++r) {
            for (int64_t i = 0; i < n; ++i) {
                store<T>(d.at(r, i), sc);
            }
        }
        return;
    case Op::VRELU: map1<T>(d, a, rows, n, [](C x) { return x > C(0) ? x : C(0); }); return;
    case Op::VABS:
        if constexpr (fl) {
            map1<T>(d, a, rows, n, [](C x) { return std::fabs(x); });
        } else {
            map1<T>(d, a, rows, n, [](C x) { return x < 0 ? -x : x; });
        }
        return;
    case Op::VMOV: map1<T>(d, a, rows, n, [](C x) { return x; }); return;
    case Op::VMULADD:
        for (int r = 0; r < rows; ++r) {
            for (int64_t i = 0; i < n; ++i) {
                C prod = load<T>(a.at(r, i)) * load<T>(b.at(r, i));
                store<T>(d.at(r, i), load<T>(d.at(r, i)) + prod); // two roundings, no fused multiply-add
            }
        }
        return;
    case Op::VMADD:
        for (int r = 0; r < rows; ++r) {
            for (int64_t i = 0; i < n; ++i) {
                C prod = load<T>(d.at(r, i)) * load<T>(a.at(r, i));
                store<T>(d.at(r, i), prod + load<T>(b.at(r, i))); // two roundings, as VMULADD
            }
        }
        return;
    case Op::VCMPSEL:
        map2<T>(d, a, b, rows, n, [aux](C x, C y) { return cmp(aux, static_cast<double>(x), static_cast<double>(y)) ? x : y; });
        return;
    case Op::VREDSUM:
    case Op::VREDMAX:
        if (n <= 0) {
            return;
        }
        for (int r = 0; r < rows; ++r) {
            C acc = load<T>(a.at(r, 0));
            for (int64_t i = 1; i < n; ++i) {
                C x = load<T>(a.at(r, i));
                if (op == Op::VREDSUM) {
                    if constexpr (fl) {
                        acc = acc + x;
                    } else {
                        acc = static_cast<C>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
                    }
                } else {
                    acc = x > acc ? x : acc;
                }
            }
            store<T>(d.at(r, 0), acc);
        }
        return;
    case Op::VEXP:
    case Op::VLOG:
    case Op::VSQRT:
    case Op::VRSQRT:
        if constexpr (fl) {
            if (op == Op::VEXP) {
                map1<T>(d, a, rows, n, [](C x) { return std::exp(x); });
            } else if (op == Op::VLOG) {
                map1<T>(d, a, rows, n, [](C x) { return std::log(x); });
            } else if (op == Op::VSQRT) {
                map1<T>(d, a, rows, n, [](C x) { return std::sqrt(x); });
            } else {
                map1<T>(d, a, rows, n, [](C x) { return 1.0f / std::sqrt(x); });
            }
        } else {
            needs_float();
        }
        return;
    default:
        throw SimError(tag() + ": not a vector operation");
    }
}

/** VCAST element: from (a's type) to dt. */
void cast_elem(DType from, const uint8_t *src, DType to, uint8_t *dst) {
    double v = load_as_double(src, from, 0);
    if (fdt(to)) {
        float f = fdt(from) ? static_cast<float>(v) : static_cast<float>(static_cast<int64_t>(v));
        dispatch_dtype(to, [&](auto tc) {
            if constexpr (fdt(decltype(tc)::value)) {
                store<decltype(tc)::value>(dst, f);
            }
        });
        return;
    }
    int64_t i = fdt(from) ? trunc_to_int64(v) : static_cast<int64_t>(v);
    dispatch_dtype(to, [&](auto tc) {
        if constexpr (!fdt(decltype(tc)::value)) {
            store<decltype(tc)::value>(dst, i);
        }
    });
}

} // namespace

/** The requantisation of docs/isa-semantics.md, exported for tests and docs. */
int32_t requantize(int32_t a, int32_t mult, int shift, int32_t zp, DType out) {
    int64_t v = static_cast<int64_t>(a) * mult;
    int64_t r = v;
    if (shift > 0) {
        uint64_t mag = v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
        mag = (mag + (uint64_t{1} << (shift - 1))) >> shift; // round half away from zero
        r = v < 0 ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
    }
    r += zp;
    int64_t lo = out == DType::UInt8 ? 0 : out == DType::Int16 ? -32768 : -128;
    int64_t hi = out == DType::UInt8 ? 255 : out == DType::Int16 ? 32767 : 127;
    return static_cast<int32_t>(std::min(hi, std::max(lo, r)));
}

// ---- the vector unit -----------------------------------------------------------

uint64_t Machine::exec_vector(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr,
                              uint64_t &conflict_cycles, int64_t &bytes) {
    const uint32_t pc = q.pc;
    auto tag = [&]() { return "core " + std::to_string(c.id) + " " + instr_tag(pc, in); };
    const int lvl = vec_level;
    if (lvl < 0) {
        throw SimError(tag() + ": arch '" + arch.name + "' has no vector operand level");
    }
    const Op op = in.op;
    const int64_t n = q.rd;
    const int rows = in.rows;
    if (n < 0 || rows < 1) {
        throw SimError(tag() + ": element count " + std::to_string(n) + " and rows " + std::to_string(rows) +
                       " must be >= 0 and >= 1");
    }
    const bool scalar_op =
        op == Op::VADDS || op == Op::VMULS || op == Op::VMAXS || op == Op::VMINS || op == Op::VSHRS;
    const bool unary = op == Op::VEXP || op == Op::VLOG || op == Op::VSQRT || op == Op::VRSQRT || op == Op::VRELU ||
                       op == Op::VABS || op == Op::VMOV || op == Op::VCAST || op == Op::VREDSUM ||
                       op == Op::VREDMAX || op == Op::VREQUANT;
    const bool reduce = op == Op::VREDSUM || op == Op::VREDMAX;
    // A row-scalar form computes its element-wise op with b at element stride 0;
    // only its bank accesses differ (b read once per row, below).
    const Op row_base = isa::row_scalar_base(op);
    const bool row_scalar = row_base != Op::NUM_OPS;
    if (row_scalar && in.stride[2] != 0) {
        throw SimError(tag() + ": " + op_mnemonic(op) + " reads b once per row: its element stride s2 must be 0, got " +
                       std::to_string(in.stride[2]));
    }
    DType dt_d = (op == Op::VCAST || op == Op::VREQUANT) ? in.dtype2 : in.dtype;
    DType dt_a = in.dtype;
    if (op == Op::VREQUANT && in.dtype != DType::Int32) {
        throw SimError(tag() + ": vrequant reads int32, got " + dtype_name(in.dtype));
    }
    if (op == Op::VREQUANT && in.dtype2 != DType::Int8 && in.dtype2 != DType::UInt8 && in.dtype2 != DType::Int16) {
        throw SimError(tag() + ": vrequant writes int8, uint8 or int16, got " + dtype_name(in.dtype2));
    }
    // Work per instruction is bounded: a row holds at most the operand level's bytes (with
    // element stride 0 it could otherwise name any count), and the cycles it costs are
    // checked against the cycle budget before its elements are computed.
    const int esz_max = std::max(dtype_bytes(dt_d), dtype_bytes(dt_a));
    const uint64_t level_bytes = arch.memories[lvl].size_bytes;
    if (static_cast<uint64_t>(n) > level_bytes / static_cast<uint64_t>(esz_max)) {
        throw SimError(tag() + ": element count " + std::to_string(n) + " per row (" + dtype_name(dt_a) +
                       ") exceeds what " + arch.memories[lvl].name + " holds (" + std::to_string(level_bytes) +
                       " bytes = " + std::to_string(level_bytes / static_cast<uint64_t>(esz_max)) + " elements)");
    }
    const int64_t per_repeat = std::max<int64_t>(1, arch.vector.bytes_per_repeat / esz_max);
    const int64_t reps_per_row = (n + per_repeat - 1) / per_repeat;
    auto it = arch.vector.cycles_per_repeat.find(vector_cost_name(op));
    if (it == arch.vector.cycles_per_repeat.end()) {
        it = arch.vector.cycles_per_repeat.find("default");
    }
    const uint64_t cpr = it == arch.vector.cycles_per_repeat.end() ? 1 : static_cast<uint64_t>(std::max(1, it->second));
    const uint64_t cycles = static_cast<uint64_t>(rows * reps_per_row) * cpr;
    check_cycle_budget(c, pc, now + cycles);

    // Operands: d always; a unless VDUP; b for binary ops; d read too for VMULADD / VMADD.
    struct Spec {
        int64_t addr;
        int64_t s, rs;
        int esz;
        int64_t count; // elements per row it touches
        bool write;
    };
    Spec specs[3];
    int ns = 0;
    specs[ns++] = Spec{q.ra, in.stride[0], in.row_stride[0], dtype_bytes(dt_d), reduce ? (n > 0 ? 1 : 0) : n, true};
    if (op != Op::VDUP) {
        int64_t a_addr = scalar_op ? q.rc : q.rb;
        specs[ns++] = Spec{a_addr, in.stride[1], in.row_stride[1], dtype_bytes(dt_a), n, false};
    }
    if (!scalar_op && !unary && op != Op::VDUP) {
        specs[ns++] = Spec{q.rc, in.stride[2], in.row_stride[2], dtype_bytes(dt_a), n, false};
    }
    Opnd o[3];
    nr = 0;
    for (int i = 0; i < ns; ++i) {
        const Spec &sp = specs[i];
        int64_t lo = std::min<int64_t>(0, (rows - 1) * sp.rs) + std::min<int64_t>(0, (sp.count - 1) * sp.s);
        int64_t hi = std::max<int64_t>(0, (rows - 1) * sp.rs) + std::max<int64_t>(0, (sp.count - 1) * sp.s);
        int64_t first = sp.addr + lo * sp.esz;
        int64_t len = sp.count == 0 ? 0 : (hi - lo + 1) * sp.esz;
        if (first < 0) {
            ptr(c, lvl, static_cast<uint64_t>(first), static_cast<uint64_t>(len), pc); // reports it
        }
        uint8_t *p = len ? ptr(c, lvl, static_cast<uint64_t>(first), static_cast<uint64_t>(len), pc) : nullptr;
        o[i].base = p ? p - lo * sp.esz : nullptr;
        o[i].s = sp.s;
        o[i].rs = sp.rs;
        o[i].esz = sp.esz;
        ranges[nr++] = Range{lvl, static_cast<uint64_t>(first), static_cast<uint64_t>(first + len), sp.write};
        if (isa::reads_destination(op) && i == 0) {
            ranges[nr++] = Range{lvl, static_cast<uint64_t>(first), static_cast<uint64_t>(first + len), false};
        }
    }
    bytes = static_cast<int64_t>(rows) * specs[0].count * specs[0].esz;

    // ---- functional effect ----
    if (n > 0) {
        if (op == Op::VCAST) {
            for (int r = 0; r < rows; ++r) {
                for (int64_t i = 0; i < n; ++i) {
                    cast_elem(dt_a, o[1].at(r, i), dt_d, o[0].at(r, i));
                }
            }
        } else if (op == Op::VREQUANT) {
            int32_t mult = static_cast<int16_t>(static_cast<uint16_t>(in.imm & 0xffff));
            int32_t zp = static_cast<int16_t>(static_cast<uint16_t>((in.imm >> 16) & 0xffff));
            int shift = static_cast<int>(in.aux);
            if (shift > 31) {
                throw SimError(tag() + ": vrequant shift " + std::to_string(shift) + " is above 31");
            }
            for (int r = 0; r < rows; ++r) {
                for (int64_t i = 0; i < n; ++i) {
                    int32_t a = load<DType::Int32>(o[1].at(r, i));
                    int32_t v = requantize(a, mult, shift, zp, dt_d);
                    dispatch_dtype(dt_d, [&](auto tc) {
                        if constexpr (!fdt(decltype(tc)::value)) {
                            store<decltype(tc)::value>(o[0].at(r, i), v);
                        }
                    });
                }
            }
        } else {
            const Opnd &a = op == Op::VDUP ? o[0] : o[1];
            const Opnd &b = (!scalar_op && !unary && op != Op::VDUP) ? o[2] : a;
            if (row_scalar) {
                // b[row] is fetched once, before the row's elements are computed.
                for (int r = 0; r < rows; ++r) {
                    uint8_t held[8];
                    std::memcpy(held, o[2].at(r, 0), static_cast<size_t>(o[2].esz));
                    const Opnd dr{o[0].at(r, 0), o[0].s, 0, o[0].esz}, ar{o[1].at(r, 0), o[1].s, 0, o[1].esz};
                    const Opnd br{held, 0, 0, o[2].esz};
                    dispatch_dtype(in.dtype, [&](auto tc) {
                        vector_same_type<decltype(tc)::value>(row_base, in.aux, dr, ar, br, q.rb, 1, n, tag);
                    });
                }
            } else {
                dispatch_dtype(in.dtype, [&](auto tc) {
                    vector_same_type<decltype(tc)::value>(op, in.aux, o[0], a, b, q.rb, rows, n, tag);
                });
            }
        }
    }

    // ---- cost: repeats x cycles per repeat (computed above) + bank conflicts ----
    conflict_cycles = 0;
    const MemoryLevel &lv = arch.memories[lvl];
    if (has_bank_model(lv) && n > 0) {
        BankAccess bo[3];
        for (int i = 0; i < ns; ++i) {
            bo[i] = BankAccess{static_cast<uint64_t>(specs[i].addr), specs[i].s, specs[i].rs, specs[i].esz, specs[i].write};
            if (reduce && i == 0) {
                bo[i].stride = 0;
                bo[i].row_result_at = n - 1; // stored once per row (docs/simulator.md "Bank model")
            }
            if (row_scalar && i == 2) {
                bo[i].row_result_at = 0; // b fetched once per row, in its first repeat
            }
        }
        // Reads first, then the write (the order changes nothing but keeps dedup simple).
        std::rotate(bo, bo + 1, bo + ns);
        // Contiguous operands: the pattern depends only on the first operand's
        // offset within one bank period and the others' distances to it (memoised).
        bool dense = true;
        for (int i = 0; i < ns; ++i) {
            dense = dense && (bo[i].stride == 0 || bo[i].stride == 1);
        }
        const int64_t period = bank_period_bytes(lv);
        for (int r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < reps_per_row; ++j) {
                int64_t i0 = j * per_repeat, i1 = std::min(n, i0 + per_repeat);
                if (!dense) {
                    conflict_cycles += bank_conflict_cycles(lv, bo, ns, r, i0, i1);
                    continue;
                }
                ConflictKey key{};
                int64_t lo0 = 0;
                for (int i = 0; i < ns; ++i) {
                    int64_t lo = static_cast<int64_t>(bo[i].addr) + (r * bo[i].row_stride + i0 * bo[i].stride) * bo[i].esz;
                    int64_t len = ((i1 - i0 - 1) * bo[i].stride + 1) * bo[i].esz;
                    if (i == 0) {
                        lo0 = lo;
                        key.v[0] = ((lo % period) + period) % period;
                    } else {
                        key.v[i] = lo - lo0;
                    }
                    const bool result_here = bo[i].row_result_at >= i0 && bo[i].row_result_at < i1;
                    key.v[3] = key.v[3] * 4099 + (len << 3) + (result_here ? 4 : 0) + (bo[i].write ? 2 : 0) + bo[i].stride;
                }
                key.v[4] = ns;
                uint64_t h = 0;
                for (int64_t v : key.v) {
                    h = (h ^ static_cast<uint64_t>(v)) * 0x100000001b3ull;
                }
                ConflictMemo &slot = conflict_memo[h % conflict_memo.size()];
                if (!(slot.valid && slot.key.v == key.v)) {
                    slot.key = key;
                    slot.valid = true;
                    slot.extra = bank_conflict_cycles(lv, bo, ns, r, i0, i1);
                }
                conflict_cycles += slot.extra;
            }
        }
    }
    return cycles + conflict_cycles;
}

} // namespace tessel::sim::detail
