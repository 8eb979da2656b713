#ifndef TESSEL_NPU_TARGET_PASSES_INSERTSYNC_H
#define TESSEL_NPU_TARGET_PASSES_INSERTSYNC_H

// Orders every cross-pipe dependency. The scalar front end issues in program
// order and its own loads and stores complete at issue, so only an access that
// follows an earlier, still-running access of another (asynchronous) pipe to
// the same buffer needs ordering: a read after a write (RAW), a write after a
// read (WAR) or a write after a write (WAW). For such a pair the pass inserts,
// right before the later access,
//   - on pipe P != S: SET_FLAG(Q, P) + WAIT_FLAG(Q, P), so P waits for every
//     earlier instruction of Q and nothing else;
//   - on the front end (P == S): BARRIER(Q).
// Loops are analysed to a fixed point so dependencies carried from one
// iteration to the next are ordered too; both branches of an `if` are merged.
// A sync is inserted only where the state says an unordered access exists, so
// two reads never synchronise and a second access after a sync does not sync
// again.

#include "npu_target/ir/NpuIR.h"

#include <map>
#include <set>

namespace tessel {

nir::NpuModule insert_sync(const nir::NpuModule &m);



/** The buffers an NPU IR statement reads and writes, and its pipe. Shared with
 * the hazard checker. Scalar statements report only their own loads/stores. */
struct Accesses {
    isa::Pipe pipe = isa::Pipe::S;
    std::vector<std::string> reads, writes;
    std::vector<std::string> scalar_reads; // loads the front end does to compute the operands (addresses, scalars)
    // Multi-buffered buffers an operand reaches in the copy of a later
    // iteration of their rotation loop: buffer -> how many iterations ahead
    // (advance_head's prefetch; absent: the current iteration's copy).
    std::map<std::string, int> ahead;
    /** How many iterations ahead the copy of `buffer` this access reaches is (0: the current one). */
    int ahead_of(const std::string &buffer) const {
        auto it = ahead.find(buffer);
        return it == ahead.end() ? 0 : it->second;
    }
};
Accesses accesses_of(const nir::NpuModule &m, const Halide::Internal::Stmt &leaf);

/** How many iterations of its rotation loop ahead of the current one the copy
 * is that `index` reaches in the multi-buffered `buffer`: d when the index's
 * copy term is `(rotate_count + d) % copies`, 0 otherwise (and for a buffer
 * with one copy). */
int copies_ahead(const nir::NpuModule &m, const std::string &buffer, const Halide::Expr &index);

/** The most iterations ahead any write (`write`) or read of `buffer` in `s`
 * reaches (0: every one is to the current iteration's copy). */
int most_ahead(const nir::NpuModule &m, const Halide::Internal::Stmt &s, const std::string &buffer, bool write);

/** The pipes that write and read `buffer` anywhere in a statement (scalar
 * loads and operand-address reads count as reads on S). */
struct BufferUsers {
    std::set<isa::Pipe> writers, readers;
};
BufferUsers buffer_users(const nir::NpuModule &m, const Halide::Internal::Stmt &s, const std::string &buffer);

} // namespace tessel

#endif
