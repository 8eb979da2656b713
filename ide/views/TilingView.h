#ifndef TESSEL_IDE_VIEWS_TILINGVIEW_H
#define TESSEL_IDE_VIEWS_TILINGVIEW_H

// The tiling view: the output's iteration space with its tile grid, and each
// input with the box the selected tile stages at every level, drawn where it
// sits (dashed: where the tile's other loops, e.g. the reduction chunks, move
// it), sizes and copies named. Clicking a tile selects it and the tiling directive.
// A caption too long for its pane is elided and shown whole in its tooltip; a
// tensor of more than two dimensions is drawn as its innermost plane with the
// others stacked behind it, the caption saying how many.

#include "ide/core/Geometry.h"

#include <QVector>
#include <QWidget>

namespace tessel::ide {

class Session;

class TilingView : public QWidget {
    Q_OBJECT
public:
    explicit TilingView(Session *session, QWidget *parent = nullptr);
    QSize sizeHint() const override { return {700, 300}; }
    /** The output's tile grid as drawn now. */
    TileGrid outputGrid() const;
    /** Selects output tile (column, row): every input's box is drawn where that tile reads it. */
    void selectTile(int column, int row);
    std::pair<int, int> selectedTile() const { return m_tile; }
    /** The captions the last paint drew: where, the whole text (the tooltip), the text shown. */
    struct Caption {
        QRectF rect;
        QString text, shown;
    };
    const QVector<Caption> &captions() const { return m_captions; }

protected:
    void paintEvent(QPaintEvent *) override;
    void mouseReleaseEvent(QMouseEvent *e) override;
    bool event(QEvent *e) override;

private:
    QRectF panel(int index, int count) const;
    static QRectF fit(const QRectF &box, double w, double h);
    Session *m_session;
    std::pair<int, int> m_tile{0, 0};
    QVector<Caption> m_captions;
};

} // namespace tessel::ide

#endif
