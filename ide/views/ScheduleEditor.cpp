#include "ide/views/ScheduleEditor.h"

#include "ide/core/Session.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QItemSelectionModel>
#include <QPlainTextEdit>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace tessel::ide {

namespace {

/** Edits a value with an editable combo box of the legal choices (ChoicesRole). */
class ChoiceDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QWidget *createEditor(QWidget *parent, const QStyleOptionViewItem &opt, const QModelIndex &index) const override {
        QStringList choices = index.data(DirectiveArgsModel::ChoicesRole).toStringList();
        if (choices.isEmpty()) {
            return QStyledItemDelegate::createEditor(parent, opt, index);
        }
        auto *box = new QComboBox(parent);
        box->setEditable(true);
        box->addItems(choices);
        return box;
    }
    void setEditorData(QWidget *editor, const QModelIndex &index) const override {
        if (auto *box = qobject_cast<QComboBox *>(editor)) {
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
    button(tr("Add"), [this] {
        tessel::DirectiveKind k;
        if (!kindFromName(m_kind->currentText(), &k)) {
            return;
        }
        int row = currentRow();
        QString func = row >= 0 ? QString::fromStdString(m_session->schedule()->spec().directives[row].func)
                                : QStringLiteral("C");
        m_session->schedule()->insertDirective(row + 1, k, func);
        m_table->selectRow(row + 1);
    });
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

int ScheduleEditor::currentRow() const {
    auto rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.first().row();
}

void ScheduleEditor::onSelection() {
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
