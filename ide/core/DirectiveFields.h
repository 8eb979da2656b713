#ifndef TESSEL_IDE_CORE_DIRECTIVEFIELDS_H
#define TESSEL_IDE_CORE_DIRECTIVEFIELDS_H

// A directive's arguments as named text fields, by kind (the keys of
// docs/schedule-format.md): what the editor's argument table shows and edits.

#include "dsl/ScheduleSpec.h"

#include <QString>
#include <QStringList>

namespace tessel::ide {

/** What kind of value a field holds, so the editor can offer legal choices. */
enum class FieldType { Text, Loop, Loops, Func, Level, Integer, Tail, Unit, Format };

struct FieldInfo {
    QString name;
    FieldType type;
};

/** The argument fields of `kind` (after id, kind, func), in canonical order. */
QList<FieldInfo> directiveFields(tessel::DirectiveKind kind);
/** The field's value as text ("" when unset; a loop list is comma-separated). */
QString fieldValue(const tessel::Directive &d, const QString &field);
/** Sets a field from text; false (and `error` set) when the text is not a legal value. */
bool setFieldValue(tessel::Directive &d, const QString &field, const QString &text, QString *error = nullptr);
/** The kind for a JSON kind name, false when unknown. */
bool kindFromName(const QString &name, tessel::DirectiveKind *kind);
/** A new directive of `kind` on `func` with placeholder arguments. */
tessel::Directive makeDirective(tessel::DirectiveKind kind, const QString &func);

} // namespace tessel::ide

#endif
