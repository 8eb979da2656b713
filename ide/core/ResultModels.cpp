#include "ide/core/ResultModels.h"

#include <QHash>

#include "npu_target/isa/InstrTable.h"

#include <QRegularExpression>

#include <algorithm>

namespace tessel::ide {

namespace {
QString qs(const std::string &s) {
    return QString::fromStdString(s);
}

/** A Func or buffer name without the "$N" suffix Halide adds when a process builds a pipeline again. */
QString baseName(const std::string &s) {
    QString n = qs(s);
    int dollar = n.indexOf(QLatin1Char('$'));
    return dollar > 0 ? n.left(dollar) : n;
}

QVector<DiagnosticsModel::Row> rowsOf(const std::vector<tessel::Diagnostic> &ds, const QString &source) {
    QVector<DiagnosticsModel::Row> rows;
    // The backend's overflow message names its directive as "[directive ID]",
    // which the facade does not attribute (directive_id stays empty): recover it.
    static const QRegularExpression bracketed(QStringLiteral("\\[directive ([^\\]\\s]+)\\]"));
    for (const auto &d : ds) {
        QString id = qs(d.directive_id);
        if (id.isEmpty()) {
            id = bracketed.match(qs(d.message)).captured(1);
        }
        rows.append({d.severity, source, id, qs(d.message)});
    }
    return rows;
}
} // namespace

QString formatBytes(qint64 bytes) {
    if (bytes >= (qint64(1) << 20) && bytes % (qint64(1) << 20) == 0) {
        return QStringLiteral("%1 MiB").arg(bytes >> 20);
    }
    if (bytes >= (qint64(1) << 20)) {
        return QStringLiteral("%1 MiB").arg(double(bytes) / (1 << 20), 0, 'f', 1);
    }
    if (bytes >= 1024 && bytes % 1024 == 0) {
        return QStringLiteral("%1 KiB").arg(bytes / 1024);
    }
    if (bytes >= 1024) {
        return QStringLiteral("%1 KiB").arg(double(bytes) / 1024, 0, 'f', 1);
    }
    return QStringLiteral("%1 B").arg(bytes);
}

// ---- DiagnosticsModel ------------------------------------------------------

void DiagnosticsModel::setCompile(const std::shared_ptr<const tessel::CompileResult> &r) {
    m_compile = r ? rowsOf(r->diagnostics, QStringLiteral("compile")) : QVector<Row>{};
    m_run.clear(); // a new compile makes the old run's messages stale
    rebuild();
}

void DiagnosticsModel::setRun(const std::shared_ptr<const tessel::RunReport> &r) {
    m_run.clear();
    if (r) {
        // The run compiles again: keep only what the compile did not already say.
        for (const Row &row : rowsOf(r->diagnostics, QStringLiteral("run"))) {
            bool dup = std::any_of(m_compile.begin(), m_compile.end(),
                                   [&](const Row &c) { return c.message == row.message; });
            if (!dup) {
                m_run.append(row);
            }
        }
        if (!r->verified && r->diagnostics.empty()) {
            m_run.append({tessel::Diagnostic::Error, QStringLiteral("run"), QString(),
                          QStringLiteral("the NPU result differs from Halide's CPU result: ") + qs(r->comparison)});
        }
    }
    rebuild();
}

void DiagnosticsModel::setEditorMessage(const QString &message) {
    m_editor = message;
    rebuild();
}

void DiagnosticsModel::rebuild() {
    beginResetModel();
    m_rows.clear();
    if (!m_editor.isEmpty()) {
        m_rows.append({tessel::Diagnostic::Error, QStringLiteral("editor"), QString(), m_editor});
    }
    m_rows += m_compile;
    m_rows += m_run;
    endResetModel();
}

int DiagnosticsModel::errorCount() const {
    return int(std::count_if(m_rows.begin(), m_rows.end(),
                             [](const Row &r) { return r.severity == tessel::Diagnostic::Error; }));
}

int DiagnosticsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int DiagnosticsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : 4;
}

