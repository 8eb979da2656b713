#ifndef TESSEL_IDE_CORE_LEGALVALUES_H
#define TESSEL_IDE_CORE_LEGALVALUES_H

// The legal values of a directive's arguments at its place in the schedule, as
// plain data (no widget, no Halide): the loops that exist at that point (the
// generator's Vars and RDoms after the splits, tiles, fuses and reorders before
// it, with their extents), the memory levels an engine reaches from where the
// source is, the factors that divide a loop's extent, the tail strategies a
// loop takes, and the Funcs that consume a Func. From the pipeline description
// (dsl/PipelineInfo.h) and the ArchSpec. The schedule editor offers choices()
// in its drop-downs, marks a cell whose value check() refuses, and Add inserts
// makeDefault()'s directive, which is built from the legal sets.

#include "dsl/PipelineInfo.h"
#include "dsl/ScheduleSpec.h"
#include "npu_target/arch/ArchSpec.h"

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

#include <map>
#include <set>

namespace tessel::ide {

struct Template;
struct FieldCheck;

/** One loop of a Func stage at some point of the schedule, innermost first. */
struct LoopState {
    QString name;         // what users write ("ko")
    qint64 extent = -1;   // iterations, -1 when unknown
    bool rvar = false;    // a reduction loop (from an RDom)
    bool constant = true; // the extent is a constant in the program (not the output's size)
    QString origin;       // the generator's Var or RDom variable it was split from
    QString alias;        // Halide's name when users may write it too ("k$x" for k), else ""
};

class LegalValues {
public:
    LegalValues() = default;
    LegalValues(tessel::PipelineInfo pipeline, tessel::ArchSpec arch);
    /** False until a pipeline is known (then choices() are empty and check() accepts). */
    bool valid() const { return m_valid; }
    const tessel::PipelineInfo &pipeline() const { return m_pipeline; }
    const tessel::ArchSpec &arch() const { return m_arch; }

    /** The loops of `func` stage `stage` (-1 the pure definition) after directives
     * [0, index) of `spec`, innermost first. Directives that would fail are skipped. */
    QVector<LoopState> loopsAt(const tessel::ScheduleSpec &spec, int index, const QString &func,
                               int stage) const;
    /** The legal values of `field` of directive `index` (empty: free text). A
     * loop list ("vars") gets the loops in their current order as one value. */
    QStringList choices(const tessel::ScheduleSpec &spec, int index, const QString &field) const;
    /** "" when `value` is legal for `field` of directive `index`, else what is wrong. */
    QString check(const tessel::ScheduleSpec &spec, int index, const QString &field,
                  const QString &value) const;
    /** Every field of directive `index` with what is wrong with its current value. */
    QMap<QString, QString> problems(const tessel::ScheduleSpec &spec, int index) const;

    /** A directive of `kind` to insert at `index`, its arguments from the legal sets
     * (on `preferredFunc` when it can be, else on another Func); false with `why`
     * when no directive of that kind is legal there. */
    bool makeDefault(const tessel::ScheduleSpec &spec, int index, tessel::DirectiveKind kind,
                     const QString &preferredFunc, tessel::Directive *out,
                     QString *why = nullptr) const;

    // ---- the pieces (used by the above, public for tests and views) ----
    /** Funcs the schedule can name (not the inputs), producers first. */
    QStringList funcs() const;
    QStringList inputs() const;
    /** Funcs that read `name` (an input or a Func), directly or through others. */
    QStringList consumersOf(const QString &name) const;
    /** The level `source`'s copy is in before directive `index` (GM for an input). */
    QString levelOf(const tessel::ScheduleSpec &spec, int index, const QString &source) const;
    /** On-chip levels an engine copies into from `from`. */
    QStringList reachableFrom(const QString &from) const;
    /** The divisors of `extent` (all of them, ascending; at most `limit`). */
    static QList<qint64> divisors(qint64 extent, qint64 limit = 0);

private:
    const tessel::FuncInfo *funcInfo(const QString &name) const;
    QVector<LoopState> initialLoops(const tessel::FuncInfo &f, int stage) const;
    qint64 baseExtent(const tessel::FuncInfo &f, size_t dim) const;
    qint64 consumerSpan(const tessel::FuncInfo &consumer, const QString &var,
                        const QString &atLoop) const;
    QStringList atLoops(const tessel::ScheduleSpec &spec, int index, const QString &func) const;
    QStringList tails(bool pureDefinition, bool rvar) const;
    bool isTensorized(const tessel::ScheduleSpec &spec, const QString &func) const;
    QStringList accumulatorLevels(const tessel::ScheduleSpec &spec, const QString &func) const;
    QString checkLoopField(const tessel::ScheduleSpec &spec, int index, const tessel::Directive &d,
                           const QString &value) const;
    QString checkFactor(const tessel::ScheduleSpec &spec, int index, const tessel::Directive &d,
                        const QString &field, const QString &value) const;
    /** choices() of a loop, a loop list or a factor. */
    QStringList loopChoices(const tessel::ScheduleSpec &spec, int index, const tessel::Directive &d,
                            const QString &field) const;
    // The check of each group of fields (LegalValues.cpp, struct FieldCheck).
    QString checkIdentity(const FieldCheck &c) const;
    QString checkResource(const FieldCheck &c) const;
    QString checkPlacement(const FieldCheck &c) const;
    QString checkTail(const FieldCheck &c) const;
    QString checkReorder(const FieldCheck &c) const;
    QString checkNewName(const FieldCheck &c) const;
    // The template of each group of kinds (LegalValues.cpp, struct Template).
    bool splitTemplate(Template &t) const;
    bool reorderOrFuseTemplate(Template &t) const;
    bool loopTypeTemplate(Template &t) const;
    bool placementTemplate(Template &t) const;
    bool stageTemplate(Template &t) const;
    bool unitTemplate(Template &t) const;
    bool defaultFor(const tessel::ScheduleSpec &spec, int index, tessel::DirectiveKind kind,
                    const QString &func, tessel::Directive *out, QString *why) const;

    bool m_valid = false;
    tessel::PipelineInfo m_pipeline;
    tessel::ArchSpec m_arch;
    // Per call: the schedule whose compute_at directives decide the extents of a Func's Vars.
    mutable const tessel::ScheduleSpec *m_spec = nullptr;
    mutable std::map<std::pair<std::string, size_t>, qint64> m_extentMemo;
    mutable std::set<std::string> m_inProgress;
    friend struct SpecScope;
};

} // namespace tessel::ide

#endif
