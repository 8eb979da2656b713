#include "ide/views/ScheduleEditor.h"

#include "ide/core/Session.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLineEdit>
#include <QItemSelectionModel>
#include <QPlainTextEdit>
#include <QStandardItemModel>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace tessel::ide {

namespace {

/** Edits a value with an editable combo box of the legal choices (ChoicesRole). While
 * typing, a value the legal values refuse turns the text red with the reason as tooltip. */
class ChoiceDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QWidget *createEditor(QWidget *parent, const QStyleOptionViewItem &opt, const QModelIndex &index) const override {
        QStringList choices = index.data(DirectiveArgsModel::ChoicesRole).toStringList();
        QLineEdit *line = nullptr;
        QWidget *editor = nullptr;
        if (choices.isEmpty()) {
            editor = QStyledItemDelegate::createEditor(parent, opt, index);
            line = qobject_cast<QLineEdit *>(editor);
        } else {
            auto *box = new QComboBox(parent);
            box->setEditable(true);
            box->setInsertPolicy(QComboBox::NoInsert);
            box->setCompleter(nullptr); // inline completion would turn a typed "3" into "32"
            box->addItems(choices);
            line = box->lineEdit();
            editor = box;
        }
        auto *args = qobject_cast<const DirectiveArgsModel *>(index.model());
        if (line && args) {
            const QPersistentModelIndex at(index);
            QObject::connect(line, &QLineEdit::textChanged, editor, [args, at, line, editor](const QString &text) {
                QString problem = args->checkValue(at.row(), text);
                QPalette p = line->palette();
                p.setColor(QPalette::Text, problem.isEmpty() ? editor->palette().color(QPalette::Text) : QColor(Qt::red));
                line->setPalette(p);
                line->setToolTip(problem);
                editor->setToolTip(problem);
            });
        }
        return editor;
    }
    void setEditorData(QWidget *editor, const QModelIndex &index) const override {
        // What the user has typed wins over a value that changed meanwhile (another edit,
        // an undo, a result): the editor is theirs until they commit or press Escape.
        auto *box = qobject_cast<QComboBox *>(editor);
        auto *line = box ? box->lineEdit() : qobject_cast<QLineEdit *>(editor);
        if (line && line->isModified()) {
            return;
        }
        if (box) {
            box->setCurrentText(index.data(Qt::EditRole).toString());
            return;
        }
        QStyledItemDelegate::setEditorData(editor, index);
    }
    void setModelData(QWidget *editor, QAbstractItemModel *model, const QModelIndex &index) const override {
        if (auto *box = qobject_cast<QComboBox *>(editor)) {
            model->setData(index, box->currentText());
            return;
        }
        QStyledItemDelegate::setModelData(editor, model, index);
    }
};

} // namespace

