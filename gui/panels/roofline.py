"""The roofline panel: each shown accelerator's roofline, with the scenario's prefill and
decode operating points on it.

Everything drawn comes from the Frame: the lines from its Roofline objects, the points from
the kernel outputs (FLOPs, bytes and time per device). The panel only scales to display
units (TFLOP/s) and picks the intensity range the lines span.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QVBoxLayout, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core import codes
from accelscope.engine.core.accelerator import Accelerator
from accelscope.engine.core.units import short_bandwidth, short_number
from accelscope.engine.physics.frame import Frame
from accelscope.engine.physics.results import Outputs
from accelscope.engine.physics.roofline import Roofline, RooflineSlope

from ..look import palette
from ..look.style import LINE_WIDTH, PLOT_FONT_POINTS, pen, plot_brush, plot_colour, plot_font, plot_pen
from ..plotkit.axes import opaque_over
from ..plotkit.picking import SpotRefs, select_on_click, spot_tip
from ..plotkit.points import LineSet, SpotRef, Spots, log_log_plot
from ..plotkit.text import INTERACTION_HINT, WrappedLabel
from .base import Panel, reference_note_label

TFLOPS = 1e12  # display unit of the performance axis
INTENSITY_RANGE = (0.1, 1e5)  # FLOP/byte, widened to take in every operating point
POINTS_PER_DECADE = 12  # hover targets about every 14 px on a 1000 px plot (the lines are straight in log-log)
# Hover targets along each line: as many as the default range takes at POINTS_PER_DECADE,
# whatever the range (a wider one spaces them out). A number that followed the range, the
# ridge or a tier's end changed at many changes of the precision or the model, and then every
# target of every accelerator (thousands) was made again (~5-10 ms) rather than moved.
TARGETS_PER_LINE = round(math.log10(INTENSITY_RANGE[1] / INTENSITY_RANGE[0]) * POINTS_PER_DECADE) + 1
_TARGET_STEPS = np.linspace(0.0, 1.0, TARGETS_PER_LINE)  # where the targets lie between a line's ends, in log

MARKER_SIZE = 13.0
SELECTED_MARKER_SIZE = 19.0
RIDGE_SIZE = 9.0  # smaller than the operating points, and it does not grow when selected
SELECTED_LINE_WIDTH = 4.5
# The title names the accelerators drawn at another precision when they are this few, and
# counts them when more: twelve names ran the title onto a second line, which moved the plot
# down and laid it out and drew it whole again at each change to and from FP32.
TITLE_NAMES_AT_MOST = 2
HOVER_TARGET_SIZE = 16.0  # invisible markers along lines that carry their tool tip
NO_BRUSH = pg.mkBrush(None)  # hollow markers (one object: pyqtgraph caches symbols by brush identity)
# The pinned scenario A, drawn behind B: hollow, smaller and faint, so B stays in front.
REFERENCE_MARKER_SIZE = 10.0
# Faint colours are opaque (the colour at this alpha over the canvas): Qt strokes a translucent
# line pixel by pixel, many times slower, and the ghosts are repainted with every frame.
REFERENCE_ALPHA = 140
REFERENCE_ROOF_ALPHA = 110
CONNECTOR_COLOUR = "#8A8A8A"
CONNECTOR_DASHES = [2.0, 3.0]  # dotted, coarser than Qt's dots: fewer dashes to stroke

LEVEL_NAMES = {"on-chip": "on-chip", "device": "device memory", "far": "far tier"}


def _geometric(low: float, high: float) -> np.ndarray:
    """TARGETS_PER_LINE intensities evenly spaced in log from low to high, ends exact: as
    np.geomspace, whose checks cost ~40 us a call, ~1.5 ms when a precision moves every roof."""
    steps = low * (high / low) ** _TARGET_STEPS
    steps[0], steps[-1] = low, high
    return steps


@dataclass
class _Lines:
    """What the panel knows of one accelerator's lines (kept in the panel's :class:`LineSet`
    under the keys ``(id, "roof")`` and ``(id, "tier", n)``), made the first time it is shown.
    Its markers (ridge, operating points) live in the panel's :class:`Spots`, one item per role."""

    accelerator_id: str
    tiers_made: int = 0  # tier lines made so far (the ones not used are hidden)
    drawn: tuple | None = None  # (roofline, x range) the lines were last drawn for
    version: int = 0  # counts redraws, so the merged hover targets know when to follow
    tiers_used: int = 0  # tier lines the roofline has
    styled_selected: bool | None = None  # whether the roof is styled as the selected one
    visible: bool = False
    # Hover targets along the lines (x, y in data units, one ref each), and the ridge point.
    targets: tuple[np.ndarray, np.ndarray, list] = (np.empty(0), np.empty(0), [])
    ridge: tuple[float, float] | None = None

    @property
    def roof(self) -> tuple[str, str]:
        """The key of the roof, min(peak, main-tier bandwidth x intensity)."""
        return (self.accelerator_id, "roof")

    def tier(self, n: int) -> tuple[str, str, int]:
        """The key of the n-th other tier's line (dashed)."""
        return (self.accelerator_id, "tier", n)

    def line_keys(self) -> list[tuple]:
        return [self.roof, *(self.tier(n) for n in range(self.tiers_made))]


