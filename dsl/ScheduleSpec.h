#ifndef TESSEL_DSL_SCHEDULESPEC_H
#define TESSEL_DSL_SCHEDULESPEC_H

// The schedule as data (Halide-free): an ordered list of directives, each with a
// stable id that everything downstream uses as provenance. It is read from and
// printed as JSON (docs/schedule-format.md), printed as C++ builder calls, and
// built in C++ with the fluent `Schedule` builder below; all three describe the
// same ScheduleSpec. The applier (dsl/Applier.h) gives it meaning.

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

enum class DirectiveKind {
    // Halide directives (applied through Halide's scheduling API).
    Split,
    Tile,
    Reorder,
    Fuse,
    Vectorize,
    Unroll,
    ComputeAt,
    StoreAt,
    ComputeRoot,
    ComputeInline,
    Parallel,  // Halide parallel(var); with cores > 0 the NPU split across cores
    Atomic,    // Halide atomic(): an associative update may vectorize its reduction variable
    // NPU directives (recorded in NpuSchedule; ARCHITECTURE.md section 5).
    Stage,
    AccumulateIn,
    Tensorize,
    Layout,
};

/** The JSON name of a kind ("split", "compute_at", "accumulate_in", ...). */
const char *kind_name(DirectiveKind k);
/** Every JSON kind name, in declaration order. */
std::vector<std::string> kind_names();

/** One directive. Which fields a kind uses is in docs/schedule-format.md; the
 * others keep their defaults (and are neither printed nor compared). */
struct Directive {
    std::string id;            // stable id ("d1", ...); assigned when empty
    DirectiveKind kind = DirectiveKind::Split;
    std::string func;          // the Func it schedules (stage: the staged input or Func)
    int stage = -1;            // -1 the pure definition, 0.. an update (tensorize: the update)
    std::vector<std::string> vars; // loop names: split {var, outer, inner}; tile {x, y, xo, yo, xi, yi};
                                   // reorder: innermost first; fuse {inner, outer, fused};
                                   // vectorize/unroll/parallel {var}
    std::vector<int64_t> factors;  // split {factor}; tile {fx, fy}; vectorize/unroll: {} or {factor}
    std::string tail;          // split/tile tail strategy: "" (auto), round_up, guard_with_if, shift_inwards
    std::string at_func;       // compute_at/store_at/stage: where
    std::string at_loop;
    std::string level;         // stage, accumulate_in: ArchSpec memory level
    int buffers = 1;           // stage: 2 = double buffering
    std::string unit;          // tensorize: "matrix"
    int cores = 0;             // parallel: > 0 splits the loop across NPU cores
    std::string format;        // layout: "ND", "NZ", ...

    bool operator==(const Directive &o) const;
    bool operator!=(const Directive &o) const { return !(*this == o); }
    /** "split on acc.update(0)", "stage(A, L1)", ... for messages. */
    std::string describe() const;
    /** "acc", "acc.update(0)". */
    std::string stage_name() const;
};

struct ScheduleSpec {
    std::vector<Directive> directives;

    bool operator==(const ScheduleSpec &o) const { return directives == o.directives; }
    bool operator!=(const ScheduleSpec &o) const { return !(*this == o); }
    /** Gives every directive without an id the first free "dN" (N = its
     * position + 1, or the next unused number); throws UserError on duplicates. */
    void assign_ids();
};

/** Largest magnitude of any integer in a schedule (factors, buffers, cores, update
 * indices): the Halide API each reaches takes a 32-bit int. */
constexpr int64_t kMaxScheduleInt = 2147483647;
/** Largest vectorize factor: lanes of one vectorised loop. */
constexpr int64_t kMaxVectorizeFactor = 16384;
/** Largest unroll factor of one directive; the unrolled copies of one stage's
 * loops together (the product of its unroll factors) are bounded by
 * kMaxUnrolledCopies, checked when the schedule is applied. */
constexpr int64_t kMaxUnrollFactor = 256;
constexpr int64_t kMaxUnrolledCopies = 1024;

/** Parses schedule JSON; `origin` (a file name) prefixes messages. Malformed
 * JSON gives "origin:LINE:COL: malformed JSON: ..."; a bad directive names its
 * index and id. Ids are assigned when missing. Throws UserError. */
