#include "ide/core/SourceLinks.h"

#include <QRegularExpression>

namespace tessel::ide {

QVector<QPair<QString, QString>> directiveTokens(const tessel::CompileResult &r) {
    QVector<QPair<QString, QString>> t;
    auto add = [&t](const std::string &token, const std::string &directive) {
        if (!token.empty() && !directive.empty()) {
            t.append({QString::fromStdString(token), QString::fromStdString(directive)});
        }
    };
    for (const auto &b : r.tiling.buffers) {
        add(b.name, b.directive);
    }
    for (const auto &l : r.lifetimes) {
        add(l.name, l.directive);
    }
    for (const auto &p : r.program.provenance) {
        add(p.loop, p.directive_id);
    }
    // Longest first, so that "A_wrapper$0_wrapper$0" wins over "A_wrapper$0".
    std::stable_sort(t.begin(), t.end(), [](const auto &a, const auto &b) { return a.first.size() > b.first.size(); });
    return t;
}

QStringList lineDirectives(const QString &text, const QVector<QPair<QString, QString>> &tokens,
                           const std::vector<tessel::isa::Provenance> &provenance) {
    static const QRegularExpression provRe(QStringLiteral("@p(\\d+)\\s*$"));
    QStringList out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    out.reserve(lines.size());
    for (const QString &line : lines) {
        QString id;
        auto m = provRe.match(line);
        if (m.hasMatch()) {
            size_t p = m.captured(1).toULongLong();
            if (p < provenance.size()) {
                id = QString::fromStdString(provenance[p].directive_id);
            }
        } else {
            for (const auto &tok : tokens) {
                int at = line.indexOf(tok.first);
                while (at >= 0) {
                    int end = at + int(tok.first.size());
                    bool boundary = end >= line.size() || !(line[end].isLetterOrNumber() || line[end] == QLatin1Char('_') ||
                                                            line[end] == QLatin1Char('$'));
                    if (boundary) {
                        break;
                    }
                    at = line.indexOf(tok.first, at + 1);
                }
                if (at >= 0) {
                    id = tok.second;
                    break;
                }
            }
        }
        out << id;
    }
    return out;
}

QMap<QString, QStringList> loopsByFunc(const QString &loopNest) {
    static const QRegularExpression forRe(QStringLiteral("^\\s*for\\s+([^\\s]+)\\s+in"));
    QMap<QString, QStringList> out;
    for (const QString &line : loopNest.split(QLatin1Char('\n'))) {
        auto m = forRe.match(line);
        if (!m.hasMatch()) {
            continue;
        }
        QStringList parts = m.captured(1).split(QLatin1Char('.'));
        if (parts.size() < 3) {
            continue;
        }
        QString func = parts[0];
        QStringList &loops = out[func];
        for (int i = 2; i < parts.size(); ++i) {
            QString name = parts[i];
            int dollar = name.indexOf(QLatin1Char('$'));
            if (dollar >= 0) {
                name.truncate(dollar);
            }
            if (name.isEmpty() || name == QLatin1String("rebased") || name == QLatin1String("__outermost") ||
                name.startsWith(QLatin1Char('_'))) {
                continue;
            }
            if (!loops.contains(name)) {
                loops << name;
            }
        }
    }
    return out;
}

QStringList funcNames(const tessel::CompileResult &r) {
    static const QRegularExpression produceRe(QStringLiteral("^\\s*produce\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*$"));
    QStringList out;
    for (const QString &line : QString::fromStdString(r.loop_nest).split(QLatin1Char('\n'))) {
        auto m = produceRe.match(line);
        if (m.hasMatch() && !m.captured(1).contains(QLatin1String("_wrapper")) && !out.contains(m.captured(1))) {
            out << m.captured(1);
        }
    }
    for (const auto &a : r.program.args) {
        QString n = QString::fromStdString(a.name);
        if (!out.contains(n)) {
            out << n;
        }
    }
    return out;
}

} // namespace tessel::ide