ScheduleEditor::ScheduleEditor(Session *session, QWidget *parent) : QWidget(parent), m_session(session) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    auto *bar = new QHBoxLayout;
    m_kind = new QComboBox;
    for (const auto &k : tessel::kind_names()) {
        m_kind->addItem(QString::fromStdString(k));
    }
    // Tool buttons: a push button is at least 80 px wide in most styles, and six of them made
    // the window wider than a 1280 px screen.
    m_kind->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_kind->setMinimumContentsLength(8);
    m_kind->setToolTip(tr("The kind of directive Add inserts after the selected one"));
    auto button = [&](const QString &text, auto fn) {
        auto *b = new QToolButton;
        b->setText(text);
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        connect(b, &QToolButton::clicked, this, fn);
        bar->addWidget(b);
        return b;
    };
    bar->addWidget(m_kind);
    m_add = button(tr("Add"), [this] { addDirective(); });
    m_add->setObjectName(QStringLiteral("add"));
    connect(m_kind, &QComboBox::currentIndexChanged, this, &ScheduleEditor::updateAddState);
    button(tr("Remove"), [this] { removeSelected(); })->setToolTip(tr("Remove the selected directive (Delete)"));
    button(tr("Up"), [this] {
        int r = currentRow();
        m_session->schedule()->moveDirective(r, r - 1);
        m_table->selectRow(r - 1);
    });
    button(tr("Down"), [this] {
        int r = currentRow();
        m_session->schedule()->moveDirective(r, r + 1);
        m_table->selectRow(r + 1);
    });
    auto *undo = button(tr("Undo"), [this] { m_session->undoStack()->undo(); });
    auto *redo = button(tr("Redo"), [this] { m_session->undoStack()->redo(); });
    connect(m_session->undoStack(), &QUndoStack::canUndoChanged, undo, &QToolButton::setEnabled);
    connect(m_session->undoStack(), &QUndoStack::canRedoChanged, redo, &QToolButton::setEnabled);
    bar->addStretch();
    layout->addLayout(bar);

    auto *tabs = new QTabWidget;
    auto *tablePage = new QWidget;
    auto *tableLayout = new QVBoxLayout(tablePage);
    tableLayout->setContentsMargins(0, 0, 0, 0);
    m_table = new QTableView;
    m_table->setModel(m_session->schedule());
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setDefaultSectionSize(22);
    m_table->setTabKeyNavigation(false); // Tab leaves the table (the arrows move between rows)
    m_table->installEventFilter(this);
    m_args = new QTableView;
    m_args->setModel(m_session->args());
    m_args->setItemDelegateForColumn(1, new ChoiceDelegate(m_args));
    m_args->verticalHeader()->hide();
    m_args->horizontalHeader()->setStretchLastSection(true);
    m_args->verticalHeader()->setDefaultSectionSize(22);
    m_args->setEditTriggers(QAbstractItemView::AllEditTriggers);
    tableLayout->addWidget(m_table, 3);
    tableLayout->addWidget(m_args, 2);
    tabs->addTab(tablePage, tr("Directives"));
    m_json = new QPlainTextEdit;
    m_json->setFont(QFont(QStringLiteral("monospace"), 9));
    m_json->setLineWrapMode(QPlainTextEdit::NoWrap);
    tabs->addTab(m_json, tr("JSON"));
    m_json->setUndoRedoEnabled(false); // Ctrl+Z here is the schedule's undo (eventFilter)
    m_json->installEventFilter(this);
    layout->addWidget(tabs);

    m_jsonTimer = new QTimer(this);
    m_jsonTimer->setSingleShot(true);
    m_jsonTimer->setInterval(500);
    connect(m_jsonTimer, &QTimer::timeout, this, &ScheduleEditor::applyJson);
    connect(m_json, &QPlainTextEdit::textChanged, this, [this] {
        if (!m_settingJson) {
            m_jsonTimer->start();
        }
    });
    connect(m_session->schedule(), &ScheduleModel::scheduleChanged, this, &ScheduleEditor::syncJson);
    connect(m_session->schedule(), &ScheduleModel::scheduleChanged, this, &ScheduleEditor::updateAddState);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ScheduleEditor::onSelection);
    connect(m_session->schedule(), &QAbstractItemModel::modelReset, this, [this] {
        int row = m_session->schedule()->rowOf(m_session->viewState()->selectedDirective());
        if (row >= 0) {
            m_table->selectRow(row);
        }
        m_session->args()->setRow(row);
    });
    connect(m_session->viewState(), &ViewState::selectionChanged, this, [this](const QString &id) {
        int row = m_session->schedule()->rowOf(id);
        if (row >= 0 && row != currentRow()) {
            m_table->selectRow(row);
        }
    });
    syncJson();
}

bool ScheduleEditor::removeSelected() {
    const int row = currentRow();
    if (row < 0) {
        return false;
    }
    m_session->schedule()->removeDirective(row);
    const int rows = m_session->schedule()->rowCount();
    if (rows > 0) {
        m_table->selectRow(std::min(row, rows - 1));
    }
    return true;
}