QVariant DiagnosticsModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size()) {
        return {};
    }
    const Row &r = m_rows[index.row()];
    if (role == DirectiveRole) {
        return r.directive;
    }
    if (role == SeverityRole) {
        return int(r.severity);
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case 0:
        return QString::fromLatin1(tessel::severity_name(r.severity));
    case 1:
        return r.source;
    case 2:
        return r.directive;
    default:
        return r.message;
    }
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char *names[] = {"severity", "from", "directive", "message"};
    return section >= 0 && section < 4 ? QString::fromLatin1(names[section]) : QVariant();
}

// ---- LifetimeModel ---------------------------------------------------------

void LifetimeModel::setResult(const std::shared_ptr<const tessel::CompileResult> &r,
                              const QVector<QPair<QString, qint64>> &capacities) {
    beginResetModel();
    m_result = r;
    m_levels.clear();
    m_capacity.clear();
    m_cycles.clear(); // they belong to the previous compile's run
    m_runCycles = 0;
    for (const auto &c : capacities) {
        m_capacity[c.first] = c.second;
    }
    if (r) {
        for (const auto &c : capacities) {
            bool used = std::any_of(r->lifetimes.begin(), r->lifetimes.end(),
                                    [&](const tessel::BufferLifetime &l) { return qs(l.level) == c.first; });
            if (used) {
                m_levels << c.first;
            }
        }
        for (const auto &l : r->lifetimes) { // levels the arch does not list (should not happen)
            if (!m_levels.contains(qs(l.level))) {
                m_levels << qs(l.level);
            }
        }
    }
    endResetModel();
}

void LifetimeModel::setRun(const std::shared_ptr<const tessel::RunReport> &r, const tessel::ArchSpec &arch) {
    beginResetModel();
    m_cycles.clear();
    m_runCycles = 0;
    if (r && r->sim && m_result) {
        m_cycles = ide::cycleLifetimes(m_result->lifetimes, *r->sim, r->provenance, arch);
        m_runCycles = qint64(r->sim->cycles);
    }
    endResetModel();
}

const std::vector<tessel::BufferLifetime> &LifetimeModel::lifetimes() const {
    static const std::vector<tessel::BufferLifetime> none;
    return m_result ? m_result->lifetimes : none;
}

qint64 LifetimeModel::capacity(const QString &level) const {
    return m_capacity.value(level, 0);
}

qint64 LifetimeModel::highWater(const QString &level) const {
    qint64 h = 0;
    for (const auto &l : lifetimes()) {
        if (qs(l.level) == level) {
            h = std::max<qint64>(h, l.offset + l.bytes * std::max(1, l.buffers));
        }
    }
    return h;
}

qint64 LifetimeModel::orderLength() const {
    qint64 n = 0;
    for (const auto &l : lifetimes()) {
        n = std::max<qint64>(n, l.last + 1);
    }
    return n;
}

int LifetimeModel::overflowCount() const {
    const auto &ls = lifetimes();
    return int(std::count_if(ls.begin(), ls.end(), [](const tessel::BufferLifetime &l) { return l.overflow; }));
}

int LifetimeModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(lifetimes().size());
}

int LifetimeModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : 11;
}

QVariant LifetimeModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto &l = lifetimes()[index.row()];
    if (role == DirectiveRole) {
        return qs(l.directive);
    }
    if (role == OverflowRole) {
        return l.overflow;
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case 0: return qs(l.name);
    case 1: return qs(l.level);
    case 2: return qlonglong(l.offset);
    case 3: return qlonglong(l.bytes);
    case 4: return l.buffers;
    case 5: return qlonglong(l.first);
    case 6: return qlonglong(l.last);
    case 7: return qs(l.directive);
    case 8: return l.overflow ? QStringLiteral("OVERFLOW") : QString();
    case 9:
    case 10: {
        if (size_t(index.row()) >= m_cycles.size() || !m_cycles[index.row()].used) {
            return {};
        }
        const CycleLifetime &c = m_cycles[index.row()];
        return qlonglong(index.column() == 9 ? c.first : c.last);
    }
    default: return {};
    }
}

QVariant LifetimeModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char *names[] = {"buffer", "level", "offset", "bytes", "copies", "first", "last", "directive",
                                  "overflow", "first cycle", "last cycle"};
    return section >= 0 && section < 11 ? QString::fromLatin1(names[section]) : QVariant();
}

