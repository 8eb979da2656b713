#include "dsl/ScheduleSpec.h"

#include "npu_target/common/Error.h"
#include "npu_target/common/InputFile.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace tessel {

namespace {

using json = nlohmann::json;

// Where a JSON field of a directive lives in `Directive`.
enum class Slot { Var0, Var1, Var2, Var3, Var4, Var5, Vars, Factor0, Factor1, Tail, At, Level, Buffers, Unit, Cores, Format, Update, Stage };

struct Field {
    const char *key;
    Slot slot;
    bool required;
};

struct KindSpec {
    DirectiveKind kind;
    const char *name;
    std::vector<Field> fields; // in canonical order, after id, kind, func
};

// The one table of the JSON format: docs/schedule-format.md documents it.
const std::vector<KindSpec> &kind_table() {
    static const std::vector<KindSpec> t = {
        {DirectiveKind::Split, "split",
         {{"stage", Slot::Stage, false}, {"var", Slot::Var0, true}, {"outer", Slot::Var1, true},
          {"inner", Slot::Var2, true}, {"factor", Slot::Factor0, true}, {"tail", Slot::Tail, false}}},
        {DirectiveKind::Tile, "tile",
         {{"stage", Slot::Stage, false}, {"x", Slot::Var0, true}, {"y", Slot::Var1, true}, {"xo", Slot::Var2, true},
          {"yo", Slot::Var3, true}, {"xi", Slot::Var4, true}, {"yi", Slot::Var5, true}, {"fx", Slot::Factor0, true},
          {"fy", Slot::Factor1, true}, {"tail", Slot::Tail, false}}},
        {DirectiveKind::Reorder, "reorder", {{"stage", Slot::Stage, false}, {"vars", Slot::Vars, true}}},
        {DirectiveKind::Fuse, "fuse",
         {{"stage", Slot::Stage, false}, {"inner", Slot::Var0, true}, {"outer", Slot::Var1, true},
          {"fused", Slot::Var2, true}}},
        {DirectiveKind::Vectorize, "vectorize",
         {{"stage", Slot::Stage, false}, {"var", Slot::Var0, true}, {"factor", Slot::Factor0, false}}},
        {DirectiveKind::Unroll, "unroll",
         {{"stage", Slot::Stage, false}, {"var", Slot::Var0, true}, {"factor", Slot::Factor0, false}}},
        {DirectiveKind::ComputeAt, "compute_at", {{"at", Slot::At, true}}},
        {DirectiveKind::StoreAt, "store_at", {{"at", Slot::At, true}}},
        {DirectiveKind::ComputeRoot, "compute_root", {}},
        {DirectiveKind::ComputeInline, "compute_inline", {}},
        {DirectiveKind::Parallel, "parallel",
         {{"stage", Slot::Stage, false}, {"var", Slot::Var0, true}, {"cores", Slot::Cores, false}}},
        {DirectiveKind::Atomic, "atomic", {{"stage", Slot::Stage, false}}},
        {DirectiveKind::Stage, "stage",
         {{"level", Slot::Level, true}, {"at", Slot::At, true}, {"buffers", Slot::Buffers, false}}},
        {DirectiveKind::AccumulateIn, "accumulate_in", {{"level", Slot::Level, true}, {"buffers", Slot::Buffers, false}}},
        {DirectiveKind::Tensorize, "tensorize", {{"update", Slot::Update, false}, {"unit", Slot::Unit, false}}},
        {DirectiveKind::Layout, "layout", {{"format", Slot::Format, true}}},
    };
    return t;
}

const KindSpec &spec_of(DirectiveKind k) {
    for (const auto &s : kind_table()) {
        if (s.kind == k) {
            return s;
        }
    }
    internal_error("directive kind ", static_cast<int>(k), " missing from the table");
}

const KindSpec *find_kind(const std::string &name) {
    for (const auto &s : kind_table()) {
        if (name == s.name) {
            return &s;
        }
    }
    return nullptr;
}

int var_index(Slot s) { return static_cast<int>(s) - static_cast<int>(Slot::Var0); }

std::string join(const std::vector<std::string> &v, const std::string &sep) {
    std::string out;
    for (const auto &s : v) {
        out += (out.empty() ? "" : sep) + s;
    }
    return out;
}

// "directive d3 (#2, split on acc.update(0))" or, before the kind is known, "directive d3 (#2)".
std::string where(const std::string &id, size_t index, const std::string &what) {
    std::string s = "directive ";
    if (!id.empty()) {
        s += id + " ";
    }
    s += "(#" + std::to_string(index);
    if (!what.empty()) {
        s += ", " + what;
    }
    return s + ")";
}

std::string found(const json &v) { return std::string(v.type_name()) + " " + json_excerpt(v); }

// Reads one field of a parsed directive.
void read_field(const Field &f, const json &v, Directive &d, const std::string &ctx) {
    auto want_string = [&](std::string &out) {
        if (!v.is_string()) {
            user_error(ctx, ": '", f.key, "' must be a string, found ", found(v));
        }
        out = v.get<std::string>();
        if (out.empty()) {
            user_error(ctx, ": '", f.key, "' must not be empty");
        }
    };
    // Every integer field is an int in the Halide API it reaches (a loop extent, a
    // buffer count, an update index): a value outside int32 is refused here, before a
    // cast could turn 4294967297 into 1.
    auto want_int = [&]() -> int64_t {
        if (!v.is_number_integer()) {
            user_error(ctx, ": '", f.key, "' must be an integer, found ", found(v));
        }
        bool big = v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(kMaxScheduleInt)
                                          : v.get<int64_t>() > kMaxScheduleInt || v.get<int64_t>() < -kMaxScheduleInt;
        if (big) {
            user_error(ctx, ": '", f.key, "' is ", json_excerpt(v), ", out of range: schedule integers are at most ",
                       kMaxScheduleInt, " in magnitude (Halide's loop extents and factors are 32-bit)");
        }
        return v.get<int64_t>();
    };
    switch (f.slot) {
    case Slot::Var0:
    case Slot::Var1:
    case Slot::Var2:
    case Slot::Var3:
    case Slot::Var4:
    case Slot::Var5: {
        size_t i = static_cast<size_t>(var_index(f.slot));
        if (d.vars.size() <= i) {
            d.vars.resize(i + 1);
        }
        want_string(d.vars[i]);
        break;
    }
    case Slot::Vars:
        if (!v.is_array() || v.empty()) {
            user_error(ctx, ": '", f.key, "' must be a non-empty array of loop names, found ", found(v));
        }
        for (const auto &e : v) {
            if (!e.is_string()) {
                user_error(ctx, ": '", f.key, "' must contain only strings, found ", found(e));
            }
            d.vars.push_back(e.get<std::string>());
        }
        break;
    case Slot::Factor0:
    case Slot::Factor1: {
        size_t i = f.slot == Slot::Factor0 ? 0 : 1;
        if (d.factors.size() <= i) {
            d.factors.resize(i + 1);
        }
        d.factors[i] = want_int();
        break;
    }
    case Slot::Tail:
        want_string(d.tail);
        break;
    case Slot::At: {
        if (!v.is_object()) {
            user_error(ctx, ": 'at' must be an object {\"func\": ..., \"loop\": ...}, found ", found(v));
        }
        for (const auto &kv : v.items()) {
            if (kv.key() != "func" && kv.key() != "loop") {
                user_error(ctx, ": unknown key 'at.", kv.key(), "'; 'at' has keys func, loop");
            }
        }
        for (const char *k : {"func", "loop"}) {
            if (!v.contains(k) || !v[k].is_string() || v[k].get<std::string>().empty()) {
                user_error(ctx, ": 'at.", k, "' must be a non-empty string, found ",
                           v.contains(k) ? found(v[k]) : std::string("nothing"));
            }
        }
        d.at_func = v["func"].get<std::string>();
        d.at_loop = v["loop"].get<std::string>();
        break;
    }
    case Slot::Level:
        want_string(d.level);
        break;
    case Slot::Buffers:
        d.buffers = static_cast<int>(want_int());
        break;
    case Slot::Unit:
        want_string(d.unit);
        break;
    case Slot::Cores:
        d.cores = static_cast<int>(want_int());
        break;
    case Slot::Format:
        want_string(d.format);
        break;
    case Slot::Update:
    case Slot::Stage:
        d.stage = static_cast<int>(want_int());
        if (d.stage < (f.slot == Slot::Stage ? -1 : 0)) {
            user_error(ctx, ": '", f.key, "' must be ", f.slot == Slot::Stage ? "-1 (pure) or an update index" : "an update index (0, 1, ...)",
                       ", found ", d.stage);
        }
        break;
    }
}

// The JSON value of a field, or null when the field is absent (optional, default).
json field_value(const Field &f, const Directive &d) {
    switch (f.slot) {
    case Slot::Var0:
    case Slot::Var1:
    case Slot::Var2:
    case Slot::Var3:
    case Slot::Var4:
    case Slot::Var5: {
        size_t i = static_cast<size_t>(var_index(f.slot));
        return i < d.vars.size() ? json(d.vars[i]) : json(nullptr);
    }
    case Slot::Vars:
        return json(d.vars);
    case Slot::Factor0:
        return d.factors.empty() ? json(nullptr) : json(d.factors[0]);
    case Slot::Factor1:
        return d.factors.size() < 2 ? json(nullptr) : json(d.factors[1]);
    case Slot::Tail:
        return d.tail.empty() ? json(nullptr) : json(d.tail);
    case Slot::At: {
        // Key order is fixed by hand below (func, loop); json objects sort keys, which agrees.
        json a = json::object();
        a["func"] = d.at_func;
        a["loop"] = d.at_loop;
        return a;
    }
    case Slot::Level:
        return json(d.level);
    case Slot::Buffers:
        return d.buffers == 1 ? json(nullptr) : json(d.buffers);
    case Slot::Unit:
        return json(d.unit);
    case Slot::Cores:
        return d.cores == 0 ? json(nullptr) : json(d.cores);
    case Slot::Format:
        return json(d.format);
    case Slot::Update:
        return d.unit == "fix" ? json(nullptr) : json(d.stage);
    case Slot::Stage:
        return d.stage == -1 ? json(nullptr) : json(d.stage);
    }
    return json(nullptr);
}

// Checks what the types alone do not: positive factors, buffer counts, argument counts.
void check_values(const Directive &d, const std::string &ctx) {
    const char *what = d.kind == DirectiveKind::Tile ? "tile factor" : d.kind == DirectiveKind::Split ? "split factor" : "factor";
    for (int64_t f : d.factors) {
        if (f <= 0) {
            user_error(ctx, ": ", what, " must be a positive integer, got ", f);
        }
        if (f > kMaxScheduleInt) {
            user_error(ctx, ": ", what, " ", f, " is out of range: at most ", kMaxScheduleInt,
                       " (Halide's loop extents and factors are 32-bit)");
        }
    }
    if (d.kind == DirectiveKind::Vectorize && !d.factors.empty() && d.factors[0] > kMaxVectorizeFactor) {
        user_error(ctx, ": vectorize factor ", d.factors[0], " is too large: at most ", kMaxVectorizeFactor,
                   " lanes (one vector instruction of the widest preset holds 255 repeats of 256 B, 32640 fp16 "
                   "elements; split the loop and vectorize its inner part)");
    }
    if (d.kind == DirectiveKind::Unroll && !d.factors.empty() && d.factors[0] > kMaxUnrollFactor) {
        user_error(ctx, ": unroll factor ", d.factors[0], " is too large: at most ", kMaxUnrollFactor,
                   " (each unrolled iteration is a copy of the loop body in the program; split the loop and "
                   "unroll its inner part)");
    }
    if ((d.kind == DirectiveKind::Stage || d.kind == DirectiveKind::AccumulateIn) && (d.buffers < 1 || d.buffers > 8)) {
        user_error(ctx, ": buffers must be between 1 and 8, got ", d.buffers);
    }
    if (d.cores < 0) {
        user_error(ctx, ": cores must be a positive integer, got ", d.cores);
    }
    if (d.kind == DirectiveKind::Tensorize && d.unit != "matrix" && d.unit != "fix") {
        user_error(ctx, ": unit '", d.unit, "' is not a unit tensorize can target; the units are 'matrix' (a "
                   "matmul-shaped update) and 'fix' (a requantising epilogue on the FIX engine)");
    }
    const KindSpec &k = spec_of(d.kind);
    size_t vars = 0;
    for (const auto &f : k.fields) {
        if (f.slot >= Slot::Var0 && f.slot <= Slot::Var5) {
            vars++;
        }
    }
    if (vars && d.vars.size() != vars) {
        user_error(ctx, ": expected ", vars, " loop names, got ", d.vars.size());
    }
    if (d.func.empty()) {
        user_error(ctx, ": 'func' must name a Func");
    }
}

std::string cpp_string(const std::string &s) { return json(s).dump(); }

} // namespace

