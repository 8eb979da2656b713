#ifndef TESSEL_DSL_ROOFLINEPOINTS_H
#define TESSEL_DSL_ROOFLINEPOINTS_H

// The measured roofline of one run: the operator's work, the roofs of every
// resource that bounds it (compute: the matrix unit, the vector unit, FIX;
// memory: GM (HBM) reads and writes, the L2, every on-chip engine edge) and
// where this schedule sits under each of them, at its own measured traffic.
//
// The work W is 2 x MACs for an operator with matrix work, otherwise its
// vector element operations (Roofline::vector_elements). A compute roof is
// W / T_r, T_r its term of the physical limit (the resource's minimum time for
// this operator), so it is the ops per cycle that resource alone allows. A
// memory roof at intensity I (ops per byte moved through it) is BW x I. The
// schedule's point on memory roof r is at I_r = W / bytes_r measured by the
// simulator, height W / cycles; its utilisation is bytes_r / (BW_r x cycles),
// the fraction of the run that resource needs (Nsight's speed of light). The
// physical limit's point on a GM roof is at W / its compulsory bytes, height
// W / T_phys: under every roof, on the one that binds the limit. Plain data,
// Halide-free.

#include "dsl/Roofline.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

namespace sim {
struct SimReport;
}

struct RooflineRoof {
    std::string name;    // "matrix (fp16)", "vector", "GM read", "L2 read", "L1->L0A (MTE1)", ...
    bool memory = false; // a bandwidth roof (else a compute roof)
    double peak = 0;     // compute: ops per cycle; memory: bytes per cycle (every core)
    int64_t bytes = 0;   // memory: bytes the run moved through it
    int64_t compulsory_bytes = 0; // GM read/write: the algorithm's compulsory bytes (0 elsewhere)
    double intensity = 0;         // memory: work / bytes (0 when nothing moved)
    double bound = 0;             // ops per cycle this roof allows at the schedule's intensity
    double utilisation = 0;       // achieved / bound: the share of the run this resource needs
    std::string engine;           // an engine edge's transfer engine ("" for other roofs)
    uint64_t engine_busy_cycles =
        0; // the engine's busy cycles on this edge (setup and latency included)
};

struct RooflinePoints {
    bool valid = false;
    std::string why_not;   // when !valid
    std::string work_unit; // "ops (2 x MAC)" or "vector element ops"
    double work = 0;
    uint64_t cycles = 0;        // simulated
    double achieved = 0;        // work / cycles
    double limit_intensity = 0; // work / compulsory GM read bytes (read + write on a shared port)
    double limit_ops_per_cycle = 0;  // work / T_phys
    std::vector<RooflineRoof> roofs; // compute roofs first, then memory roofs
    std::string binding;             // the roof with the highest utilisation
    std::string hint; // what the schedule could change, in a sentence ("" when nothing stands out)
};

/** The measured roofline of a run with roofline `rf` (compute_roofline) whose
 * simulation gave `sim`, on `arch`. */
RooflinePoints roofline_points(const Roofline &rf, const sim::SimReport &sim, const ArchSpec &arch);

/** A table, a line per roof: peak, bytes, intensity, bound, utilisation. */
std::string roofline_points_text(const RooflinePoints &p);

} // namespace tessel

#endif
