#ifndef TESSEL_IDE_VIEWS_HISTORYVIEW_H
#define TESSEL_IDE_VIEWS_HISTORYVIEW_H

// The schedule history from the database (this generator + params + arch),
// sortable; load a past schedule; compare two side by side (directives and
// results); save the current run with a note.

#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace tessel::ide {

class Session;

class HistoryView : public QWidget {
    Q_OBJECT
public:
    explicit HistoryView(Session *session, QWidget *parent = nullptr);

private:
    void loadSelected();
    void compareSelected();
    Session *m_session;
    QTableView *m_table;
    QSortFilterProxyModel *m_proxy;
    QLineEdit *m_note;
    QLabel *m_status;
};

} // namespace tessel::ide

#endif