const char *kind_name(DirectiveKind k) { return spec_of(k).name; }

std::vector<std::string> kind_names() {
    std::vector<std::string> out;
    for (const auto &s : kind_table()) {
        out.push_back(s.name);
    }
    return out;
}

bool Directive::operator==(const Directive &o) const {
    return id == o.id && kind == o.kind && func == o.func && stage == o.stage && vars == o.vars && factors == o.factors &&
           tail == o.tail && at_func == o.at_func && at_loop == o.at_loop && level == o.level && buffers == o.buffers &&
           unit == o.unit && cores == o.cores && format == o.format;
}

std::string Directive::stage_name() const { return stage < 0 ? func : func + ".update(" + std::to_string(stage) + ")"; }

std::string Directive::describe() const {
    switch (kind) {
    case DirectiveKind::Stage:
        return "stage(" + func + ", " + level + ")";
    case DirectiveKind::AccumulateIn:
        return "accumulate_in(" + func + ", " + level + ")";
    case DirectiveKind::Tensorize:
        return unit == "fix" ? "tensorize(" + func + ", fix)" : "tensorize(" + func + ", " + std::to_string(stage) + ")";
    case DirectiveKind::Layout:
        return "layout(" + func + ", " + format + ")";
    case DirectiveKind::Parallel:
        if (cores > 0) {
            return "parallel(" + func + ", " + (vars.empty() ? "?" : vars[0]) + ", cores=" + std::to_string(cores) + ")";
        }
        break;
    default:
        break;
    }
    return std::string(kind_name(kind)) + " on " + stage_name();
}

