#include "npu_target/lower/LowerToNpu.h"

#include "Halide.h"
#include "npu_target/lower/ScalarCodegen.h"
#include "npu_target/lower/Specialize.h"

#include <sstream>

namespace tessel {

LowerResult lower_to_npu(const Halide::Internal::Stmt &s, const LowerInput &in) {
    Halide::Internal::Stmt spec = specialize_for_npu(s, in.args);
    LowerResult r;
    std::ostringstream os;
    os << spec;
    r.specialized_stmt = os.str();
    ScalarCodegenResult cg = scalar_codegen(spec, in);
    r.program = std::move(cg.program);
    r.diagnostics = std::move(cg.diagnostics);
    return r;
}

} // namespace tessel
