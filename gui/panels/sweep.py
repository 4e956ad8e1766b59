"""The batch-sweep panel: throughput against latency over batch 1 ... 1024 for every shown
accelerator (Brunetta et al., Fig. 2), with the current batch marked.

Points come from the Frame's sweep (one kernel column per accelerator and batch). A batch
that does not fit is drawn, not dropped: a batch whose KV cache overflows runs in waves
(hollow marker), a model whose weights do not fit gives hypothetical numbers (faded ×,
dashed line).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QVBoxLayout, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core import codes
from accelscope.engine.core.units import duration_text, short_number
from accelscope.engine.physics.frame import Frame
from accelscope.engine.physics.results import Outputs

from ..look import palette
from ..look.style import LINE_WIDTH, PLOT_FONT_POINTS, plot_brush, plot_colour, plot_font, plot_pen, plot_text_colour
from ..plotkit.axes import opaque_over
from ..plotkit.picking import SpotRefs, select_on_click, spot_tip
from ..plotkit.points import LineSet, SpotRef, Spots, SteadyBounds, log_log_plot
from ..plotkit.text import INTERACTION_HINT, WrappedLabel
from .base import Panel, reference_note_label

FITS, WAVES, NO_FIT = 0, 1, 2  # how a point is drawn
NO_FIT_SYMBOL = "x"
FADED_ALPHA = 110  # of 255, for what cannot run

MARKER_SIZE = 9.0
SELECTED_MARKER_SIZE = 12.0
CURRENT_MARKER_SIZE = 20.0
SELECTED_LINE_WIDTH = 4.5
LABELLED_BATCHES = (1, 8, 64, 512)  # written beside the selected accelerator's curve


# What a sweep curve is drawn from: when these are unchanged, so is the curve.
SWEEP_FIELDS = ("e2e_latency_s", "throughput_output_tok_s", "fits", "waves")
# The pinned scenario A, drawn behind B: its curves thin, faint and dashed, its current batch a grey ring.
REFERENCE_ALPHA = 120
REFERENCE_LINE_WIDTH = 1.4
REFERENCE_DASHES = [6.0, 4.0]  # in pen widths: longer than the dashes of B's hypothetical segments
REFERENCE_CURRENT_COLOUR = "#8C8C8C"
REFERENCE_CURRENT_SIZE = 18.0


def marker_states(fits: np.ndarray, waves: np.ndarray) -> np.ndarray:
    return np.where(fits == 0, NO_FIT, np.where(waves > 1, WAVES, FITS))


def _joins(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's line joins ([row, point]: join the point to the next) from its points'
    states: the solid line joins neighbours that both run, the dashed line the others."""
    runs = states != NO_FIT
    solid = np.zeros(runs.shape, dtype=bool)
    solid[:, :-1] = runs[:, :-1] & runs[:, 1:]
    dashed = np.zeros(runs.shape, dtype=bool)
    dashed[:, :-1] = ~solid[:, :-1]
    return solid, dashed


@dataclass
class _Style:
    """Marker symbol, pen and brush of each state, and the lines' pens, made once per accelerator."""

    symbols: tuple[str, str, str]
    pens: tuple[pg.QtGui.QPen, pg.QtGui.QPen, pg.QtGui.QPen]
    brushes: tuple[pg.QtGui.QBrush, pg.QtGui.QBrush, pg.QtGui.QBrush]
    faded: QColor  # the accelerator's colour, for what cannot run
    line_pens: dict[bool, QPen]  # selected or not -> the solid line's pen
    dashed_pens: dict[bool, QPen]  # ... the dashed line's
    reference_pen: QPen  # the pinned scenario A's curve


