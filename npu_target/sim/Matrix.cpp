// The matrix unit: MMAD on row-major tiles in the matrix operand levels,
// accumulating in increasing k order (equal to a naive loop bit for bit), and
// its cost in fractal cycles.

#include "npu_target/sim/Elements.h"
#include "npu_target/sim/Machine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessel::sim::detail {

using isa::Op;

uint64_t Machine::exec_mmad(Core &c, const isa::Instr &in, const Queued &q, Range *ranges, int &nr, int64_t &bytes) {
    const uint32_t pc = q.pc;
    auto tag = [&]() { return "core " + std::to_string(c.id) + " " + instr_tag(pc, in); };
    auto acc_it = arch.matrix.accumulators.find(in.dtype);
    auto shape_it = arch.matrix.shapes.find(in.dtype);
    if (acc_it == arch.matrix.accumulators.end() || shape_it == arch.matrix.shapes.end()) {
        throw SimError(tag() + ": the matrix unit of '" + arch.name + "' does not support " + dtype_name(in.dtype));
    }
    if (a_level < 0 || b_level < 0 || c_level < 0) {
        throw SimError(tag() + ": arch '" + arch.name + "' has no matrix operand levels");
    }
    const DType acc = acc_it->second;
    const int64_t m = in.m, k = in.k, n = in.n;
    if (m == 0 || k == 0 || n == 0) {
        throw SimError(tag() + ": mmad needs m, k, n >= 1 (got " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                       std::to_string(n) + ")");
    }
    const int ea = dtype_bytes(in.dtype), ec = dtype_bytes(acc);
    const bool init = in.aux & 1u;
    uint8_t *A = ptr(c, a_level, static_cast<uint64_t>(q.rb), static_cast<uint64_t>(m * k * ea), pc);
    uint8_t *B = ptr(c, b_level, static_cast<uint64_t>(q.rc), static_cast<uint64_t>(k * n * ea), pc);
    uint8_t *Cp = ptr(c, c_level, static_cast<uint64_t>(q.ra), static_cast<uint64_t>(m * n * ec), pc);
    nr = 0;
    ranges[nr++] = Range{a_level, static_cast<uint64_t>(q.rb), static_cast<uint64_t>(q.rb + m * k * ea), false};
    ranges[nr++] = Range{b_level, static_cast<uint64_t>(q.rc), static_cast<uint64_t>(q.rc + k * n * ea), false};
    ranges[nr++] = Range{c_level, static_cast<uint64_t>(q.ra), static_cast<uint64_t>(q.ra + m * n * ec), true};
    bytes = m * n * ec;

    if (fdt(in.dtype)) {
        if (!fdt(acc)) {
            throw SimError(tag() + ": float inputs need a float accumulator");
        }
        std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), row(static_cast<size_t>(n));
        dispatch_dtype(in.dtype, [&](auto tc) {
            constexpr DType T = decltype(tc)::value;
            if constexpr (fdt(T)) {
                for (int64_t i = 0; i < m * k; ++i) {
                    a[i] = load<T>(A + i * ea);
                }
                for (int64_t i = 0; i < k * n; ++i) {
                    b[i] = load<T>(B + i * ea);
                }
            }
        });
        for (int64_t i = 0; i < m; ++i) {
            uint8_t *crow = Cp + i * n * ec;
            for (int64_t j = 0; j < n; ++j) {
                row[j] = init ? 0.0f : static_cast<float>(load_as_double(crow, acc, j));
            }
            // C[i][j] += A[i][kk] * B[kk][j] for kk = 0, 1, ... in order (vectorised over j).
            for (int64_t kk = 0; kk < k; ++kk) {
                const float av = a[i * k + kk];
                const float *brow = &b[kk * n];
                for (int64_t j = 0; j < n; ++j) {
                    row[j] += av * brow[j];
                }
            }
            dispatch_dtype(acc, [&](auto tc) {
                constexpr DType T = decltype(tc)::value;
                if constexpr (fdt(T)) {
                    for (int64_t j = 0; j < n; ++j) {
                        store<T>(crow + j * ec, row[j]);
                    }
                }
            });
        }
    } else {
        if (fdt(acc)) {
            throw SimError(tag() + ": integer inputs need an integer accumulator");
        }
        std::vector<int32_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
        std::vector<uint32_t> row(static_cast<size_t>(n));
        dispatch_dtype(in.dtype, [&](auto tc) {
            constexpr DType T = decltype(tc)::value;
            if constexpr (!fdt(T)) {
                for (int64_t i = 0; i < m * k; ++i) {
                    a[i] = static_cast<int32_t>(load<T>(A + i * ea));
                }
                for (int64_t i = 0; i < k * n; ++i) {
                    b[i] = static_cast<int32_t>(load<T>(B + i * ea));
                }
            }
        });
        for (int64_t i = 0; i < m; ++i) {
            uint8_t *crow = Cp + i * n * ec;
            for (int64_t j = 0; j < n; ++j) {
                row[j] = init ? 0u : static_cast<uint32_t>(static_cast<int64_t>(load_as_double(crow, acc, j)));
            }
            for (int64_t kk = 0; kk < k; ++kk) {
                const uint32_t av = static_cast<uint32_t>(a[i * k + kk]);
                const int32_t *brow = &b[kk * n];
                for (int64_t j = 0; j < n; ++j) {
                    row[j] += av * static_cast<uint32_t>(brow[j]); // wraps modulo 2^32
                }
            }
            dispatch_dtype(acc, [&](auto tc) {
                constexpr DType T = decltype(tc)::value;
                if constexpr (!fdt(T)) {
                    for (int64_t j = 0; j < n; ++j) {
                        store<T>(crow + j * ec, static_cast<int64_t>(static_cast<int32_t>(row[j])));
                    }
                }
            });
        }
    }
    const MatrixShape &s = shape_it->second;
    auto cdiv = [](int64_t x, int y) { return y > 0 ? (x + y - 1) / y : x; };
    return static_cast<uint64_t>(cdiv(m, s.m0) * cdiv(k, s.k0) * cdiv(n, s.n0));
}

} // namespace tessel::sim::detail
