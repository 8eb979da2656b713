// SearchSpace::to_spec: a candidate written as the schedule directives the
// hand schedules use (the same ids), one form per operation and path.
#include "scheduler/SearchSpace.h"

namespace tessel::sched {

namespace {

// A stage's buffer count (written only when above 1, as in the hand schedules) and id.
void staged(StageSchedule st, int buffers, const std::string &id) {
    if (buffers > 1) {
        st.buffers(buffers);
    }
    st.id(id);
}

} // namespace

ScheduleSpec SearchSpace::to_spec(const Candidate &c) const {
    Schedule s;
    if (c.path == Path::Naive) {
        return s.spec();
    }
    if (p_.op == OpKind::Elementwise) {
        const std::string &ub = p_.arch.vector.level;
        s.func("out").split("x", "xo", "xi", c.tile_n).id("tile_out");
        const char *names[] = {"a", "b", "c"};
        for (int i = 0; i < p_.inputs; i++) {
            s.stage(names[i], ub).at("out", "xo").buffers(c.op_buffers).id(std::string("stage_") + names[i]);
        }
        s.func("ew").compute_at("out", "xo").id("ew_at");
        s.func("ew").vectorize("x", c.vector).id("ew_vec");
        if (c.cores > 1) {
            s.func("out").parallel("xo", c.cores).id("cores");
        }
        return s.spec();
    }
    if (p_.op == OpKind::Softmax) {
        // The hand schedule's form (samples/softmax/schedules): a band of rows per
        // out.yo, the input staged, the row reductions vectorised across the
        // band's rows, expd and norm along a row.
        const std::string &vl = p_.arch.vector.level;
        const int rows = static_cast<int>(c.tile_m);
        s.func("out").split("y", "yo", "yi", rows).id("rows");
        if (c.via_level > 0) {
            staged(s.stage("in", sm_mids_.at(c.via_level - 1)).at("out", "yo"), c.mid_buffers, "stage_mid");
        }
        staged(s.stage("in", vl).at("out", "yo"), c.op_buffers, "stage_in");
        for (const char *f : {"rowmax", "expd", "rowsum", "norm"}) {
            s.func(f).compute_at("out", "yo").id(std::string(f) + "_at");
        }
        if (c.row_reduce) { // samples/softmax/schedules/ascend_reduce.json's form
            s.func("rowmax").update(0).atomic().id("rowmax_atomic");
            s.func("rowmax").update(0).vectorize("r", c.vector).id("rowmax_red");
            s.func("expd").vectorize("x", c.vector).id("expd_vec");
            s.func("rowsum").update(0).atomic().id("rowsum_atomic");
            s.func("rowsum").update(0).vectorize("r", c.vector).id("rowsum_red");
        } else {
            s.func("rowmax").vectorize("y", rows).id("rowmax_vec");
            s.func("rowmax").update(0).vectorize("y", rows).id("rowmax_upd_vec");
            s.func("expd").vectorize("x", c.vector).id("expd_vec");
            s.func("rowsum").vectorize("y", rows).id("rowsum_vec");
            s.func("rowsum").update(0).vectorize("y", rows).id("rowsum_upd_vec");
        }
        s.func("norm").vectorize("x", c.vector).id("norm_vec");
        if (c.cores > 1) {
            s.func("out").parallel("yo", c.cores).id("cores");
        }
        return s.spec();
    }
    if (p_.op == OpKind::Conv2d) {
        // Per tap (kx, ky) the nest (co, x, ci) is a (pixels x CI) * (CI x CO) product.
        const MatrixUnit &mu = p_.arch.matrix;
        s.func("output").tile("co", "x", "coo", "xo", "coi", "xi", c.tile_n, c.tile_m).id("tile_out");
        if (c.band > 0) { // samples/conv2d/schedules/ops_ascend_3x3.json's form
            s.func("output").split("y", "yo", "yi", c.band).id("rows");
            s.func("acc").compute_at("output", "yo").id("acc_at");
            s.func("acc").update(0).reorder({"co", "x", "ci", "y", "kx", "ky", "n"}).id("taps_outer");
            s.stage("weights", mid_).at("output", "n").id("w_" + mid_);
            staged(s.stage("input", mid_).at("output", "yo"), c.mid_buffers, "in_" + mid_);
            staged(s.stage("input", mu.a_level).at("acc", "kx"), c.op_buffers, "in_" + mu.a_level);
            staged(s.stage("weights", mu.b_level).at("acc", "kx"), c.op_buffers, "w_" + mu.b_level);
            s.func("acc").accumulate_in(mu.c_level, c.acc_buffers).id("acc_" + mu.c_level);
            s.func("acc").update(0).tensorize().id("mmad");
            return s.spec();
        }
        s.func("acc").compute_at("output", "coo").id("acc_at");
        s.func("acc").update(0).reorder({"co", "x", "ci", "kx", "ky", "y", "n"}).id("taps_outer");
        if (c.via_mid) {
            s.stage("input", mid_).at("acc", "kx").buffers(c.mid_buffers).id("stage_in");
            s.stage("weights", mid_).at("acc", "kx").buffers(c.mid_buffers).id("stage_w");
        }
        s.stage("input", mu.a_level).at("acc", "kx").buffers(c.op_buffers).id("stage_in0");
        s.stage("weights", mu.b_level).at("acc", "kx").buffers(c.op_buffers).id("stage_w0");
        s.func("acc").accumulate_in(mu.c_level, c.acc_buffers).id("acc_" + mu.c_level);
        s.func("acc").update(0).tensorize().id("mmad");
        return s.spec();
    }
    s.func("C").tile("j", "i", "jo", "io", "ji", "ii", c.tile_n, c.tile_m).id("tile_C");
    s.func("acc").compute_at("C", "jo").id("acc_at");
    s.func("acc").update(0).split("k", "ko", "ki", c.k_chunk).id("k_chunks");
    if (c.path == Path::Vector) {
        const std::string &ub = p_.arch.vector.level;
        s.func("acc").update(0).reorder({"j", "ki", "i", "ko"}).id("k_outer");
        s.stage("A", ub).at("acc", "ko").buffers(c.op_buffers).id("stage_A");
        s.stage("B", ub).at("acc", "ko").buffers(c.op_buffers).id("stage_B");
        s.func("acc").vectorize("j", c.vector).id("acc_vec");
        s.func("acc").update(0).vectorize("j", c.vector).id("mac_vec");
    } else {
        const MatrixUnit &mu = p_.arch.matrix;
        s.func("acc").update(0).reorder({"j", "i", "ki", "ko"}).id("k_outer");
        if (c.via_mid) {
            if (c.a_panel) {
                s.stage("A", mid_).at("C", "io").id("A_panel");
            } else {
                s.stage("A", mid_).at("acc", "ko").buffers(c.mid_buffers).id("stage_A");
            }
            s.stage("B", mid_).at("acc", "ko").buffers(c.mid_buffers).id("stage_B");
        }
        const std::string suffix = c.via_mid ? "0" : ""; // the hand schedules' ids
        s.stage("A", mu.a_level).at("acc", "ko").buffers(c.op_buffers).id("stage_A" + suffix);
        s.stage("B", mu.b_level).at("acc", "ko").buffers(c.op_buffers).id("stage_B" + suffix);
        s.func("acc").accumulate_in(mu.c_level, c.acc_buffers).id("acc_" + mu.c_level);
        s.func("acc").update(0).tensorize().id("mmad");
    }
    if (c.cores > 1) {
        s.func("C").parallel("io", c.cores).id("cores");
    }
    return s.spec();
}

} // namespace tessel::sched
