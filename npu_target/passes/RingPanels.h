#ifndef TESSEL_NPU_TARGET_PASSES_RINGPANELS_H
#define TESSEL_NPU_TARGET_PASSES_RINGPANELS_H

// Panels reloaded through a ring of piece slots, spread over the iteration
// before (a software-pipelined prefetch into scratchpad the schedule left free).
//
// A single-copy staged buffer X (a "panel": GEMM's A rows for one band of C)
// allocated in the body of a loop O is reloaded at the top of every iteration
// of O. With one copy the next load can only start when every read of the
// current one is done, and the consumer idles for the whole load (ascend-like
// GEMM 1024^3: 8.2k cycles per band, 57k in all). Loading the next panel in
// pieces as the last reads free them does not help (measured: the in-order DMA
// queue then carries the whole panel during the last tile), and a second full
// copy does not fit. When X is read by one DMA that walks it chunk by chunk,
// this pass splits it into P pieces held in a ring of S slots (P < S <= 2P,
// as many as fit in the level: allocate_buffers is tried with each S), so the
// first L = S - P pieces of the next panel load into free slots while the
// current panel is in use, one at a time spread over the current iteration's
// tiles (after the first), and the rest, whose slots the last tile frees, in
// the next iteration's first tile as the reader starts on the pieces before
// them (loading them in the last tile, as soon as freed, queued them on the
// writer next to that tile's own loads, which the consumer then waited for):
//
//     S x set_flag(R, W, war)                          credits: free slots
//     for O:
//       ... tiles r (repeat loops), chunks (walking loops) ...
//         if (O == first, first tile, first chunk of q) { wait war; load piece q of O; set raw }
//         if (first read of piece q in this iteration) wait_flag(W, R, raw)
//         R reads its chunk from slot(O, q)
//         if (first tile, first chunk of q, q + L < P, O > first) { wait war; load piece q+L of O; set raw }
//         if (q < L, this is tile r_q > 0 (> 1 when tile 0 loads pieces), first chunk of q, O < last)
//           { wait war; load piece q of O+1; set raw }
//         if (last read of piece q) set_flag(R, W, war)
//     S x wait_flag(R, W, war)
//
// The first panel is loaded by its reader too, each piece as the first tile
// starts on it, so the loads the writer's queue gets for that tile's other
// operands (GEMM's first A tile) go in front of the later pieces, not behind
// the whole panel (gemm_q8 512^3: the first MMAD at cycle 3028, was 6319).
//
// The late pieces (q >= L) load from GM while the first tile's own operands
// share the writer, so each is read once ahead, in the tiles before the last
// of every iteration but the first (whose operands are cold themselves) and the
// last, into a one-piece scratch buffer `<X>.warm` in another level the
// writer's engine reaches from the source (ascend-like: UB, which a GEMM does
// not use); nothing reads the copy, but the L2 keeps the piece and its load in
// the next iteration's first tile hits (GEMM fp16 2048x2048x1024 with the B
// panel 1203065 -> 1175772 cycles). No such level with room: no read-ahead.
//
// Piece n (counted over all iterations, n = (O - first) x P + p) lives in slot
// n mod S. Loads, first reads and releases each happen in increasing n, and
// both flags count, so a first read waits exactly for its piece and a load for
// the release of the slot's previous piece (n - S). insert_sync does not track
// X's reads on R and writes on W inside O (these flags order them); after O it
// treats X as read and written by both pipes. Buffers not matching the pattern
// exactly, or with no room for an extra slot, are left alone.
//
// Loaded once: a panel allocated outside every loop (a convolution's weights
// staged whole in L1) is loaded before anything reads it, and with one load
// its reader waits for all of it (3x3 conv: 288 KiB, ~9k cycles before the
// first tap). The same pieces (here any whole number of the reader's chunks
// when the copy is dense, re-described as rows) each set the raw flag, and the
// reader's first read of piece q (its first tile) loads it and waits for it,
// so the reader's other operands queued on the same engine before that read
// (a convolution's input rows for that tap row) do not wait behind the whole
// panel or the later pieces. When a piece holds several chunks of at least
// 16 KiB, the last piece loads as two: all but its last chunk, then that
// chunk, so the reader's work left after the panel's last byte is one
// chunk's (conv2d_q8's int8 weights: 48 + 48 + 32 + 16 KiB). Nothing is
// reloaded, so there are no extra slots and no war flag. After the allocation
// insert_sync treats X as read and written by both pipes.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule ring_panels(const nir::NpuModule &m);

} // namespace tessel

#endif
