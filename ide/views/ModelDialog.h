#ifndef TESSEL_IDE_VIEWS_MODELDIALOG_H
#define TESSEL_IDE_VIEWS_MODELDIALOG_H

// File > Open model: an ONNX model through the model compiler's passes, its kernels listed
// (node, operator, fused group, generator, parameters, output shape: what `tessel model run`
// would compile for each), one of them opened as the IDE's problem with the automatic
// scheduler's schedule, to look at and tune. The model-level views (the whole network's
// timeline, memory plan) belong to the model compiler's issue.

#include "graph/ModelRunner.h"

#include <QDialog>

#include <vector>

class QTableWidget;

namespace tessel::ide {

class ModelDialog : public QDialog {
    Q_OBJECT
public:
    ModelDialog(const QString &model, std::vector<tessel::graph::ModelKernel> kernels,
                QWidget *parent = nullptr);
    /** The kernel chosen (index into kernels()), or -1. */
    int chosen() const;
    const std::vector<tessel::graph::ModelKernel> &kernels() const { return m_kernels; }
    QTableWidget *table() const { return m_table; }

private:
    std::vector<tessel::graph::ModelKernel> m_kernels;
    QTableWidget *m_table;
};

} // namespace tessel::ide

#endif