@dataclass
class _SweepLines:
    """What the panel knows of one accelerator's lines (kept in the panel's :class:`LineSet`),
    made the first time it is shown; its markers live in the panel's :class:`Spots`, one item
    for every sweep point and one for the current batch."""

    accelerator_id: str
    style: _Style
    styled_selected: bool | None = None  # whether the lines are styled as the selected one
    version: int = 0  # counts redraws, so the merged points know when to follow
    # Counts redraws that changed which points are drawn or how (columns, states): a redraw
    # that only moved them lets the merged points move in place.
    styled_version: int = 0
    # The points drawn: their sweep columns, latency, throughput and state (FITS, WAVES, NO_FIT).
    columns: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    x: np.ndarray = field(default_factory=lambda: np.empty(0))
    y: np.ndarray = field(default_factory=lambda: np.empty(0))
    states: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    refs: list = field(default_factory=list)  # the points' SpotRefs
    # Where the accelerator's ways of drawing a point start in the panel's table of them
    # (SweepPanel._point_styles): a point is drawn the way at styles_at + 3 * selected + state.
    styles_at: int = 0
    visible: bool = False

    @property
    def curve(self) -> tuple[str, str]:
        """The key of the solid line (where the weights fit) in the panel's LineSet."""
        return (self.accelerator_id, "curve")

    @property
    def hypothetical(self) -> tuple[str, str]:
        """The key of the dashed, faded line: the segments where the weights do not fit."""
        return (self.accelerator_id, "hypothetical")

    @property
    def reference(self) -> tuple[str, str]:
        """The key of the pinned scenario A's curve (faint, dashed), shown only while comparing."""
        return (self.accelerator_id, "reference")

    def line_keys(self) -> list[tuple[str, str]]:
        return [self.curve, self.hypothetical]


LINES_Z, REFERENCE_TARGETS_Z, REFERENCE_CURRENT_Z, POINTS_Z, CURRENT_Z = 1, 0, 19, 20, 21  # markers above every line
REFERENCE_ORDER, HYPOTHETICAL_ORDER, CURVE_ORDER = 0, 1, 2  # within the lines: A's beneath B's
SELECTED_LIFT = 10  # the selected lines are drawn over the others


