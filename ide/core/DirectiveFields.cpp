#include "ide/core/DirectiveFields.h"

namespace tessel::ide {

using tessel::Directive;
using tessel::DirectiveKind;

namespace {

const char *kVarFields[][6] = {
    {"var", "outer", "inner", nullptr, nullptr, nullptr}, // split
    {"x", "y", "xo", "yo", "xi", "yi"},                  // tile
    {"inner", "outer", "fused", nullptr, nullptr, nullptr}, // fuse
};

int varSlot(DirectiveKind k, const QString &field) {
    int table = k == DirectiveKind::Split ? 0 : k == DirectiveKind::Tile ? 1 : k == DirectiveKind::Fuse ? 2 : -1;
    if (table < 0) {
        return field == QLatin1String("var") ? 0 : -1;
    }
    for (int i = 0; i < 6 && kVarFields[table][i]; ++i) {
        if (field == QLatin1String(kVarFields[table][i])) {
            return i;
        }
    }
    return -1;
}

int factorSlot(DirectiveKind k, const QString &field) {
    if (k == DirectiveKind::Tile) {
        return field == QLatin1String("fx") ? 0 : field == QLatin1String("fy") ? 1 : -1;
    }
    return field == QLatin1String("factor") ? 0 : -1;
}

} // namespace

QList<FieldInfo> directiveFields(DirectiveKind kind) {
    const FieldInfo stage{"stage", FieldType::Integer};
    const FieldInfo tail{"tail", FieldType::Tail};
    const FieldInfo atFunc{"at_func", FieldType::Func}, atLoop{"at_loop", FieldType::Loop};
    switch (kind) {
    case DirectiveKind::Split:
        return {stage, {"var", FieldType::Loop}, {"outer", FieldType::Text}, {"inner", FieldType::Text},
                {"factor", FieldType::Integer}, tail};
    case DirectiveKind::Tile:
        return {stage, {"x", FieldType::Loop}, {"y", FieldType::Loop}, {"xo", FieldType::Text}, {"yo", FieldType::Text},
                {"xi", FieldType::Text}, {"yi", FieldType::Text}, {"fx", FieldType::Integer},
                {"fy", FieldType::Integer}, tail};
    case DirectiveKind::Reorder:
        return {stage, {"vars", FieldType::Loops}};
    case DirectiveKind::Fuse:
        return {stage, {"inner", FieldType::Loop}, {"outer", FieldType::Loop}, {"fused", FieldType::Text}};
    case DirectiveKind::Vectorize:
    case DirectiveKind::Unroll:
        return {stage, {"var", FieldType::Loop}, {"factor", FieldType::Integer}};
    case DirectiveKind::Parallel:
        return {stage, {"var", FieldType::Loop}, {"cores", FieldType::Integer}};
    case DirectiveKind::ComputeAt:
    case DirectiveKind::StoreAt:
        return {atFunc, atLoop};
    case DirectiveKind::ComputeRoot:
    case DirectiveKind::ComputeInline:
        return {};
    case DirectiveKind::Atomic:
        return {stage};
    case DirectiveKind::Stage:
        return {{"level", FieldType::Level}, atFunc, atLoop, {"buffers", FieldType::Integer}};
    case DirectiveKind::AccumulateIn:
        return {{"level", FieldType::Level}, {"buffers", FieldType::Integer}};
    case DirectiveKind::Tensorize:
        return {{"update", FieldType::Integer}, {"unit", FieldType::Unit}};
    case DirectiveKind::Layout:
        return {{"format", FieldType::Format}};
    }
    return {};
}

QString fieldValue(const Directive &d, const QString &field) {
    auto str = [](const std::string &s) { return QString::fromStdString(s); };
    if (field == QLatin1String("id")) {
        return str(d.id);
    }
    if (field == QLatin1String("kind")) {
        return QString::fromLatin1(tessel::kind_name(d.kind));
    }
    if (field == QLatin1String("func")) {
        return str(d.func);
    }
    if (field == QLatin1String("stage") || field == QLatin1String("update")) {
        return QString::number(d.stage);
    }
    if (field == QLatin1String("vars")) {
        QStringList l;
        for (const auto &v : d.vars) {
            l << str(v);
        }
        return l.join(QStringLiteral(", "));
    }
    if (field == QLatin1String("tail")) {
        return str(d.tail);
    }
    if (field == QLatin1String("at_func")) {
        return str(d.at_func);
    }
    if (field == QLatin1String("at_loop")) {
        return str(d.at_loop);
    }
    if (field == QLatin1String("level")) {
        return str(d.level);
    }
    if (field == QLatin1String("buffers")) {
        return QString::number(d.buffers);
    }
    if (field == QLatin1String("cores")) {
        return QString::number(d.cores);
    }
    if (field == QLatin1String("unit")) {
        return str(d.unit);
    }
    if (field == QLatin1String("format")) {
        return str(d.format);
    }
    int f = factorSlot(d.kind, field);
    if (f >= 0) {
        return f < int(d.factors.size()) ? QString::number(d.factors[f]) : QString();
    }
    int v = varSlot(d.kind, field);
    if (v >= 0) {
        return v < int(d.vars.size()) ? str(d.vars[v]) : QString();
    }
    return {};
}

bool setFieldValue(Directive &d, const QString &field, const QString &text, QString *error) {
    auto fail = [&](const QString &msg) {
        if (error) {
            *error = msg;
        }
        return false;
    };
    QString t = text.trimmed();
    bool isInt = false;
    qlonglong n = t.toLongLong(&isInt);
    if (field == QLatin1String("id")) {
        if (t.isEmpty()) {
            return fail(QStringLiteral("an id cannot be empty"));
        }
        d.id = t.toStdString();
        return true;
    }
    if (field == QLatin1String("kind")) {
        DirectiveKind k;
        if (!kindFromName(t, &k)) {
            return fail(QStringLiteral("unknown kind '%1'").arg(t));
        }
        Directive fresh = makeDirective(k, QString::fromStdString(d.func));
        fresh.id = d.id;
        d = fresh;
        return true;
    }
    if (field == QLatin1String("func")) {
        d.func = t.toStdString();
        return true;
    }
    if (field == QLatin1String("stage") || field == QLatin1String("update")) {
        if (!isInt || n < -1) {
            return fail(QStringLiteral("%1 must be -1 or an update index, got '%2'").arg(field, t));
        }
        d.stage = int(n);
        return true;
    }
    if (field == QLatin1String("vars")) {
        d.vars.clear();
        for (const QString &v : t.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            d.vars.push_back(v.trimmed().toStdString());
        }
        return true;
    }
    auto setText = [&](std::string &dst) {
        dst = t.toStdString();
        return true;
    };
    if (field == QLatin1String("tail")) {
        return setText(d.tail);
    }
    if (field == QLatin1String("at_func")) {
        return setText(d.at_func);
    }
    if (field == QLatin1String("at_loop")) {
        return setText(d.at_loop);
    }
    if (field == QLatin1String("level")) {
        return setText(d.level);
    }
    if (field == QLatin1String("unit")) {
        return setText(d.unit);
    }
    if (field == QLatin1String("format")) {
        return setText(d.format);
    }
    if (field == QLatin1String("buffers") || field == QLatin1String("cores")) {
        if (!isInt || n < (field == QLatin1String("cores") ? 0 : 1)) {
            return fail(QStringLiteral("%1 must be a positive integer, got '%2'").arg(field, t));
        }
        (field == QLatin1String("buffers") ? d.buffers : d.cores) = int(n);
        return true;
    }
    int f = factorSlot(d.kind, field);
    if (f >= 0) {
        if (t.isEmpty() && d.kind != DirectiveKind::Split && d.kind != DirectiveKind::Tile) {
            d.factors.clear();
            return true;
        }
        if (!isInt || n <= 0) {
            return fail(QStringLiteral("%1 must be a positive integer, got '%2'").arg(field, t));
        }
        if (int(d.factors.size()) <= f) {
            d.factors.resize(f + 1, 1);
        }
        d.factors[f] = n;
        return true;
    }
    int v = varSlot(d.kind, field);
    if (v >= 0) {
        if (int(d.vars.size()) <= v) {
            d.vars.resize(v + 1);
        }
        d.vars[v] = t.toStdString();
        return true;
    }
    return fail(QStringLiteral("a %1 directive has no field '%2'").arg(QLatin1String(tessel::kind_name(d.kind)), field));
}

bool kindFromName(const QString &name, DirectiveKind *kind) {
    auto names = tessel::kind_names();
    for (size_t i = 0; i < names.size(); ++i) {
        if (name == QString::fromStdString(names[i])) {
            *kind = DirectiveKind(i);
            return true;
        }
    }
    return false;
}

Directive makeDirective(DirectiveKind kind, const QString &func) {
    Directive d;
    d.kind = kind;
    d.func = func.toStdString();
    switch (kind) {
    case DirectiveKind::Split:
        d.vars = {"x", "xo", "xi"};
        d.factors = {8};
        break;
    case DirectiveKind::Tile:
        d.vars = {"x", "y", "xo", "yo", "xi", "yi"};
        d.factors = {8, 8};
        break;
    case DirectiveKind::Fuse:
        d.vars = {"x", "y", "xy"};
        break;
    case DirectiveKind::Vectorize:
    case DirectiveKind::Unroll:
    case DirectiveKind::Parallel:
        d.vars = {"x"};
        break;
    case DirectiveKind::Stage:
        d.level = "L1";
        break;
    case DirectiveKind::AccumulateIn:
        d.level = "L0C";
        break;
    case DirectiveKind::Tensorize:
        d.stage = 0;
        d.unit = "matrix";
        break;
    case DirectiveKind::Layout:
        d.format = "ND";
        break;
    default:
        break;
    }
    return d;
}

} // namespace tessel::ide
