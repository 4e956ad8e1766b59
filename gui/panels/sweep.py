"""The batch-sweep panel: throughput against latency over batch 1 ... 1024 for every shown
accelerator (Brunetta et al., Fig. 2), with the current batch marked.

Points come from the Frame's sweep (one kernel column per accelerator and batch). A batch
that does not fit is drawn, not dropped: a batch whose KV cache overflows runs in waves
(hollow marker), a model whose weights do not fit gives hypothetical numbers (faded ×,
dashed line).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from accelscope.engine import codes
from accelscope.engine import kernels as k
from accelscope.engine.catalog import Catalog
from accelscope.engine.frame import Frame

from .. import palette
from ..style import LINE_WIDTH, PLOT_FONT_POINTS, pen, plot_font
from .base import Panel
from .roofline import Marker, SpotRef, log_log_plot, number

FITS, WAVES, NO_FIT = 0, 1, 2  # how a point is drawn
NO_FIT_SYMBOL = "x"
FADED_ALPHA = 110  # of 255, for what cannot run

MARKER_SIZE = 9.0
SELECTED_MARKER_SIZE = 12.0
CURRENT_MARKER_SIZE = 20.0
SELECTED_LINE_WIDTH = 4.5
LABELLED_BATCHES = (1, 8, 64, 512)  # written beside the selected accelerator's curve


def duration_text(seconds: float) -> str:
    if not np.isfinite(seconds):
        return "n/a"
    if seconds < 1.0:
        return f"{number(seconds * 1e3)} ms"
    return f"{number(seconds)} s"


# What a sweep curve is drawn from: when these are unchanged, so is the curve.
SWEEP_ROWS = [k.O_E2E, k.O_THROUGHPUT_OUTPUT, k.O_FITS, k.O_WAVES]
CURRENT_PEN = pg.mkPen("k", width=2)  # one object: pyqtgraph caches symbols by pen identity


def marker_states(fits: np.ndarray, waves: np.ndarray) -> np.ndarray:
    return np.where(fits == 0, NO_FIT, np.where(waves > 1, WAVES, FITS))


@dataclass
class _Style:
    """Marker symbol, pen and brush of each state, made once per accelerator."""

    symbols: tuple[str, str, str]
    pens: tuple[pg.QtGui.QPen, pg.QtGui.QPen, pg.QtGui.QPen]
    brushes: tuple[pg.QtGui.QBrush, pg.QtGui.QBrush, pg.QtGui.QBrush]
    faded: QColor  # the accelerator's colour, for what cannot run


@dataclass
class _SweepItems:
    curve: pg.PlotDataItem  # solid where the weights fit; a marker per batch, with tips
    hypothetical: pg.PlotDataItem  # dashed, faded: the segments where the weights do not fit
    current: Marker  # the scenario's batch, large and ringed
    style: _Style
    styled_selected: bool | None = None  # whether the items are styled as the selected one
    # What was last drawn, so a frame only touches what changed: the sweep's inputs
    # (latency, throughput, fits, waves per batch; they do not depend on the current batch,
    # so a batch drag leaves the curves alone) and the current point (x, y, state).
    curve_drawn: np.ndarray | None = None
    current_drawn: tuple | None = ()  # () never drawn, None drawn empty
    visible: bool = False

    def all(self) -> list[pg.GraphicsObject]:
        return [self.curve, self.hypothetical, self.current]


class SweepPanel(Panel):
    title = "Batch sweep"

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self.graphics, self.plot, self.legend = log_log_plot(
            self, title="Throughput against latency, batch 1 → 1024", x_label="End-to-end latency of the batch",
            x_unit="s", y_label="Throughput, output tokens (whole system)", y_unit="tokens/s",
        )

        self.batch_labels: dict[int, pg.TextItem] = {}
        label_font = plot_font()
        label_font.setPointSize(PLOT_FONT_POINTS - 1)
        for batch in LABELLED_BATCHES:
            text = pg.TextItem(f"B={batch}", color="#222222", anchor=(-0.15, -0.1), fill=pg.mkBrush(255, 255, 255, 190))
            text.setFont(label_font)
            text.setZValue(30)
            text.setVisible(False)
            self.plot.addItem(text, ignoreBounds=True)
            self.batch_labels[batch] = text

        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setFont(plot_font())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.graphics, stretch=1)
        layout.addWidget(self.note)
        self._note_batch: int | None = None
        self._set_note(None)

        self.items: dict[str, _SweepItems] = {}
        self._label_places: list[tuple[float, float] | None] | None = None  # where the B= labels are

    # ---- items ---------------------------------------------------------------------------

    def _style(self, accelerator_id: str) -> _Style:
        colour = palette.colour_for(accelerator_id)
        symbol = palette.symbol_for(self.catalog.accelerators[accelerator_id].architecture_class)
        faded = QColor(colour)
        faded.setAlpha(FADED_ALPHA)
        return _Style(
            symbols=(symbol, symbol, NO_FIT_SYMBOL),
            pens=(pg.mkPen(colour, width=1), pg.mkPen(colour, width=2), pg.mkPen(faded, width=1)),
            brushes=(pg.mkBrush(colour), pg.mkBrush("w"), pg.mkBrush(faded)),
            faded=faded,
        )

    def _items_for(self, accelerator_id: str) -> _SweepItems:
        if accelerator_id in self.items:
            return self.items[accelerator_id]
        style = self._style(accelerator_id)
        items = _SweepItems(
            curve=pg.PlotDataItem(pen=pen(palette.colour_for(accelerator_id)), symbolSize=MARKER_SIZE),
            hypothetical=pg.PlotDataItem(pen=pen(style.faded, dashed=True)),
            current=Marker(symbol=style.symbols[FITS], size=CURRENT_MARKER_SIZE, tip=self._tip),
            style=style,
        )
        items.curve.scatter.setData(hoverable=True, tip=self._tip)
        for item in (items.curve, items.current):
            item.sigPointsClicked.connect(self._points_clicked)
        items.curve.setCurveClickable(True, width=8)
        # The line itself (its points report through sigPointsClicked).
        items.curve.curve.sigClicked.connect(lambda _curve, _ev, a=accelerator_id: self.accelerator_selected.emit(a))
        for z, item in ((2, items.curve), (1, items.hypothetical), (5, items.current)):
            item.setZValue(z)
            self.plot.addItem(item)
        self.items[accelerator_id] = items
        return items

    # ---- updates -------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        shown = set(frame.accelerators)
        for accelerator_id, items in self.items.items():
            if accelerator_id not in shown:
                self._show(items, False)

        # The sweep's inputs for every accelerator at once: [row, accelerator, batch].
        sweep = frame.sweep[SWEEP_ROWS]
        for j, accelerator_id in enumerate(frame.accelerators):
            items = self._items_for(accelerator_id)
            if items.curve_drawn is None or not np.array_equal(items.curve_drawn, sweep[:, j], equal_nan=True):
                self._draw_sweep(items, accelerator_id, frame, j)
                items.curve_drawn = sweep[:, j].copy()
            self._draw_current(items, accelerator_id, frame, j)
            self._show(items, True)

        self.legend.show(frame.accelerators, self.selected)
        self._apply_selection()
        self._set_note(frame.workspace.scenario.batch)

    @staticmethod
    def _show(items: _SweepItems, visible: bool) -> None:
        """Show or hide an accelerator's items (only on a change: each call makes Qt work)."""
        if items.visible != visible:
            for item in items.all():
                item.setVisible(visible)
            items.visible = visible

    def _draw_sweep(self, items: _SweepItems, accelerator_id: str, frame: Frame, j: int) -> None:
        x = frame.sweep[k.O_E2E, j]
        y = frame.sweep[k.O_THROUGHPUT_OUTPUT, j]
        drawable = np.flatnonzero(np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0))
        if drawable.size == 0:
            items.curve.setData([], [])
            items.hypothetical.setData([], [])
        else:
            self._draw_curve(items, accelerator_id, frame, j, x, y, drawable)

    def _draw_curve(self, items: _SweepItems, accelerator_id: str, frame: Frame, j: int,
                    x: np.ndarray, y: np.ndarray, drawable: np.ndarray) -> None:
        style = items.style
        states = marker_states(frame.sweep[k.O_FITS, j], frame.sweep[k.O_WAVES, j])[drawable]
        runs = states != NO_FIT
        solid = np.append(runs[:-1] & runs[1:], False)  # connect[i]: join point i to i + 1
        items.curve.setData(
            x[drawable],
            y[drawable],
            connect=solid,
            symbol=[style.symbols[s] for s in states],
            symbolPen=[style.pens[s] for s in states],
            symbolBrush=[style.brushes[s] for s in states],
            data=[SpotRef(accelerator_id, "sweep", int(c)) for c in drawable],
        )
        items.hypothetical.setData(x[drawable], y[drawable], connect=np.append(~solid[:-1], False))

    def _draw_current(self, items: _SweepItems, accelerator_id: str, frame: Frame, j: int) -> None:
        x = float(frame.current[k.O_E2E, j])
        y = float(frame.current[k.O_THROUGHPUT_OUTPUT, j])
        if not (np.isfinite(x) and np.isfinite(y) and x > 0 and y > 0):
            if items.current_drawn is not None:
                items.current.clear_point()
                items.current_drawn = None
            return
        state = int(marker_states(frame.current[k.O_FITS, j], frame.current[k.O_WAVES, j]))
        drawn = (x, y, state)
        if drawn == items.current_drawn:
            return
        restyle = not items.current_drawn or items.current_drawn[2] != state
        items.current.set_point(x, y, SpotRef(accelerator_id, "current"), symbol=items.style.symbols[state],
                                pen=CURRENT_PEN, brush=items.style.brushes[state], restyle=restyle)
        items.current_drawn = drawn

    def _set_note(self, batch: int | None) -> None:
        if batch == self._note_batch and self.note.text():
            return
        current = f"the current batch ({batch})" if batch is not None else "the current batch"
        self.note.setText(
            "One line per accelerator, batch 1 → 1024 (static batch; B= labels follow the selected "
            f"accelerator). Large ringed marker: {current}. Filled: fits · hollow: KV cache "
            "overflows, runs in waves · faded × on a dashed line: weights do not fit "
            "(hypothetical). Marker shape: accelerator class. Hover for values, click to select."
        )
        self._note_batch = batch

    # ---- selection -----------------------------------------------------------------------

    def set_selected(self, accelerator_id: str | None) -> None:
        if self.frame is not None:
            self.legend.show(self.frame.accelerators, accelerator_id)
        super().set_selected(accelerator_id)  # then restyles the items

    def _apply_selection(self) -> None:
        for accelerator_id, items in self.items.items():
            chosen = accelerator_id == self.selected
            if items.styled_selected == chosen:
                continue  # restyling makes pyqtgraph redo the item: only on a change
            items.styled_selected = chosen
            width = SELECTED_LINE_WIDTH if chosen else LINE_WIDTH
            items.curve.setPen(pen(palette.colour_for(accelerator_id), width=width))
            items.hypothetical.setPen(pen(items.style.faded, width=width, dashed=True))
            items.curve.setSymbolSize(SELECTED_MARKER_SIZE if chosen else MARKER_SIZE)
            lift = 10 if chosen else 0
            for z, item in ((2, items.curve), (1, items.hypothetical), (5, items.current)):
                item.setZValue(z + lift)
        self._place_batch_labels()

    def _place_batch_labels(self) -> None:
        """Batch sizes beside the selected accelerator's curve (the first shown if none is)."""
        frame = self.frame
        target = None
        if frame is not None and frame.accelerators:
            target = self.selected if self.selected in frame.accelerators else frame.accelerators[0]
        places: list[tuple[float, float] | None] = []
        for batch in self.batch_labels:
            place = None
            if target is not None and batch in frame.sweep_batches:
                column = int(np.searchsorted(frame.sweep_batches, batch))
                x = frame.sweep_values(k.O_E2E, target)[column]
                y = frame.sweep_values(k.O_THROUGHPUT_OUTPUT, target)[column]
                if np.isfinite(x) and np.isfinite(y) and x > 0 and y > 0:
                    place = (float(np.log10(x)), float(np.log10(y)))  # view coordinates: log10 on log axes
            places.append(place)
        if places == self._label_places:
            return  # moving or showing a text item costs even when nothing changes
        for text, place in zip(self.batch_labels.values(), places, strict=True):
            if place is None:
                text.setVisible(False)
            else:
                text.setPos(*place)
                text.setVisible(True)
        self._label_places = places

    def _points_clicked(self, _item, points, _event) -> None:
        if len(points):
            self.accelerator_selected.emit(points[0].data().accelerator)

    # ---- hover ---------------------------------------------------------------------------

    def _tip(self, x: float, y: float, data: SpotRef) -> str:
        return self.tip_for(data)

    def tip_for(self, ref: SpotRef) -> str:
        """The tool tip of a point, from the current frame."""
        frame = self.frame
        if frame is None or ref.accelerator not in frame.accelerators:
            return ""
        j = frame.index(ref.accelerator)
        if ref.role == "current":
            column, batch = frame.current[:, j], frame.workspace.scenario.batch
        else:
            column, batch = frame.sweep[:, j, ref.index], int(frame.sweep_batches[ref.index])
        name = self.catalog.accelerators[ref.accelerator].name
        lines = [
            f"{name} — batch {batch}" + (" (current)" if ref.role == "current" else ""),
            f"end-to-end latency: {duration_text(column[k.O_E2E])}",
            f"throughput: {number(column[k.O_THROUGHPUT_OUTPUT])} output tokens/s (whole system)",
            f"ITL: {duration_text(column[k.O_ITL])} · TTFT: {duration_text(column[k.O_TTFT])}",
        ]
        if column[k.O_FITS] == 0:
            reason = codes.FIT_REASONS.get(int(column[k.O_FIT_CODE]), "")
            lines.append(f"does not fit (hypothetical): {reason}")
        elif column[k.O_WAVES] > 1:
            lines.append(f"KV cache does not fit: runs in {int(column[k.O_WAVES])} waves")
        return "\n".join(lines)

    # ---- read back -------------------------------------------------------------------------

    def plotted(self) -> dict[str, np.ndarray]:
        """What is drawn, read back from the items. ``x`` (latency, s) and ``y`` (output
        tokens/s) are [accelerator, batch] with NaN where no point is drawn; ``state`` is
        FITS (0), WAVES (1) or NO_FIT (2) as the marker shows it, -1 where none is drawn."""
        frame = self.frame
        shown = [a for a in (frame.accelerators if frame else ()) if self.items[a].curve.isVisible()]
        batches = frame.sweep_batches if frame else np.empty(0, dtype=np.int64)
        x = np.full((len(shown), len(batches)), np.nan)
        y = np.full_like(x, np.nan)
        state = np.full(x.shape, -1, dtype=np.int64)
        current = np.full((len(shown), 2), np.nan)
        current_state = np.full(len(shown), -1, dtype=np.int64)
        for i, accelerator_id in enumerate(shown):
            items = self.items[accelerator_id]
            xs, ys = items.curve.getOriginalDataset()
            if xs is None:
                continue
            columns = [ref.index for ref in items.curve.opts["data"]]
            x[i, columns], y[i, columns] = xs, ys
            state[i, columns] = [self._state_of(items, sym, brush) for sym, brush in
                                 zip(items.curve.opts["symbol"], items.curve.opts["symbolBrush"], strict=True)]
            cx, cy = items.current.getOriginalDataset()
            if cx is not None and len(cx):
                current[i] = cx[0], cy[0]
                current_state[i] = self._state_of(items, items.current.opts["symbol"], items.current.opts["symbolBrush"])
        return {
            "accelerators": np.array(shown, dtype=object),
            "batches": np.asarray(batches),
            "x": x,
            "y": y,
            "state": state,
            "current_x": current[:, 0],
            "current_y": current[:, 1],
            "current_state": current_state,
            "hypothetical_segments": np.array(
                [int(np.count_nonzero(self.items[a].hypothetical.opts["connect"])) for a in shown]
            ),
        }

    @staticmethod
    def _state_of(items: _SweepItems, symbol: str, brush) -> int:
        if symbol == NO_FIT_SYMBOL:
            return NO_FIT
        return WAVES if pg.mkBrush(brush).color() == QColor("white") else FITS
