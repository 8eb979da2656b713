#include "npu_target/arch/BankModel.h"

#include <algorithm>

namespace tessel {

bool has_bank_model(const MemoryLevel &level) {
    return level.bank_groups > 0 && level.banks_per_group > 0 && level.bank_row_bytes > 0 && level.bank_groups <= 64 &&
           level.bank_groups * level.banks_per_group <= 256;
}

int64_t bank_period_bytes(const MemoryLevel &level) {
    return int64_t(level.bank_row_bytes) * level.bank_groups * level.banks_per_group;
}

uint64_t bank_conflict_cycles(const MemoryLevel &level, const BankAccess *ops, int nops, int64_t row, int64_t i0,
                              int64_t i1) {
    const int groups = level.bank_groups, nb = level.bank_groups * level.banks_per_group;
    const uint64_t row_bytes = static_cast<uint64_t>(level.bank_row_bytes);
    int reads[64], writes[64];
    int bank_r[256], bank_w[256], bank_rw_same[256];
    int64_t last_r_block[256], last_w_block[256];
    std::fill(reads, reads + groups, 0);
    std::fill(writes, writes + groups, 0);
    std::fill(bank_r, bank_r + nb, 0);
    std::fill(bank_w, bank_w + nb, 0);
    std::fill(bank_rw_same, bank_rw_same + nb, 0);
    std::fill(last_r_block, last_r_block + nb, -1);
    std::fill(last_w_block, last_w_block + nb, -1);
    for (int o = 0; o < nops; ++o) {
        const BankAccess &op = ops[o];
        int64_t prev = -1;
        auto touch = [&](int64_t block) {
            if (block == prev) {
                return;
            }
            prev = block;
            int bank = static_cast<int>(block % nb), g = bank % groups;
            if (op.write) {
                if (last_w_block[bank] == block) {
                    return;
                }
                last_w_block[bank] = block;
                writes[g]++;
                bank_w[bank]++;
                if (last_r_block[bank] == block) {
                    bank_rw_same[bank]++;
                }
            } else {
                if (last_r_block[bank] == block) {
                    return;
                }
                last_r_block[bank] = block;
                reads[g]++;
                bank_r[bank]++;
                if (last_w_block[bank] == block) {
                    bank_rw_same[bank]++;
                }
            }
        };
        uint64_t base = op.addr + static_cast<uint64_t>(row * op.row_stride * op.esz);
        if (op.row_result_at >= 0) {
            if (op.row_result_at >= i0 && op.row_result_at < i1) {
                touch(static_cast<int64_t>(base / row_bytes));
            }
            continue;
        }
        if (op.stride == 1 || op.stride == 0) {
            uint64_t lo = base + static_cast<uint64_t>(i0 * op.stride * op.esz);
            uint64_t hi = base + static_cast<uint64_t>(((i1 - 1) * op.stride + 1) * op.esz);
            for (uint64_t b = lo / row_bytes; b <= (hi - 1) / row_bytes; ++b) {
                touch(static_cast<int64_t>(b));
            }
        } else {
            for (int64_t i = i0; i < i1; ++i) {
                touch(static_cast<int64_t>((base + static_cast<uint64_t>(i * op.stride * op.esz)) / row_bytes));
            }
        }
    }
    int worst = 1;
    for (int g = 0; g < groups; ++g) {
        worst = std::max({worst, reads[g], writes[g]});
    }
    for (int b = 0; b < nb; ++b) {
        worst = std::max(worst, bank_r[b] + bank_w[b] - bank_rw_same[b]);
    }
    return static_cast<uint64_t>(worst - 1);
}


} // namespace tessel
