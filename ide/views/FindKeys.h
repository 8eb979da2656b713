#ifndef TESSEL_IDE_VIEWS_FINDKEYS_H
#define TESSEL_IDE_VIEWS_FINDKEYS_H

// The keys of a find field (the code views' find bar, the timeline's search), for its event
// filter: Esc closes it and Enter / Shift+Enter go to the next / previous match. Both are
// claimed at ShortcutOverride, so the window's Esc (Cancel run) does not take them.

#include <QEvent>
#include <QKeyEvent>

namespace tessel::ide {

enum class FindKey { None, Claimed, Close, Next, Previous };

/** What `e` (sent to a find field) asks for; None: not ours, let it through. */
inline FindKey findFieldKey(QEvent *e) {
    if (e->type() != QEvent::ShortcutOverride && e->type() != QEvent::KeyPress) {
        return FindKey::None;
    }
    auto *k = static_cast<QKeyEvent *>(e);
    const bool esc = k->key() == Qt::Key_Escape;
    const bool enter = k->key() == Qt::Key_Return || k->key() == Qt::Key_Enter;
    if (!esc && !enter) {
        return FindKey::None;
    }
    if (e->type() == QEvent::ShortcutOverride) {
        e->accept(); // ours, not the window's Esc (Cancel run)
        return FindKey::Claimed;
    }
    return esc                                    ? FindKey::Close
           : (k->modifiers() & Qt::ShiftModifier) ? FindKey::Previous
                                                  : FindKey::Next;
}

} // namespace tessel::ide

#endif