class SweepPanel(Panel):
    title = "Batch sweep"
    update_applies_selection = True

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self.graphics, self.plot, self.legend = log_log_plot(
            title="Throughput against latency, batch 1 → 1024", x_label="End-to-end latency of the batch",
            x_unit="s", y_label="Throughput, output tokens (whole system)", y_unit="tokens/s",
            describe=self.describe_accelerator, on_select=self.accelerator_selected.emit,
        )

        self.batch_labels: dict[int, pg.TextItem] = {}
        label_font = plot_font()
        label_font.setPointSize(PLOT_FONT_POINTS - 1)
        for batch in LABELLED_BATCHES:
            text = pg.TextItem(f"B={batch}", color=plot_text_colour("#222222"), anchor=(-0.15, -0.1),
                               fill=plot_brush((255, 255, 255, 190)))
            text.setFont(label_font)
            text.setZValue(30)
            text.setVisible(False)
            self.plot.addItem(text, ignoreBounds=True)
            self.batch_labels[batch] = text

        self.note = WrappedLabel()
        self.note.setFont(plot_font())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.graphics, stretch=1)
        layout.addWidget(self.note)
        self.reference_note = reference_note_label(
            "<b>ghost: A (pinned)</b> — faint long-dashed lines are the pinned scenario A's sweeps; the grey "
            "ring is A's current batch. Hover them for A's values."
        )
        layout.addWidget(self.reference_note)
        self._note_batch: int | None = None
        self._set_note(None)

        self.lines: dict[str, _SweepLines] = {}
        self.line_set = LineSet()  # every accelerator's solid and dashed line
        self.line_set.setZValue(LINES_Z)
        # The view's range follows the steady bounds alone, which hold every point drawn (see
        # _hold_range): the lines and markers need not count in it. Counted, the view asked
        # each for its bounds again after every move of the range (their padding is in
        # pixels), another ~0.4 ms a change with every accelerator shown.
        self.plot.addItem(self.line_set, ignoreBounds=True)
        self.steady = SteadyBounds()  # the view's range holds while the curves move inside it
        self.plot.addItem(self.steady)
        self._ref = SpotRefs()  # what each spot stands for
        tip = spot_tip(self.tip_for)
        # One item for every accelerator's sweep points, one for the current batches (see Spots).
        self.points = Spots(tip=tip, size=MARKER_SIZE)
        # Pens made once: pyqtgraph caches symbols by pen identity.
        self.current = Spots(tip=tip, size=CURRENT_MARKER_SIZE, pen=plot_pen("k", width=2))
        # The pinned scenario A: its current batches (grey rings), and hover targets along its curves.
        self.reference_current = Spots(tip=tip, size=REFERENCE_CURRENT_SIZE, symbol="o",
                                       pen=plot_pen(REFERENCE_CURRENT_COLOUR, width=2.5), brush=None)
        self.reference_targets = Spots(tip=tip, size=MARKER_SIZE, pen=None, brush=None, hover_only=True)
        for z, item in ((POINTS_Z, self.points), (CURRENT_Z, self.current),
                        (REFERENCE_CURRENT_Z, self.reference_current), (REFERENCE_TARGETS_Z, self.reference_targets)):
            item.setZValue(z)
            self.plot.addItem(item, ignoreBounds=True)  # held by the steady bounds
        select_on_click([self.points, self.current, self.reference_current, self.reference_targets], self.line_set,
                        self.accelerator_selected.emit)
        # What A's ghosts were drawn for: (A's frame, the shown accelerators), None before any.
        self._reference_drawn: tuple[Frame | None, tuple[str, ...]] | None = None
        self._points_key: tuple | None = None  # (accelerator, lines version) order the points were merged for
        self._points_styled_key: tuple | None = None  # ... and (accelerator, styled version) order
        # The sweep inputs last drawn, (accelerators, [latency/throughput/fits/waves, accelerator,
        # batch]): they do not depend on the current batch, so a batch drag leaves the lines and
        # points alone. An accelerator's lines show its column here while it stays shown.
        self._sweeps_drawn: tuple[tuple[str, ...], np.ndarray] | None = None
        # Every way a sweep point is drawn, (symbol, size, pen, brush): six an accelerator (its
        # three states, unselected then selected), added as accelerators are first shown.
        self._point_styles: tuple = ()
        self._current_rows: tuple[np.ndarray, np.ndarray, np.ndarray] = (np.empty(0), np.empty(0), np.empty(0))
        self._label_places: list[tuple[float, float] | None] | None = None  # where the B= labels are

    # ---- items ---------------------------------------------------------------------------

    def _style(self, accelerator_id: str) -> _Style:
        colour = palette.colour_for(accelerator_id)
        symbol = palette.symbol_for(self.catalog.accelerators[accelerator_id].architecture_class)
        drawn = plot_colour(colour)  # in the theme; what follows is made from it, not mapped again
        faded = QColor(drawn)
        faded.setAlpha(FADED_ALPHA)
        return _Style(
            symbols=(symbol, symbol, NO_FIT_SYMBOL),
            pens=(pg.mkPen(drawn, width=1), pg.mkPen(drawn, width=2), pg.mkPen(faded, width=1)),
            brushes=(pg.mkBrush(drawn), plot_brush("w"), pg.mkBrush(faded)),
            faded=faded,
            line_pens={chosen: pg.mkPen(drawn, width=SELECTED_LINE_WIDTH if chosen else LINE_WIDTH)
                       for chosen in (False, True)},
            # Opaque (the faded colour over the canvas), as A's curves: Qt strokes a translucent
            # dashed line ~3x slower than an opaque one (0.28 against 0.09 ms a line measured).
            dashed_pens={chosen: pg.mkPen(opaque_over(faded), width=SELECTED_LINE_WIDTH if chosen else LINE_WIDTH,
                                          style=Qt.PenStyle.DashLine)
                         for chosen in (False, True)},
            reference_pen=self._reference_pen(drawn),
        )

    @staticmethod
    def _reference_pen(colour: QColor) -> QPen:
        """A's curve: ``colour`` (in the theme), faint and dashed."""
        faint = QColor(colour)
        faint.setAlpha(REFERENCE_ALPHA)
        # Opaque (the faint colour over the canvas): Qt strokes translucent lines many times slower.
        reference_pen = pg.mkPen(opaque_over(faint), width=REFERENCE_LINE_WIDTH, style=Qt.PenStyle.CustomDashLine)
        reference_pen.setDashPattern(REFERENCE_DASHES)
        return reference_pen

    def _lines_for(self, accelerator_id: str) -> _SweepLines:
        if accelerator_id in self.lines:
            return self.lines[accelerator_id]
        style = self._style(accelerator_id)
        lines = _SweepLines(accelerator_id, style, styles_at=len(self._point_styles))
        self._point_styles += tuple(
            (style.symbols[state], size, style.pens[state], style.brushes[state])
            for size in (MARKER_SIZE, SELECTED_MARKER_SIZE) for state in (FITS, WAVES, NO_FIT))
        self.line_set.set_line(lines.curve, [], [], pen=style.line_pens[False])
        self.line_set.set_line(lines.hypothetical, [], [], pen=style.dashed_pens[False])
        self.line_set.set_style(lines.curve, z=CURVE_ORDER, visible=False)
        self.line_set.set_style(lines.hypothetical, z=HYPOTHETICAL_ORDER, visible=False)
        self.line_set.set_line(lines.reference, [], [], pen=style.reference_pen)
        self.line_set.set_style(lines.reference, z=REFERENCE_ORDER, visible=False)
        self.lines[accelerator_id] = lines
        return lines

    # ---- updates -------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        with self.line_set.changes():  # the lines' geometry changes once, after all of them
            self._draw_lines(frame)
            current = frame.current
            self._current_rows = (Outputs(current).e2e_latency_s, Outputs(current).throughput_output_tok_s,
                                  marker_states(Outputs(current).fits, Outputs(current).waves))
            self.legend.set_rows(frame.accelerators, self.selected)
            self._apply_selection()  # restyles the selected lines and draws the points
            self._draw_reference()
        self._hold_range()
        self._set_note(frame.workspace.scenario.batch)

    def _draw_lines(self, frame: Frame) -> None:
        """Each shown accelerator's sweep whose inputs changed; the others' lines hidden."""
        shown = set(frame.accelerators)
        for accelerator_id, lines in self.lines.items():
            if accelerator_id not in shown:
                self._show(lines, False)
        # The sweep's inputs for every accelerator at once: [row, accelerator, batch].
        sweep = np.stack([frame.sweep_outputs.row(name) for name in SWEEP_FIELDS])
        latency, throughput, fits, waves = sweep
        drawable = np.isfinite(latency) & np.isfinite(throughput) & (latency > 0) & (throughput > 0)
        states = marker_states(fits, waves)
        # The lines' joins for every accelerator whose batches can all be drawn (most): the
        # solid line joins neighbours that both run, the dashed one the others.
        solid, dashed = _joins(states)
        every_column = np.arange(states.shape[1])
        changed = self._changed_sweeps(frame.accelerators, sweep)
        drawn = []  # the lines to set, all at once (LineSet.set_lines)
        for j, accelerator_id in enumerate(frame.accelerators):
            lines = self._lines_for(accelerator_id)
            if changed[j]:
                if drawable[j].all():
                    drawn += self._draw_sweep(lines, every_column, latency[j], throughput[j], states[j],
                                              solid[j], dashed[j])
                else:
                    columns = np.flatnonzero(drawable[j])
                    (row_solid,), (row_dashed,) = _joins(states[j, columns][None])  # joins among the drawn points
                    drawn += self._draw_sweep(lines, columns, latency[j, columns], throughput[j, columns],
                                              states[j, columns], row_solid, row_dashed)
            self._show(lines, True)
        self._sweeps_drawn = (frame.accelerators, sweep)
        self.line_set.set_lines(drawn)

    def _changed_sweeps(self, accelerators: tuple[str, ...], sweep: np.ndarray) -> np.ndarray:
        """Whether each accelerator's sweep inputs differ from those its lines were drawn for,
        all compared at once: an accelerator not drawn last (new, or shown again) has changed."""
        held = self._sweeps_drawn
        if held is None or held[1].shape[::2] != sweep.shape[::2]:
            return np.ones(len(accelerators), dtype=bool)
        column_of = {accelerator_id: j for j, accelerator_id in enumerate(held[0])}
        columns = np.array([column_of.get(accelerator_id, -1) for accelerator_id in accelerators], dtype=np.intp)
        before = held[1][:, np.maximum(columns, 0)]
        same = ((before == sweep) | (np.isnan(before) & np.isnan(sweep))).all(axis=(0, 2))
        return ~same | (columns < 0)

    def _hold_range(self) -> None:
        """Every point drawn, B's and the pinned A's, within the range the view holds."""
        shown = [lines for lines in self.lines.values() if lines.visible]
        x = [lines.x for lines in shown] + [self._current_rows[0]]
        y = [lines.y for lines in shown] + [self._current_rows[1]]
        reference_x, reference_y, _refs = self.reference_targets.shown_spots()
        ring_x, ring_y, _refs = self.reference_current.shown_spots()
        with np.errstate(divide="ignore", invalid="ignore"):  # a point at 0 or below is not drawn
            self.steady.follow(np.log10(np.concatenate([*x, reference_x, ring_x])),
                               np.log10(np.concatenate([*y, reference_y, ring_y])))

    def _show(self, lines: _SweepLines, visible: bool) -> None:
        """Show or hide an accelerator's lines."""
        if lines.visible != visible:
            for key in lines.line_keys():
                self.line_set.set_style(key, visible=visible)
            lines.visible = visible

    def _draw_sweep(self, lines: _SweepLines, columns: np.ndarray, x: np.ndarray, y: np.ndarray,
                    states: np.ndarray, solid: np.ndarray, dashed: np.ndarray) -> list[tuple]:
        """An accelerator's sweep: the points that can be drawn (their sweep columns, latency,
        throughput and state); and the lines through them (the solid and dashed lines' joins
        given), returned as LineSet.set_lines takes them."""
        if not np.array_equal(columns, lines.columns):
            lines.refs = [self._ref(lines.accelerator_id, "sweep", column) for column in columns.tolist()]
            lines.styled_version += 1
        elif not np.array_equal(states, lines.states):
            lines.styled_version += 1
        lines.columns, lines.x, lines.y, lines.states = columns, x, y, states
        lines.version += 1
        if columns.size == 0:
            return [(lines.curve, [], [], "all"), (lines.hypothetical, [], [], "all")]
        return [(lines.curve, x, y, solid), (lines.hypothetical, x, y, dashed)]

    def _draw_points(self) -> None:
        """Every shown accelerator's sweep points and current batch, the selected one's last
        (so drawn on top). The sweep points are rebuilt only when a sweep or the selection
        changed; the current batches move in place."""
        frame = self.frame
        if frame is None:
            return
        rows = self._rows_selected_last()
        chosen = self._selected_row()
        ids = [frame.accelerators[r] for r in rows]

        key = (tuple((a, self.lines[a].version) for a in ids), chosen)
        styled_key = (tuple((a, self.lines[a].styled_version) for a in ids), chosen)
        every = [self.lines[a] for a in ids]
        if key != self._points_key and styled_key == self._points_styled_key:
            # The same points, drawn the same way, only moved (a new prompt length, say).
            self._points_key = key
            self.points.move_spots(np.concatenate([lines.x for lines in every] or [np.empty(0)]),
                                   np.concatenate([lines.y for lines in every] or [np.empty(0)]))
        elif key != self._points_key:
            self._points_key, self._points_styled_key = key, styled_key
            refs, ways = [], []
            for lines, row in zip(every, rows, strict=True):
                refs += lines.refs
                ways.append(lines.states + (lines.styles_at + (3 if row == chosen else 0)))
            self.points.set_styled_spots(np.concatenate([lines.x for lines in every] or [np.empty(0)]),
                                         np.concatenate([lines.y for lines in every] or [np.empty(0)]), refs,
                                         np.concatenate(ways or [np.empty(0, dtype=np.intp)]), self._point_styles)

        x, y, states = self._current_rows
        drawn = [r for r in rows if np.isfinite(x[r]) and np.isfinite(y[r]) and x[r] > 0 and y[r] > 0]
        styles = [self.lines[frame.accelerators[r]].style for r in drawn]
        self.current.set_spots(
            x[drawn], y[drawn], [self._ref(frame.accelerators[r], "current") for r in drawn],
            symbols=[style.symbols[states[r]] for style, r in zip(styles, drawn, strict=True)],
            brushes=[style.brushes[states[r]] for style, r in zip(styles, drawn, strict=True)],
        )

    # ---- the pinned scenario A ------------------------------------------------------------

    def _apply_reference(self) -> None:
        if self.frame is not None:
            self._draw_reference()
            self._hold_range()

    def _draw_reference(self) -> None:
        """A's sweep and current batch for each shown accelerator A also showed; redone only
        when A or the shown accelerators changed (A does not change with the controls)."""
        frame, reference = self.frame, self.reference
        drawn = self._reference_drawn
        if drawn is not None and drawn[0] is reference and drawn[1] == frame.accelerators:
            return
        self._reference_drawn = (reference, frame.accelerators)
        columns = self._reference_columns()
        shown = {frame.accelerators[row]: column for row, column in enumerate(columns) if column >= 0}
        ring_x, ring_y, ring_refs, target_x, target_y, target_refs = [], [], [], [], [], []
        for accelerator_id, lines in self.lines.items():
            column = shown.get(accelerator_id)
            if column is None:
                self.line_set.set_style(lines.reference, visible=False)
                continue
            x = Outputs(reference.sweep).e2e_latency_s[column]
            y = Outputs(reference.sweep).throughput_output_tok_s[column]
            drawable = np.flatnonzero(np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0))
            self.line_set.set_line(lines.reference, x[drawable], y[drawable])
            self.line_set.set_style(lines.reference, visible=True)
            target_x.append(x[drawable])
            target_y.append(y[drawable])
            target_refs += [self._ref(accelerator_id, "reference sweep", int(c)) for c in drawable]
            current_x = Outputs(reference.current).e2e_latency_s[column]
            current_y = Outputs(reference.current).throughput_output_tok_s[column]
            if np.isfinite(current_x) and np.isfinite(current_y) and current_x > 0 and current_y > 0:
                ring_x.append(current_x)
                ring_y.append(current_y)
                ring_refs.append(self._ref(accelerator_id, "reference current"))
        self.reference_current.set_spots(ring_x, ring_y, ring_refs)
        self.reference_targets.set_spots(np.concatenate(target_x or [np.empty(0)]),
                                         np.concatenate(target_y or [np.empty(0)]), target_refs)

    def _set_note(self, batch: int | None) -> None:
        if batch == self._note_batch and self.note.text():
            return
        current = f"the current batch ({batch})" if batch is not None else "the current batch"
        self.note.setText(
            "One line per accelerator, batch 1 → 1024 (static batch; B= labels follow the selected "
            f"accelerator). Large ringed marker: {current}. Filled: fits · hollow: KV cache "
            "overflows, runs in waves · faded × on a dashed line: weights do not fit "
            f"(hypothetical). Marker shape: accelerator class. {INTERACTION_HINT}"
        )
        self._note_batch = batch

    # ---- selection -----------------------------------------------------------------------

    def set_selected(self, accelerator_id: str | None) -> None:
        if self.frame is not None:
            self.legend.set_rows(self.frame.accelerators, accelerator_id)
        super().set_selected(accelerator_id)  # then restyles the items

    def _apply_selection(self) -> None:
        for accelerator_id, lines in self.lines.items():
            chosen = accelerator_id == self.selected
            if lines.styled_selected == chosen:
                continue  # restyling makes pyqtgraph redo the item: only on a change
            lines.styled_selected = chosen
            lift = SELECTED_LIFT if chosen else 0
            self.line_set.set_style(lines.curve, pen=lines.style.line_pens[chosen], z=CURVE_ORDER + lift)
            self.line_set.set_style(lines.hypothetical, pen=lines.style.dashed_pens[chosen], z=HYPOTHETICAL_ORDER + lift)
        self._draw_points()
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
                x = frame.sweep_output(target).e2e_latency_s[column]
                y = frame.sweep_output(target).throughput_output_tok_s[column]
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

    # ---- hover ---------------------------------------------------------------------------

    def tip_for(self, ref: SpotRef) -> str:
        """The tool tip of a point, from the current frame."""
        frame = self.frame
        if frame is None or ref.accelerator not in frame.accelerators:
            return ""
        if ref.role.startswith("reference"):
            return self._reference_tip(ref)
        j = frame.index(ref.accelerator)
        if ref.role == "current":
            column, batch = frame.current[:, j], frame.workspace.scenario.batch
        else:
            column, batch = frame.sweep[:, j, ref.index], int(frame.sweep_batches[ref.index])
        name = self.catalog.accelerators[ref.accelerator].name
        lines = [
            f"{name} — batch {batch}" + (" (current)" if ref.role == "current" else ""),
            f"end-to-end latency: {duration_text(Outputs(column).e2e_latency_s)}",
            f"throughput: {short_number(Outputs(column).throughput_output_tok_s)} output tokens/s (whole system)",
            f"ITL: {duration_text(Outputs(column).itl_s)} · TTFT: {duration_text(Outputs(column).ttft_s)}",
        ]
        if Outputs(column).fits == 0:
            reason = codes.FIT_REASONS.get(int(Outputs(column).fit_code), "")
            lines.append(f"does not fit (hypothetical): {reason}")
        elif Outputs(column).waves > 1:
            lines.append(f"KV cache does not fit: runs in {int(Outputs(column).waves)} waves")
        return "\n".join(lines)

    def _reference_tip(self, ref: SpotRef) -> str:
        reference = self.reference
        if reference is None or ref.accelerator not in reference.accelerators:
            return ""
        j = reference.index(ref.accelerator)
        if ref.role == "reference current":
            column, batch = reference.current[:, j], reference.workspace.scenario.batch
        else:
            column, batch = reference.sweep[:, j, ref.index], int(reference.sweep_batches[ref.index])
        name = self.catalog.accelerators[ref.accelerator].name
        return "\n".join([
            f"{name} — pinned scenario A, batch {batch}" + (" (A's current)" if ref.role == "reference current" else ""),
            (f"A: {duration_text(Outputs(column).e2e_latency_s)} end-to-end, "
             f"{short_number(Outputs(column).throughput_output_tok_s)} output tokens/s (whole system)"),
        ])

    # ---- read back -------------------------------------------------------------------------

    def plotted(self) -> dict[str, np.ndarray]:
        """What is drawn, read back from the items. ``x`` (latency, s) and ``y`` (output
        tokens/s) are [accelerator, batch] with NaN where no point is drawn; ``state`` is
        FITS (0), WAVES (1) or NO_FIT (2) as the marker shows it, -1 where none is drawn."""
        frame = self.frame
        shown = [a for a in (frame.accelerators if frame else ()) if self.line_set.is_shown((a, "curve"))]
        row_of = {a: i for i, a in enumerate(shown)}
        batches = frame.sweep_batches if frame else np.empty(0, dtype=np.int64)
        x = np.full((len(shown), len(batches)), np.nan)
        y = np.full_like(x, np.nan)
        state = np.full(x.shape, -1, dtype=np.int64)
        current = np.full((len(shown), 2), np.nan)
        current_state = np.full(len(shown), -1, dtype=np.int64)
        reference_x, reference_y = np.full_like(x, np.nan), np.full_like(x, np.nan)
        reference_current = np.full((len(shown), 2), np.nan)
        _x, _y, target_refs = self.reference_targets.shown_spots()
        for row, accelerator_id in enumerate(shown):
            key = (accelerator_id, "reference")
            if self.line_set.is_shown(key):  # its points are A's drawable batches, as its targets are
                line_x, line_y = self.line_set.original(key)
                columns = [ref.index for ref in target_refs if ref.accelerator == accelerator_id]
                reference_x[row, columns], reference_y[row, columns] = line_x, line_y
        ring_x, ring_y, ring_refs = self.reference_current.shown_spots()
        for i, ref in enumerate(ring_refs):
            if ref.accelerator in row_of:
                reference_current[row_of[ref.accelerator]] = ring_x[i], ring_y[i]
        for item, role in ((self.points, "sweep"), (self.current, "current")):
            xs, ys, refs = item.shown_spots()
            for i, ref in enumerate(refs):
                row = row_of.get(ref.accelerator)
                if row is None or ref.role != role:
                    continue
                drawn = self._state_of(item.spot_style(i, "symbol"), item.spot_style(i, "brush"))
                if role == "sweep":
                    x[row, ref.index], y[row, ref.index], state[row, ref.index] = xs[i], ys[i], drawn
                else:
                    current[row], current_state[row] = (xs[i], ys[i]), drawn
        return {
            "accelerators": np.array(shown, dtype=object),
            "batches": np.asarray(batches),
            "x": x,
            "y": y,
            "state": state,
            "current_x": current[:, 0],
            "current_y": current[:, 1],
            "current_state": current_state,
            # A's curve and current batch, as x and y are B's (NaN where none is drawn).
            "reference_x": reference_x,
            "reference_y": reference_y,
            "reference_current_x": reference_current[:, 0],
            "reference_current_y": reference_current[:, 1],
            "hypothetical_segments": np.array(
                [int(np.count_nonzero(self.line_set.connection((a, "hypothetical")))) for a in shown]
            ),
        }

    @staticmethod
    def _state_of(symbol: str, brush) -> int:
        if symbol == NO_FIT_SYMBOL:
            return NO_FIT
        return WAVES if pg.mkBrush(brush).color() == plot_colour("w") else FITS
