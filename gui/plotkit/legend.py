"""A legend beside a plot whose rows select what they name."""

from __future__ import annotations

import math
from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSizePolicy

from ..look import palette
from ..look.style import PLOT_FONT_POINTS, pen, plot_colour

# Rows are closer than their labels' boxes (the boxes have room to spare): by this much, or where
# the plot is short, by up to the last before a second column is taken.
LEGEND_ROW_SPACINGS_PX = (-4, -6, -8)


class SelectingSample(pg.ItemSample):
    """A legend sample that selects its accelerator when clicked (instead of hiding it)."""

    def mouseClickEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            event.accept()
            self.sigClicked.emit(self.item)


class AcceleratorLegend:
    """A legend beside the plot (not over the data): one row per shown accelerator, in its
    colour and class marker; clicking a row selects the accelerator; the selected row is bold.
    Its rows take as many columns as the plot's height needs (a projector's screen is short:
    two dozen rows in one column made the plot taller than its view, and cut its axis off).

    ``describe(accelerator_id)`` gives the row's (label, marker symbol)."""

    def __init__(self, layout: pg.GraphicsLayout, describe: Callable[[str], tuple[str, str]],
                 on_select: Callable[[str], None]) -> None:
        self.legend = pg.LegendItem(
            labelTextSize=f"{PLOT_FONT_POINTS}pt", sampleType=SelectingSample, verSpacing=LEGEND_ROW_SPACINGS_PX[0],
            frame=False
        )
        layout.addItem(self.legend, row=0, col=1)
        # Keep the rows together at the top instead of spread over the plot's height.
        self.legend.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        layout.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.describe = describe
        self.on_select = on_select
        self.samples: dict[str, pg.PlotDataItem] = {}  # not in any plot: only drawn by the legend
        self.shown: tuple[str, ...] = ()
        self.selected: str | None = None
        self.host = layout
        layout.geometryChanged.connect(self.fit_columns)
        # The view's shown range is the height there is (the layout grows past it when its rows do not fit).
        self.views: list[pg.GraphicsView] = list(layout.scene().views()) if layout.scene() is not None else []
        for view in self.views:
            view.sigDeviceRangeChanged.connect(lambda *_args: self.fit_columns())

    def _sample(self, accelerator_id: str) -> pg.PlotDataItem:
        if accelerator_id not in self.samples:
            colour = palette.colour_for(accelerator_id)
            symbol = self.describe(accelerator_id)[1]
            drawn = plot_colour(colour)
            sample = pg.PlotDataItem(pen=pen(colour), symbol=symbol, symbolBrush=drawn, symbolPen=drawn, symbolSize=11)
            # The legend draws a line sample's marker from its scatter's own options, which a
            # PlotDataItem without data never sets: without this every marker is pyqtgraph's grey.
            sample.scatter.setBrush(drawn)
            sample.scatter.setPen(drawn)
            sample.scatter.setSize(11)
            self.samples[accelerator_id] = sample
        return self.samples[accelerator_id]

    def show(self, accelerators: tuple[str, ...], selected: str | None) -> None:
        rebuilt = accelerators != self.shown
        if rebuilt:
            self.legend.clear()
            for accelerator_id in accelerators:
                self.legend.addItem(self._sample(accelerator_id), self._label(accelerator_id))
                sample, _label = self.legend.items[-1]
                sample.sigClicked.connect(lambda _item, a=accelerator_id: self.on_select(a))
            self.shown = accelerators
        if rebuilt or selected != self.selected:
            for (_sample, label), accelerator_id in zip(self.legend.items, self.shown, strict=True):
                label.setText(self._label(accelerator_id), bold=accelerator_id == selected, size=f"{PLOT_FONT_POINTS}pt")
            self.selected = selected
        if rebuilt:
            self.fit_columns()

    def fit_columns(self) -> None:
        """Lay the rows out in the fewest columns that fit the height the legend has beside the
        plot, drawing them closer together first where that is enough."""
        items = self.legend.items
        if not items:
            return
        _left, top, _right, bottom = self.host.layout.getContentsMargins()
        _left, own_top, _right, own_bottom = self.legend.layout.getContentsMargins()
        height = min([self.host.geometry().height(), *(view.range.height() for view in self.views)])
        available = height - top - bottom - own_top - own_bottom
        preferred = Qt.SizeHint.PreferredSize  # not their heights now: a layout may have stretched them
        box = max(max(sample.effectiveSizeHint(preferred).height(), label.effectiveSizeHint(preferred).height())
                  for sample, label in items)
        if box <= 0 or available <= 0:
            return
        for columns in range(1, len(items) + 1):
            rows = math.ceil(len(items) / columns)
            spacing = next((s for s in LEGEND_ROW_SPACINGS_PX if rows * (box + s) - s <= available), None)
            if spacing is not None or rows == 1:
                break
        spacing = LEGEND_ROW_SPACINGS_PX[-1] if spacing is None else spacing
        if (spacing, columns) == (self.legend.layout.verticalSpacing(), self.legend.columnCount):
            return
        self.legend.layout.setVerticalSpacing(spacing)
        if columns != self.legend.columnCount:
            self.legend.setColumnCount(columns)
        else:
            self.legend.updateSize()
        for view in self.views:
            if view.centralWidget is self.host:
                # The layout may have grown past the view for the rows as they were: fit it to the view again.
                self.host.setGeometry(view.range)

    def _label(self, accelerator_id: str) -> str:
        return self.describe(accelerator_id)[0]

    def labels(self) -> list[str]:
        return [label.text for _sample, label in self.legend.items]
