#include "samples/gemm/GemmSchedules.h"

namespace tessel {

ScheduleSpec gemm_ascend_tensorized(int tile_m, int tile_n, int tile_k, int buffers) {
    Schedule s;
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", tile_n, tile_m).id("tile_C");
    s.func("acc").compute_at("C", "jo").id("acc_at");
    s.func("acc").update(0).split("k", "ko", "ki", tile_k).id("k_chunks");
    s.func("acc").update(0).reorder({"j", "i", "ki", "ko"}).id("k_outer");
    s.stage("A", "L1").at("acc", "ko").buffers(buffers).id("stage_A");
    s.stage("B", "L1").at("acc", "ko").buffers(buffers).id("stage_B");
    s.stage("A", "L0A").at("acc", "ko").buffers(buffers).id("stage_A0");
    s.stage("B", "L0B").at("acc", "ko").buffers(buffers).id("stage_B0");
    s.func("acc").accumulate_in("L0C", buffers).id("acc_L0C");
    s.func("acc").update(0).tensorize().id("mmad");
    return s.spec();
}

} // namespace tessel
