#ifndef TESSEL_IDE_CORE_SOURCELINKS_H
#define TESSEL_IDE_CORE_SOURCELINKS_H

// Links from text lines (Halide Stmt, loop nest, NPU IR, assembly) to the
// schedule directive that produced them, and the loop names a compile exposes
// (the editor's legal choices).

#include "dsl/Compile.h"

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

namespace tessel::ide {

/** Names that identify a directive in text: buffer names (tiling plan,
 * lifetimes) and loop names (provenance), each with its directive id. */
QVector<QPair<QString, QString>> directiveTokens(const tessel::CompileResult &r);

/** The directive id of every line of `text` ("" for none). An assembly line's
 * "@pN" suffix names its provenance entry; otherwise the longest token of
 * `tokens` the line contains decides. */
QStringList lineDirectives(const QString &text, const QVector<QPair<QString, QString>> &tokens,
                           const std::vector<tessel::isa::Provenance> &provenance);

/** The loops of each Func in a loop nest ("for acc.s1.k$x.ko in ..." gives
 * acc: k, ko), in order of appearance, without Halide's internal "rebased". */
QMap<QString, QStringList> loopsByFunc(const QString &loopNest);

/** Funcs that have a produce block in a loop nest, and the program's arguments. */
QStringList funcNames(const tessel::CompileResult &r);

} // namespace tessel::ide

#endif