bool ScheduleEditor::eventFilter(QObject *watched, QEvent *event) {
    // In the JSON tab Ctrl+Z / Ctrl+Y (Ctrl+Shift+Z) are the schedule's undo and redo, as
    // everywhere in the window, not the text's: text typed and not yet applied is applied
    // first (one undo step), then the window's action undoes it or an earlier edit.
    if (watched == m_json && event->type() == QEvent::ShortcutOverride) {
        auto *key = static_cast<QKeyEvent *>(event);
        const bool ctrlY = key->key() == Qt::Key_Y && key->modifiers() == Qt::ControlModifier;
        if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo) || ctrlY) {
            if (m_jsonTimer->isActive()) {
                m_jsonTimer->stop();
                applyJson();
            }
            event->ignore(); // not the editor's: the window's shortcut takes it
            return true;
        }
    }
    // Only keys sent to the table itself: a cell editor (which has the focus while editing)
    // keeps its Delete and Backspace.
    if (watched == m_table && event->type() == QEvent::KeyPress && m_table->hasFocus()) {
        auto *key = static_cast<QKeyEvent *>(event);
        if ((key->key() == Qt::Key_Delete || key->key() == Qt::Key_Backspace) && key->modifiers() == Qt::NoModifier) {
            return removeSelected();
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString ScheduleEditor::addFunc() const {
    const int row = currentRow();
    const auto &spec = m_session->schedule()->spec();
    if (row >= 0) {
        return QString::fromStdString(spec.directives[row].func);
    }
    QStringList funcs = m_session->schedule()->legal().funcs();
    return funcs.isEmpty() ? QStringLiteral("C") : funcs.last();
}

bool ScheduleEditor::addDirective() {
    tessel::DirectiveKind k;
    if (!kindFromName(m_kind->currentText(), &k)) {
        return false;
    }
    const int row = currentRow() + 1;
    const int before = m_session->schedule()->rowCount();
    m_session->schedule()->insertDirective(row, k, addFunc());
    if (m_session->schedule()->rowCount() == before) {
        return false;
    }
    m_table->selectRow(row);
    return true;
}

void ScheduleEditor::updateAddState() {
    // Every kind: grey, with the reason, when no directive of it is legal after the selected row.
    auto *items = qobject_cast<QStandardItemModel *>(m_kind->model());
    const int row = currentRow() + 1;
    const QString func = addFunc();
    for (int i = 0; i < m_kind->count(); ++i) {
        tessel::DirectiveKind k;
        QString why;
        tessel::Directive d;
        bool ok = kindFromName(m_kind->itemText(i), &k) && m_session->schedule()->templateFor(row, k, func, &d, &why);
        if (QStandardItem *item = items ? items->item(i) : nullptr) {
            item->setForeground(ok ? m_kind->palette().text() : m_kind->palette().brush(QPalette::Disabled, QPalette::Text));
            item->setToolTip(ok ? tr("Add inserts: %1").arg(QString::fromStdString(d.describe())) : tr("Not legal here: %1").arg(why));
        }
        if (i == m_kind->currentIndex()) {
            m_add->setEnabled(ok);
            m_add->setToolTip(ok ? tr("Add %1 after the selected directive").arg(QString::fromStdString(d.describe()))
                                 : tr("No %1 is legal here: %2").arg(m_kind->itemText(i), why));
        }
    }
}

int ScheduleEditor::currentRow() const {
    auto rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.first().row();
}

void ScheduleEditor::onSelection() {
    updateAddState();
    int row = currentRow();
    m_session->args()->setRow(row);
    if (row >= 0) {
        m_session->viewState()->selectDirective(
            QString::fromStdString(m_session->schedule()->spec().directives[row].id));
    }
}

void ScheduleEditor::syncJson() {
    QString json = m_session->schedule()->json();
    if (m_json->toPlainText() == json) {
        return;
    }
    m_settingJson = true;
    m_json->setPlainText(json);
    m_settingJson = false;
}

void ScheduleEditor::applyJson() {
    QString error;
    if (m_session->schedule()->setScheduleJson(m_json->toPlainText(), &error)) {
        m_session->diagnostics()->setEditorMessage(QString());
    } else {
        m_session->diagnostics()->setEditorMessage(error);
    }
}

} // namespace tessel::ide