// ---- TimelineModel ---------------------------------------------------------

void TimelineModel::setReport(const std::shared_ptr<const tessel::RunReport> &r) {
    beginResetModel();
    m_report = r;
    m_pipes.clear();
    m_byPipe.clear();
    if (r && r->sim) {
        static const QStringList order = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"};
        QStringList seen;
        QHash<quint16, int> seenId; // pipe name id -> index in seen
        for (const auto &e : r->sim->trace) {
            if (!seenId.contains(e.pipe.id())) {
                seenId.insert(e.pipe.id(), int(seen.size()));
                seen << qs(e.pipe);
            }
        }
        for (const QString &p : order) {
            if (seen.contains(p)) {
                m_pipes << p;
            }
        }
        for (const QString &p : seen) {
            if (!m_pipes.contains(p)) {
                m_pipes << p;
            }
        }
        QVector<int> row(seen.size());
        for (int k = 0; k < seen.size(); ++k) {
            row[k] = int(m_pipes.indexOf(seen[k]));
        }
        m_byPipe.resize(m_pipes.size());
        const auto &trace = r->sim->trace;
        for (int i = 0; i < int(trace.size()); ++i) {
            m_byPipe[row[seenId.value(trace[i].pipe.id())]].append(i);
        }
        for (auto &v : m_byPipe) {
            std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return trace[a].start < trace[b].start; });
        }
    }
    endResetModel();
}

QString TimelineModel::traceCutNote() const {
    return m_report && m_report->sim ? qs(m_report->sim->trace_cut_note()) : QString();
}

qint64 TimelineModel::traceCutCycle() const {
    return m_report && m_report->sim && m_report->sim->trace_truncated ? qint64(m_report->sim->trace_cut_cycle) : -1;
}

const tessel::sim::TraceEvent &TimelineModel::event(int i) const {
    return m_report->sim->trace[i];
}

QString TimelineModel::directiveOf(int i) const {
    size_t p = event(i).prov;
    return p < m_report->provenance.size() ? qs(m_report->provenance[p].directive_id) : QString();
}

int TimelineModel::eventAt(int p, double time, double slack) const {
    if (p < 0 || p >= m_byPipe.size()) {
        return -1;
    }
    const QVector<int> &v = m_byPipe[p];
    int best = -1;
    double bestDist = slack + 1e-9;
    // Events are sorted by start: look at those starting before time + slack.
    auto it = std::upper_bound(v.begin(), v.end(), time + slack, [&](double t, int i) { return t < double(event(i).start); });
    for (auto j = it; j != v.begin();) {
        --j;
        const auto &e = event(*j);
        double d = time < e.start ? e.start - time : time >= e.end ? time - e.end : 0;
        if (d < bestDist) {
            best = *j;
            bestDist = d;
        }
        if (double(e.end) + slack < time) { // a pipe runs in order: earlier events end earlier
            break;
        }
    }
    return best;
}

qint64 TimelineModel::cycles() const {
    return m_report && m_report->sim ? qint64(m_report->sim->cycles) : 0;
}

qint64 TimelineModel::idleCycles(int p) const {
    qint64 busyEnd = 0, busy = 0;
    for (int i : m_byPipe.value(p)) {
        const auto &e = event(i);
        qint64 s = std::max<qint64>(qint64(e.start), busyEnd);
        if (qint64(e.end) > s) {
            busy += qint64(e.end) - s;
        }
        busyEnd = std::max<qint64>(busyEnd, qint64(e.end));
    }
    return cycles() - busy;
}

int TimelineModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() || !m_report || !m_report->sim ? 0 : int(m_report->sim->trace.size());
}

int TimelineModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : 8;
}

QVariant TimelineModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto &e = event(index.row());
    if (role == DirectiveRole) {
        return directiveOf(index.row());
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case 0: return qs(e.pipe);
    case 1: return qulonglong(e.start);
    case 2: return qulonglong(e.end);
    case 3: return QString::fromLatin1(tessel::isa::op_info(e.op).mnemonic);
    case 4: return qlonglong(e.bytes);
    case 5: return qs(e.src);
    case 6: return qs(e.dst);
    default: return directiveOf(index.row());
    }
}