void ScheduleSpec::assign_ids() {
    std::set<std::string> used;
    for (size_t i = 0; i < directives.size(); i++) {
        const auto &d = directives[i];
        if (!d.id.empty() && !used.insert(d.id).second) {
            user_error(where(d.id, i, d.describe()), ": duplicate id '", d.id, "'; ids must be unique");
        }
    }
    for (size_t i = 0; i < directives.size(); i++) {
        auto &d = directives[i];
        if (!d.id.empty()) {
            continue;
        }
        size_t n = i + 1;
        while (used.count("d" + std::to_string(n))) {
            n++;
        }
        d.id = "d" + std::to_string(n);
        used.insert(d.id);
    }
}

ScheduleSpec parse_schedule(const std::string &text, const std::string &origin) {
    json root = parse_json_input(text, origin);
    if (!root.is_object()) {
        user_error(origin, ": a schedule is a JSON object {\"version\": 1, \"directives\": [...]}, found ", found(root));
    }
    for (const auto &kv : root.items()) {
        if (kv.key() != "version" && kv.key() != "directives") {
            user_error(origin, ": unknown top-level key '", kv.key(), "'; a schedule has keys version, directives");
        }
    }
    if (root.contains("version") && root["version"] != json(1)) {
        user_error(origin, ": unsupported schedule version ", json_excerpt(root["version"]), "; this Tessel reads version 1");
    }
    if (!root.contains("directives") || !root["directives"].is_array()) {
        user_error(origin, ": 'directives' must be an array, found ",
                   root.contains("directives") ? found(root["directives"]) : std::string("nothing"));
    }
    ScheduleSpec spec;
    const json &list = root["directives"];
    for (size_t i = 0; i < list.size(); i++) {
        const json &o = list[i];
        Directive d;
        if (!o.is_object()) {
            user_error(origin, ": ", where("", i, ""), ": a directive is a JSON object, found ", found(o));
        }
        if (o.contains("id")) {
            if (!o["id"].is_string() || o["id"].get<std::string>().empty()) {
                user_error(origin, ": ", where("", i, ""), ": 'id' must be a non-empty string, found ", found(o["id"]));
            }
            d.id = o["id"].get<std::string>();
        }
        if (!o.contains("kind") || !o["kind"].is_string()) {
            user_error(origin, ": ", where(d.id, i, ""), ": 'kind' must be a string naming the directive, found ",
                       o.contains("kind") ? found(o["kind"]) : std::string("nothing"));
        }
        const KindSpec *k = find_kind(o["kind"].get<std::string>());
        if (!k) {
            user_error(origin, ": ", where(d.id, i, ""), ": unknown kind '", o["kind"].get<std::string>(),
                       "'; known kinds: ", join(kind_names(), ", "));
        }
        d.kind = k->kind;
        if (d.kind == DirectiveKind::Tensorize) {
            d.unit = "matrix";
        }
        if (!o.contains("func") || !o["func"].is_string()) {
            user_error(origin, ": ", where(d.id, i, k->name), ": 'func' must be a string naming a Func, found ",
                       o.contains("func") ? found(o["func"]) : std::string("nothing"));
        }
        d.func = o["func"].get<std::string>();
        // What describe() shows, read leniently first so that every message names it.
        for (const char *key : {"stage", "update"}) {
            if (o.contains(key) && o[key].is_number_integer()) {
                d.stage = o[key].get<int>();
            }
        }
        if (o.contains("level") && o["level"].is_string()) {
            d.level = o["level"].get<std::string>();
        }
        std::string ctx = origin + ": " + where(d.id, i, d.describe());
        std::vector<std::string> keys = {"id", "kind", "func"};
        for (const auto &f : k->fields) {
            keys.push_back(f.key);
        }
        for (const auto &kv : o.items()) {
            bool known = false;
            for (const auto &key : keys) {
                known = known || key == kv.key();
            }
            if (!known) {
                user_error(ctx, ": unknown key '", kv.key(), "'; ", k->name, " has keys ", join(keys, ", "));
            }
        }
        for (const auto &f : k->fields) {
            if (!o.contains(f.key)) {
                if (f.required) {
                    user_error(ctx, ": missing '", f.key, "'");
                }
                continue;
            }
            read_field(f, o[f.key], d, ctx);
        }
        if (d.kind == DirectiveKind::Tensorize) {
            // 'update' names the matmul-shaped update for the matrix unit; the FIX engine maps a Func's
            // pure definition (the requantising epilogue), so there it does not apply.
            if (d.unit == "matrix" && !o.contains("update")) {
                user_error(ctx, ": missing 'update'");
            }
            if (d.unit == "fix" && o.contains("update")) {
                user_error(ctx, ": unit 'fix' maps the Func's pure definition (a requantising epilogue); 'update' "
                           "does not apply");
            }
            if (d.unit == "fix") {
                d.stage = -1;
            }
        }
        if (d.kind == DirectiveKind::Parallel && o.contains("cores") && d.cores < 1) {
            user_error(ctx, ": cores must be a positive integer, got ", d.cores);
        }
        ctx = origin + ": " + where(d.id, i, d.describe());
        check_values(d, ctx);
        spec.directives.push_back(std::move(d));
    }
    spec.assign_ids();
    return spec;
}