ScheduleSpec parse_schedule(const std::string &json_text, const std::string &origin = "schedule");
/** Checks the values a directive's types do not (positive factors, buffer
 * counts, the number of loop names); throws UserError naming it. */
void validate_directive_values(const Directive &d, size_t index);
/** Reads and parses a schedule file. */
ScheduleSpec load_schedule(const std::string &path);
/** Canonical JSON: fixed key order, one directive per line, trailing newline. */
std::string schedule_to_json(const ScheduleSpec &s);
/** C++ source: `Schedule s;` followed by builder calls that rebuild `s` exactly
 * (each statement ends with a newline). `var` names the Schedule variable. */
std::string schedule_to_cpp(const ScheduleSpec &s, const std::string &var = "s");
/** FNV-1a 64 of the canonical JSON, as 16 lower-case hex digits. */
std::string schedule_hash(const ScheduleSpec &s);

class Schedule;

/** Builder handle for the directives of one Func stage; every call appends a
 * directive and returns the handle, so calls chain. */
class FuncSchedule {
public:
    FuncSchedule(Schedule &s, std::string func, int stage) : s_(&s), func_(std::move(func)), stage_(stage) {}
    /** The update definition `index` of the same Func. */
    FuncSchedule update(int index = 0) const { return FuncSchedule(*s_, func_, index); }

    FuncSchedule &split(const std::string &var, const std::string &outer, const std::string &inner, int64_t factor,
                        const std::string &tail = "");
    FuncSchedule &tile(const std::string &x, const std::string &y, const std::string &xo, const std::string &yo,
                       const std::string &xi, const std::string &yi, int64_t fx, int64_t fy, const std::string &tail = "");
    FuncSchedule &reorder(const std::vector<std::string> &vars_innermost_first);
    FuncSchedule &fuse(const std::string &inner, const std::string &outer, const std::string &fused);
    FuncSchedule &vectorize(const std::string &var, int64_t factor = 0);
    FuncSchedule &unroll(const std::string &var, int64_t factor = 0);
    /** Halide's atomic(): lets vectorize() take the update's reduction variable
     * (the reduction becomes a vector reduction; on the NPU VREDSUM/VREDMAX). */
    FuncSchedule &atomic();
    FuncSchedule &parallel(const std::string &var, int cores = 0);
    FuncSchedule &compute_at(const std::string &at_func, const std::string &at_loop);
    FuncSchedule &store_at(const std::string &at_func, const std::string &at_loop);
    FuncSchedule &compute_root();
    FuncSchedule &compute_inline();
    /** buffers=2 keeps two accumulators, so one tile is written back while the next accumulates. */
    FuncSchedule &accumulate_in(const std::string &level, int buffers = 1);
    FuncSchedule &tensorize(const std::string &unit = "matrix");
    FuncSchedule &layout(const std::string &format);
    /** Sets the id of the directive this handle added last. */
    FuncSchedule &id(const std::string &id);

private:
    FuncSchedule &add(Directive d);
    Schedule *s_;
    std::string func_;
    int stage_;
    int last_ = -1;
};

/** Builder handle for a stage directive: `.at(func, loop).buffers(n)`. */
class StageSchedule {
public:
    StageSchedule(Schedule &s, size_t index) : s_(&s), index_(index) {}
    StageSchedule &at(const std::string &func, const std::string &loop);
    StageSchedule &buffers(int n);
    StageSchedule &id(const std::string &id);

private:
    Directive &d();
    Schedule *s_;
    size_t index_;
};

/** The fluent builder:
 *   Schedule s;
 *   s.func("acc").update(0).split("j", "jo", "ji", 16).vectorize("ji");
 *   s.stage("A", "L1").at("C", "jo").buffers(2);
 * produces the same ScheduleSpec as the equivalent JSON (ids "d1", "d2", ...
 * in order unless set with .id()). */
class Schedule {
public:
    FuncSchedule func(const std::string &name) { return FuncSchedule(*this, name, -1); }
    StageSchedule stage(const std::string &source, const std::string &level);
    /** The spec, with ids assigned. */
    ScheduleSpec spec() const;
    std::vector<Directive> &directives() { return spec_.directives; }

private:
    ScheduleSpec spec_;
};

} // namespace tessel

#endif