PHASES = ("prefill", "decode")
REFERENCE_ROLES = {"prefill": "reference prefill", "decode": "reference decode"}  # A's points
LINES_Z, TARGETS_Z, REFERENCE_Z, RIDGE_Z, POINT_Z = 1, 0, 19, 20, 21  # the markers above every line
# Within the lines: A's roofs beneath everything, the selected roof on top, A→B connectors over the roofs.
REFERENCE_ROOF_ORDER, TIER_ORDER, ROOF_ORDER, SELECTED_ROOF_ORDER, CONNECTOR_ORDER = -1, 0, 1, 2, 3
CONNECTORS = ("reference", "connectors")  # the key of the A→B connectors in the LineSet


class RooflinePanel(Panel):
    title = "Roofline"
    update_applies_selection = True

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self.graphics, self.plot, self.legend = log_log_plot(
            title="Roofline", x_label="Operational intensity", x_unit="FLOP/byte",
            y_label="Performance per device", y_unit="TFLOP/s",
            describe=self.describe_accelerator, on_select=self.accelerator_selected.emit,
        )

        self.note = WrappedLabel(
            "Lines: attainable FLOP/s per device, min(peak, bandwidth × intensity). "
            "Solid: device memory (HBM; on-chip SRAM on SRAM machines); dashed: the other "
            "tiers (on-chip SRAM, host memory over PCIe or C2C). The class-shaped marker on each "
            "line is its ridge point. ▲ prefill, ● decode step of the current scenario; "
            "hollow: does not fit (hypothetical). " + INTERACTION_HINT
        )
        self.note.setFont(plot_font())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.graphics, stretch=1)
        layout.addWidget(self.note)
        self.reference_note = reference_note_label(
            "<b>ghost: A (pinned)</b> — faint hollow ▲ ● are the pinned scenario A's operating points, with a "
            "dotted line from each to the current scenario's; faint dashed roofs are A's ceilings where its "
            "precision differs. Hover a ghost for A's value."
        )
        layout.addWidget(self.reference_note)

        self.lines: dict[str, _Lines] = {}
        self.line_set = LineSet(cached=True)  # every accelerator's roof and tier lines
        self.line_set.setZValue(LINES_Z)
        self.plot.addItem(self.line_set)  # only the roofs count in the view's range (see _draw_lines)
        self._pens: dict[tuple, QPen] = {}  # made once, so an unchanged style is told by identity
        self._ref = SpotRefs()  # what each spot stands for
        tip = spot_tip(self.tip_for)
        # One item per role across the accelerators (see Spots): markers above every line.
        self.targets = Spots(tip=tip, size=HOVER_TARGET_SIZE, pen=None, brush=None, hover_only=True)
        self.ridges = Spots(tip=tip, size=RIDGE_SIZE, pen=plot_pen("w", width=1))
        self.points = {phase: Spots(tip=tip, symbol=symbol, size=MARKER_SIZE)
                       for phase, symbol in zip(PHASES, (palette.PREFILL_SYMBOL, palette.DECODE_SYMBOL), strict=True)}
        # A's operating points (both phases, one item), drawn only while a scenario is pinned.
        self.reference_points = Spots(tip=tip, size=REFERENCE_MARKER_SIZE, brush=NO_BRUSH)
        connector_pen = plot_pen(CONNECTOR_COLOUR, width=1.0, style=Qt.PenStyle.CustomDashLine)
        connector_pen.setDashPattern(CONNECTOR_DASHES)
        self.line_set.set_line(CONNECTORS, [], [], "pairs", pen=connector_pen, bounded=False)
        self.line_set.set_style(CONNECTORS, z=CONNECTOR_ORDER)
        for z, item in ((TARGETS_Z, self.targets), (RIDGE_Z, self.ridges), (REFERENCE_Z, self.reference_points),
                        *((POINT_Z, p) for p in self.points.values())):
            item.setZValue(z)
            # Far tiers reach far below the device roofs: their hover targets must not stretch the view.
            self.plot.addItem(item, ignoreBounds=item is self.targets)
        select_on_click([self.targets, self.ridges, self.reference_points, *self.points.values()], self.line_set,
                        self.accelerator_selected.emit)
        self._targets_key: tuple | None = None  # (accelerator, lines version) the targets were merged for
        self._operating: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # phase -> (intensity, achieved) per row
        self._fits = np.zeros(0, dtype=bool)
        self._marker_styles: dict[tuple[str, bool], tuple] = {}  # (accelerator, fits) -> (brush, pen)
        self._ridge_brushes: dict[str, pg.QtGui.QBrush] = {}
        self._reference_pens: dict[str, QPen] = {}  # accelerator -> A's marker pen
        # accelerator -> (A's roofline, intensity range) as drawn, None where hidden
        self._reference_roofs: dict[str, tuple[Roofline, tuple[float, float]] | None] = {}
        # A's operating points per phase, (intensity, TFLOP/s) for each row of the current
        # frame (NaN where A did not show the accelerator), and what they were mapped for.
        self._reference_operating: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._reference_mapped: tuple[Frame | None, tuple[str, ...]] | None = None
        self._title = ""

    # ---- items ---------------------------------------------------------------------------

    def _pen(self, accelerator_id: str, *, dashed: bool = False, width: float = LINE_WIDTH) -> QPen:
        key = (accelerator_id, dashed, width)
        if key not in self._pens:
            self._pens[key] = pen(palette.colour_for(accelerator_id), width=width, dashed=dashed)
        return self._pens[key]

    def _lines_for(self, accelerator_id: str) -> _Lines:
        if accelerator_id not in self.lines:
            self.lines[accelerator_id] = _Lines(accelerator_id)
        return self.lines[accelerator_id]

    # ---- updates -------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        shown = set(frame.accelerators)
        for accelerator_id, lines in self.lines.items():
            if accelerator_id not in shown:
                self._show(lines, False)

        intensity = {}
        for phase in PHASES:
            with np.errstate(divide="ignore", invalid="ignore"):
                intensity[phase] = frame.outputs.phase(phase).operational_intensity
        self._map_reference()
        x_range = self._intensity_range(np.concatenate(
            [*intensity.values(), *(x for x, _y in self._reference_operating.values())]))

        current = frame.current
        with np.errstate(divide="ignore", invalid="ignore"):
            achieved = {
                "prefill": Outputs(current).prefill.achieved_flops_per_s / TFLOPS,
                "decode": Outputs(current).decode.achieved_flops_per_s / TFLOPS,
            }
        self._operating = {phase: (intensity[phase], achieved[phase]) for phase in PHASES}
        self._fits = Outputs(current).fits != 0
        # The lines' geometry changes once, after all of them (each change alone tells the
        # scene and the view; a precision or model change redraws ~100 roofs and tiers).
        with self.line_set.changes():
            drawn = []
            for j, accelerator_id in enumerate(frame.accelerators):
                lines = self._lines_for(accelerator_id)
                drawn += self._draw_lines(accelerator_id, lines, frame.rooflines[j], x_range)
                self._show(lines, True)
            self.line_set.set_lines(drawn)
            self._merge_line_spots(frame.accelerators)
            self._draw_reference_roofs(x_range)
            self._set_title(frame)
            self.legend.set_rows(frame.accelerators, self.selected)
            self._apply_selection()  # restyles the selected roof and draws the operating points (B's and A's)

    def _show(self, lines: _Lines, visible: bool) -> None:
        """Show or hide an accelerator's lines (only on a change: each call makes Qt work)."""
        if lines.visible == visible:
            return
        for key in lines.line_keys()[: 1 + lines.tiers_used]:
            self.line_set.set_style(key, visible=visible)
        lines.visible = visible

    @staticmethod
    def _intensity_range(operating_intensities: np.ndarray) -> tuple[float, float]:
        """The default range, widened by whole decades to take in every operating point."""
        low, high = INTENSITY_RANGE
        finite = operating_intensities[np.isfinite(operating_intensities) & (operating_intensities > 0)]
        if finite.size:
            low = min(low, 10.0 ** np.floor(np.log10(finite.min() / 2)))
            high = max(high, 10.0 ** np.ceil(np.log10(finite.max() * 2)))
        return float(low), float(high)

    def _draw_lines(self, accelerator_id: str, lines: _Lines, roof: Roofline,
                    x_range: tuple[float, float]) -> list[tuple]:
        """An accelerator's roof and tier lines, returned as :meth:`LineSet.set_lines` takes
        them (none when they are as drawn), with their hover targets and ridge point."""
        key = (roof, x_range)
        if lines.drawn == key:  # lines depend only on the device, precision and range
            return []
        low, high = x_range
        main = roof.main_slope
        ridge = main.ridge_point(roof.peak_flops)
        # A target at the ridge, the roof's corner (at an end where the ridge is off the plot).
        x = np.sort(np.append(_geometric(low, high), min(max(ridge, low), high)))
        y = np.minimum(roof.peak_flops, main.bandwidth_Bps * x) / TFLOPS
        # The lines are straight in log-log: drawn through their corners only (stroking a
        # path costs per segment); the points along them are the hover targets.
        corners = np.array([low, ridge, high] if low < ridge < high else [low, high])
        if lines.drawn is None:  # the roof's line made, hidden until shown
            self.line_set.set_line(lines.roof, [], [], pen=self._pen(accelerator_id))
            self.line_set.set_style(lines.roof, visible=lines.visible)
        drawn = [(lines.roof, corners, np.minimum(roof.peak_flops, main.bandwidth_Bps * corners) / TFLOPS, "all")]
        targets = [(x, y, [self._ref(accelerator_id, "roof")] * len(x))]
        lines.ridge = (ridge, roof.peak_flops / TFLOPS) if low <= ridge <= high else None

        others = [(i, s) for i, s in enumerate(roof.slopes) if s is not main]
        for n_tier, (i, slope) in enumerate(others):
            end = min(slope.ridge_point(roof.peak_flops), high)
            tier_key = lines.tier(n_tier)
            ends = np.empty(0)
            if end > low:
                xt = _geometric(low, end)
                ends = np.array([low, end])
            else:  # no tier on the plot: its targets stay, placed nowhere (never under the mouse)
                xt = np.full(TARGETS_PER_LINE, np.nan)
            targets.append((xt, slope.bandwidth_Bps * xt / TFLOPS, [self._ref(accelerator_id, "tier", i)] * len(xt)))
            if n_tier >= lines.tiers_made:
                # Far tiers reach far below the device roofs; they must not stretch the view.
                self.line_set.set_line(tier_key, [], [], pen=self._pen(accelerator_id, dashed=True), bounded=False)
            self.line_set.set_style(tier_key, z=TIER_ORDER, visible=lines.visible)
            drawn.append((tier_key, ends, slope.bandwidth_Bps * ends / TFLOPS, "all"))
        lines.tiers_made = max(lines.tiers_made, len(others))
        for n_tier in range(len(others), lines.tiers_made):
            self.line_set.set_style(lines.tier(n_tier), visible=False)
        lines.tiers_used = len(others)
        lines.targets = (np.concatenate([t[0] for t in targets]), np.concatenate([t[1] for t in targets]),
                         [ref for t in targets for ref in t[2]])
        lines.drawn = key
        lines.version += 1
        return drawn

    def _merge_line_spots(self, shown: tuple[str, ...]) -> None:
        """The hover targets and ridge points of every shown accelerator, each in one item;
        redone only when a line was redrawn or the shown accelerators changed."""
        key = tuple((a, self.lines[a].version) for a in shown)
        if key == self._targets_key:
            return
        self._targets_key = key
        every = [self.lines[a].targets for a in shown]
        self.targets.set_spots(np.concatenate([t[0] for t in every] or [np.empty(0)]),
                               np.concatenate([t[1] for t in every] or [np.empty(0)]),
                               [ref for t in every for ref in t[2]])
        with_ridge = [a for a in shown if self.lines[a].ridge is not None]
        self.ridges.set_spots(
            [self.lines[a].ridge[0] for a in with_ridge], [self.lines[a].ridge[1] for a in with_ridge],
            [self._ref(a, "ridge") for a in with_ridge],
            symbols=[palette.symbol_for(self.catalog.accelerators[a].architecture_class) for a in with_ridge],
            brushes=[self._ridge_brush(a) for a in with_ridge],
        )

    def _ridge_brush(self, accelerator_id: str) -> pg.QtGui.QBrush:
        if accelerator_id not in self._ridge_brushes:
            self._ridge_brushes[accelerator_id] = plot_brush(palette.colour_for(accelerator_id))
        return self._ridge_brushes[accelerator_id]

    def _marker_style(self, accelerator_id: str, fits: bool) -> tuple:
        """Brush and pen of an operating point: filled and ringed in black where the scenario
        fits, hollow in the accelerator's colour where it does not. Made once per state, so
        pyqtgraph's symbol cache (keyed on the pen and brush objects) keeps hitting."""
        key = (accelerator_id, fits)
        if key not in self._marker_styles:
            colour = palette.colour_for(accelerator_id)
            if fits:
                self._marker_styles[key] = (plot_brush(colour), plot_pen("k", width=1))
            else:
                self._marker_styles[key] = (NO_BRUSH, plot_pen(colour, width=2.5))
        return self._marker_styles[key]

    def _draw_points(self) -> None:
        """The prefill and decode points of every shown accelerator, the selected one last (so
        drawn on top) and larger. Points that did not move are not touched."""
        frame = self.frame
        if frame is None:
            return
        rows = self._rows_selected_last()
        chosen = self._selected_row()
        for phase, item in self.points.items():
            intensity, achieved = self._operating[phase]
            drawn = [r for r in rows if np.isfinite(intensity[r]) and intensity[r] > 0
                     and np.isfinite(achieved[r]) and achieved[r] > 0]
            styles = [self._marker_style(frame.accelerators[r], bool(self._fits[r])) for r in drawn]
            item.set_spots(
                intensity[drawn], achieved[drawn], [self._ref(frame.accelerators[r], phase) for r in drawn],
                sizes=[SELECTED_MARKER_SIZE if r == chosen else MARKER_SIZE for r in drawn],
                brushes=[brush for brush, _pen in styles], pens=[symbol_pen for _brush, symbol_pen in styles],
            )

    # ---- the pinned scenario A ------------------------------------------------------------

    def _apply_reference(self) -> None:
        if self.frame is not None:
            self.update_frame(self.frame)  # A's points may widen the intensity range

    def _map_reference(self) -> None:
        """A's operating points for the rows of the current frame; redone only when A or the
        shown accelerators changed (a control change leaves them as they are)."""
        frame, reference = self.frame, self.reference
        mapped = self._reference_mapped
        if mapped is not None and mapped[0] is reference and mapped[1] == frame.accelerators:
            return
        self._reference_mapped = (reference, frame.accelerators)
        self._reference_operating = {}
        if reference is None:
            return
        columns = self._reference_columns()
        present = columns >= 0
        for phase in PHASES:
            outputs = reference.outputs.phase(phase)
            flops, bytes_, time_s = (np.where(present, row[columns], np.nan)
                                     for row in (outputs.flops_per_device, outputs.bytes_per_device, outputs.time_s))
            with np.errstate(divide="ignore", invalid="ignore"):
                self._reference_operating[phase] = (flops / bytes_, flops / time_s / TFLOPS)

    def _reference_pen(self, accelerator_id: str) -> QPen:
        if accelerator_id not in self._reference_pens:
            colour = plot_colour(palette.colour_for(accelerator_id))
            colour.setAlpha(REFERENCE_ALPHA)
            self._reference_pens[accelerator_id] = pg.mkPen(opaque_over(colour), width=1.8)
        return self._reference_pens[accelerator_id]

    def _draw_reference_points(self) -> None:
        """A's prefill and decode points (where A showed the accelerator) and a dotted line
        from each to B's point; nothing when no scenario is pinned."""
        frame = self.frame
        if frame is None:
            return
        x, y, refs, symbols, pens = [], [], [], [], []
        ends_x, ends_y = [], []
        for phase, symbol in zip(PHASES, (palette.PREFILL_SYMBOL, palette.DECODE_SYMBOL), strict=True):
            if phase not in self._reference_operating:
                continue
            a_x, a_y = self._reference_operating[phase]
            b_x, b_y = self._operating[phase]
            for row in np.flatnonzero(np.isfinite(a_x) & (a_x > 0) & np.isfinite(a_y) & (a_y > 0)):
                accelerator_id = frame.accelerators[row]
                x.append(a_x[row])
                y.append(a_y[row])
                refs.append(self._ref(accelerator_id, REFERENCE_ROLES[phase]))
                symbols.append(symbol)
                pens.append(self._reference_pen(accelerator_id))
                if np.isfinite(b_x[row]) and b_x[row] > 0 and np.isfinite(b_y[row]) and b_y[row] > 0:
                    ends_x += [a_x[row], b_x[row]]
                    ends_y += [a_y[row], b_y[row]]
        self.reference_points.set_spots(x, y, refs, symbols=symbols, pens=pens)
        if not (np.array_equal(self.line_set.original(CONNECTORS)[0], ends_x)
                and np.array_equal(self.line_set.original(CONNECTORS)[1], ends_y)):
            self.line_set.set_line(CONNECTORS, ends_x, ends_y, "pairs")

    def _draw_reference_roofs(self, x_range: tuple[float, float]) -> None:
        """A's roof, faint and dashed, for each accelerator whose ceilings A had otherwise
        (another compute precision); hidden where they are B's."""
        frame, reference = self.frame, self.reference
        columns = self._reference_columns() if reference is not None else np.full(len(frame.accelerators), -1)
        wanted: dict[str, Roofline] = {}
        for row, column in enumerate(columns):
            if column >= 0 and reference.rooflines[column] != frame.rooflines[row]:
                wanted[frame.accelerators[row]] = reference.rooflines[column]
        for accelerator_id, drawn in self._reference_roofs.items():
            if drawn is not None and accelerator_id not in wanted:
                self.line_set.set_style((accelerator_id, "reference roof"), visible=False)
                self._reference_roofs[accelerator_id] = None
        low, high = x_range
        for accelerator_id, roof in wanted.items():
            key = (accelerator_id, "reference roof")
            if self._reference_roofs.get(accelerator_id) == (roof, x_range):
                continue
            ridge = roof.main_slope.ridge_point(roof.peak_flops)
            corners = np.array([low, ridge, high] if low < ridge < high else [low, high])
            if key not in self.line_set.line_keys():
                colour = plot_colour(palette.colour_for(accelerator_id))
                colour.setAlpha(REFERENCE_ROOF_ALPHA)
                faint = pg.mkPen(opaque_over(colour), width=1.6, style=Qt.PenStyle.DashLine)
                self.line_set.set_line(key, [], [], pen=faint, bounded=False)
            self.line_set.set_line(key, corners,
                                   np.minimum(roof.peak_flops, roof.main_slope.bandwidth_Bps * corners) / TFLOPS)
            self.line_set.set_style(key, z=REFERENCE_ROOF_ORDER, visible=True)
            self._reference_roofs[accelerator_id] = (roof, x_range)

    def _set_title(self, frame: Frame) -> None:
        precisions: dict[str, list[str]] = {}
        for roof in frame.rooflines:
            precisions.setdefault(roof.compute_precision.upper(), []).append(roof.accelerator_id)
        if not precisions:
            title = "Roofline"
        else:
            ranked = sorted(precisions, key=lambda p: -len(precisions[p]))
            title = f"Roofline — {ranked[0]} ceilings"
            for other in ranked[1:]:
                on = precisions[other]
                names = (", ".join(self.catalog.accelerators[a].name for a in on) if len(on) <= TITLE_NAMES_AT_MOST
                         else f"{len(on)} accelerators")
                title += f"; {other} on {names}"
        if title != self._title:
            self.plot.setTitle(title, size=f"{PLOT_FONT_POINTS + 2}pt")
            self._title = title

    # ---- selection -----------------------------------------------------------------------

    def set_selected(self, accelerator_id: str | None) -> None:
        if self.frame is not None:
            self.legend.set_rows(self.frame.accelerators, accelerator_id)
        super().set_selected(accelerator_id)  # then restyles the items

    def _apply_selection(self) -> None:
        """The selected accelerator: thicker roof drawn over the others, bigger points drawn
        last. The others keep their look, so the comparison stays readable."""
        for accelerator_id, lines in self.lines.items():
            chosen = accelerator_id == self.selected
            if lines.styled_selected == chosen:
                continue  # restyling makes pyqtgraph redo the item: only on a change
            lines.styled_selected = chosen
            self.line_set.set_style(lines.roof, z=SELECTED_ROOF_ORDER if chosen else ROOF_ORDER,
                                    pen=self._pen(accelerator_id, width=SELECTED_LINE_WIDTH if chosen else LINE_WIDTH))
        self._draw_points()
        self._draw_reference_points()

    # ---- hover ---------------------------------------------------------------------------

    def tip_for(self, ref: SpotRef) -> str:
        """The tool tip of a spot, from the current frame."""
        frame = self.frame
        if frame is None or ref.accelerator not in frame.accelerators:
            return ""
        accelerator = self.catalog.accelerators[ref.accelerator]
        roof = frame.roofline(ref.accelerator)
        if ref.role in ("prefill", "decode"):
            return self._point_tip(frame, accelerator, roof, ref.role)
        if ref.role in REFERENCE_ROLES.values():
            return self._reference_tip(accelerator, ref.role)
        if ref.role == "tier":
            slope = roof.slopes[ref.index]
            return f"{accelerator.name}\n{self._slope_text(slope, roof)}\n{self._peak_text(roof)}"
        lines = [f"{accelerator.name} — {roof.compute_precision.upper()} roofline", self._peak_text(roof, sustained=True)]
        lines += [self._slope_text(s, roof) + (" (this line)" if s is roof.main_slope else "") for s in roof.slopes]
        return "\n".join(lines)

    def _reference_tip(self, accelerator: Accelerator, role: str) -> str:
        reference = self.reference
        if reference is None or accelerator.id not in reference.accelerators:
            return ""
        phase = "prefill" if role == REFERENCE_ROLES["prefill"] else "decode"
        outputs = reference.output(accelerator.id).phase(phase)
        flops, bytes_, time_s = outputs.flops_per_device, outputs.bytes_per_device, outputs.time_s
        return "\n".join([
            f"{accelerator.name} — {'prefill' if phase == 'prefill' else 'decode step'}, pinned scenario A",
            f"A: {short_number(flops / time_s / TFLOPS)} TFLOP/s per device at {short_number(flops / bytes_)} FLOP/byte",
        ])

    @staticmethod
    def _peak_text(roof: Roofline, sustained: bool = False) -> str:
        if not roof.has_ceiling:
            return "no compute peak published: no roof, only the memory slopes"
        text = f"{roof.compute_precision.upper()} peak: {short_number(roof.peak_flops / TFLOPS)} TFLOP/s"
        return text + (f" (sustained ≈ {short_number(roof.sustained_flops / TFLOPS)})" if sustained else "")

    @staticmethod
    def _slope_text(slope: RooflineSlope, roof: Roofline) -> str:
        ridge = (f", ridge {short_number(slope.ridge_point(roof.peak_flops))} FLOP/byte" if roof.has_ceiling else "")
        return f"{slope.tier_name} ({LEVEL_NAMES.get(slope.level, slope.level)}): {short_bandwidth(slope.bandwidth_Bps)}{ridge}"

    @staticmethod
    def _point_tip(frame: Frame, accelerator: Accelerator, roof: Roofline, phase: str) -> str:
        outputs = frame.output(accelerator.id).phase(phase)
        flops, bytes_, time_s, bound = outputs.flops_per_device, outputs.bytes_per_device, outputs.time_s, outputs.bound
        achieved = flops / time_s
        lines = [
            f"{accelerator.name} — {'prefill' if phase == 'prefill' else 'decode step'}",
            f"operational intensity: {short_number(flops / bytes_)} FLOP/byte",
            (
                f"achieved: {short_number(achieved / TFLOPS)} TFLOP/s per device "
                f"({achieved / roof.peak_flops:.1%} of the {roof.compute_precision.upper()} peak)"
                if roof.has_ceiling else "achieved: not stated (no compute peak published)"
            ),
            f"bound: {codes.BOUNDS[int(bound)]}",
        ]
        if not frame.output(accelerator.id).fits:
            reason = codes.FIT_REASONS.get(int(frame.output(accelerator.id).fit_code), "")
            lines.append(f"does not fit (hypothetical): {reason}")
        elif frame.output(accelerator.id).waves > 1:
            lines.append(f"KV cache does not fit: runs in {int(frame.output(accelerator.id).waves)} waves")
        return "\n".join(lines)

    # ---- read back -------------------------------------------------------------------------

    def plotted(self) -> dict[str, np.ndarray]:
        """What is drawn, read back from the items: intensities in FLOP/byte, performance in
        TFLOP/s, one entry per shown accelerator (NaN where a point is not drawn)."""
        shown = [a for a in (self.frame.accelerators if self.frame else ()) if self.line_set.is_shown((a, "roof"))]
        out: dict[str, np.ndarray] = {"accelerators": np.array(shown, dtype=object)}
        for name, item in (("prefill", self.points["prefill"]), ("decode", self.points["decode"]),
                           ("ridge", self.ridges)):
            x, y, _refs = item.shown_spots()
            rows = [item.index_of(a) for a in shown]
            out[f"{name}_x"] = np.array([x[i] if i is not None else np.nan for i in rows])
            out[f"{name}_y"] = np.array([y[i] if i is not None else np.nan for i in rows])
            if name != "ridge":
                out[f"{name}_hollow"] = np.array(
                    [i is not None and item.spot_style(i, "brush").style() == Qt.BrushStyle.NoBrush for i in rows]
                )
        x, y, _refs = self.reference_points.shown_spots()
        for phase, role in REFERENCE_ROLES.items():
            rows = [self.reference_points.index_of(a, role) for a in shown]
            out[f"reference_{phase}_x"] = np.array([x[i] if i is not None else np.nan for i in rows])
            out[f"reference_{phase}_y"] = np.array([y[i] if i is not None else np.nan for i in rows])
        connectors = self.line_set.original(CONNECTORS) if self.line_set.is_shown(CONNECTORS) else (np.empty(0),) * 2
        out["reference_connectors"] = np.column_stack(connectors).reshape(-1, 2, 2)  # [segment, A/B, x/y]
        out["reference_roof_top_y"] = np.array([
            np.nanmax(self.line_set.original((a, "reference roof"))[1])
            if self.line_set.is_shown((a, "reference roof")) else np.nan for a in shown])
        out["roof_top_y"] = np.array([np.nanmax(self.line_set.original((a, "roof"))[1]) for a in shown])
        out["tiers_drawn"] = np.array([sum(self.line_set.is_shown(key) for key in self.lines[a].line_keys()[1:]) for a in shown])
        out["title"] = np.array(self._title)
        return out