QVariant TimelineModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char *names[] = {"pipe", "start", "end", "op", "bytes", "src", "dst", "directive"};
    return section >= 0 && section < 8 ? QString::fromLatin1(names[section]) : QVariant();
}

// ---- MetricsModel ----------------------------------------------------------

void MetricsModel::setCompile(const std::shared_ptr<const tessel::CompileResult> &r) {
    m_compile = r;
    m_report.reset();
    rebuild();
}

void MetricsModel::setReport(const std::shared_ptr<const tessel::RunReport> &r) {
    m_report = r;
    rebuild();
}

void MetricsModel::rebuild() {
    beginResetModel();
    m_rows.clear();
    auto add = [this](const QString &k, const QString &v) { m_rows.append({k, v}); };
    if (m_compile) {
        add(QStringLiteral("compile"), m_compile->ok ? QStringLiteral("ok") : QStringLiteral("failed"));
        add(QStringLiteral("compile ms"), QString::number(m_compile->compile_ms, 'f', 1));
        const auto &rf = m_compile->roofline;
        add(QStringLiteral("physical limit (cycles)"), QString::number(qint64(rf.t_phys_cycles)));
        add(QStringLiteral("binding resource"), qs(rf.binding_resource));
        for (const auto &t : rf.terms) {
            add(QStringLiteral("limit ") + qs(t.resource), QString::number(qint64(t.cycles)));
        }
        for (const auto &[level, bytes] : m_compile->level_peak_bytes) {
            add(QStringLiteral("peak ") + qs(level), formatBytes(bytes));
        }
    }
    if (m_report) {
        add(QStringLiteral("verified"), m_report->verified ? QStringLiteral("yes") : QStringLiteral("no"));
        if (m_report->cycles) {
            add(QStringLiteral("cycles"), QString::number(*m_report->cycles));
        }
        if (m_report->efficiency) {
            add(QStringLiteral("efficiency"), QString::number(*m_report->efficiency, 'f', 3));
        }
        if (m_report->sim) {
            add(QStringLiteral("instructions"), QString::number(m_report->sim->instructions));
            for (const auto &p : m_report->sim->pipes) {
                add(QStringLiteral("busy % ") + qs(p.pipe), QString::number(p.busy_pct, 'f', 1));
            }
            for (const auto &e : m_report->sim->edges) {
                add(QStringLiteral("bytes %1 %2->%3").arg(qs(e.engine), qs(e.src), qs(e.dst)),
                    QStringLiteral("%1 (%2 B/cycle)").arg(e.bytes).arg(e.achieved_bytes_per_cycle, 0, 'f', 1));
            }
        }
        // Speed of light: the share of the run each resource needs at this schedule's traffic.
        if (m_report->roofline && m_report->roofline->valid) {
            const auto &rl = *m_report->roofline;
            add(QStringLiteral("binds"), qs(rl.binding));
            for (const auto &roof : rl.roofs) {
                QString v = QStringLiteral("%1% of the run").arg(100 * roof.utilisation, 0, 'f', 1);
                if (roof.memory) {
                    v += QStringLiteral(", %1 bytes, %2 ops/byte").arg(roof.bytes).arg(roof.intensity, 0, 'g', 4);
                }
                add(QStringLiteral("speed of light ") + qs(roof.name), v);
            }
            if (!rl.hint.empty()) {
                add(QStringLiteral("hint"), qs(rl.hint));
            }
        }
    }
    endResetModel();
}

QString MetricsModel::value(const QString &key) const {
    for (const auto &r : m_rows) {
        if (r.first == key) {
            return r.second;
        }
    }
    return {};
}

int MetricsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int MetricsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : 2;
}

QVariant MetricsModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= m_rows.size() || role != Qt::DisplayRole) {
        return {};
    }
    return index.column() == 0 ? m_rows[index.row()].first : m_rows[index.row()].second;
}

QVariant MetricsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    return section == 0 ? QStringLiteral("metric") : QStringLiteral("value");
}

// ---- TilingModel -----------------------------------------------------------

