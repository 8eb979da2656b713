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
                loops << LoopState{qs(*it), baseExtent(f, size_t(it - f.vars.begin())), false,
                                   !f.is_output, qs(*it)};
            }
        }
        return loops;
    }
    for (size_t d = 0; d < f.vars.size(); ++d) {
        // An output's loops follow its buffer's size, a parameter of the program; inside
        // the program (bounds inferred from constant tiles) the rest are constants.
        loops << LoopState{qs(f.vars[d]), baseExtent(f, d), false, !f.is_output, qs(f.vars[d])};
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
    FieldType type = FieldType::Text;
    for (const FieldInfo &fi : directiveFields(d.kind)) {
        if (fi.name == field) {
            type = fi.type;
        }
    }
    QVector<LoopState> loops = loopsAt(spec, index, func, d.stage);
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
                                    const QString &field, const QString &value) const {
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
    const QString v = value.trimmed();
    const QString func = qs(d.func);
    const FuncInfo *f = funcInfo(func);
    auto oneOf = [&](const QString &what) -> QString {
        QStringList legal = choices(next, index, field);
        if (legal.contains(v) || (v == QLatin1String("auto") && legal.contains(QString()))) {
            return {};
        }
        QStringList shown;
        for (const QString &c : legal) {
            shown << (c.isEmpty() ? QStringLiteral("(none)") : c);
        }
        return legal.isEmpty() ? QStringLiteral("no %1 is legal here").arg(what)
                               : QStringLiteral("'%1' is not a legal %2 here; legal: %3")
                                     .arg(v, what, shown.join(", "));
    };
    if (field == QLatin1String("id")) {
        if (v.isEmpty()) {
            return QStringLiteral("an id cannot be empty");
        }
        for (int i = 0; i < int(spec.directives.size()); ++i) {
            if (i != index && qs(spec.directives[i].id) == v) {
                return QStringLiteral("id '%1' is already used by directive #%2").arg(v).arg(i);
            }
        }
        return {};
    }
    if (field == QLatin1String("kind")) {
        tessel::DirectiveKind k;
        return kindFromName(v, &k) ? QString() : QStringLiteral("unknown kind '%1'").arg(v);
    }
    if (field == QLatin1String("func")) {
        if (!f && !(inputs().contains(func) &&
                    (d.kind == DirectiveKind::Stage || d.kind == DirectiveKind::Layout))) {
            if (inputs().contains(func)) {
                return QStringLiteral("'%1' is an input; only stage and layout take an input")
                    .arg(func);
            }
            return QStringLiteral("unknown Func '%1'; Funcs: %2; inputs: %3")
                .arg(func, funcs().join(", "), inputs().join(", "));
        }
        if (f && f->is_output &&
            (d.kind == DirectiveKind::ComputeAt || d.kind == DirectiveKind::StoreAt ||
             d.kind == DirectiveKind::ComputeInline)) {
            return QStringLiteral("%1 is an output; it is computed at root").arg(func);
        }
        if (f && !f->updates.empty() && d.kind == DirectiveKind::ComputeInline) {
            return QStringLiteral("%1 has an update definition; it cannot be inlined").arg(func);
        }
        return {};
    }
    if (field == QLatin1String("stage")) {
        if (!f) {
            return {};
        }
        if (d.stage >= int(f->updates.size()) || (d.kind == DirectiveKind::Atomic && d.stage < 0)) {
            return QStringLiteral("%1 has %2 update definition%3; legal stages: %4")
                .arg(func)
                .arg(f->updates.size())
                .arg(f->updates.size() == 1 ? "" : "s")
                .arg(choices(next, index, field).join(", "));
        }
        return {};
    }
    if (field == QLatin1String("update")) {
        if (f && (d.stage < 0 || d.stage >= int(f->updates.size()))) {
            return QStringLiteral("%1 has %2 update definition%3; update %4 does not exist")
                .arg(func)
                .arg(f->updates.size())
                .arg(f->updates.size() == 1 ? "" : "s")
                .arg(d.stage);
        }
        if (f && !f->updates[d.stage].sum_of_products && d.unit != "fix") {
            return QStringLiteral(
                       "%1.update(%2) is not a sum of products; the matrix unit cannot take it")
                .arg(func)
                .arg(d.stage);
        }
        return {};
    }
    if (field == QLatin1String("unit")) {
        return oneOf(QStringLiteral("unit for %1").arg(func));
    }
    if (field == QLatin1String("format")) {
        return oneOf(QStringLiteral("layout"));
    }
    if (field == QLatin1String("buffers")) {
        if (d.kind == DirectiveKind::AccumulateIn && f && f->updates.empty() && d.buffers < 2) {
            return QStringLiteral("%1 has no update definition: accumulate_in keeps a pure Func's "
                                  "tile only with "
                                  "buffers >= 2")
                .arg(func);
        }
        return d.buffers > 8 ? QStringLiteral("buffers must be 1..8, got %1").arg(d.buffers)
                             : QString();
    }
    if (field == QLatin1String("cores")) {
        if (d.cores > m_arch.chip.cores) {
            return QStringLiteral("%1 has %2 cores; cores=%3 asks for more")
                .arg(qs(m_arch.name))
                .arg(m_arch.chip.cores)
                .arg(d.cores);
        }
        return {};
    }
    if (field == QLatin1String("level")) {
        if (!m_arch.find_level(d.level)) {
            QStringList all;
            for (const auto &m : m_arch.memories) {
                all << qs(m.name);
            }
            return QStringLiteral("level '%1' does not exist in %2; its levels: %3")
                .arg(v, qs(m_arch.name), all.join(", "));
        }
        QStringList legal = choices(next, index, field);
        if (legal.contains(v)) {
            return {};
        }
        if (d.kind == DirectiveKind::AccumulateIn) {
            return QStringLiteral("%1 cannot hold %2's result%3; legal: %4")
                .arg(v, func,
                     isTensorized(spec, func)
                         ? QStringLiteral(" (it is tensorized: the matrix unit writes %1)")
                               .arg(qs(m_arch.matrix.c_level))
                         : QString(),
                     legal.join(", "));
        }
        QString from = levelOf(spec, index, func);
        return QStringLiteral("no engine of %1 copies %2 from %3 into %4; from %3 it reaches: %5")
            .arg(qs(m_arch.name), func, from, v,
                 legal.isEmpty() ? QStringLiteral("nothing") : legal.join(", "));
    }
    if (field == QLatin1String("at_func")) {
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
    if (field == QLatin1String("at_loop")) {
        QStringList legal = choices(next, index, field);
        if (legal.contains(v) && d.kind == DirectiveKind::StoreAt) {
            bool computedAt = false;
            for (const auto &o : spec.directives) {
                computedAt = computedAt || (o.kind == DirectiveKind::ComputeAt && o.func == d.func);
            }
            if (!computedAt) {
                return QStringLiteral(
                           "%1 has no compute_at; store_at needs one (at %2 or inside it)")
                    .arg(func, v);
            }
        }
        if (legal.contains(v)) {
            return {};
        }
        return QStringLiteral("'%1' is not a loop of %2 here; its loops at this point: %3")
            .arg(v, qs(d.at_func), legal.join(", "));
    }
    if (field == QLatin1String("tail")) {
        if (v.isEmpty() || v == QLatin1String("auto")) {
            return {};
        }
        QStringList legal = choices(next, index, field);
        if (legal.contains(v)) {
            return {};
        }
        if (!QStringList{"round_up", "guard_with_if", "shift_inwards", "predicate"}.contains(v)) {
            return QStringLiteral("unknown tail strategy '%1'; known: auto, round_up, "
                                  "guard_with_if, shift_inwards, "
                                  "predicate")
                .arg(v);
        }
        return QStringLiteral("tail %1 is not legal on %2 (%3); legal: auto, %4")
            .arg(v, stageName(func, d.stage),
                 d.stage < 0 ? QStringLiteral("a reduction loop")
                             : QStringLiteral("an update definition"),
                 legal.mid(1).join(", "));
    }
    FieldType type = FieldType::Text;
    for (const FieldInfo &fi : directiveFields(d.kind)) {
        if (fi.name == field) {
            type = fi.type;
        }
    }
    if (type == FieldType::Loop) {
        return checkLoopField(next, index, d, field, v);
    }
    if (type == FieldType::Loops) {
        QVector<LoopState> loops = loopsAt(spec, index, func, d.stage);
        QStringList seen;
        for (const auto &n : d.vars) {
            QString name = qs(n);
            if (find(loops, name) < 0) {
                return QStringLiteral("'%1' is not a loop of %2 here; its loops at this point: %3")
                    .arg(name, stageName(func, d.stage), names(loops).join(", "));
            }
            if (seen.contains(name)) {
                return QStringLiteral("'%1' is named twice").arg(name);
            }
            seen << name;
        }
        return d.vars.empty() ? QStringLiteral("reorder needs the loops, innermost first")
                              : QString();
    }
    if (type == FieldType::Integer) {
        return checkFactor(next, index, d, field, v);
    }
    if (type == FieldType::Text) { // a new loop name (split, tile, fuse)
        if (v.isEmpty()) {
            return QStringLiteral("a new loop needs a name");
        }
        QVector<LoopState> loops = loopsAt(spec, index, func, d.stage);
        size_t first = d.kind == DirectiveKind::Split ? 1 : 2;
        size_t count = d.kind == DirectiveKind::Fuse ? 1 : d.vars.size() - first;
        QStringList created, consumed;
        for (size_t i = first; i < first + count && i < d.vars.size(); ++i) {
            created << qs(d.vars[i]);
        }
        for (size_t i = 0; i < first && i < d.vars.size(); ++i) {
            consumed << qs(d.vars[i]);
        }
        if (created.count(v) > 1) {
            return QStringLiteral("'%1' names two new loops; give each its own name").arg(v);
        }
        if (find(loops, v) >= 0 && !consumed.contains(v)) {
            return QStringLiteral("'%1' is already a loop of %2 (its loops: %3)")
                .arg(v, stageName(func, d.stage), names(loops).join(", "));
        }
        return {};
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

bool LegalValues::defaultFor(const ScheduleSpec &spec, int index, DirectiveKind kind,
                             const QString &func, Directive *out, QString *why) const {
    auto fail = [&](const QString &m) {
        if (why) {
            *why = m;
        }
        return false;
    };
    const FuncInfo *f = funcInfo(func);
    Directive d = makeDirective(kind, func);
    d.vars.clear();
    d.factors.clear();
    // Loop names some at= refers to (anywhere: Halide resolves them when it lowers).
    QStringList referenced;
    for (const auto &o : spec.directives) {
        if (qs(o.at_func) == func) {
            referenced << qs(o.at_loop);
        }
    }
    QStringList allNames; // every loop name of the Func, at any point, in any stage
    for (int s = -1; f && s < int(f->updates.size()); ++s) {
        allNames += names(loopsAt(spec, int(spec.directives.size()), func, s));
        allNames += names(loopsAt(spec, index, func, s));
    }
    for (const auto &o : spec.directives) {
        if (qs(o.func) == func) {
            for (const auto &v : o.vars) {
                allNames << qs(v);
            }
        }
    }
    auto fresh = [&](const QString &base) {
        QString n = base;
        for (int i = 2; allNames.contains(n); ++i) {
            n = base + QString::number(i);
        }
        allNames << n;
        return n;
    };
    bool tensorized = isTensorized(spec, func);
    auto stages = [&] {
        QVector<int> s;
        for (int u = f ? int(f->updates.size()) - 1 : -1; u >= 0; --u) {
            s << u;
        }
        s << -1;
        return s;
    };
    // Loops of a stage no at= names, outermost first, optionally of known extent.
    auto freeLoops = [&](int stage) {
        QVector<LoopState> loops = loopsAt(spec, index, func, stage), l;
        for (int i = loops.size() - 1; i >= 0; --i) {
            if (!referenced.contains(loops[i].name)) {
                l << loops[i];
            }
        }
        return l;
    };
    const bool halideLoopKind = usesLoops(kind) || kind == DirectiveKind::Atomic;
    if (halideLoopKind && !f) {
        return fail(QStringLiteral("'%1' is an input; schedule the Funcs that read it").arg(func));
    }
    switch (kind) {
    case DirectiveKind::Split:
    case DirectiveKind::Tile: {
        // The factor is the loop's extent: a split that changes no iteration until you
        // pick a smaller factor from the divisors the drop-down offers.
        for (int s : stages()) {
            QVector<LoopState> loops = freeLoops(s);
            for (int i = 0; i < loops.size(); ++i) {
                const LoopState &x = loops[i];
                if (x.extent <= 0) {
                    continue;
                }
                d.stage = s;
                if (kind == DirectiveKind::Split) {
                    d.vars = {x.name.toStdString(), fresh(x.name + "o").toStdString(),
                              fresh(x.name + "i").toStdString()};
                    d.factors = {x.extent};
                    *out = d;
                    return true;
                }
                // tile: x and the loop just outside it (the inner of the two first)
                QVector<LoopState> all = loopsAt(spec, index, func, s);
                int p = find(all, x.name);
                if (p - 1 >= 0 && !referenced.contains(all[p - 1].name) && all[p - 1].extent > 0) {
                    const LoopState &in = all[p - 1];
                    d.vars = {in.name.toStdString(),
                              x.name.toStdString(),
                              fresh(in.name + "o").toStdString(),
                              fresh(x.name + "o").toStdString(),
                              fresh(in.name + "i").toStdString(),
                              fresh(x.name + "i").toStdString()};
                    d.factors = {in.extent, x.extent};
                    *out = d;
                    return true;
                }
            }
        }
        return fail(
            QStringLiteral("every loop of %1 of known extent is named by an at=").arg(func));
    }
    case DirectiveKind::Reorder: {
        // The loops in their order: legal, and the list to rearrange.
        int s = stages().first();
        d.stage = s;
        for (const auto &l : loopsAt(spec, index, func, s)) {
            d.vars.push_back(l.name.toStdString());
        }
        if (d.vars.size() < 2) {
            return fail(QStringLiteral("%1 has fewer than two loops").arg(func));
        }
        *out = d;
        return true;
    }
    case DirectiveKind::Fuse: {
        // Two adjacent pure loops no at= names, of a Func no unit maps.
        if (tensorized) {
            return fail(
                QStringLiteral("%1 is tensorized: the matrix unit takes its loops as they are")
                    .arg(func));
        }
        for (int s : stages()) {
            QVector<LoopState> loops = loopsAt(spec, index, func, s);
            for (int i = loops.size() - 2; i >= 0; --i) {
                const LoopState &in = loops[i], &o = loops[i + 1];
                if (!in.rvar && !o.rvar && !referenced.contains(in.name) &&
                    !referenced.contains(o.name)) {
                    d.stage = s;
                    d.vars = {in.name.toStdString(), o.name.toStdString(),
                              fresh(in.name + o.name).toStdString()};
                    *out = d;
                    return true;
                }
            }
        }
        return fail(
            QStringLiteral("%1 has no two adjacent pure loops that no at= names").arg(func));
    }
    case DirectiveKind::Vectorize:
    case DirectiveKind::Unroll:
    case DirectiveKind::Parallel: {
        if (tensorized) {
            return fail(
                QStringLiteral("%1 is tensorized: the matrix unit runs its loops").arg(func));
        }
        bool accumulated = false;
        for (const auto &o : spec.directives) {
            accumulated =
                accumulated || (o.kind == DirectiveKind::AccumulateIn && qs(o.func) == func);
        }
        for (int s : stages()) {
            QVector<LoopState> loops = freeLoops(s);
            if (kind == DirectiveKind::Vectorize) { // the innermost pure loop
                std::reverse(loops.begin(), loops.end());
            }
            for (const auto &l : loops) {
                if (l.rvar || (kind == DirectiveKind::Vectorize && !accumulated)) {
                    continue;
                }
                d.stage = s;
                d.vars = {l.name.toStdString()};
                if (kind == DirectiveKind::Parallel) {
                    if (l.name == l.origin) {
                        continue; // the cores take tiles: a loop a split or tile made
                    }
                    // across NPU cores: the most that divide the loop
                    int cores = 1;
                    for (int c = 1; c <= m_arch.chip.cores && l.extent > 0; ++c) {
                        cores = l.extent % c == 0 && c <= l.extent ? c : cores;
                    }
                    d.cores = cores;
                } else if (kind == DirectiveKind::Unroll) {
                    if (!l.constant || l.extent <= 0 || l.extent > 4) {
                        continue; // unroll only a short loop by default
                    }
                }
                *out = d;
                return true;
            }
        }
        if (kind == DirectiveKind::Vectorize) {
            return fail(QStringLiteral(
                            "%1's result is not kept in the vector unit's level (accumulate_in %2)")
                            .arg(func, qs(m_arch.vector.level)));
        }
        return fail(QStringLiteral("%1 has no pure loop that no at= names%2")
                        .arg(func, kind == DirectiveKind::Unroll
                                       ? QStringLiteral(" with at most 4 iterations")
                                   : kind == DirectiveKind::Parallel
                                       ? QStringLiteral(" made by a split or tile")
                                       : QString()));
    }
    case DirectiveKind::Atomic: {
        if (tensorized) {
            return fail(QStringLiteral("%1 is tensorized").arg(func));
        }
        if (f->updates.empty()) {
            return fail(QStringLiteral("%1 has no update definition").arg(func));
        }
        d.stage = 0;
        *out = d;
        return true;
    }
    case DirectiveKind::ComputeAt:
    case DirectiveKind::StoreAt: {
        if (!f || f->is_output) {
            return fail(
                QStringLiteral("%1 is an output (or an input); it is computed at root").arg(func));
        }
        // Where it is computed now, else the outermost loop of its first consumer.
        for (const auto &o : spec.directives) {
            if (qs(o.func) == func && o.kind == DirectiveKind::ComputeAt) {
                d.at_func = o.at_func;
                d.at_loop = o.at_loop;
            }
        }
        if (d.at_func.empty() && kind == DirectiveKind::StoreAt) {
            return fail(
                QStringLiteral(
                    "%1 has no compute_at; its storage goes at or outside where it is computed")
                    .arg(func));
        }
        if (d.at_func.empty()) {
            QStringList c = consumersOf(func);
            if (c.isEmpty()) {
                return fail(QStringLiteral("nothing reads %1").arg(func));
            }
            QStringList loops = atLoops(spec, index, c.first());
            if (loops.isEmpty()) {
                return fail(QStringLiteral("%1 has no loops").arg(c.first()));
            }
            d.at_func = c.first().toStdString();
            d.at_loop = loops.last().toStdString();
        }
        *out = d;
        return true;
    }
    case DirectiveKind::ComputeRoot:
    case DirectiveKind::ComputeInline: {
        if (!f) {
            return fail(QStringLiteral("'%1' is an input").arg(func));
        }
        if (kind == DirectiveKind::ComputeInline && (f->is_output || !f->updates.empty())) {
            return fail(QStringLiteral("%1 %2; it cannot be inlined")
                            .arg(func, f->is_output ? QStringLiteral("is an output")
                                                    : QStringLiteral("has an update")));
        }
        if (kind == DirectiveKind::ComputeRoot) {
            // At root its accumulator (if a level keeps it) must hold the whole Func.
            for (const auto &o : spec.directives) {
                if (o.kind == DirectiveKind::AccumulateIn && qs(o.func) == func) {
                    const auto *lv = m_arch.find_level(o.level);
                    qint64 bytes = f->bytes * std::max(1, o.buffers);
                    for (size_t dim = 0; dim < f->vars.size(); ++dim) {
                        QString cons = consumersOf(func).value(0);
                        const FuncInfo *c = funcInfo(cons);
                        qint64 e = c ? consumerSpan(*c, qs(f->vars[dim]), QString()) : -1;
                        bytes = e > 0 ? bytes * e : -1;
                        if (bytes < 0) {
                            break;
                        }
                    }
                    if (lv && bytes > qint64(lv->size_bytes)) {
                        return fail(
                            QStringLiteral(
                                "at root %1's accumulator needs %2 KiB in %3; %3 has %4 KiB")
                                .arg(func)
                                .arg(bytes / 1024)
                                .arg(qs(o.level))
                                .arg(lv->size_bytes / 1024));
                    }
                }
            }
        }
        *out = d;
        return true;
    }
    case DirectiveKind::Stage: {
        if (f && f->is_output) {
            return fail(QStringLiteral("%1 is an output").arg(func));
        }
        for (const auto &o : spec.directives) {
            if (f && o.kind == DirectiveKind::ComputeAt && qs(o.func) == func) {
                return fail(QStringLiteral("%1 is computed inside %2; stage copies an input or a "
                                           "Func computed at root")
                                .arg(func, qs(o.at_func)));
            }
        }
        QString from = levelOf(spec, index, func);
        QStringList to = reachableFrom(from);
        // The matrix unit's operand levels only for an operand of a tensorized product.
        if (to.isEmpty()) {
            return fail(QStringLiteral("no engine copies %1 on from %2").arg(func, from));
        }
        // At the loop its previous stage uses, else at root.
        QString atFunc, atLoop;
        for (int i = 0; i < index; ++i) {
            const auto &o = spec.directives[i];
            if (o.kind == DirectiveKind::Stage && qs(o.func) == func) {
                atFunc = qs(o.at_func);
                atLoop = qs(o.at_loop);
            }
        }
        if (atFunc.isEmpty()) {
            QStringList c = consumersOf(func);
            if (c.isEmpty()) {
                return fail(QStringLiteral("nothing reads %1").arg(func));
            }
            atFunc = c.first();
            atLoop = QStringLiteral("root");
        }
        // The staged footprint must fit the level: the whole source at root.
        qint64 bytes = 1;
        if (atLoop == QLatin1String("root")) {
            if (const auto *t = m_pipeline.find_input(func.toStdString())) {
                bytes = qint64(tessel::dtype_bytes(t->dtype));
                for (auto e : t->shape) {
                    bytes *= e;
                }
            }
        }
        QString level;
        for (const QString &l : to) {
            const auto *lv = m_arch.find_level(l.toStdString());
            if (lv && qint64(lv->size_bytes) >= bytes) {
                level = l;
                break;
            }
        }
        if (level.isEmpty()) {
            return fail(
                QStringLiteral("%1 (%2 KiB) does not fit any level an engine reaches from %3")
                    .arg(func)
                    .arg(bytes / 1024)
                    .arg(from));
        }
        d.level = level.toStdString();
        d.at_func = atFunc.toStdString();
        d.at_loop = atLoop.toStdString();
        *out = d;
        return true;
    }
    case DirectiveKind::AccumulateIn: {
        if (!f) {
            return fail(QStringLiteral("'%1' is an input").arg(func));
        }
        for (const auto &o : spec.directives) {
            if (o.kind == DirectiveKind::AccumulateIn && qs(o.func) == func) {
                return fail(
                    QStringLiteral("%1 already has accumulate_in (%2)").arg(func, qs(o.id)));
            }
        }
        bool computedAt = false;
        for (const auto &o : spec.directives) {
            computedAt = computedAt || (o.kind == DirectiveKind::ComputeAt && qs(o.func) == func);
        }
        if (!computedAt) {
            return fail(QStringLiteral("%1 needs a compute_at first (its accumulator is a tile)")
                            .arg(func));
        }
        QStringList levels = accumulatorLevels(spec, func);
        if (levels.isEmpty()) {
            return fail(QStringLiteral("no level can hold %1's result").arg(func));
        }
        d.level = levels.first().toStdString();
        d.buffers = f->updates.empty() ? 2 : 1;
        *out = d;
        return true;
    }
    case DirectiveKind::Tensorize: {
        if (!f) {
            return fail(QStringLiteral("'%1' is an input").arg(func));
        }
        int update = -1;
        for (size_t u = 0; u < f->updates.size(); ++u) {
            if (f->updates[u].sum_of_products && update < 0) {
                update = int(u);
            }
        }
        if (update < 0) {
            return fail(QStringLiteral("%1 has no update that is a sum of products").arg(func));
        }
        if (tensorized) {
            return fail(QStringLiteral("%1 is already tensorized").arg(func));
        }
        // The matrix unit reads its operands from its levels and writes its result level.
        bool inC = false;
        for (const auto &o : spec.directives) {
            inC = inC || (o.kind == DirectiveKind::AccumulateIn && qs(o.func) == func &&
                          o.level == m_arch.matrix.c_level);
        }
        const DefInfo &u = f->updates[update];
        QStringList missing;
        if (!inC) {
            missing << QStringLiteral("accumulate_in(%1, %2)").arg(func, qs(m_arch.matrix.c_level));
        }
        QString a = qs(u.mul_a), b = qs(u.mul_b);
        if (levelOf(spec, index, a) != qs(m_arch.matrix.a_level)) {
            missing << QStringLiteral("stage(%1, %2)").arg(a, qs(m_arch.matrix.a_level));
        }
        if (levelOf(spec, index, b) != qs(m_arch.matrix.b_level)) {
            missing << QStringLiteral("stage(%1, %2)").arg(b, qs(m_arch.matrix.b_level));
        }
        if (!missing.isEmpty()) {
            return fail(
                QStringLiteral("the matrix unit needs %1 before it").arg(missing.join(", ")));
        }
        d.stage = update;
        d.unit = "matrix";
        *out = d;
        return true;
    }
    case DirectiveKind::Layout:
        d.format = "ND"; // the layout every buffer has unless told otherwise
        *out = d;
        return true;
    }
    return fail(QStringLiteral("unknown kind"));
}

} // namespace tessel::ide
