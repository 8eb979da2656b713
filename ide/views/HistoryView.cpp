#include "ide/views/HistoryView.h"

#include "ide/core/Session.h"

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
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(20);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table);
    auto *bar = new QHBoxLayout;
    auto *load = new QPushButton(tr("Load schedule"));
    auto *refresh = new QPushButton(tr("Refresh"));
    m_note = new QLineEdit;
    m_note->setPlaceholderText(tr("note for this run"));
    auto *save = new QPushButton(tr("Save to database"));
    bar->addWidget(load);
    bar->addWidget(refresh);
    bar->addWidget(m_note, 1);
    bar->addWidget(save);
    layout->addLayout(bar);
    m_status = new QLabel;
    layout->addWidget(m_status);
    connect(load, &QPushButton::clicked, this, &HistoryView::loadSelected);
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

} // namespace tessel::ide