ScheduleSpec load_schedule(const std::string &path) {
    return parse_schedule(read_input_file(path, "schedule file"), path);
}

std::string schedule_to_json(const ScheduleSpec &s) {
    std::string out = "{\n  \"version\": 1,\n  \"directives\": [";
    for (size_t i = 0; i < s.directives.size(); i++) {
        const Directive &d = s.directives[i];
        std::vector<std::pair<std::string, json>> kv = {{"id", d.id}, {"kind", kind_name(d.kind)}, {"func", d.func}};
        for (const auto &f : spec_of(d.kind).fields) {
            json v = field_value(f, d);
            if (!v.is_null()) {
                kv.emplace_back(f.key, v);
            }
        }
        out += i == 0 ? "\n    {" : ",\n    {";
        for (size_t k = 0; k < kv.size(); k++) {
            std::string val = kv[k].second.dump();
            if (kv[k].second.is_object()) {
                val = "{\"func\": " + kv[k].second["func"].dump() + ", \"loop\": " + kv[k].second["loop"].dump() + "}";
            } else if (kv[k].second.is_array()) {
                std::vector<std::string> items;
                for (const auto &e : kv[k].second) {
                    items.push_back(e.dump());
                }
                val = "[" + join(items, ", ") + "]";
            }
            out += (k ? ", " : "") + json(kv[k].first).dump() + ": " + val;
        }
        out += "}";
    }
    out += s.directives.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return out;
}