void TilingModel::setResult(const std::shared_ptr<const tessel::CompileResult> &r, const tessel::ScheduleSpec &spec) {
    beginResetModel();
    m_result = r;
    m_operands.clear();
    m_tile = {1, 1};
    m_tileDirective.clear();
    m_output.clear();
    m_outerX.clear();
    m_outerY.clear();
    if (r) {
        for (const auto &a : r->program.args) {
            Operand o{baseName(a.name), {}, a.is_output};
            for (int64_t e : a.shape) {
                o.shape << e;
            }
            m_operands << o;
        }
        for (const Operand &o : m_operands) {
            if (!o.output || o.shape.isEmpty()) {
                continue;
            }
            m_tile = {o.shape[0], o.shape.size() > 1 ? o.shape[1] : 1};
            for (const auto &d : spec.directives) {
                if (qs(d.func) == o.name && d.kind == tessel::DirectiveKind::Tile && d.factors.size() == 2) {
                    m_tile = {std::min<qint64>(d.factors[0], o.shape[0]),
                              std::min<qint64>(d.factors[1], o.shape.size() > 1 ? o.shape[1] : 1)};
                    m_tileDirective = qs(d.id);
                    m_outerX = d.vars.size() == 6 ? qs(d.vars[2]) : QString();
                    m_outerY = d.vars.size() == 6 ? qs(d.vars[3]) : QString();
                } else if (qs(d.func) == o.name && d.kind == tessel::DirectiveKind::Split && d.factors.size() == 1 &&
                           !d.vars.empty() && m_tileDirective.isEmpty()) {
                    m_tile.first = std::min<qint64>(d.factors[0], o.shape[0]);
                    m_tileDirective = qs(d.id);
                    m_outerX = d.vars.size() >= 2 ? qs(d.vars[1]) : QString();
                }
            }
            m_output = o.name;
            // Where the output's tile buffer is written back is the tile itself
            // (whichever loop a split names): its extents are the tile's size.
            for (const auto &b : r->tiling.buffers) {
                if (baseName(b.origin) == m_output && !b.extents.empty() && b.extents.size() == b.origin_base.size()) {
                    m_tile = {std::min<qint64>(b.extents[0], o.shape[0]),
                              b.extents.size() > 1 ? std::min<qint64>(b.extents[1], o.shape.size() > 1 ? o.shape[1] : 1)
                                                   : 1};
                    break;
                }
            }
            break;
        }
    }
    endResetModel();
}

const std::vector<tessel::TiledBuffer> &TilingModel::buffers() const {
    static const std::vector<tessel::TiledBuffer> none;
    return m_result ? m_result->tiling.buffers : none;
}

QVector<int> TilingModel::footprintsOf(const QString &operand) const {
    QVector<int> out;
    const auto &bs = buffers();
    for (int i = 0; i < int(bs.size()); ++i) {
        if (baseName(bs[i].source) == operand) {
            out << i;
        }
    }
    // Staging chains wrap the previous copy, so the longer name is the inner level.
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return bs[a].name.size() < bs[b].name.size(); });
    return out;
}

QMap<QString, qint64> TilingModel::tileLoopValues(int column, int row) const {
    QMap<QString, qint64> values;
    const qint64 target[2] = {column * m_tile.first, row * m_tile.second};
    for (const auto &b : buffers()) {
        if (b.origin.empty() || baseName(b.origin) != m_output || b.origin_base.empty()) {
            continue;
        }
        // The output's tile buffer: solve base[d] + sum coeff[d][l] * l = tile origin,
        // the largest step first (a loop split twice has two steps in one dimension).
        for (size_t d = 0; d < std::min<size_t>(2, b.origin_base.size()); ++d) {
            QVector<QPair<qint64, int>> steps;
            for (size_t l = 0; l < b.loops.size(); ++l) {
                if (b.origin_coeffs[d][l] != 0) {
                    steps.append({b.origin_coeffs[d][l], int(l)});
                }
            }
            std::sort(steps.begin(), steps.end(), [](auto a, auto c) { return std::abs(a.first) > std::abs(c.first); });
            qint64 rest = target[d] - b.origin_base[d];
            for (const auto &[step, l] : steps) {
                values[qs(b.loops[l].first)] = rest / step;
                rest -= rest / step * step;
            }
        }
        return values;
    }
    // No write-back to place it: the tiling directive's outer loops count tiles.
    for (const auto &b : buffers()) {
        for (const auto &l : b.loops) {
            QString name = qs(l.first);
            if (baseName(name.section(QLatin1Char('.'), 0, 0).toStdString()) != m_output) {
                continue;
            }
            if (!m_outerX.isEmpty() && name.endsWith(QLatin1Char('.') + m_outerX)) {
                values[name] = column;
            } else if (!m_outerY.isEmpty() && name.endsWith(QLatin1Char('.') + m_outerY)) {
                values[name] = row;
            }
        }
    }
    return values;
}

