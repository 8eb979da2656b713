#ifndef TESSEL_DSL_ROOFLINE_H
#define TESSEL_DSL_ROOFLINE_H

// The physical limit of an operator on an ArchSpec (../shared/NPU_MODEL.md 6.5),
// computed from the algorithm and the shapes alone, never from the schedule:
//   T_phys = max(W_mac / R_dt, Q_rd / BW_rd, Q_wr / BW_wr, W_vec)   cycles, per core x cores
// where W_mac counts the useful multiply-accumulates of the algorithm (each
// Func's update of the form f = f + a * b, over its whole domain), Q are the
// compulsory GM bytes (every input read once, every output written once),
// and W_vec the vector-unit repeats of the remaining arithmetic. The binding
// resource is the largest term. Halide-free header: plain data.

#include "dsl/GeneratorInfo.h"

#include <map>
#include <string>
#include <vector>

namespace tessel {

struct ArchSpec;

struct RooflineTerm {
    std::string resource; // "matrix (fp16)", "GM read", "GM write", "vector"
    double cycles = 0;
};

struct Roofline {
    double t_phys_cycles = 0;
    std::string binding_resource;
    std::vector<RooflineTerm> terms;
    double no_overlap_cycles = 0; // the sum of the terms: a schedule above it is badly scheduled
    int64_t macs = 0;
    int64_t gm_read_bytes = 0, gm_write_bytes = 0;
    int64_t vector_elements = 0;
    /** Element bytes of vector work per operation ("add", "div", "exp", "cast", ...): each
     * operation once per point of the loops its operands depend on, at the width it computes in. */
    std::map<std::string, double> vector_op_bytes;
    int cores = 1;
    /** The GM bandwidths the GM terms use, over every core (bytes per cycle); with
     * gm_shared_rw_port one port carries reads and writes at gm_read_bytes_per_cycle. */
    double gm_read_bytes_per_cycle = 0, gm_write_bytes_per_cycle = 0;
    bool gm_shared_rw_port = false;
};

/** The roofline of `generator` with `params` on `arch` running on `cores` cores. */
Roofline compute_roofline(const std::string &generator, const ParamMap &params, const ArchSpec &arch, int cores = 1);

} // namespace tessel

#endif
