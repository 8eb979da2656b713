#include "ide/core/Comparison.h"

#include "npu_target/common/Error.h"

#include <nlohmann/json.hpp>

#include <map>

namespace tessel::ide {

namespace {

QString metrics(const tessel::db::ResultRecord &r) {
    QString s;
    s += r.simulated_cycles ? QStringLiteral("cycles %1").arg(*r.simulated_cycles) : QStringLiteral("cycles -");
    if (r.efficiency) {
        s += QStringLiteral(", efficiency %1").arg(*r.efficiency, 0, 'f', 3);
    }
    s += r.verified ? QStringLiteral(", verified") : QStringLiteral(", not verified");
    if (!r.error_text.empty()) {
        s += QStringLiteral(" (%1)").arg(QString::fromStdString(r.error_text));
    }
    return s;
}

// Each directive as its canonical JSON object without the id, e.g.
// {"func":"C","kind":"tile","fx":64,...}: the arguments are what a diff shows.
std::map<std::string, QString> directive_texts(const ScheduleSpec &s) {
    std::map<std::string, QString> out;
    nlohmann::json j = nlohmann::json::parse(schedule_to_json(s));
    for (auto d : j["directives"]) {
        std::string id = d["id"].get<std::string>();
        d.erase("id");
        out[id] = QString::fromStdString(d.dump());
    }
    return out;
}

// The fields of two directive objects that differ: "factor: 64 -> 32".
QStringList changedFields(const QString &a, const QString &b) {
    const nlohmann::json ja = nlohmann::json::parse(a.toStdString()), jb = nlohmann::json::parse(b.toStdString());
    QStringList out;
    auto text = [](const nlohmann::json &j, const std::string &k) {
        return j.contains(k) ? QString::fromStdString(j[k].dump()) : QStringLiteral("-");
    };
    for (const auto &[k, v] : ja.items()) {
        if (!jb.contains(k) || jb[k] != v) {
            out << QStringLiteral("%1: %2 -> %3").arg(QString::fromStdString(k), text(ja, k), text(jb, k));
        }
    }
    for (const auto &[k, v] : jb.items()) {
        if (!ja.contains(k)) {
            out << QStringLiteral("%1: - -> %2").arg(QString::fromStdString(k), text(jb, k));
        }
    }
    return out;
}

} // namespace

ScheduleComparison compareSchedules(const HistoryModel::Row &a, const HistoryModel::Row &b) {
    ScheduleComparison c;
    c.metricsA = metrics(a.result);
    c.metricsB = metrics(b.result);
    c.hashA = QString::fromStdString(a.result.schedule_hash);
    c.hashB = QString::fromStdString(b.result.schedule_hash);
    ScheduleSpec sa, sb;
    try {
        sa = parse_schedule(a.scheduleJson.toStdString(), "schedule A");
        sb = parse_schedule(b.scheduleJson.toStdString(), "schedule B");
    } catch (const tessel::UserError &e) {
        c.error = QString::fromStdString(e.what());
        return c;
    }
    ScheduleComparison d = compareSpecs(std::move(sa), std::move(sb));
    d.metricsA = c.metricsA;
    d.metricsB = c.metricsB;
    d.hashA = c.hashA;
    d.hashB = c.hashB;
    return d;
}

ScheduleComparison compareSpecs(ScheduleSpec sa, ScheduleSpec sb) {
    ScheduleComparison c;
    sa.assign_ids();
    sb.assign_ids();
    std::map<std::string, QString> textA = directive_texts(sa), textB = directive_texts(sb);
    std::map<std::string, const Directive *> inB;
    for (const auto &d : sb.directives) {
        inB[d.id] = &d;
    }
    std::map<std::string, bool> seen;
    for (const auto &d : sa.directives) {
        DirectiveDiffRow row;
        row.id = QString::fromStdString(d.id);
        row.a = textA[d.id];
        auto it = inB.find(d.id);
        if (it == inB.end()) {
            row.kind = DirectiveDiffRow::OnlyA;
            c.onlyA++;
        } else {
            row.b = textB[d.id];
            row.kind = *it->second == d ? DirectiveDiffRow::Same : DirectiveDiffRow::Changed;
            if (row.kind == DirectiveDiffRow::Changed) {
                row.fields = changedFields(row.a, row.b);
            }
            c.changed += row.kind == DirectiveDiffRow::Changed;
            seen[d.id] = true;
        }
        c.directives.push_back(row);
    }
    for (const auto &d : sb.directives) {
        if (seen.count(d.id)) {
            continue;
        }
        DirectiveDiffRow row;
        row.kind = DirectiveDiffRow::OnlyB;
        row.id = QString::fromStdString(d.id);
        row.b = textB[d.id];
        c.onlyB++;
        c.directives.push_back(row);
    }
    return c;
}

} // namespace tessel::ide