std::string schedule_to_cpp(const ScheduleSpec &s, const std::string &var) {
    std::string out = "Schedule " + var + ";\n";
    auto q = cpp_string;
    std::string open; // the receiver of the chain being written ("" = none)
    for (size_t i = 0; i < s.directives.size(); i++) {
        const Directive &d = s.directives[i];
        std::string call;
        std::string receiver = var + ".func(" + q(d.func) + ")" + (d.stage >= 0 && d.kind != DirectiveKind::Tensorize ? ".update(" + std::to_string(d.stage) + ")" : "");
        auto tail = [&] { return d.tail.empty() ? std::string() : ", " + q(d.tail); };
        auto opt_factor = [&] { return d.factors.empty() ? std::string() : ", " + std::to_string(d.factors[0]); };
        switch (d.kind) {
        case DirectiveKind::Split:
            call = "split(" + q(d.vars[0]) + ", " + q(d.vars[1]) + ", " + q(d.vars[2]) + ", " + std::to_string(d.factors[0]) + tail() + ")";
            break;
        case DirectiveKind::Tile:
            call = "tile(" + q(d.vars[0]) + ", " + q(d.vars[1]) + ", " + q(d.vars[2]) + ", " + q(d.vars[3]) + ", " +
                   q(d.vars[4]) + ", " + q(d.vars[5]) + ", " + std::to_string(d.factors[0]) + ", " +
                   std::to_string(d.factors[1]) + tail() + ")";
            break;
        case DirectiveKind::Reorder: {
            std::vector<std::string> vs;
            for (const auto &v : d.vars) {
                vs.push_back(q(v));
            }
            call = "reorder({" + join(vs, ", ") + "})";
            break;
        }
        case DirectiveKind::Fuse:
            call = "fuse(" + q(d.vars[0]) + ", " + q(d.vars[1]) + ", " + q(d.vars[2]) + ")";
            break;
        case DirectiveKind::Vectorize:
            call = "vectorize(" + q(d.vars[0]) + opt_factor() + ")";
            break;
        case DirectiveKind::Unroll:
            call = "unroll(" + q(d.vars[0]) + opt_factor() + ")";
            break;
        case DirectiveKind::Parallel:
            call = "parallel(" + q(d.vars[0]) + (d.cores ? ", " + std::to_string(d.cores) : std::string()) + ")";
            break;
        case DirectiveKind::ComputeAt:
            call = "compute_at(" + q(d.at_func) + ", " + q(d.at_loop) + ")";
            break;
        case DirectiveKind::StoreAt:
            call = "store_at(" + q(d.at_func) + ", " + q(d.at_loop) + ")";
            break;
        case DirectiveKind::ComputeRoot:
            call = "compute_root()";
            break;
        case DirectiveKind::ComputeInline:
            call = "compute_inline()";
            break;
        case DirectiveKind::Atomic:
            call = "atomic()";
            break;
        case DirectiveKind::AccumulateIn:
            call = "accumulate_in(" + q(d.level) + (d.buffers != 1 ? ", " + std::to_string(d.buffers) : std::string()) + ")";
            break;
        case DirectiveKind::Tensorize:
            receiver = var + ".func(" + q(d.func) + ")" +
                       (d.unit == "fix" ? std::string() : ".update(" + std::to_string(d.stage) + ")");
            call = "tensorize(" + (d.unit == "matrix" ? std::string() : q(d.unit)) + ")";
            break;
        case DirectiveKind::Layout:
            call = "layout(" + q(d.format) + ")";
            break;
        case DirectiveKind::Stage:
            receiver.clear();
            call = var + ".stage(" + q(d.func) + ", " + q(d.level) + ").at(" + q(d.at_func) + ", " + q(d.at_loop) + ")" +
                   (d.buffers != 1 ? ".buffers(" + std::to_string(d.buffers) + ")" : std::string());
            break;
        }
        std::string id = d.id != "d" + std::to_string(i + 1) ? ".id(" + q(d.id) + ")" : std::string();
        if (receiver.empty()) {
            out += (open.empty() ? "" : ";\n") + call + id;
            open = "stage";
            continue;
        }
        // Consecutive directives on one Func stage continue one chain.
        if (open == receiver) {
            out += "\n    ." + call + id;
        } else {
            out += (open.empty() ? "" : ";\n") + receiver + "." + call + id;
            open = receiver;
        }
    }
    if (!open.empty()) {
        out += ";\n";
    }
    return out;
}

