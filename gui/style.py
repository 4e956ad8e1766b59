"""Plot styling shared by every panel: light background, large type, thick lines — readable
on a projector at the back of a room."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QFont, QPixmapCache

PLOT_FONT_POINTS = 11
# Plots keep some items as device pictures (see roofline.LineSet); Qt's default 10 MB cache
# holds one full-screen plot picture at most on a 4K screen, and one that does not fit is drawn
# anew at every paint.
PIXMAP_CACHE_KB = 64 * 1024
LINE_WIDTH = 2.0
GRID_ALPHA = 0.25


def configure_pyqtgraph() -> None:
    """Global pyqtgraph options; call once before any plot is created."""
    pg.setConfigOptions(background="w", foreground="k", antialias=True)
    QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), PIXMAP_CACHE_KB))


def plot_font() -> QFont:
    font = QFont()
    font.setPointSize(PLOT_FONT_POINTS)
    return font


def style_plot(plot: pg.PlotItem, *, title: str | None = None, x_label: str, x_unit: str | None,
               y_label: str, y_unit: str | None) -> None:
    """Axis labels with units, readable tick fonts and a light grid.

    Units are given to pyqtgraph apart from the label so it can add SI prefixes (k, M, G, T)
    to linear axes; log axes keep the raw unit."""
    font = plot_font()
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setTickFont(font)
        axis.setPen(pg.mkPen("k", width=1))
        axis.setTextPen(pg.mkPen("k"))
    label_style = {"font-size": f"{PLOT_FONT_POINTS + 1}pt"}
    plot.setLabel("bottom", x_label, units=x_unit, **label_style)
    plot.setLabel("left", y_label, units=y_unit, **label_style)
    if title:
        plot.setTitle(title, size=f"{PLOT_FONT_POINTS + 2}pt")
    plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)


def pen(colour: str, *, width: float = LINE_WIDTH, dashed: bool = False) -> pg.QtGui.QPen:
    style = pg.QtCore.Qt.PenStyle.DashLine if dashed else pg.QtCore.Qt.PenStyle.SolidLine
    return pg.mkPen(colour, width=width, style=style)
