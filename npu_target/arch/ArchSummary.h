#ifndef TESSEL_NPU_TARGET_ARCH_ARCHSUMMARY_H
#define TESSEL_NPU_TARGET_ARCH_ARCHSUMMARY_H

// Derived figures of an ArchSpec (NPU_MODEL.md 6.5) and the text `tessel arch
// show` prints.

#include "npu_target/arch/ArchSpec.h"

#include <string>

namespace tessel {

/** Peak operations per second of one core for dtype t: 2 * MAC/cycle * clock. */
double peak_ops_per_core(const ArchSpec &a, DType t);
/** The same for the whole chip (all cores). */
double peak_ops_per_chip(const ArchSpec &a, DType t);
/** GM bandwidth of the chip in bytes/s: min(cores * per-core, aggregate) * clock. */
double gm_bytes_per_second(const ArchSpec &a);
/** Ridge point in MAC per byte: MAC/cycle of t over `bytes_per_cycle`. */
double ridge_mac_per_byte(const ArchSpec &a, DType t, double bytes_per_cycle);

/** A human-readable summary: levels, engines and edges, matrix shapes and
 * peaks, vector unit, clock, cores, peak TFLOPS/TOPS and ridge points. */
std::string arch_summary(const ArchSpec &a);

} // namespace tessel

#endif
