#include "ide/core/ScheduleModel.h"

#include "npu_target/common/Error.h"

#include <QColor>

#include <QUndoCommand>
#include <QUndoStack>

namespace tessel::ide {

namespace {

/** One undo step: the schedule before and after. */
class SetScheduleCommand : public QUndoCommand {
public:
    SetScheduleCommand(ScheduleModel *m, tessel::ScheduleSpec before, tessel::ScheduleSpec after, const QString &text)
        : QUndoCommand(text), m_model(m), m_before(std::move(before)), m_after(std::move(after)) {}
    void undo() override { m_model->applySpec(m_before); }
    void redo() override { m_model->applySpec(m_after); }

private:
    ScheduleModel *m_model;
    tessel::ScheduleSpec m_before, m_after;
};

QString argsSummary(const tessel::Directive &d) {
    QStringList parts;
    for (const FieldInfo &f : directiveFields(d.kind)) {
        if (f.name == QLatin1String("stage")) {
            continue;
        }
        QString v = fieldValue(d, f.name);
        if (!v.isEmpty()) {
            parts << f.name + QLatin1Char('=') + v;
        }
    }
    return parts.join(QStringLiteral("  "));
}

} // namespace

ScheduleModel::ScheduleModel(QUndoStack *undo, QObject *parent) : QAbstractTableModel(parent), m_undo(undo) {}

int ScheduleModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_spec.directives.size());
}

int ScheduleModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ScheduleModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const tessel::Directive &d = m_spec.directives[index.row()];
    if (index.column() == ArgsColumn && (role == Qt::ToolTipRole || role == Qt::ForegroundRole)) {
        // A directive with an argument the legal values refuse: its arguments red, the reasons as tooltip.
        if (m_problems.size() != rowCount()) {
            m_problems.clear();
            for (int r = 0; r < rowCount(); ++r) {
                m_problems << m_legal.problems(m_spec, r);
            }
        }
        const QMap<QString, QString> &p = m_problems[index.row()];
        if (role == Qt::ForegroundRole) {
            return p.isEmpty() ? QVariant() : QVariant(QColor(Qt::red));
        }
        QStringList lines;
        for (auto it = p.begin(); it != p.end(); ++it) {
            lines << it.key() + QStringLiteral(": ") + it.value();
        }
        return lines.join(QLatin1Char('\n'));
    }
    if (role != Qt::DisplayRole && role != Qt::EditRole) {
        return {};
    }
    switch (index.column()) {
    case IdColumn:
        return QString::fromStdString(d.id);
    case KindColumn:
        return QString::fromLatin1(tessel::kind_name(d.kind));
    case FuncColumn:
        return QString::fromStdString(d.func);
    case StageColumn:
        return d.stage < 0 ? (role == Qt::EditRole ? QStringLiteral("-1") : QString()) : QString::number(d.stage);
    case ArgsColumn:
        return argsSummary(d);
    }
    return {};
}

