"""Plot styling shared by every panel: large type, thick lines — readable on a projector at the
back of a room — in the colours of the current plot theme (:mod:`gui.theme`).

Panels write colours as they look on a white canvas and turn them into pens, brushes and
colours here (or through the theme), so a panel built under the dark theme is dark."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QPixmapCache

from . import theme

PLOT_FONT_POINTS = 11
# Plots keep some items as device pictures (see plotkit.points.LineSet); Qt's default 10 MB cache
# holds one full-screen plot picture at most on a 4K screen, and one that does not fit is drawn
# anew at every paint.
PIXMAP_CACHE_KB = 64 * 1024
LINE_WIDTH = 2.0
GRID_ALPHA = 0.25


def configure_pyqtgraph(plot_theme: theme.PlotTheme = theme.LIGHT) -> None:
    """Global pyqtgraph options and the plot theme; call before plots are created (again with
    another theme before plots are built in it)."""
    pg.setConfigOptions(antialias=True)
    theme.set_current(plot_theme)
    QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), PIXMAP_CACHE_KB))


def plot_colour(colour: object) -> QColor:
    """``colour`` (as it looks on a white canvas) in the current plot theme."""
    return theme.current().colour(colour)


def plot_text_colour(colour: object) -> QColor:
    """A text colour (as on a white canvas) in the current plot theme, at 4.5:1 or more."""
    return theme.current().text_colour(colour)


def plot_pen(colour: object, **options) -> pg.QtGui.QPen:
    """pg.mkPen in the current plot theme; None is no pen."""
    return pg.mkPen(None if colour is None else plot_colour(colour), **options)


def plot_brush(colour: object) -> pg.QtGui.QBrush:
    """pg.mkBrush in the current plot theme; None is no brush."""
    return pg.mkBrush(None if colour is None else plot_colour(colour))


def html_colour(colour: object) -> str:
    """#RRGGBB of ``colour`` in the current plot theme, for rich text on the plots."""
    return theme.current().hex(colour)


def html_text_colour(colour: object) -> str:
    """#RRGGBB of a text colour in the current plot theme (4.5:1 or more), for rich text."""
    return plot_text_colour(colour).name()


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
        axis.setPen(plot_pen("k", width=1))
        axis.setTextPen(plot_pen("k"))
    label_style = {"font-size": f"{PLOT_FONT_POINTS + 1}pt", "color": html_colour("k")}
    plot.setLabel("bottom", x_label, units=x_unit, **label_style)
    plot.setLabel("left", y_label, units=y_unit, **label_style)
    if title:
        plot.setTitle(title, size=f"{PLOT_FONT_POINTS + 2}pt", color=html_colour("k"))
    plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)


def pen(colour: object, *, width: float = LINE_WIDTH, dashed: bool = False) -> pg.QtGui.QPen:
    """A line's pen in the current plot theme."""
    style = pg.QtCore.Qt.PenStyle.DashLine if dashed else pg.QtCore.Qt.PenStyle.SolidLine
    return plot_pen(colour, width=width, style=style)
