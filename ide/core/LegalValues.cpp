#include "ide/core/LegalValues.h"

#include "ide/core/DirectiveFields.h"

#include <algorithm>

namespace tessel::ide {

using tessel::Directive;
using tessel::DirectiveKind;
using tessel::FuncInfo;
using tessel::ScheduleSpec;

/** Binds the schedule the extents are computed for, for one public call. */
struct SpecScope {
    SpecScope(const LegalValues &lv, const ScheduleSpec &spec) : m_lv(lv) {
        if (m_lv.m_spec != &spec) {
            m_lv.m_extentMemo.clear();
        }
        m_outer = m_lv.m_spec;
        m_lv.m_spec = &spec;
    }
    ~SpecScope() {
        if (m_outer != m_lv.m_spec) {
            m_lv.m_extentMemo.clear();
        }
        m_lv.m_spec = m_outer;
    }
    const LegalValues &m_lv;
    const ScheduleSpec *m_outer;
};

namespace {

QString qs(const std::string &s) {
    return QString::fromStdString(s);
}

/** The name users write for a loop, as the applier reads it: "k$x" -> "k", "r.x" -> "x". */
QString loopName(const std::string &halide) {
    QString s = qs(halide);
    s = s.mid(s.lastIndexOf(QLatin1Char('.')) + 1);
    int dollar = s.indexOf(QLatin1Char('$'));
    return dollar >= 0 ? s.left(dollar) : s;
}

int find(const QVector<LoopState> &loops, const QString &name) {
    for (int i = 0; i < loops.size(); ++i) {
        if (loops[i].name == name || (!loops[i].alias.isEmpty() && loops[i].alias == name)) {
            return i;
        }
    }
    return -1;
}

QStringList names(const QVector<LoopState> &loops) {
    QStringList l;
    for (const auto &x : loops) {
        l << x.name;
    }
    return l;
}

QString stageName(const QString &func, int stage) {
    return stage < 0 ? func : QStringLiteral("%1.update(%2)").arg(func).arg(stage);
}

bool usesLoops(DirectiveKind k) {
    return k == DirectiveKind::Split || k == DirectiveKind::Tile || k == DirectiveKind::Reorder ||
           k == DirectiveKind::Fuse || k == DirectiveKind::Vectorize ||
           k == DirectiveKind::Unroll || k == DirectiveKind::Parallel;
}

/** Halide's split: the inner loop takes the old one's place, the outer goes just outside it. */
bool split(QVector<LoopState> &loops, const QString &var, const QString &outer,
           const QString &inner, qint64 factor) {
    int p = find(loops, var);
    if (p < 0 || factor <= 0) {
        return false;
    }
    LoopState old = loops[p];
    LoopState in = old, out = old;
    in.name = inner;
    out.name = outer;
    in.alias.clear();
    out.alias.clear();
    in.extent = old.extent < 0 ? factor : std::min(factor, old.extent);
    in.constant = true;
    out.extent = old.extent < 0 ? -1 : (old.extent + factor - 1) / factor;
    loops[p] = in;
    loops.insert(p + 1, out);
    return true;
}

/** Halide's reorder: the named loops keep the positions they hold, in the given order. */
bool reorder(QVector<LoopState> &loops, const QStringList &order) {
    QVector<int> pos;
    for (const QString &n : order) {
        int p = find(loops, n);
        if (p < 0 || pos.contains(p)) {
            return false;
        }
        pos << p;
    }
    QVector<LoopState> picked;
    for (int p : pos) {
        picked << loops[p];
    }
    std::sort(pos.begin(), pos.end());
    for (int i = 0; i < pos.size(); ++i) {
        loops[pos[i]] = picked[i];
    }
    return true;
}

/** The type of `field` of a directive of `kind` (Text when it has no such field). */
FieldType fieldType(DirectiveKind kind, const QString &field) {
    for (const FieldInfo &fi : directiveFields(kind)) {
        if (fi.name == field) {
            return fi.type;
        }
    }
    return FieldType::Text;
}

/** An atomic directive on the stage of `d` comes before directive `index`. */
bool atomicBefore(const ScheduleSpec &spec, int index, const Directive &d) {
    for (int i = 0; i < index && i < int(spec.directives.size()); ++i) {
        const Directive &o = spec.directives[i];
        if (o.kind == DirectiveKind::Atomic && o.func == d.func && o.stage == d.stage) {
            return true;
        }
    }
    return false;
}

/** Applies a loop directive to the loops of its stage; false (loops unchanged) when it would fail.
 */
bool applyLoops(QVector<LoopState> &loops, const Directive &d) {
    QVector<LoopState> next = loops;
    auto v = [&](size_t i) { return i < d.vars.size() ? qs(d.vars[i]) : QString(); };
    auto f = [&](size_t i) { return i < d.factors.size() ? d.factors[i] : qint64(0); };
    bool ok = true;
    switch (d.kind) {
    case DirectiveKind::Split:
        ok = split(next, v(0), v(1), v(2), f(0));
        break;
    case DirectiveKind::Tile:
        ok = split(next, v(0), v(2), v(4), f(0)) && split(next, v(1), v(3), v(5), f(1)) &&
             reorder(next, {v(4), v(5), v(2), v(3)});
        break;
    case DirectiveKind::Reorder: {
        QStringList order;
        for (const auto &n : d.vars) {
            order << qs(n);
        }
        ok = reorder(next, order);
        break;
    }
    case DirectiveKind::Fuse: {
        int in = find(next, v(0)), out = find(next, v(1));
        if (in < 0 || out < 0 || in == out) {
            return false;
        }
        LoopState fused = next[in];
        fused.name = v(2);
        fused.alias.clear();
        fused.extent =
            next[in].extent < 0 || next[out].extent < 0 ? -1 : next[in].extent * next[out].extent;
        fused.constant = next[in].constant && next[out].constant;
        fused.origin = next[in].origin + QLatin1Char('*') + next[out].origin;
        next[in] = fused;
        next.remove(out);
        break;
    }
    default:
        return true; // vectorize/unroll with a factor split off an inner loop users cannot name
    }
    if (ok) {
        loops = next;
    }
    return ok;
}

QString joinInts(const QList<qint64> &l, int max = 12) {
    QStringList s;
    for (int i = 0; i < l.size() && i < max; ++i) {
        s << QString::number(l[i]);
    }
    if (l.size() > max) {
        s << QStringLiteral("...");
    }
    return s.join(QStringLiteral(", "));
}

} // namespace

LegalValues::LegalValues(tessel::PipelineInfo pipeline, tessel::ArchSpec arch)
    : m_valid(true), m_pipeline(std::move(pipeline)), m_arch(std::move(arch)) {}

const FuncInfo *LegalValues::funcInfo(const QString &name) const {
    return m_pipeline.find(name.toStdString());
}

QStringList LegalValues::funcs() const {
    QStringList l;
    for (const auto &f : m_pipeline.funcs) {
        l << qs(f.name);
    }
    return l;
}

QStringList LegalValues::inputs() const {
    QStringList l;
    for (const auto &t : m_pipeline.inputs) {
        l << qs(t.name);
    }
    return l;
}

QStringList LegalValues::consumersOf(const QString &name) const {
    QStringList out, todo{name};
    while (!todo.isEmpty()) {
        QString n = todo.takeFirst();
        for (const auto &f : m_pipeline.funcs) {
            for (const DefInfo *def : f.definitions()) {
                for (const auto &ld : def->loads) {
                    QString c = qs(f.name);
                    if (qs(ld.callee) == n && c != n && !out.contains(c)) {
                        out << c;
                        todo << c;
                    }
                }
            }
        }
    }
    return out;
}

QList<qint64> LegalValues::divisors(qint64 extent, qint64 limit) {
    QList<qint64> l;
    if (extent <= 0) {
        return l;
    }
    for (qint64 i = 1; i <= extent && (limit <= 0 || i <= limit); ++i) {
        if (extent % i == 0) {
            l << i;
        }
    }
    return l;
}

// ---- loops and extents ----

qint64 LegalValues::baseExtent(const FuncInfo &f, size_t dim) const {
    if (f.is_output) {
        for (const auto &o : m_pipeline.outputs) {
            if (o.name == f.name && dim < o.shape.size()) {
                return o.shape[dim];
            }
        }
        return -1;
    }
    auto key = std::make_pair(f.name, dim);
    auto memo = m_extentMemo.find(key);
    if (memo != m_extentMemo.end()) {
        return memo->second;
    }
    if (m_inProgress.count(f.name) || !m_spec) {
        return -1;
    }
    m_inProgress.insert(f.name);
    // Where the Func is computed: the last compute_at wins, as in Halide.
    QString atFunc, atLoop;
    for (const auto &d : m_spec->directives) {
        if (d.func == f.name &&
            (d.kind == DirectiveKind::ComputeAt || d.kind == DirectiveKind::ComputeRoot)) {
            atFunc = qs(d.at_func);
            atLoop = d.kind == DirectiveKind::ComputeRoot ? QString() : qs(d.at_loop);
        }
    }
    qint64 extent = -1;
    for (const auto &c : m_pipeline.funcs) {
        if (!atFunc.isEmpty() && qs(c.name) != atFunc) {
            continue;
        }
        for (const DefInfo *def : c.definitions()) {
            for (const auto &ld : def->loads) {
                if (ld.callee != f.name || dim >= ld.index_var.size() ||
                    ld.index_var[dim].empty()) {
                    continue;
                }
                qint64 span = consumerSpan(c, qs(ld.index_var[dim]),
                                           atLoop == QLatin1String("root") ? QString() : atLoop);
                if (span > 0) {
                    extent = std::max(extent, span + ld.max_offset[dim] - ld.min_offset[dim]);
                }
            }
        }
    }
    m_inProgress.erase(f.name);
    m_extentMemo[key] = extent;
    return extent;
}

qint64 LegalValues::consumerSpan(const FuncInfo &c, const QString &var,
                                 const QString &atLoop) const {
    // The consumer's loops after the whole schedule; inside `atLoop` (of the last stage that
    // has it) only the loops split from `var` that are inner to it count.
    int stages = int(c.updates.size());
    for (int s = stages - 1; s >= -1; --s) {
        QVector<LoopState> loops = loopsAt(*m_spec, int(m_spec->directives.size()), qs(c.name), s);
        int at = atLoop.isEmpty() ? loops.size() : find(loops, atLoop);
        bool hasVar = false;
        for (const auto &l : loops) {
            hasVar = hasVar || l.origin == var;
        }
        if (!hasVar || (at < 0 && s > -1)) {
            continue;
        }
        if (at < 0) {
            at = loops.size();
        }
        qint64 span = 1;
        for (int i = 0; i < at; ++i) {
            if (loops[i].origin == var) {
                if (loops[i].extent < 0) {
                    return -1;
                }
                span *= loops[i].extent;
            }
        }
        return span;
    }
    return -1;
}

QVector<LoopState> LegalValues::initialLoops(const FuncInfo &f, int stage) const {
    QVector<LoopState> loops;
    if (stage >= 0) {
        if (size_t(stage) >= f.updates.size()) {
            return loops;
        }
        const DefInfo &u = f.updates[stage];
        for (size_t i = 0; i < u.rvars.size(); ++i) {
            qint64 e = i < u.rvar_extents.size() ? u.rvar_extents[i] : -1;
            // Users write "k" for an RDom's only variable, "r$x", "r$y" for the dimensions
            // of a multi-dimensional one (both reach the same loop).
            QString name = loopName(u.rvars[i]), full = qs(u.rvars[i]);
            int same = 0;
            for (const auto &o : u.rvars) {
                same += loopName(o) == name;
            }
            loops << LoopState{same > 1 ? full : name,
                               e,
                               true,
                               e > 0,
                               full,
                               same > 1 || full == name ? QString() : full};
        }
        for (size_t d = 0; d < u.lhs_var.size(); ++d) {
            auto it = std::find(f.vars.begin(), f.vars.end(), u.lhs_var[d]);
            if (it != f.vars.end()) {
                loops << LoopState{qs(*it), baseExtent(f, size_t(it - f.vars.begin())),
                                   false,   !f.is_output,
                                   qs(*it), QString()};
            }
        }
        return loops;
    }
    for (size_t d = 0; d < f.vars.size(); ++d) {
        // An output's loops follow its buffer's size, a parameter of the program; inside
        // the program (bounds inferred from constant tiles) the rest are constants.
        loops << LoopState{qs(f.vars[d]), baseExtent(f, d), false,
                           !f.is_output,  qs(f.vars[d]),    QString()};
    }
    return loops;
}

QVector<LoopState> LegalValues::loopsAt(const ScheduleSpec &spec, int index, const QString &func,
                                        int stage) const {
    const FuncInfo *f = funcInfo(func);
    if (!f) {
        return {};
    }
    SpecScope scope(*this, spec);
    QVector<LoopState> loops = initialLoops(*f, stage);
    for (int i = 0; i < index && i < int(spec.directives.size()); ++i) {
        const Directive &d = spec.directives[i];
        if (qs(d.func) == func && d.stage == stage && usesLoops(d.kind)) {
            applyLoops(loops, d);
        }
    }
    return loops;
}

QStringList LegalValues::atLoops(const ScheduleSpec &spec, int index, const QString &func) const {
    QStringList l;
    const FuncInfo *f = funcInfo(func);
    if (!f) {
        return l;
    }
    for (int s = int(f->updates.size()) - 1; s >= -1; --s) {
        for (const QString &n : names(loopsAt(spec, index, func, s))) {
            if (!l.contains(n)) {
                l << n;
            }
        }
    }
    return l;
}

// ---- levels ----

QString LegalValues::levelOf(const ScheduleSpec &spec, int index, const QString &source) const {
    QString level;
    for (const auto &m : m_arch.memories) {
        if (m.off_chip) {
            level = qs(m.name);
            break;
        }
    }
    for (int i = 0; i < index && i < int(spec.directives.size()); ++i) {
        const Directive &d = spec.directives[i];
        if (qs(d.func) == source &&
            (d.kind == DirectiveKind::Stage || d.kind == DirectiveKind::AccumulateIn)) {
            level = qs(d.level);
        }
    }
    return level;
}

QStringList LegalValues::reachableFrom(const QString &from) const {
    QStringList l;
    for (const auto &m : m_arch.memories) {
        if (!m.off_chip && m_arch.engine_for(from.toStdString(), m.name)) {
            l << qs(m.name);
        }
    }
    return l;
}

bool LegalValues::isTensorized(const ScheduleSpec &spec, const QString &func) const {
    for (const auto &d : spec.directives) {
        if (d.kind == DirectiveKind::Tensorize && qs(d.func) == func && d.unit != "fix") {
            return true;
        }
    }
    return false;
}

QStringList LegalValues::accumulatorLevels(const ScheduleSpec &spec, const QString &func) const {
    if (isTensorized(spec, func)) {
        return {qs(m_arch.matrix.c_level)};
    }
    // A result is written where a unit computes and an engine copies it out of:
    // not the matrix unit's operand or result levels (only the matrix unit writes those).
    QStringList l;
    for (const auto &m : m_arch.memories) {
        QString n = qs(m.name);
        if (m.off_chip || m.name == m_arch.matrix.a_level || m.name == m_arch.matrix.b_level ||
            m.name == m_arch.matrix.c_level) {
            continue;
        }
        bool out = false;
        for (const auto &e : m_arch.engines) {
            for (const auto &edge : e.edges) {
                out = out || edge.src == m.name;
            }
        }
        if (out) {
            l << n;
        }
    }
    QString vec = qs(m_arch.vector.level);
    if (!vec.isEmpty() && l.contains(vec)) {
        l.removeAll(vec);
        l.prepend(vec);
    }
    return l;
}

QStringList LegalValues::tails(bool pureDefinition, bool rvar) const {
    // Halide: a reduction loop or an update's loop cannot be rounded up or shifted
    // inwards (that would recompute or skip reduction steps).
    if (pureDefinition && !rvar) {
        return {QString(), "guard_with_if", "predicate", "round_up", "shift_inwards"};
    }
    return {QString(), "guard_with_if", "predicate"};
}

// ---- choices ----

QStringList LegalValues::choices(const ScheduleSpec &spec, int index, const QString &field) const {
    if (!m_valid || index < 0 || index >= int(spec.directives.size())) {
        return {};
    }
    SpecScope scope(*this, spec);
    const Directive &d = spec.directives[index];
    const QString func = qs(d.func);
    const FuncInfo *f = funcInfo(func);
    if (field == QLatin1String("kind")) {
        QStringList l;
        for (const auto &k : tessel::kind_names()) {
            l << qs(k);
        }
        return l;
    }
    if (field == QLatin1String("func")) {
        QStringList l = funcs();
        if (d.kind == DirectiveKind::Stage || d.kind == DirectiveKind::Layout) {
            l = inputs() + l;
        }
        return l;
    }
    if (field == QLatin1String("stage")) {
        QStringList l;
        if (d.kind != DirectiveKind::Atomic) {
            l << QStringLiteral("-1");
        }
        for (size_t u = 0; f && u < f->updates.size(); ++u) {
            l << QString::number(u);
        }
        return l;
    }
    if (field == QLatin1String("update")) {
        QStringList l;
        for (size_t u = 0; f && u < f->updates.size(); ++u) {
            if (f->updates[u].sum_of_products) {
                l << QString::number(u);
            }
        }
        return l;
    }
    if (field == QLatin1String("unit")) {
        QStringList l;
        bool products = false;
        for (size_t u = 0; f && u < f->updates.size(); ++u) {
            products = products || f->updates[u].sum_of_products;
        }
        if (products && !m_arch.matrix.shapes.empty()) {
            l << QStringLiteral("matrix");
        }
        bool quant = false;
        for (const auto &e : m_arch.engines) {
            quant = quant ||
                    (e.quant_channels > 0 && std::find(e.transforms.begin(), e.transforms.end(),
                                                       "quant") != e.transforms.end());
        }
        if (f && f->updates.empty() && quant) {
            l << QStringLiteral("fix");
        }
        return l;
    }
    if (field == QLatin1String("format")) {
        return {"ND", "NZ", "ZN", "ZZ"};
    }
    if (field == QLatin1String("buffers")) {
        QStringList l;
        int from = d.kind == DirectiveKind::AccumulateIn && f && f->updates.empty() ? 2 : 1;
        for (int b = from; b <= 8; ++b) {
            l << QString::number(b);
        }
        return l;
    }
    if (field == QLatin1String("cores")) {
        QStringList l{QStringLiteral("0")};
        QVector<LoopState> loops = loopsAt(spec, index, func, d.stage);
        int p = d.vars.empty() ? -1 : find(loops, qs(d.vars[0]));
        qint64 extent = p >= 0 ? loops[p].extent : -1;
        for (int c = 1; c <= m_arch.chip.cores; ++c) {
            if (extent < 0 || (c <= extent && extent % c == 0)) {
                l << QString::number(c);
            }
        }
        return l;
    }
    if (field == QLatin1String("level")) {
        if (d.kind == DirectiveKind::AccumulateIn) {
            return accumulatorLevels(spec, func);
        }
        return reachableFrom(levelOf(spec, index, func));
    }
    if (field == QLatin1String("at_func")) {
        return consumersOf(func);
    }
    if (field == QLatin1String("at_loop")) {
        QStringList l = atLoops(spec, index, qs(d.at_func));
        if (d.kind == DirectiveKind::Stage) {
            l << QStringLiteral("root");
        }
        return l;
    }
    if (field == QLatin1String("tail")) {
        bool rvar = false;
        QVector<LoopState> loops = loopsAt(spec, index, func, d.stage);
        int last = d.kind == DirectiveKind::Tile ? 2 : 1;
        for (int i = 0; i < last && i < int(d.vars.size()); ++i) {
            int p = find(loops, qs(d.vars[i]));
            rvar = rvar || (p >= 0 && loops[p].rvar);
        }
        return tails(d.stage < 0, rvar);
    }
    return loopChoices(spec, index, d, field);
}

QStringList LegalValues::loopChoices(const ScheduleSpec &spec, int index, const Directive &d,
                                     const QString &field) const {
    const FieldType type = fieldType(d.kind, field);
    QVector<LoopState> loops = loopsAt(spec, index, qs(d.func), d.stage);
    if (type == FieldType::Loops) {
        QStringList order = names(loops);
        QStringList l{order.join(QStringLiteral(", "))};
        if (order.size() >= 2) { // the innermost two swapped: a common reorder
            order.swapItemsAt(0, 1);
            l << order.join(QStringLiteral(", "));
        }
        return l;
    }
    if (type == FieldType::Loop) {
        QStringList l;
        const bool atomic = atomicBefore(spec, index, d);
        // The other loop argument of a tile or fuse cannot be the same loop.
        QString other;
        if (d.kind == DirectiveKind::Tile || d.kind == DirectiveKind::Fuse) {
            size_t o =
                field == QLatin1String(d.kind == DirectiveKind::Tile ? "x" : "inner") ? 1 : 0;
            other = o < d.vars.size() ? qs(d.vars[o]) : QString();
        }
        for (const auto &lp : loops) {
            if (lp.rvar && (d.kind == DirectiveKind::Parallel ||
                            (d.kind == DirectiveKind::Vectorize && !atomic))) {
                continue;
            }
            if (lp.name != other) {
                l << lp.name;
            }
        }
        return l;
    }
    if (type == FieldType::Integer &&
        (field == QLatin1String("factor") || field == QLatin1String("fx") ||
         field == QLatin1String("fy"))) {
        size_t v = field == QLatin1String("fy") ? 1 : 0;
        int p = v < d.vars.size() ? find(loops, qs(d.vars[v])) : -1;
        qint64 extent = p >= 0 ? loops[p].extent : -1;
        qint64 limit = d.kind == DirectiveKind::Vectorize ? tessel::kMaxVectorizeFactor
                       : d.kind == DirectiveKind::Unroll  ? tessel::kMaxUnrollFactor
                                                          : 0;
        QStringList l;
        if (d.kind == DirectiveKind::Vectorize || d.kind == DirectiveKind::Unroll) {
            l << QString(); // no factor: the whole loop
        }
        for (qint64 x : divisors(extent, limit)) {
            l << QString::number(x);
        }
        return l;
    }
    return {};
}

// ---- checks ----

QString LegalValues::checkLoopField(const ScheduleSpec &spec, int index, const Directive &d,
                                    const QString &value) const {
    QVector<LoopState> loops = loopsAt(spec, index, qs(d.func), d.stage);
    const QString where = stageName(qs(d.func), d.stage);
    int p = find(loops, value);
    if (p < 0) {
        return QStringLiteral("'%1' is not a loop of %2 here; its loops at this point: %3")
            .arg(value, where, names(loops).join(QStringLiteral(", ")));
    }
    if (loops[p].rvar && d.kind == DirectiveKind::Parallel) {
        return QStringLiteral("'%1' is a reduction loop; parallel takes a pure loop of %2")
            .arg(value, where);
    }
    if (loops[p].rvar && d.kind == DirectiveKind::Vectorize && !atomicBefore(spec, index, d)) {
        return QStringLiteral("'%1' is a reduction loop; vectorize takes it only after an atomic "
                              "directive on %2")
            .arg(value, where);
    }
    if ((d.kind == DirectiveKind::Unroll || d.kind == DirectiveKind::Vectorize) &&
        d.factors.empty() && !loops[p].constant) {
        return QStringLiteral("loop %1 has no constant extent (it follows the size of output %2); "
                              "give a factor")
            .arg(value, qs(d.func));
    }
    if ((d.kind == DirectiveKind::Tile || d.kind == DirectiveKind::Fuse) && d.vars.size() >= 2 &&
        d.vars[0] == d.vars[1]) {
        return QStringLiteral("both loops are '%1'; name two different loops").arg(value);
    }
    return {};
}

QString LegalValues::checkFactor(const ScheduleSpec &spec, int index, const Directive &d,
                                 const QString &field, const QString &value) const {
    if (value.trimmed().isEmpty()) {
        return {};
    }
    QVector<LoopState> loops = loopsAt(spec, index, qs(d.func), d.stage);
    size_t v = field == QLatin1String("fy") ? 1 : 0;
    int p = v < d.vars.size() ? find(loops, qs(d.vars[v])) : -1;
    if (p < 0 || loops[p].extent <= 0) {
        return {};
    }
    const LoopState &l = loops[p];
    const qint64 n = value.trimmed().toLongLong();
    if (l.extent % n == 0) {
        return {};
    }
    // The remainder, by tail strategy (auto: Halide's choice for the loop): an output's loop
    // shifts its last step inwards (the factor must fit the extent), an inner Func's loop is
    // rounded up (its region grows: legal), a reduction or update loop is guarded, which a
    // tensorized update cannot take (the guarded nest is no matrix product: scalar code).
    const FuncInfo *f = funcInfo(qs(d.func));
    QString tail = qs(d.tail);
    const bool splits = d.kind == DirectiveKind::Split || d.kind == DirectiveKind::Tile;
    if (!splits || tail.isEmpty() || tail == QLatin1String("auto")) {
        tail = l.rvar || d.stage >= 0 ? QStringLiteral("guard_with_if")
               : f && f->is_output    ? QStringLiteral("shift_inwards")
                                      : QStringLiteral("round_up");
    }
    const QString divs = joinInts(divisors(l.extent));
    if (tail == QLatin1String("shift_inwards") && n > l.extent) {
        return QStringLiteral("%1 %2 is larger than the extent %3 of loop %4 (its last step shifts "
                              "inwards; the factor must fit); divisors: %5")
            .arg(field)
            .arg(n)
            .arg(l.extent)
            .arg(l.name, divs);
    }
    if (tail == QLatin1String("guard_with_if") && isTensorized(spec, qs(d.func))) {
        return QStringLiteral(
                   "%1 %2 does not divide the extent %3 of loop %4: %5 is tensorized and "
                   "the guarded remainder (tail guard_with_if) is no matrix product; "
                   "divisors: %6")
            .arg(field)
            .arg(n)
            .arg(l.extent)
            .arg(l.name, qs(d.func), divs);
    }
    return {};
}

/** One value being checked: the directive with it set, in the schedule with it set. */
struct FieldCheck {
    const ScheduleSpec &spec; // as it is
    const ScheduleSpec &next; // with the value set
    const int index;
    const Directive &d; // in `next`
    const QString field, v, func;
    const FuncInfo *f;
};

QString LegalValues::check(const ScheduleSpec &spec, int index, const QString &field,
                           const QString &value) const {
    if (!m_valid || index < 0 || index >= int(spec.directives.size())) {
        return {};
    }
    SpecScope scope(*this, spec);
    Directive d = spec.directives[index];
    QString error;
    if (field != QLatin1String("id") && field != QLatin1String("kind") &&
        !setFieldValue(d, field, value, &error)) {
        return error;
    }
    ScheduleSpec next = spec;
    next.directives[index] = d;
    const QString func = qs(d.func);
    FieldCheck c{spec, next,          index, next.directives[index], field, value.trimmed(),
                 func, funcInfo(func)};
    static const QStringList identity{"id", "kind", "func", "stage", "update"};
    static const QStringList resources{"unit", "format", "buffers", "cores", "level"};
    if (identity.contains(field)) {
        return checkIdentity(c);
    }
    if (resources.contains(field)) {
        return checkResource(c);
    }
    if (field == QLatin1String("at_func") || field == QLatin1String("at_loop")) {
        return checkPlacement(c);
    }
    if (field == QLatin1String("tail")) {
        return checkTail(c);
    }
    switch (fieldType(d.kind, field)) {
    case FieldType::Loop:
        return checkLoopField(c.next, index, c.d, c.v);
    case FieldType::Loops:
        return checkReorder(c);
    case FieldType::Integer:
        return checkFactor(c.next, index, c.d, field, c.v);
    case FieldType::Text:
        return checkNewName(c);
    default:
        return {};
    }
}

QString LegalValues::checkIdentity(const FieldCheck &c) const {
    const Directive &d = c.d;
    const FuncInfo *f = c.f;
    const QString &v = c.v, &func = c.func;
    if (c.field == QLatin1String("id")) {
        if (v.isEmpty()) {
            return QStringLiteral("an id cannot be empty");
        }
        for (int i = 0; i < int(c.spec.directives.size()); ++i) {
            if (i != c.index && qs(c.spec.directives[i].id) == v) {
                return QStringLiteral("id '%1' is already used by directive #%2").arg(v).arg(i);
            }
        }
        return {};
    }
    if (c.field == QLatin1String("kind")) {
        tessel::DirectiveKind k;
        return kindFromName(v, &k) ? QString() : QStringLiteral("unknown kind '%1'").arg(v);
    }
    if (c.field == QLatin1String("func")) {
        const bool takesInput = d.kind == DirectiveKind::Stage || d.kind == DirectiveKind::Layout;
        if (!f && inputs().contains(func)) {
            return takesInput
                       ? QString()
                       : QStringLiteral("'%1' is an input; only stage and layout take an input")
                             .arg(func);
        }
        if (!f) {
            return QStringLiteral("unknown Func '%1'; Funcs: %2; inputs: %3")
                .arg(func, funcs().join(", "), inputs().join(", "));
        }
        if (f->is_output &&
            (d.kind == DirectiveKind::ComputeAt || d.kind == DirectiveKind::StoreAt ||
             d.kind == DirectiveKind::ComputeInline)) {
            return QStringLiteral("%1 is an output; it is computed at root").arg(func);
        }
        if (!f->updates.empty() && d.kind == DirectiveKind::ComputeInline) {
            return QStringLiteral("%1 has an update definition; it cannot be inlined").arg(func);
        }
        return {};
    }
    if (!f) {
        return {};
    }
    const QString updates = QStringLiteral("%1 has %2 update definition%3")
                                .arg(func)
                                .arg(f->updates.size())
                                .arg(f->updates.size() == 1 ? "" : "s");
    if (c.field == QLatin1String("stage")) {
        if (d.stage >= int(f->updates.size()) || (d.kind == DirectiveKind::Atomic && d.stage < 0)) {
            return QStringLiteral("%1; legal stages: %2")
                .arg(updates, choices(c.next, c.index, c.field).join(", "));
        }
        return {};
    }
    // update (tensorize)
    if (d.stage < 0 || d.stage >= int(f->updates.size())) {
        return QStringLiteral("%1; update %2 does not exist").arg(updates).arg(d.stage);
    }
    if (!f->updates[d.stage].sum_of_products && d.unit != "fix") {
        return QStringLiteral(
                   "%1.update(%2) is not a sum of products; the matrix unit cannot take it")
            .arg(func)
            .arg(d.stage);
    }
    return {};
}

QString LegalValues::checkResource(const FieldCheck &c) const {
    const Directive &d = c.d;
    const QString &v = c.v, &func = c.func;
    if (c.field == QLatin1String("unit") || c.field == QLatin1String("format")) {
        QStringList legal = choices(c.next, c.index, c.field);
        const QString what = c.field == QLatin1String("unit")
                                 ? QStringLiteral("unit for %1").arg(func)
                                 : QStringLiteral("layout");
        if (legal.contains(v)) {
            return {};
        }
        return legal.isEmpty() ? QStringLiteral("no %1 is legal here").arg(what)
                               : QStringLiteral("'%1' is not a legal %2 here; legal: %3")
                                     .arg(v, what, legal.join(", "));
    }
    if (c.field == QLatin1String("buffers")) {
        if (d.kind == DirectiveKind::AccumulateIn && c.f && c.f->updates.empty() && d.buffers < 2) {
            return QStringLiteral("%1 has no update definition: accumulate_in keeps a pure Func's "
                                  "tile only with "
                                  "buffers >= 2")
                .arg(func);
        }
        return d.buffers > 8 ? QStringLiteral("buffers must be 1..8, got %1").arg(d.buffers)
                             : QString();
    }
    if (c.field == QLatin1String("cores")) {
        return d.cores <= m_arch.chip.cores
                   ? QString()
                   : QStringLiteral("%1 has %2 cores; cores=%3 asks for more")
                         .arg(qs(m_arch.name))
                         .arg(m_arch.chip.cores)
                         .arg(d.cores);
    }
    // level
    if (!m_arch.find_level(d.level)) {
        QStringList all;
        for (const auto &m : m_arch.memories) {
            all << qs(m.name);
        }
        return QStringLiteral("level '%1' does not exist in %2; its levels: %3")
            .arg(v, qs(m_arch.name), all.join(", "));
    }
    QStringList legal = choices(c.next, c.index, c.field);
    if (legal.contains(v)) {
        return {};
    }
    if (d.kind == DirectiveKind::AccumulateIn) {
        return QStringLiteral("%1 cannot hold %2's result%3; legal: %4")
            .arg(v, func,
                 isTensorized(c.spec, func)
                     ? QStringLiteral(" (it is tensorized: the matrix unit writes %1)")
                           .arg(qs(m_arch.matrix.c_level))
                     : QString(),
                 legal.join(", "));
    }
    QString from = levelOf(c.spec, c.index, func);
    return QStringLiteral("no engine of %1 copies %2 from %3 into %4; from %3 it reaches: %5")
        .arg(qs(m_arch.name), func, from, v,
             legal.isEmpty() ? QStringLiteral("nothing") : legal.join(", "));
}

QString LegalValues::checkPlacement(const FieldCheck &c) const {
    const Directive &d = c.d;
    const QString &v = c.v, &func = c.func;
    if (c.field == QLatin1String("at_func")) {
        QStringList legal = consumersOf(func);
        if (legal.contains(v)) {
            return {};
        }
        return legal.isEmpty()
                   ? QStringLiteral(
                         "nothing reads %1, so it cannot be computed inside another Func")
                         .arg(func)
                   : QStringLiteral("%1 does not read %2; the Funcs that do: %3")
                         .arg(v, func, legal.join(", "));
    }
    QStringList legal = choices(c.next, c.index, c.field);
    if (!legal.contains(v)) {
        return QStringLiteral("'%1' is not a loop of %2 here; its loops at this point: %3")
            .arg(v, qs(d.at_func), legal.join(", "));
    }
    bool computedAt = false;
    for (const auto &o : c.spec.directives) {
        computedAt = computedAt || (o.kind == DirectiveKind::ComputeAt && o.func == d.func);
    }
    if (d.kind == DirectiveKind::StoreAt && !computedAt) {
        return QStringLiteral("%1 has no compute_at; store_at needs one (at %2 or inside it)")
            .arg(func, v);
    }
    return {};
}

QString LegalValues::checkTail(const FieldCheck &c) const {
    const QString &v = c.v;
    if (v.isEmpty() || v == QLatin1String("auto")) {
        return {};
    }
    QStringList legal = choices(c.next, c.index, c.field);
    if (legal.contains(v)) {
        return {};
    }
    if (!QStringList{"round_up", "guard_with_if", "shift_inwards", "predicate"}.contains(v)) {
        return QStringLiteral("unknown tail strategy '%1'; known: auto, round_up, guard_with_if, "
                              "shift_inwards, "
                              "predicate")
            .arg(v);
    }
    // Only an update's loops (its reduction loops and its pure ones) refuse a tail.
    return QStringLiteral(
               "tail %1 is not legal on %2 (it would recompute or skip steps of an update); "
               "legal: auto, %3")
        .arg(v, stageName(c.func, c.d.stage), legal.mid(1).join(", "));
}

QString LegalValues::checkReorder(const FieldCheck &c) const {
    const Directive &d = c.d;
    QVector<LoopState> loops = loopsAt(c.spec, c.index, c.func, d.stage);
    QStringList seen;
    for (const auto &n : d.vars) {
        QString name = qs(n);
        if (find(loops, name) < 0) {
            return QStringLiteral("'%1' is not a loop of %2 here; its loops at this point: %3")
                .arg(name, stageName(c.func, d.stage), names(loops).join(", "));
        }
        if (seen.contains(name)) {
            return QStringLiteral("'%1' is named twice").arg(name);
        }
        seen << name;
    }
    return d.vars.empty() ? QStringLiteral("reorder needs the loops, innermost first") : QString();
}

QString LegalValues::checkNewName(const FieldCheck &c) const {
    // A new loop name (split, tile, fuse): not one the stage has, unless it replaces it.
    const Directive &d = c.d;
    const QString &v = c.v;
    if (v.isEmpty()) {
        return QStringLiteral("a new loop needs a name");
    }
    QVector<LoopState> loops = loopsAt(c.spec, c.index, c.func, d.stage);
    size_t first = d.kind == DirectiveKind::Split ? 1 : 2;
    size_t count = d.kind == DirectiveKind::Fuse ? 1 : d.vars.size() - first;
    QStringList created, consumed;
    for (size_t i = 0; i < first + count && i < d.vars.size(); ++i) {
        (i < first ? consumed : created) << qs(d.vars[i]);
    }
    if (created.count(v) > 1) {
        return QStringLiteral("'%1' names two new loops; give each its own name").arg(v);
    }
    if (find(loops, v) >= 0 && !consumed.contains(v)) {
        return QStringLiteral("'%1' is already a loop of %2 (its loops: %3)")
            .arg(v, stageName(c.func, d.stage), names(loops).join(", "));
    }
    return {};
}

QMap<QString, QString> LegalValues::problems(const ScheduleSpec &spec, int index) const {
    QMap<QString, QString> out;
    if (!m_valid || index < 0 || index >= int(spec.directives.size())) {
        return out;
    }
    const Directive &d = spec.directives[index];
    QStringList fields{QStringLiteral("func")};
    for (const FieldInfo &f : directiveFields(d.kind)) {
        fields << f.name;
    }
    for (const QString &f : fields) {
        QString p = check(spec, index, f, fieldValue(d, f));
        if (!p.isEmpty()) {
            out[f] = p;
        }
    }
    return out;
}

// ---- defaults ----

bool LegalValues::makeDefault(const ScheduleSpec &spec, int index, DirectiveKind kind,
                              const QString &preferredFunc, Directive *out, QString *why) const {
    if (!m_valid) {
        if (why) {
            *why = QStringLiteral("the generator is not known yet");
        }
        return false;
    }
    SpecScope scope(*this, spec);
    index = std::clamp(index, 0, int(spec.directives.size()));
    QStringList candidates;
    if (funcs().contains(preferredFunc) || inputs().contains(preferredFunc)) {
        candidates << preferredFunc;
    }
    QStringList order = kind == DirectiveKind::Stage || kind == DirectiveKind::Layout
                            ? inputs() + funcs()
                            : funcs();
    // Outputs last for the Funcs others are computed in, first otherwise.
    for (const QString &f : order) {
        if (!candidates.contains(f)) {
            candidates << f;
        }
    }
    QString first;
    for (const QString &func : candidates) {
        QString reason;
        if (defaultFor(spec, index, kind, func, out, &reason)) {
            out->id.clear();
            // The result must pass every check of the editor.
            ScheduleSpec next = spec;
            next.directives.insert(next.directives.begin() + index, *out);
            const QMap<QString, QString> wrong = problems(next, index);
            if (wrong.isEmpty()) {
                // ... and leave every later directive as legal as it was.
                QString broken;
                for (int j = index; j < int(spec.directives.size()) && broken.isEmpty(); ++j) {
                    const QMap<QString, QString> after = problems(next, j + 1);
                    if (after.size() > problems(spec, j).size()) {
                        broken = QStringLiteral("it would make %1 illegal (%2)")
                                     .arg(qs(spec.directives[j].id), after.first());
                    }
                }
                if (broken.isEmpty()) {
                    return true;
                }
                reason = broken;
            } else {
                reason = wrong.first();
            }
        }
        if (first.isEmpty()) {
            first = QStringLiteral("%1: %2").arg(func, reason);
        }
    }
    if (why) {
        *why = first.isEmpty() ? QStringLiteral("no Func takes it") : first;
    }
    return false;
}

/** What a template is built from: the schedule, where it goes, the Func and the directive so far.
 */
struct Template {
    const LegalValues &lv;
    const ScheduleSpec &spec;
    const int index;
    const QString func;
    const FuncInfo *f;
    const bool tensorized;
    Directive d;
    QString *why;
    QStringList
        referenced;    // loop names some at= names (anywhere: Halide resolves them when it lowers)
    QStringList taken; // every loop name of the Func, at any point, in any stage

