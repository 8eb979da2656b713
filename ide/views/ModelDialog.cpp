#include "ide/views/ModelDialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tessel::ide {

ModelDialog::ModelDialog(const QString &model, std::vector<tessel::graph::ModelKernel> kernels,
                         QWidget *parent)
    : QDialog(parent), m_kernels(std::move(kernels)) {
    setWindowTitle(tr("Open model: %1").arg(model));
    resize(900, 480);
    auto *layout = new QVBoxLayout(this);
    int computed = 0;
    for (const auto &k : m_kernels) {
        computed += !k.generator.empty();
    }
    layout->addWidget(new QLabel(
        tr("%1 kernels after the model compiler's passes. Open one as the problem, with the "
           "automatic scheduler's schedule, to look at it and tune it.")
            .arg(computed)));
    m_table = new QTableWidget(int(m_kernels.size()), 6);
    m_table->setObjectName(QStringLiteral("modelKernels"));
    m_table->setHorizontalHeaderLabels(
        {tr("node"), tr("op"), tr("group"), tr("generator"), tr("params"), tr("shape")});
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(20);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int i = 0; i < int(m_kernels.size()); ++i) {
        const auto &k = m_kernels[size_t(i)];
        const QString cells[6] = {QString::fromStdString(k.node),
                                  QString::fromStdString(k.op),
                                  k.group >= 0 ? QString::number(k.group) : QString(),
                                  k.generator.empty() ? tr("(not computed)")
                                                      : QString::fromStdString(k.generator),
                                  QString::fromStdString(k.params_text),
                                  QString::fromStdString(k.shape)};
        for (int c = 0; c < 6; ++c) {
            auto *item = new QTableWidgetItem(cells[c]);
            item->setToolTip(cells[c]);
            if (k.generator.empty()) {
                item->setFlags(item->flags() & ~(Qt::ItemIsSelectable | Qt::ItemIsEnabled));
            }
            m_table->setItem(i, c, item);
        }
    }
    m_table->resizeColumnsToContents();
    layout->addWidget(m_table, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel);
    QPushButton *open = buttons->button(QDialogButtonBox::Open);
    open->setEnabled(false);
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
            [this, open] { open->setEnabled(chosen() >= 0); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this] {
        if (chosen() >= 0) {
            accept();
        }
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

int ModelDialog::chosen() const {
    const auto rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        return -1;
    }
    const int r = rows.first().row();
    return r >= 0 && r < int(m_kernels.size()) && !m_kernels[size_t(r)].generator.empty() ? r : -1;
}

} // namespace tessel::ide