QVariant ScheduleModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char *names[] = {"id", "kind", "func", "stage", "arguments"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

Qt::ItemFlags ScheduleModel::flags(const QModelIndex &index) const {
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (index.isValid() && index.column() != ArgsColumn) {
        f |= Qt::ItemIsEditable;
    }
    return f;
}

bool ScheduleModel::setData(const QModelIndex &index, const QVariant &value, int role) {
    if (role != Qt::EditRole || !index.isValid()) {
        return false;
    }
    static const char *fields[] = {"id", "kind", "func", "stage"};
    if (index.column() >= ArgsColumn) {
        return false;
    }
    return setField(index.row(), QString::fromLatin1(fields[index.column()]), value.toString());
}

QString ScheduleModel::json() const {
    return QString::fromStdString(tessel::schedule_to_json(m_spec));
}

int ScheduleModel::rowOf(const QString &id) const {
    for (size_t i = 0; i < m_spec.directives.size(); ++i) {
        if (QString::fromStdString(m_spec.directives[i].id) == id) {
            return int(i);
        }
    }
    return -1;
}

void ScheduleModel::applySpec(const tessel::ScheduleSpec &spec) {
    beginResetModel();
    m_spec = spec;
    m_problems.clear();
    endResetModel();
    Q_EMIT scheduleChanged();
}

void ScheduleModel::push(tessel::ScheduleSpec next, const QString &what) {
    if (next == m_spec) {
        return;
    }
    if (!m_undo) {
        applySpec(next);
        return;
    }
    m_undo->push(new SetScheduleCommand(this, m_spec, std::move(next), what));
}

void ScheduleModel::setSchedule(const tessel::ScheduleSpec &spec, const QString &what) {
    push(spec, what);
}

bool ScheduleModel::setScheduleJson(const QString &json, QString *error) {
    try {
        push(tessel::parse_schedule(json.toStdString(), "JSON tab"), QStringLiteral("edit JSON"));
        return true;
    } catch (const tessel::UserError &e) {
        if (error) {
            *error = QString::fromStdString(e.what());
        }
        return false;
    }
}

bool ScheduleModel::setField(int row, const QString &field, const QString &value, QString *error) {
    if (row < 0 || row >= rowCount()) {
        return false;
    }
    tessel::ScheduleSpec next = m_spec;
    tessel::Directive &d = next.directives[row];
    tessel::DirectiveKind kind;
    if (field == QLatin1String("kind") && m_legal.valid() && kindFromName(value.trimmed(), &kind) &&
        kind != d.kind) {
        // Another kind in its place: its arguments from the legal values, as Add makes them.
        tessel::ScheduleSpec without = m_spec;
        without.directives.erase(without.directives.begin() + row);
        tessel::Directive fresh;
        if (!m_legal.makeDefault(without, row, kind, QString::fromStdString(d.func), &fresh, error)) {
            return false;
        }
        fresh.id = d.id;
        d = fresh;
    } else if (!setFieldValue(d, field, value, error)) {
        return false;
    }
    if (field == QLatin1String("id")) {
        for (size_t i = 0; i < next.directives.size(); ++i) {
            if (int(i) != row && next.directives[i].id == d.id) {
                if (error) {
                    *error = QStringLiteral("id '%1' is already used by directive #%2").arg(value).arg(i);
                }
                return false;
            }
        }
    }
    push(std::move(next), QStringLiteral("set %1 of %2 to %3").arg(field, QString::fromStdString(d.id), value));
    return true;
}

bool ScheduleModel::templateFor(int row, tessel::DirectiveKind kind, const QString &func, tessel::Directive *out,
                                QString *why) const {
    row = std::clamp(row, 0, int(m_spec.directives.size()));
    if (!m_legal.valid()) {
        *out = makeDirective(kind, func);
        return true;
    }
    return m_legal.makeDefault(m_spec, row, kind, func, out, why);
}

void ScheduleModel::insertDirective(int row, tessel::DirectiveKind kind, const QString &func) {
    tessel::ScheduleSpec next = m_spec;
    row = std::clamp(row, 0, int(next.directives.size()));
    tessel::Directive d;
    if (!templateFor(row, kind, func, &d)) {
        return;
    }
    next.directives.insert(next.directives.begin() + row, d);
    try {
        next.assign_ids();
    } catch (const tessel::UserError &) {
        return;
    }
    push(std::move(next), QStringLiteral("add %1").arg(QLatin1String(tessel::kind_name(kind))));
}

void ScheduleModel::removeDirective(int row) {
    if (row < 0 || row >= rowCount()) {
        return;
    }
    tessel::ScheduleSpec next = m_spec;
    QString id = QString::fromStdString(next.directives[row].id);
    next.directives.erase(next.directives.begin() + row);
    push(std::move(next), QStringLiteral("remove %1").arg(id));
}

void ScheduleModel::moveDirective(int from, int to) {
    if (from < 0 || from >= rowCount() || to < 0 || to >= rowCount() || from == to) {
        return;
    }
    tessel::ScheduleSpec next = m_spec;
    tessel::Directive d = next.directives[from];
    next.directives.erase(next.directives.begin() + from);
    next.directives.insert(next.directives.begin() + to, d);
    push(std::move(next), QStringLiteral("move %1").arg(QString::fromStdString(d.id)));
}

QString ScheduleModel::check(int row, const QString &field, const QString &value) const {
    return m_legal.check(m_spec, row, field, value);
}

QStringList ScheduleModel::choices(int row, const QString &field) const {
    if (row < 0 || row >= rowCount()) {
        return {};
    }
    if (m_legal.valid() && field != QLatin1String("id")) {
        return m_legal.choices(m_spec, row, field);
    }
    const tessel::Directive &d = m_spec.directives[row];
    if (field == QLatin1String("kind")) {
        QStringList l;
        for (const auto &k : tessel::kind_names()) {
            l << QString::fromStdString(k);
        }
        return l;
    }
    if (field == QLatin1String("func") || field == QLatin1String("at_func")) {
        return m_funcs;
    }
    FieldType type = FieldType::Text;
    for (const FieldInfo &f : directiveFields(d.kind)) {
        if (f.name == field) {
            type = f.type;
        }
    }
    switch (type) {
    case FieldType::Level:
        return m_levels;
    case FieldType::Tail:
        return {QString(), "round_up", "guard_with_if", "shift_inwards", "predicate"};
    case FieldType::Unit:
        return {"matrix", "fix"};
    case FieldType::Format:
        return {"ND", "NZ", "ZN", "ZZ"};
    case FieldType::Loop:
    case FieldType::Loops: {
        QString func = QString::fromStdString(field == QLatin1String("at_loop") ? d.at_func : d.func);
        QStringList l = m_loops.value(func);
        // Loops the schedule itself creates on that Func (split/tile/fuse outputs).
        for (const auto &o : m_spec.directives) {
            if (QString::fromStdString(o.func) != func) {
                continue;
            }
            size_t first = o.kind == tessel::DirectiveKind::Split ? 1 : o.kind == tessel::DirectiveKind::Tile ? 2
                         : o.kind == tessel::DirectiveKind::Fuse  ? 2 : o.vars.size();
            for (size_t i = first; i < o.vars.size(); ++i) {
                QString v = QString::fromStdString(o.vars[i]);
                if (!l.contains(v)) {
                    l << v;
                }
            }
        }
        return l;
    }
    default:
        return {};
    }
}

// ---------------------------------------------------------------------------

DirectiveArgsModel::DirectiveArgsModel(ScheduleModel *schedule, QObject *parent)
    : QAbstractTableModel(parent), m_schedule(schedule) {
    connect(schedule, &ScheduleModel::scheduleChanged, this, &DirectiveArgsModel::reload);
}

void DirectiveArgsModel::setRow(int row) {
    if (row != m_row) {
        m_refused.clear();
    }
    m_row = row;
    reload();
}

void DirectiveArgsModel::reload() {
    QStringList fields;
    QMap<QString, QString> problems;
    if (m_row >= 0 && m_row < m_schedule->rowCount()) {
        fields << QStringLiteral("id") << QStringLiteral("kind") << QStringLiteral("func");
        for (const FieldInfo &f : directiveFields(m_schedule->spec().directives[m_row].kind)) {
            fields << f.name;
        }
        problems = m_schedule->legal().problems(m_schedule->spec(), m_row);
    }
    if (fields == m_fields && !fields.isEmpty()) {
        // The same fields: only the cells whose value or problem changed are updated. A
        // reset would close an editor open on a field (and lose what is typed there).
        QMap<QString, QString> before = m_problems;
        m_problems = problems;
        const tessel::Directive &d = m_schedule->spec().directives[m_row];
        for (int r = 0; r < m_fields.size(); ++r) {
            const QString &f = m_fields[r];
            const QString value = fieldValue(d, f);
            if (value != m_values.value(f) || before.value(f) != problems.value(f)) {
                m_values[f] = value;
                Q_EMIT dataChanged(index(r, 1), index(r, 1));
            }
        }
        return;
    }
    beginResetModel();
    m_fields = fields;
    m_problems = problems;
    m_values.clear();
    if (!fields.isEmpty()) {
        for (const QString &f : fields) {
            m_values[f] = fieldValue(m_schedule->spec().directives[m_row], f);
        }
    }
    endResetModel();
}

QString DirectiveArgsModel::problemAt(int r) const {
    const QString field = fieldAt(r);
    return m_refused.contains(field) ? m_refused.value(field) : m_problems.value(field);
}

QString DirectiveArgsModel::fieldAt(int r) const {
    return r >= 0 && r < m_fields.size() ? m_fields[r] : QString();
}

int DirectiveArgsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_fields.size());
}

int DirectiveArgsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : 2;
}

QVariant DirectiveArgsModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= m_fields.size()) {
        return {};
    }
    const QString &field = m_fields[index.row()];
    if (role == ChoicesRole) {
        return m_schedule->choices(m_row, field);
    }
    if (index.column() == 1 && (role == Qt::ToolTipRole || role == Qt::ForegroundRole || role == ProblemRole)) {
        QString problem = problemAt(index.row());
        if (role == ProblemRole || role == Qt::ToolTipRole) {
            return problem;
        }
        return problem.isEmpty() ? QVariant() : QVariant(QColor(Qt::red));
    }
    if (role != Qt::DisplayRole && role != Qt::EditRole) {
        return {};
    }
    if (index.column() == 0) {
        return field;
    }
    return fieldValue(m_schedule->spec().directives[m_row], field);
}

QVariant DirectiveArgsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    return section == 0 ? QStringLiteral("argument") : QStringLiteral("value");
}

Qt::ItemFlags DirectiveArgsModel::flags(const QModelIndex &index) const {
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    return index.column() == 1 ? f | Qt::ItemIsEditable : f;
}

bool DirectiveArgsModel::setData(const QModelIndex &index, const QVariant &value, int role) {
    if (role != Qt::EditRole || index.column() != 1) {
        return false;
    }
    m_error.clear();
    int row = m_row;
    const QString field = m_fields.value(index.row());
    m_refused.remove(field);
    bool ok = m_schedule->setField(row, field, value.toString(), &m_error);
    if (!ok) {
        // Refused (not a value of the field's type): the cell says why, and keeps its value.
        m_refused[field] = QStringLiteral("'%1' was not applied: %2").arg(value.toString(), m_error);
        Q_EMIT dataChanged(index, index);
    }
    if (ok && m_row != row) {
        setRow(row);
    }
    return ok;
}

} // namespace tessel::ide
