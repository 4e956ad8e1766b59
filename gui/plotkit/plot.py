"""A plot item as the app's plots want it: made without a context menu.

Every plot here turns its menu off; pyqtgraph's ViewBox builds its menu (a QMenu and the range
controls' widgets, ~4 ms) unless told at construction not to, and a window has some eighty
plots, so each is made menu-less from the start.
"""

from __future__ import annotations

import pyqtgraph as pg


def add_plot(layout: pg.GraphicsLayout, **options) -> pg.PlotItem:
    """``layout.addPlot(**options)`` with a ViewBox that has no context menu."""
    return layout.addPlot(viewBox=pg.ViewBox(enableMenu=False), **options)