    bool fail(const QString &m) {
        if (why) {
            *why = m;
        }
        return false;
    }
    /** `base`, or base2, base3, ... when the Func has a loop of that name. */
    std::string fresh(const QString &base) {
        QString n = base;
        for (int i = 2; taken.contains(n); ++i) {
            n = base + QString::number(i);
        }
        taken << n;
        return n.toStdString();
    }
    /** The Func's stages, the last update first. */
    QVector<int> stages() const {
        QVector<int> s;
        for (int u = f ? int(f->updates.size()) - 1 : -1; u >= 0; --u) {
            s << u;
        }
        s << -1;
        return s;
    }
    QVector<LoopState> loops(int stage) const { return lv.loopsAt(spec, index, func, stage); }
    /** The loops of a stage no at= names, outermost first. */
    QVector<LoopState> freeLoops(int stage) const {
        QVector<LoopState> all = loops(stage), l;
        for (int i = all.size() - 1; i >= 0; --i) {
            if (!referenced.contains(all[i].name)) {
                l << all[i];
            }
        }
        return l;
    }
    /** A directive of `kind` on the Func comes anywhere in the schedule. */
    const Directive *has(DirectiveKind kind) const {
        for (const auto &o : spec.directives) {
            if (o.kind == kind && qs(o.func) == func) {
                return &o;
            }
        }
        return nullptr;
    }
};

bool LegalValues::defaultFor(const ScheduleSpec &spec, int index, DirectiveKind kind,
                             const QString &func, Directive *out, QString *why) const {
    const FuncInfo *f = funcInfo(func);
    Template t{*this, spec, index, func, f, isTensorized(spec, func), makeDirective(kind, func),
               why,   {},   {}};
    t.d.vars.clear();
    t.d.factors.clear();
    for (const auto &o : spec.directives) {
        if (qs(o.at_func) == func) {
            t.referenced << qs(o.at_loop);
        }
        for (size_t i = 0; qs(o.func) == func && i < o.vars.size(); ++i) {
            t.taken << qs(o.vars[i]);
        }
    }
    for (int s = -1; f && s < int(f->updates.size()); ++s) {
        t.taken += names(loopsAt(spec, int(spec.directives.size()), func, s)) + names(t.loops(s));
    }
    if ((usesLoops(kind) || kind == DirectiveKind::Atomic) && !f) {
        return t.fail(
            QStringLiteral("'%1' is an input; schedule the Funcs that read it").arg(func));
    }
    bool ok = false;
    switch (kind) {
    case DirectiveKind::Split:
    case DirectiveKind::Tile:
        ok = splitTemplate(t);
        break;
    case DirectiveKind::Reorder:
    case DirectiveKind::Fuse:
        ok = reorderOrFuseTemplate(t);
        break;
    case DirectiveKind::Vectorize:
    case DirectiveKind::Unroll:
    case DirectiveKind::Parallel:
    case DirectiveKind::Atomic:
        ok = loopTypeTemplate(t);
        break;
    case DirectiveKind::ComputeAt:
    case DirectiveKind::StoreAt:
    case DirectiveKind::ComputeRoot:
    case DirectiveKind::ComputeInline:
        ok = placementTemplate(t);
        break;
    case DirectiveKind::Stage:
        ok = stageTemplate(t);
        break;
    case DirectiveKind::AccumulateIn:
    case DirectiveKind::Tensorize:
        ok = unitTemplate(t);
        break;
    case DirectiveKind::Layout:
        t.d.format = "ND"; // the layout every buffer has unless told otherwise
        ok = true;
        break;
    }
    if (ok) {
        *out = t.d;
    }
    return ok;
}

bool LegalValues::splitTemplate(Template &t) const {
    // The factor is the loop's extent: a split that changes no iteration until you pick a
    // smaller factor from the divisors the drop-down offers.
    Directive &d = t.d;
    for (int s : t.stages()) {
        for (const LoopState &x : t.freeLoops(s)) {
            if (x.extent <= 0) {
                continue;
            }
            d.stage = s;
            if (d.kind == DirectiveKind::Split) {
                d.vars = {x.name.toStdString(), t.fresh(x.name + "o"), t.fresh(x.name + "i")};
                d.factors = {x.extent};
                return true;
            }
            // tile: x and the loop just inside it (the inner of the two first)
            QVector<LoopState> all = t.loops(s);
            int p = find(all, x.name);
            if (p >= 1 && !t.referenced.contains(all[p - 1].name) && all[p - 1].extent > 0) {
                const LoopState &in = all[p - 1];
                d.vars = {in.name.toStdString(), x.name.toStdString(),   t.fresh(in.name + "o"),
                          t.fresh(x.name + "o"), t.fresh(in.name + "i"), t.fresh(x.name + "i")};
                d.factors = {in.extent, x.extent};
                return true;
            }
        }
    }
    return t.fail(
        QStringLiteral("every loop of %1 of known extent is named by an at=").arg(t.func));
}

bool LegalValues::reorderOrFuseTemplate(Template &t) const {
    Directive &d = t.d;
    if (d.kind == DirectiveKind::Reorder) {
        // The loops in their order: legal, and the list to rearrange.
        d.stage = t.stages().first();
        for (const auto &l : t.loops(d.stage)) {
            d.vars.push_back(l.name.toStdString());
        }
        return d.vars.size() >= 2 ||
               t.fail(QStringLiteral("%1 has fewer than two loops").arg(t.func));
    }
    // fuse: two adjacent pure loops no at= names, of a Func no unit maps.
    if (t.tensorized) {
        return t.fail(
            QStringLiteral("%1 is tensorized: the matrix unit takes its loops as they are")
                .arg(t.func));
    }
    for (int s : t.stages()) {
        QVector<LoopState> loops = t.loops(s);
        for (int i = loops.size() - 2; i >= 0; --i) {
            const LoopState &in = loops[i], &o = loops[i + 1];
            if (!in.rvar && !o.rvar && !t.referenced.contains(in.name) &&
                !t.referenced.contains(o.name)) {
                d.stage = s;
                d.vars = {in.name.toStdString(), o.name.toStdString(), t.fresh(in.name + o.name)};
                return true;
            }
        }
    }
    return t.fail(
        QStringLiteral("%1 has no two adjacent pure loops that no at= names").arg(t.func));
}

bool LegalValues::loopTypeTemplate(Template &t) const {
    Directive &d = t.d;
    const DirectiveKind kind = d.kind;
    if (t.tensorized) {
        return t.fail(
            QStringLiteral("%1 is tensorized: the matrix unit runs its loops").arg(t.func));
    }
    if (kind == DirectiveKind::Atomic) {
        d.stage = 0;
        return !t.f->updates.empty() ||
               t.fail(QStringLiteral("%1 has no update definition").arg(t.func));
    }
    const bool accumulated = t.has(DirectiveKind::AccumulateIn);
    for (int s : t.stages()) {
        QVector<LoopState> loops = t.freeLoops(s);
        if (kind == DirectiveKind::Vectorize) { // the innermost pure loop
            std::reverse(loops.begin(), loops.end());
        }
        for (const auto &l : loops) {
            if (l.rvar || (kind == DirectiveKind::Vectorize && !accumulated)) {
                continue;
            }
            if (kind == DirectiveKind::Parallel && l.name == l.origin) {
                continue; // the cores take tiles: a loop a split or tile made
            }
            if (kind == DirectiveKind::Unroll && (!l.constant || l.extent <= 0 || l.extent > 4)) {
                continue; // unroll only a short loop of constant extent by default
            }
            d.stage = s;
            d.vars = {l.name.toStdString()};
            for (int c = 1;
                 kind == DirectiveKind::Parallel && c <= m_arch.chip.cores && l.extent > 0; ++c) {
                d.cores = l.extent % c == 0 && c <= l.extent
                              ? c
                              : d.cores; // the most cores that divide it
            }
            return true;
        }
    }
    if (kind == DirectiveKind::Vectorize) {
        return t.fail(
            QStringLiteral("%1's result is not kept in the vector unit's level (accumulate_in %2)")
                .arg(t.func, qs(m_arch.vector.level)));
    }
    return t.fail(QStringLiteral("%1 has no pure loop that no at= names%2")
                      .arg(t.func, kind == DirectiveKind::Unroll
                                       ? QStringLiteral(" with at most 4 iterations")
                                       : QStringLiteral(" made by a split or tile")));
}

bool LegalValues::placementTemplate(Template &t) const {
    Directive &d = t.d;
    const FuncInfo *f = t.f;
    if (!f) {
        return t.fail(QStringLiteral("'%1' is an input").arg(t.func));
    }
    if (d.kind == DirectiveKind::ComputeInline) {
        return (!f->is_output && f->updates.empty()) ||
               t.fail(QStringLiteral("%1 %2; it cannot be inlined")
                          .arg(t.func, f->is_output ? QStringLiteral("is an output")
                                                    : QStringLiteral("has an update")));
    }
    if (d.kind == DirectiveKind::ComputeRoot) {
        // At root its accumulator (if a level keeps it) must hold the whole Func.
        const Directive *acc = t.has(DirectiveKind::AccumulateIn);
        const auto *level = acc ? m_arch.find_level(acc->level) : nullptr;
        const FuncInfo *consumer = funcInfo(consumersOf(t.func).value(0));
        qint64 bytes = f->bytes * std::max(1, acc ? acc->buffers : 1);
        for (size_t dim = 0; dim < f->vars.size() && bytes > 0; ++dim) {
            qint64 e = consumer ? consumerSpan(*consumer, qs(f->vars[dim]), QString()) : -1;
            bytes = e > 0 ? bytes * e : -1;
        }
        if (level && bytes > qint64(level->size_bytes)) {
            return t.fail(
                QStringLiteral("at root %1's accumulator needs %2 KiB in %3; %3 has %4 KiB")
                    .arg(t.func)
                    .arg(bytes / 1024)
                    .arg(qs(acc->level))
                    .arg(level->size_bytes / 1024));
        }
        return true;
    }
    if (f->is_output) {
        return t.fail(QStringLiteral("%1 is an output; it is computed at root").arg(t.func));
    }
    // compute_at / store_at: where it is computed now, else the outermost loop of its first
    // consumer.
    for (const auto &o : t.spec.directives) {
        if (qs(o.func) == t.func && o.kind == DirectiveKind::ComputeAt) {
            d.at_func = o.at_func;
            d.at_loop = o.at_loop;
        }
    }
    if (d.at_func.empty() && d.kind == DirectiveKind::StoreAt) {
        return t.fail(
            QStringLiteral(
                "%1 has no compute_at; its storage goes at or outside where it is computed")
                .arg(t.func));
    }
    if (d.at_func.empty()) {
        QStringList c = consumersOf(t.func);
        QStringList loops = c.isEmpty() ? QStringList() : atLoops(t.spec, t.index, c.first());
        if (loops.isEmpty()) {
            return t.fail(QStringLiteral("nothing with loops reads %1").arg(t.func));
        }
        d.at_func = c.first().toStdString();
        d.at_loop = loops.last().toStdString();
    }
    return true;
}

bool LegalValues::stageTemplate(Template &t) const {
    Directive &d = t.d;
    if (t.f && t.f->is_output) {
        return t.fail(QStringLiteral("%1 is an output").arg(t.func));
    }
    if (const Directive *at = t.f ? t.has(DirectiveKind::ComputeAt) : nullptr) {
        return t.fail(
            QStringLiteral(
                "%1 is computed inside %2; stage copies an input or a Func computed at root")
                .arg(t.func, qs(at->at_func)));
    }
    const QString from = levelOf(t.spec, t.index, t.func);
    const QStringList to = reachableFrom(from);
    if (to.isEmpty()) {
        return t.fail(QStringLiteral("no engine copies %1 on from %2").arg(t.func, from));
    }
    // At the loop its previous stage uses, else at root.
    QString atFunc, atLoop;
    for (int i = 0; i < t.index; ++i) {
        const auto &o = t.spec.directives[i];
        if (o.kind == DirectiveKind::Stage && qs(o.func) == t.func) {
            atFunc = qs(o.at_func);
            atLoop = qs(o.at_loop);
        }
    }
    if (atFunc.isEmpty()) {
        atFunc = consumersOf(t.func).value(0);
        atLoop = QStringLiteral("root");
    }
    if (atFunc.isEmpty()) {
        return t.fail(QStringLiteral("nothing reads %1").arg(t.func));
    }
    // The staged footprint must fit the level: the whole source at root.
    qint64 bytes = 1;
    const auto *input = m_pipeline.find_input(t.func.toStdString());
    if (atLoop == QLatin1String("root") && input) {
        bytes = qint64(tessel::dtype_bytes(input->dtype));
        for (auto e : input->shape) {
            bytes *= e;
        }
    }
    for (const QString &l : to) {
        const auto *lv = m_arch.find_level(l.toStdString());
        if (lv && qint64(lv->size_bytes) >= bytes) {
            d.level = l.toStdString();
            d.at_func = atFunc.toStdString();
            d.at_loop = atLoop.toStdString();
            return true;
        }
    }
    return t.fail(QStringLiteral("%1 (%2 KiB) does not fit any level an engine reaches from %3")
                      .arg(t.func)
                      .arg(bytes / 1024)
                      .arg(from));
}

bool LegalValues::unitTemplate(Template &t) const {
    Directive &d = t.d;
    const FuncInfo *f = t.f;
    if (!f) {
        return t.fail(QStringLiteral("'%1' is an input").arg(t.func));
    }
    if (d.kind == DirectiveKind::AccumulateIn) {
        if (const Directive *o = t.has(DirectiveKind::AccumulateIn)) {
            return t.fail(
                QStringLiteral("%1 already has accumulate_in (%2)").arg(t.func, qs(o->id)));
        }
        if (!t.has(DirectiveKind::ComputeAt)) {
            return t.fail(QStringLiteral("%1 needs a compute_at first (its accumulator is a tile)")
                              .arg(t.func));
        }
        QStringList levels = accumulatorLevels(t.spec, t.func);
        if (levels.isEmpty()) {
            return t.fail(QStringLiteral("no level can hold %1's result").arg(t.func));
        }
        d.level = levels.first().toStdString();
        d.buffers = f->updates.empty() ? 2 : 1;
        return true;
    }
    // tensorize: an update that is a sum of products, its operands and its result where the
    // matrix unit reads and writes.
    int update = -1;
    for (size_t u = 0; u < f->updates.size() && update < 0; ++u) {
        update = f->updates[u].sum_of_products ? int(u) : -1;
    }
    if (update < 0) {
        return t.fail(QStringLiteral("%1 has no update that is a sum of products").arg(t.func));
    }
    if (t.tensorized) {
        return t.fail(QStringLiteral("%1 is already tensorized").arg(t.func));
    }
    const Directive *acc = t.has(DirectiveKind::AccumulateIn);
    const DefInfo &u = f->updates[update];
    QStringList missing;
    if (!acc || acc->level != m_arch.matrix.c_level) {
        missing << QStringLiteral("accumulate_in(%1, %2)").arg(t.func, qs(m_arch.matrix.c_level));
    }
    for (const auto &[operand, level] :
         {std::pair(u.mul_a, m_arch.matrix.a_level), std::pair(u.mul_b, m_arch.matrix.b_level)}) {
        if (levelOf(t.spec, t.index, qs(operand)) != qs(level)) {
            missing << QStringLiteral("stage(%1, %2)").arg(qs(operand), qs(level));
        }
    }
    if (!missing.isEmpty()) {
        return t.fail(QStringLiteral("the matrix unit needs %1 before it").arg(missing.join(", ")));
    }
    d.stage = update;
    d.unit = "matrix";
    return true;
}

} // namespace tessel::ide
