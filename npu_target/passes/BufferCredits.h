#ifndef TESSEL_NPU_TARGET_PASSES_BUFFERCREDITS_H
#define TESSEL_NPU_TARGET_PASSES_BUFFERCREDITS_H

// The double-buffering protocol for multi-buffered buffers (buffers=N rotating
// on loop L, written by one pipe W, read by pipes R): flags used as credits.
//
//     N x set_flag(R, W, e)            before L: every copy starts free (moved up to
//                                      the first earlier work on R that no statement
//                                      using the buffer's bytes or the flag precedes)
//     for L:
//       wait_flag(R, W, e)             before W writes its copy: a free copy
//       W writes copy t % N
//       ... R reads copy t % N ...     (RAW ordering comes from insert_sync)
//       set_flag(R, W, e)              after the last statement that reads it
//     N x wait_flag(R, W, e)           after L: take the credits back
//
// Flags count and fire in order, so the write of iteration t waits exactly for
// the reads of iteration t - N: the writer runs up to N - 1 iterations ahead.
// insert_sync then no longer orders those reads against later writes. Buffers
// with several writer pipes, or scalar writers or readers, keep the generic
// ordering of insert_sync.

#include "npu_target/ir/NpuIR.h"

namespace tessel {

nir::NpuModule insert_buffer_credits(const nir::NpuModule &m);

} // namespace tessel

#endif
