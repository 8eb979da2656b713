#include "ide/views/HistoryView.h"

#include "ide/core/Comparison.h"
#include "ide/core/Session.h"

#include <QBrush>
#include <QColor>
#include <QDialog>
#include <QTableWidget>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace tessel::ide {

HistoryView::HistoryView(Session *session, QWidget *parent) : QWidget(parent), m_session(session) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(session->history());
    m_proxy->setSortRole(HistoryModel::SortRole);
    m_table = new QTableView;
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(20);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table);
    auto *bar = new QHBoxLayout;
    auto *load = new QPushButton(tr("Load schedule"));
    auto *refresh = new QPushButton(tr("Refresh"));
    auto *compare = new QPushButton(tr("Compare two"));
    m_note = new QLineEdit;
    m_note->setPlaceholderText(tr("note for this run"));
    auto *save = new QPushButton(tr("Save to database"));
    bar->addWidget(load);
    bar->addWidget(refresh);
    bar->addWidget(compare);
    bar->addWidget(m_note, 1);
    bar->addWidget(save);
    layout->addLayout(bar);
    m_status = new QLabel;
    layout->addWidget(m_status);
    connect(load, &QPushButton::clicked, this, &HistoryView::loadSelected);
    connect(compare, &QPushButton::clicked, this, &HistoryView::compareSelected);
    connect(m_table, &QTableView::doubleClicked, this, &HistoryView::loadSelected);
    connect(refresh, &QPushButton::clicked, this, [this] {
        QString error;
        m_status->setText(m_session->refreshHistory(&error) ? tr("%1 results").arg(m_session->history()->rowCount()) : error);
    });
    connect(save, &QPushButton::clicked, this, [this] {
        QString error;
        if (m_session->saveToDatabase(m_note->text(), &error)) {
            m_status->setText(tr("saved to %1").arg(m_session->databasePath()));
            m_note->clear();
        } else {
            m_status->setText(error);
        }
    });
    connect(session->history(), &QAbstractItemModel::modelReset, this, [this] {
        m_status->setText(tr("%1 results for this problem in %2").arg(m_session->history()->rowCount()).arg(m_session->databasePath()));
    });
}

void HistoryView::loadSelected() {
    auto rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        return;
    }
    QString error;
    if (!m_session->loadFromHistory(m_proxy->mapToSource(rows.first()).row(), &error)) {
        m_status->setText(error);
    }
}

void HistoryView::compareSelected() {
    auto rows = m_table->selectionModel()->selectedRows();
    if (rows.size() != 2) {
        m_status->setText(tr("select two results to compare"));
        return;
    }
    const auto &all = m_session->history()->rows();
    const HistoryModel::Row &a = all[m_proxy->mapToSource(rows[0]).row()];
    const HistoryModel::Row &b = all[m_proxy->mapToSource(rows[1]).row()];
    ScheduleComparison c = compareSchedules(a, b);
    if (!c.error.isEmpty()) {
        m_status->setText(c.error);
        return;
    }
    auto *dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Schedule %1 vs %2").arg(c.hashA, c.hashB));
    auto *layout = new QVBoxLayout(dialog);
    layout->addWidget(new QLabel(tr("A %1: %2\nB %3: %4\n%5 changed, %6 only in A, %7 only in B")
                                     .arg(c.hashA, c.metricsA, c.hashB, c.metricsB)
                                     .arg(c.changed)
                                     .arg(c.onlyA)
                                     .arg(c.onlyB)));
    auto *table = new QTableWidget(c.directives.size(), 3);
    table->setHorizontalHeaderLabels({tr("directive"), tr("A"), tr("B")});
    for (int i = 0; i < c.directives.size(); ++i) {
        const DirectiveDiffRow &d = c.directives[i];
        table->setItem(i, 0, new QTableWidgetItem(d.id));
        table->setItem(i, 1, new QTableWidgetItem(d.a));
        table->setItem(i, 2, new QTableWidgetItem(d.b));
        if (d.kind != DirectiveDiffRow::Same) {
            QColor tint = d.kind == DirectiveDiffRow::Changed ? QColor(255, 240, 190) : QColor(220, 235, 255);
            for (int col = 0; col < 3; ++col) {
                table->item(i, col)->setBackground(QBrush(tint));
            }
        }
    }
    table->horizontalHeader()->setStretchLastSection(true);
    table->resizeColumnsToContents();
    layout->addWidget(table);
    dialog->resize(900, 400);
    dialog->show();
}

} // namespace tessel::ide