TilingModel::Footprint TilingModel::footprint(int index, int column, int row) const {
    Footprint f;
    if (index < 0 || index >= int(buffers().size())) {
        return f;
    }
    const auto &b = buffers()[size_t(index)];
    const size_t rank = b.origin_base.size();
    if (b.origin.empty() || rank == 0 || b.extents.size() != rank) {
        return f;
    }
    QMap<QString, qint64> fixed = tileLoopValues(column, row);
    qint64 lo[2] = {0, 0}, hi[2] = {0, 0}, size[2] = {1, 1};
    for (size_t d = 0; d < std::min<size_t>(2, rank); ++d) {
        lo[d] = hi[d] = b.origin_base[d];
        size[d] = b.extents[d];
    }
    for (size_t l = 0; l < b.loops.size(); ++l) {
        QString name = qs(b.loops[l].first);
        bool isFixed = fixed.contains(name);
        qint64 trips = std::max<int64_t>(1, b.loops[l].second);
        bool moves = false;
        for (size_t d = 0; d < std::min<size_t>(2, rank); ++d) {
            qint64 k = b.origin_coeffs[d][l];
            if (isFixed) {
                lo[d] += k * fixed[name];
                hi[d] += k * fixed[name];
            } else if (k != 0) {
                moves = true;
                (k > 0 ? hi[d] : lo[d]) += k * (trips - 1); // loops start at 0: the first iteration is at lo/hi
            }
        }
        if (!isFixed && moves) {
            QString shortName = name.mid(name.lastIndexOf(QLatin1Char('.')) + 1);
            f.freeLoops << QStringLiteral("%1 x%2").arg(shortName).arg(b.loops[l].second);
        }
    }
    f.placed = true;
    // The first iteration of the free loops is where every free term is 0.
    qint64 first[2] = {b.origin_base[0], rank > 1 ? b.origin_base[1] : 0};
    for (size_t d = 0; d < std::min<size_t>(2, rank); ++d) {
        for (size_t l = 0; l < b.loops.size(); ++l) {
            QString name = qs(b.loops[l].first);
            if (fixed.contains(name)) {
                first[d] += b.origin_coeffs[d][l] * fixed[name];
            }
        }
    }
    f.first = {first[0], first[1], size[0], size[1]};
    f.span = {lo[0], lo[1], hi[0] - lo[0] + size[0], hi[1] - lo[1] + size[1]};
    return f;
}

int TilingModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(buffers().size());
}

int TilingModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : 7;
}

QVariant TilingModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto &b = buffers()[index.row()];
    if (role == DirectiveRole) {
        return qs(b.directive);
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case 0: return qs(b.name);
    case 1: return qs(b.source);
    case 2: return qs(b.level);
    case 3: {
        QStringList e;
        for (int64_t x : b.extents) {
            e << QString::number(x);
        }
        return e.join(QStringLiteral(" x "));
    }
    case 4: return qlonglong(b.bytes);
    case 5: return b.buffers;
    default: {
        QStringList l;
        for (const auto &[name, trips] : b.loops) {
            l << QStringLiteral("%1(%2)").arg(qs(name)).arg(trips);
        }
        return l.join(QStringLiteral(" > "));
    }
    }
}

QVariant TilingModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char *names[] = {"buffer", "holds", "level", "extents", "bytes", "copies", "loops"};
    return section >= 0 && section < 7 ? QString::fromLatin1(names[section]) : QVariant();
}

} // namespace tessel::ide
