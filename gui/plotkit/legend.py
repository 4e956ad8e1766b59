"""A legend beside a plot whose rows select what they name."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSizePolicy

from ..look import palette
from ..look.style import PLOT_FONT_POINTS, pen, plot_colour


class SelectingSample(pg.ItemSample):
    """A legend sample that selects its accelerator when clicked (instead of hiding it)."""

    def mouseClickEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            event.accept()
            self.sigClicked.emit(self.item)


class AcceleratorLegend:
    """A legend beside the plot (not over the data): one row per shown accelerator, in its
    colour and class marker; clicking a row selects the accelerator; the selected row is bold.

    ``describe(accelerator_id)`` gives the row's (label, marker symbol)."""

    def __init__(self, layout: pg.GraphicsLayout, describe: Callable[[str], tuple[str, str]],
                 on_select: Callable[[str], None]) -> None:
        self.legend = pg.LegendItem(
            labelTextSize=f"{PLOT_FONT_POINTS}pt", sampleType=SelectingSample, verSpacing=-4, frame=False
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

    def _label(self, accelerator_id: str) -> str:
        return self.describe(accelerator_id)[0]

    def labels(self) -> list[str]:
        return [label.text for _sample, label in self.legend.items]