std::string schedule_hash(const ScheduleSpec &s) {
    std::string text = schedule_to_json(s);
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

// ---- builder ----

FuncSchedule &FuncSchedule::add(Directive d) {
    d.func = func_;
    if (d.kind != DirectiveKind::ComputeAt && d.kind != DirectiveKind::StoreAt && d.kind != DirectiveKind::ComputeRoot &&
        d.kind != DirectiveKind::ComputeInline && d.kind != DirectiveKind::AccumulateIn && d.kind != DirectiveKind::Layout) {
        d.stage = d.kind == DirectiveKind::Tensorize ? (stage_ < 0 ? 0 : stage_) : stage_;
    }
    s_->directives().push_back(std::move(d));
    last_ = static_cast<int>(s_->directives().size()) - 1;
    return *this;
}

namespace {
Directive make(DirectiveKind k, std::vector<std::string> vars = {}, std::vector<int64_t> factors = {}, std::string tail = "") {
    Directive d;
    d.kind = k;
    d.vars = std::move(vars);
    d.factors = std::move(factors);
    d.tail = std::move(tail);
    return d;
}
} // namespace

FuncSchedule &FuncSchedule::split(const std::string &var, const std::string &outer, const std::string &inner,
                                  int64_t factor, const std::string &tail) {
    return add(make(DirectiveKind::Split, {var, outer, inner}, {factor}, tail));
}

FuncSchedule &FuncSchedule::tile(const std::string &x, const std::string &y, const std::string &xo, const std::string &yo,
                                 const std::string &xi, const std::string &yi, int64_t fx, int64_t fy, const std::string &tail) {
    return add(make(DirectiveKind::Tile, {x, y, xo, yo, xi, yi}, {fx, fy}, tail));
}

FuncSchedule &FuncSchedule::reorder(const std::vector<std::string> &vars) { return add(make(DirectiveKind::Reorder, vars)); }

FuncSchedule &FuncSchedule::fuse(const std::string &inner, const std::string &outer, const std::string &fused) {
    return add(make(DirectiveKind::Fuse, {inner, outer, fused}));
}

FuncSchedule &FuncSchedule::vectorize(const std::string &var, int64_t factor) {
    return add(make(DirectiveKind::Vectorize, {var}, factor ? std::vector<int64_t>{factor} : std::vector<int64_t>{}));
}

FuncSchedule &FuncSchedule::unroll(const std::string &var, int64_t factor) {
    return add(make(DirectiveKind::Unroll, {var}, factor ? std::vector<int64_t>{factor} : std::vector<int64_t>{}));
}

FuncSchedule &FuncSchedule::parallel(const std::string &var, int cores) {
    Directive d = make(DirectiveKind::Parallel, {var});
    d.cores = cores;
    return add(d);
}

FuncSchedule &FuncSchedule::compute_at(const std::string &at_func, const std::string &at_loop) {
    Directive d = make(DirectiveKind::ComputeAt);
    d.at_func = at_func;
    d.at_loop = at_loop;
    return add(d);
}

FuncSchedule &FuncSchedule::store_at(const std::string &at_func, const std::string &at_loop) {
    Directive d = make(DirectiveKind::StoreAt);
    d.at_func = at_func;
    d.at_loop = at_loop;
    return add(d);
}

FuncSchedule &FuncSchedule::compute_root() { return add(make(DirectiveKind::ComputeRoot)); }
FuncSchedule &FuncSchedule::compute_inline() { return add(make(DirectiveKind::ComputeInline)); }
FuncSchedule &FuncSchedule::atomic() { return add(make(DirectiveKind::Atomic)); }

FuncSchedule &FuncSchedule::accumulate_in(const std::string &level, int buffers) {
    Directive d = make(DirectiveKind::AccumulateIn);
    d.level = level;
    d.buffers = buffers;
    return add(d);
}

FuncSchedule &FuncSchedule::tensorize(const std::string &unit) {
    Directive d = make(DirectiveKind::Tensorize);
    d.unit = unit;
    return add(d);
}

FuncSchedule &FuncSchedule::layout(const std::string &format) {
    Directive d = make(DirectiveKind::Layout);
    d.format = format;
    return add(d);
}

FuncSchedule &FuncSchedule::id(const std::string &id) {
    TESSEL_INTERNAL_ASSERT(last_ >= 0, "FuncSchedule::id() before any directive");
    s_->directives()[static_cast<size_t>(last_)].id = id;
    return *this;
}

StageSchedule Schedule::stage(const std::string &source, const std::string &level) {
    Directive d;
    d.kind = DirectiveKind::Stage;
    d.func = source;
    d.level = level;
    spec_.directives.push_back(d);
    return StageSchedule(*this, spec_.directives.size() - 1);
}

Directive &StageSchedule::d() { return s_->directives()[index_]; }

StageSchedule &StageSchedule::at(const std::string &func, const std::string &loop) {
    d().at_func = func;
    d().at_loop = loop;
    return *this;
}

StageSchedule &StageSchedule::buffers(int n) {
    d().buffers = n;
    return *this;
}

StageSchedule &StageSchedule::id(const std::string &id) {
    d().id = id;
    return *this;
}

ScheduleSpec Schedule::spec() const {
    ScheduleSpec s = spec_;
    s.assign_ids();
    return s;
}

void validate_directive_values(const Directive &d, size_t index) { check_values(d, where(d.id, index, d.describe())); }

} // namespace tessel
