#ifndef TESSEL_IDE_VIEWS_SCHEDULEEDITOR_H
#define TESSEL_IDE_VIEWS_SCHEDULEEDITOR_H

// The schedule editor: the directive table (add, remove, reorder), the
// selected directive's arguments (with legal choices) and the JSON text, kept
// in sync through the session's ScheduleModel and undo stack. Delete or
// Backspace in the directive table removes the selected directive (one undo
// step); Tab and Shift+Tab move the focus out of the table.

#include <QWidget>

class QComboBox;
class QPlainTextEdit;
class QTableView;
class QTimer;
class QToolButton;

namespace tessel::ide {

class Session;

class ScheduleEditor : public QWidget {
    Q_OBJECT
public:
    explicit ScheduleEditor(Session *session, QWidget *parent = nullptr);
    QTableView *directiveTable() const { return m_table; }
    /** Removes the selected directive (one undo step); false when none is selected. */
    bool removeSelected();
    /** Inserts the kind chosen in the kind box after the selected directive, with its
     * arguments from the legal values (ScheduleModel::templateFor); false when none is
     * legal there (the Add button is then disabled and its tooltip says why). */
    bool addDirective();
    QTableView *argumentTable() const { return m_args; }
    QComboBox *kindBox() const { return m_kind; }
    QPlainTextEdit *jsonEditor() const { return m_json; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void syncJson();
    void applyJson();
    void onSelection();
    int currentRow() const;
    QString addFunc() const;
    void updateAddState();

    Session *m_session;
    QTableView *m_table;
    QTableView *m_args;
    QPlainTextEdit *m_json;
    QComboBox *m_kind;
    QToolButton *m_add = nullptr;
    QTimer *m_jsonTimer;
    bool m_settingJson = false;
};

} // namespace tessel::ide

#endif
