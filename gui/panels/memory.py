"""Memory fit: what each device holds (weights, KV cache, the recurrent state of linear-attention
and state-space layers, activations, runtime overhead) as a share of its usable memory, and
whether the scenario fits."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core import codes
from accelscope.engine.core.units import compact, count, gigabytes
from accelscope.engine.physics.frame import Frame
from accelscope.engine.physics.results import Outputs

from ..look.palette import FITS_COLOUR, NO_FIT_COLOUR, WAVES_COLOUR, colour_for
from ..look.style import plot_brush, plot_font, plot_pen, plot_text_colour
from ..plotkit.axes import REFERENCE_NOTE_COLOUR, ROW_LABEL_MAX_PX
from ..plotkit.bars import (
    BAR_HEIGHT,
    FALLBACK_VIEW_PX,
    TEXT_GAP_PX,
    Bars,
    SelectionBand,
    bar_ends,
    bar_widths,
    canvas,
    outline,
    panel_layout,
    right_end_for_texts,
    row_plot,
    set_bars,
    set_pens,
    set_range,
    set_row_range,
)
from ..plotkit.picking import RowPicker
from ..plotkit.text import TextPool, subtitle_label, swatch, tooltip_html
from .base import Panel, reference_note_label

# The parts of a device's memory, by their memory.<field>: fixed colours, distinct from one
# another, so the accelerator's own colour is kept for the bar's outline. The recurrent state
# (DeltaNet, Mamba-2 layers) is zero, so drawn as nothing, for models without such layers.
PARTS: tuple[tuple[str, str, str], ...] = (
    ("weights", "weights", "#4C72B0"),
    ("kv", "KV cache", "#DD8452"),
    ("state", "recurrent state", "#8172B3"),
    ("activations", "activations", "#55A868"),
    ("overhead", "runtime overhead", "#9A9A9A"),
)
# PARTS are the engine's DEVICE_PARTS, in its order (a test holds the two equal).


CLIP_PERCENT = 200.0  # bars longer than this stop here, with the real multiple written beside
X_END_PERCENT = 232.0  # at least; more when the "×N" texts need it
CLIP_MARK_PX = 14  # the "▶" at the cut, and a gap before its "×N"
X_START_MARGIN = 3.0  # so the "0" tick label is not cut at the edge
HEAD_ROOM_ROWS = 0.9  # free space above the first row for the "usable" label, at least
USABLE_TEXT_ROW = -0.55  # the "usable" words' foot: just above the first row's top edge (-0.5)
USABLE_LINE_COLOUR = "#333333"
PHYSICAL_COLOUR = "#555555"
PHYSICAL_MARK_WIDTH = 1.2  # percent
# Shares of the plots' width in their own pixels (presentation mode zooms them: fewer than the canvas').
STATUS_SHARE = 0.3  # of the plots' width for the text beside the bars (more if a word needs it)
ROW_LABEL_SHARE = 0.25  # of the plots' width for the accelerators' names (more if a word needs it)
# Narrower than this, the names, the bars to the cut with their "×N" and the statuses (brief, on two
# lines) no longer all fit (at 426 px, beside both docks on a 1024 px screen, every "×N" was cut
# and the bars were 35 px long); the page scrolls sideways instead. 520 px was the least found to
# fit the crowded rows of tests/test_gui_texts_fit.py.
MIN_PANEL_WIDTH_PX = 560
# The pinned scenario A's total: a thin grey bar in the gap beneath each row's bar.
REFERENCE_TOTAL_OFFSET = BAR_HEIGHT / 2 + 0.075  # row centre to the thin bar's centre
REFERENCE_TOTAL_HEIGHT = 0.11
REFERENCE_TOTAL_COLOUR = "#8C8C8C"
LAYOUT_CODES = frozenset({
    codes.FIT_EP_NOT_DIVIDING_TP,
    codes.FIT_EP_ON_DENSE_MODEL,
    codes.FIT_EP_EXCEEDS_EXPERTS,
    codes.FIT_PP_EXCEEDS_LAYERS,
    codes.FIT_OFFLOAD_WITHOUT_FAR_TIER,
})
MAX_TP_SEARCHED = 65536

TEXT_ITEM_MARGIN_PX = 4.0  # a TextItem's document margin, each side
FAR_TIER_WORDS = {"host": "host memory", "cxl": "CXL memory"}  # else the tier's name, shortened


def short_reason(reason: str) -> str:
    """The first clause of a fit reason, to sit beside a bar (hover gives it whole)."""
    for separator in (":", ";", " (", ", "):
        reason = reason.split(separator)[0]
    return reason


def brief_status(status: str) -> str:
    """A status in fewer words, every number kept, for a column too narrow for it whole (the
    colour says fits, waves or not; hover gives it whole): "needs TP=2 or 2% offload",
    "4 waves of 12", "+ 3.2 GB far", "offloading needs a far memory tier"."""
    status = (status.replace("does not fit — not with TP up to ", "no TP ≤ ").replace("does not fit — ", "")
              .replace("KV cache overflows: runs in ", ""))
    head, far, _where = status.partition(" GB in ")
    return head + " GB far" if far else status


def fit_status(column: np.ndarray) -> tuple[str, str]:
    """The label beside a bar and its colour, from one kernel output column."""
    if not Outputs(column).fits:
        code = int(Outputs(column).fit_code)
        if code in LAYOUT_CODES:
            return "does not fit — " + short_reason(codes.FIT_REASONS[code]), NO_FIT_COLOUR
        remedies = []
        tp_needed = int(Outputs(column).tp_needed)
        offload_needed = float(Outputs(column).offload_needed)
        if tp_needed > 0:
            remedies.append(f"TP={tp_needed}")
        if offload_needed > 0:
            remedies.append(f"{math.ceil(offload_needed * 100 - 1e-9):.0f}% offload")
        if remedies:
            return "does not fit — needs " + " or ".join(remedies), NO_FIT_COLOUR
        return f"does not fit — not with TP up to {MAX_TP_SEARCHED} or offload", NO_FIT_COLOUR
    waves = int(Outputs(column).waves)
    if waves > 1:
        return f"KV cache overflows: runs in {waves} waves of {count(Outputs(column).memory.resident_batch)}", WAVES_COLOUR
    return f"fits · max batch {count(Outputs(column).memory.max_batch)}", FITS_COLOUR


class MemoryPanel(Panel):
    title = "Memory fit"
    update_applies_selection = True

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        legend = " &nbsp; ".join(swatch(colour, text) for _, text, colour in PARTS)
        self.header = subtitle_label(
            "Per device, at the scenario's batch and full context, as a share of usable memory; outlines in"
            f" the accelerator's colour. {legend} &nbsp; "
            + swatch(PHYSICAL_COLOUR, "physical memory", glyph="┃")
            + " &nbsp; "
            + swatch("#000000", f"×N&nbsp;cut at {CLIP_PERCENT:.0f}%: N times the usable memory", glyph="▶")
        )
        self.canvas = canvas()
        panel_layout(self, self.header, self.canvas)
        self.setMinimumWidth(MIN_PANEL_WIDTH_PX)
        self.reference_note = reference_note_label(
            "<b>ghost: A (pinned)</b> — "
            + swatch(REFERENCE_TOTAL_COLOUR, "thin grey bar beneath each row: A's total (cut at "
                          f"{CLIP_PERCENT:.0f}%)")
            + " &nbsp; grey second line of a status: A's, where it differs (hover a row for A's values)"
        )
        self.layout().addWidget(self.reference_note)

        self.plot = row_plot(self.canvas.ci, 0, 0, title=None, x_label="share of usable memory per device",
                                  x_unit="%", log_x=False, row_labels=True, status_axis=True)
        self.canvas.resized.connect(self._fit_to_width)
        # 0, 100 and 200 first: where labels must be thinned, the 50s go (GridAxis drops a label
        # that would run into one before it).
        self.plot.getAxis("bottom").setTicks([[(p, f"{p:.0f}") for p in (0, 100, 200)],
                                              [(p, f"{p:.0f}") for p in (50, 150)],
                                              [(p, "") for p in (25, 75, 125, 175)]])
        self.band = SelectionBand(self.plot)
        self.parts: list[pg.BarGraphItem] = []
        for _, _, colour in PARTS:
            item = pg.BarGraphItem(x0=[], width=[], y=[], height=BAR_HEIGHT, brush=plot_brush(colour),
                                   pen=plot_pen("w", width=1))
            self.plot.addItem(item)
            self.parts.append(item)
        self.outline = Bars(x0=[], width=[], y=[], height=BAR_HEIGHT, brush=None, pen=plot_pen("k"))
        self.outline.setZValue(5)
        self.plot.addItem(self.outline)
        self.usable_line = pg.InfiniteLine(pos=100.0, angle=90, movable=False,
                                           pen=plot_pen(USABLE_LINE_COLOUR, width=2,
                                                        style=pg.QtCore.Qt.PenStyle.DashLine))
        self.usable_line.setZValue(6)
        self.plot.addItem(self.usable_line, ignoreBounds=True)
        self.usable_text = pg.TextItem("usable memory", color=plot_text_colour(USABLE_LINE_COLOUR), anchor=(0.5, 1.0),
                                       fill=plot_brush("w"))  # the canvas behind, so the line does not cross it
        self.usable_text.setFont(plot_font())
        self.usable_text.setPos(100.0, USABLE_TEXT_ROW)
        self.usable_text.setZValue(8)
        self.plot.addItem(self.usable_text, ignoreBounds=True)
        # A thin bar per row (not a fixed-size symbol), so it keeps to its row at any height.
        self.physical = pg.BarGraphItem(x=[], width=PHYSICAL_MARK_WIDTH, y=[], height=BAR_HEIGHT + 0.15,
                                        brush=plot_brush(PHYSICAL_COLOUR), pen=pg.mkPen(None))
        self.physical.setZValue(7)
        self.plot.addItem(self.physical)
        self.reference_total = pg.BarGraphItem(x0=[], width=[], y=[], height=REFERENCE_TOTAL_HEIGHT,
                                               brush=plot_brush(REFERENCE_TOTAL_COLOUR), pen=pg.mkPen(None))
        self.reference_total.setZValue(4)
        self.reference_total.setVisible(False)  # only while a scenario is pinned (then it costs no paint)
        self.plot.addItem(self.reference_total)
        self.clip_marks = pg.ScatterPlotItem(symbol="t2", size=CLIP_MARK_PX, pen=None, brush=plot_brush("k"))
        self.clip_marks.setZValue(7)
        self.plot.addItem(self.clip_marks)
        self.multiples = TextPool(self.plot, anchor=(0.0, 0.5))
        self.picker = RowPicker(self.canvas, [self.plot], self._rows, self._tooltip, self._clicked, self)
        self._status: list[str] = []
        self._status_shown: list[str] = []  # the status as the column shows it: whole, or brief if it must
        self._status_colours: list[str] = []
        self._reference_status: list[str] = []  # per row: A's status where it differs from B's, else ""
        self._multiples: list[str] = []
        self._clipped_rows = np.zeros(0)  # rows with a clip mark
        self._usable = "usable memory"  # the words over the usable line, as they would be whole
        self._fitted_canvas_px = -1.0  # the plots' width (scene pixels) the columns were last fitted to

    # ---- Panel ---------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        ids = frame.accelerators
        n = len(ids)
        rows = np.arange(n, dtype=float)
        memory = frame.outputs.memory
        percents = [memory.share_of_usable(size) for size in memory.device_parts]
        physical = np.where(np.isfinite(shares := memory.share_of_usable(memory.capacity_bytes)), shares, np.nan)
        start = np.zeros(n)
        for item, percent in zip(self.parts, percents, strict=True):
            end = start + percent
            x0 = np.minimum(start, CLIP_PERCENT)
            set_bars(item, x0, np.minimum(end, CLIP_PERCENT) - x0, rows)
            start = end
        total = start
        self._draw_reference_total(rows)
        set_bars(self.outline, np.zeros(n), np.minimum(total, CLIP_PERCENT), rows,
                      pens=self._outline_pens(ids))
        physical = np.nan_to_num(physical, nan=0.0)
        set_bars(self.physical, physical - PHYSICAL_MARK_WIDTH / 2, np.full(n, PHYSICAL_MARK_WIDTH), rows,
                      height=BAR_HEIGHT + 0.15)
        clipped = total > CLIP_PERCENT
        if not np.array_equal(self._clipped_rows, rows[clipped]):
            self._clipped_rows = rows[clipped]
            self.clip_marks.setData(x=np.full(len(self._clipped_rows), CLIP_PERCENT), y=self._clipped_rows)
        self._multiples = [f"×{compact(t / 100.0)}" if c else "" for t, c in zip(total, clipped, strict=True)]

        statuses = [fit_status(frame.current[:, j]) for j in range(n)]
        self._status = [self._status_text(frame.current[:, j], text, ids[j]) for j, (text, _) in enumerate(statuses)]
        self._reference_status = self._reference_statuses()
        self._status_colours = [c for _, c in statuses]
        self._usable = self._usable_words(frame)
        self._fit_to_width()  # ends by placing the usable words and the rows' range
        self._apply_selection()

    def _status_text(self, column: np.ndarray, fit_text: str, accelerator_id: str) -> str:
        far = Outputs(column).memory.far_bytes
        return fit_text + (f" · + {far / 1e9:.1f} GB in {self._far_words(accelerator_id)}" if far > 0 else "")

    # ---- the pinned scenario A ------------------------------------------------------------

    def _apply_reference(self) -> None:
        if self.frame is not None:
            self.update_frame(self.frame)

    def _reference_percent(self) -> np.ndarray | None:
        """A's total in device memory per row, as a share of A's usable memory (NaN where A
        did not show the accelerator); None when nothing is pinned."""
        if self.reference is None:
            return None
        columns = self._reference_columns()
        memory = Outputs(self.reference.current[:, np.maximum(columns, 0)]).memory
        return np.where(columns >= 0, memory.share_of_usable(memory.device_bytes), np.nan)

    def _draw_reference_total(self, rows: np.ndarray) -> None:
        percent = self._reference_percent()
        shown = percent is not None and len(rows) > 0
        if self.reference_total.isVisible() != shown:
            self.reference_total.setVisible(shown)
        if not shown:
            return
        drawn = ~np.isnan(percent)
        set_bars(self.reference_total, np.zeros(len(rows)),
                      np.where(drawn, np.minimum(np.nan_to_num(percent, posinf=CLIP_PERCENT), CLIP_PERCENT), 0.0),
                      rows + REFERENCE_TOTAL_OFFSET, height=REFERENCE_TOTAL_HEIGHT)

    def _reference_statuses(self) -> list[str]:
        """A's status beside each row where it differs from B's ("" elsewhere, or for all
        when nothing is pinned)."""
        frame, reference = self.frame, self.reference
        if reference is None:
            return []
        statuses = []
        for row, column in enumerate(self._reference_columns()):
            text = ""
            if column >= 0:
                a = reference.current[:, column]
                a_status = self._status_text(a, fit_status(a)[0], frame.accelerators[row])
                text = f"A: {a_status}" if a_status != self._status[row] else ""
            statuses.append(text)
        return statuses

    def plotted(self) -> dict[str, np.ndarray]:
        drawn = {f"{name}_pct": bar_widths(item) for (name, _, _), item in zip(PARTS, self.parts, strict=True)}
        drawn["total_pct"] = bar_widths(self.outline)
        drawn["physical_pct"] = bar_ends(self.physical) - PHYSICAL_MARK_WIDTH / 2
        drawn["status"] = np.array(self._status, dtype=object)
        drawn["status_shown"] = np.array(self.plot.getAxis("right").labels, dtype=object)
        drawn["multiple"] = np.array(self.multiples.texts(), dtype=object)
        drawn["accelerators"] = np.array(self.plot.getAxis("left").ids, dtype=object)
        drawn["rows"] = np.array(self.plot.getAxis("left").labels, dtype=object)
        # The pinned scenario A: its total (cut at CLIP_PERCENT; NaN where no ghost is drawn) and
        # its status where it differs from B's ("" elsewhere); empty when nothing is pinned.
        widths = bar_widths(self.reference_total)
        drawn["reference_total_pct"] = (np.where(self._reference_percent() >= 0, widths, np.nan)
                                        if self.reference_total.isVisible() and self.reference is not None
                                        else np.empty(0))
        drawn["reference_status"] = np.array(self.plot.getAxis("right").notes, dtype=object)
        return drawn

    # ---- helpers -------------------------------------------------------------------------

    def _fit_to_width(self) -> None:
        if self.canvas.scene_width() != self._fitted_canvas_px:
            # A new width: the columns may narrow by any amount (else only by whole steps).
            self._fitted_canvas_px = self.canvas.scene_width()
            for side in ("left", "right"):
                self.plot.getAxis(side).forget_width()
        self._fit_row_labels()
        self._fit_status_column()
        self._fit_x_range()

    def _fit_x_range(self) -> None:
        """Leave room beyond the cut for the widest "×N" text, in pixels."""
        view_px = self.plot.vb.width() or FALLBACK_VIEW_PX
        n = len(self._multiples)
        rows = np.arange(n, dtype=float)
        self.multiples.set_texts(self._multiples)
        text_px = float(np.max(self.multiples.widths_px(), initial=0.0))
        right = right_end_for_texts(-X_START_MARGIN, np.array([CLIP_PERCENT]),
                                         np.array([text_px + CLIP_MARK_PX + TEXT_GAP_PX]), view_px)
        right = max(right, X_END_PERCENT)
        offset = CLIP_MARK_PX * (right + X_START_MARGIN) / view_px
        self.multiples.place(np.full(n, CLIP_PERCENT + offset), rows)
        set_range(self.plot, 0, -X_START_MARGIN, right)
        self._place_usable_text()

    def _place_usable_text(self) -> None:
        """The words over the usable line, kept inside the plot: centred on the line where there
        is room, else shifted sideways, and in short ("usable (90%)", "usable") in a narrow plot;
        and the rows' range, with room above the first for them."""
        view_px = self.plot.vb.width() or FALLBACK_VIEW_PX
        low, high = self.plot.vb.viewRange()[0]
        line_px = (100.0 - low) / max(high - low, 1e-9) * view_px
        metrics = QFontMetricsF(plot_font())
        margins = 2 * TEXT_ITEM_MARGIN_PX
        words = self._usable
        for shorter in (words.replace(" of memory)", ")"), "usable"):
            if metrics.horizontalAdvance(words) + margins <= view_px:
                break
            words = shorter
        width = metrics.horizontalAdvance(words) + margins
        anchor = min(max(0.5, 1.0 - (view_px - line_px) / width), line_px / width) if width > 0 else 0.5
        if words != self.usable_text.toPlainText():
            self.usable_text.setText(words)
        if abs(self.usable_text.anchor.x() - anchor) > 1e-3:
            self.usable_text.setAnchor((anchor, 1.0))
        set_row_range(self.plot, len(self._multiples), self._head_room_rows(len(self._multiples)))

    def _head_room_rows(self, rows: int) -> float:
        """Rows of free space above the first row: room for the "usable" words' height at this
        plot height. A fixed 0.9 of a row was less than their height where 38 rows share a
        short plot (1280x720 with both docks), and their top was cut off."""
        height_px = self.plot.vb.height()
        text_px = self.usable_text.boundingRect().height()
        if rows <= 0 or height_px <= 2 * text_px:
            return HEAD_ROOM_ROWS
        # The range's top, -0.5 - head, must clear the words' top, USABLE_TEXT_ROW - text_px / pitch,
        # where the pitch of a row is height_px / (rows + head).
        share = text_px / height_px
        return max(HEAD_ROOM_ROWS, (-0.5 - USABLE_TEXT_ROW + share * rows) / (1 - share))

    def _fit_row_labels(self) -> None:
        ids = self.frame.accelerators if self.frame is not None else ()
        width = min(ROW_LABEL_MAX_PX, ROW_LABEL_SHARE * max(self.canvas.scene_width(), 1))
        self.plot.getAxis("left").set_rows([self.accelerator_name(a) for a in ids], colours=None,
                                           max_width=width, ids=list(ids))

    def _fit_status_column(self) -> None:
        """The status column as wide as its texts: each whole if it fits its share of the
        plots' width, else brief, on two lines if it must; never cut (the numbers are the point)."""
        share = STATUS_SHARE * max(self.canvas.scene_width(), 1)
        metrics = QFontMetricsF(self.plot.getAxis("right").style["tickFont"] or plot_font())
        self._status_shown = [text if metrics.horizontalAdvance(text) <= share else brief_status(text)
                              for text in self._status]
        notes = [text if metrics.horizontalAdvance(text) <= share else brief_status(text)
                 for text in self._reference_status]
        self.plot.getAxis("right").set_rows(self._status_shown, colours=self._status_colours, max_width=share,
                                            notes=notes or None)
        self.canvas.settle()

    def _outline_pens(self, ids: tuple[str, ...]) -> list:
        return [outline(colour_for(a), a == self.selected) for a in ids]

    def _apply_selection(self) -> None:
        row = self._selected_row()
        self.band.show_row(row)
        self.plot.getAxis("left").set_bold_row(row)
        self.plot.getAxis("right").set_bold_row(row)
        if self.frame is not None and len(self.frame.accelerators):
            set_pens(self.outline, self._outline_pens(self.frame.accelerators))

    def _reference_lines(self, accelerator_id: str) -> list[str]:
        """The pinned scenario A's total and status, for the tool tip of a row with a ghost."""
        reference = self.reference
        if reference is None or accelerator_id not in reference.accelerators:
            return []
        a = reference.current[:, reference.index(accelerator_id)]
        memory = Outputs(a).memory
        total = memory.device_bytes
        share = f" ({memory.share_of_usable(total):.0f}% of usable)" if memory.usable_bytes > 0 else ""
        texts = [
            "<b>pinned scenario A</b> (the ghosts)",
            f"total in device memory — A: {gigabytes(total)}{share}",
            f"status — A: {self._status_text(a, fit_status(a)[0], accelerator_id)}",
        ]
        return [f"<span style='color:{REFERENCE_NOTE_COLOUR}'>{text}</span>" for text in texts]

    def _far_words(self, accelerator_id: str) -> str:
        accelerator = self.catalog.accelerators.get(accelerator_id)
        tier = accelerator.tier("far") if accelerator is not None else None
        if tier is None:
            return "far memory"
        if tier.kind in FAR_TIER_WORDS or not tier.name:
            return FAR_TIER_WORDS.get(tier.kind, "far memory")
        return tier.name.split(" over ")[0].split(" (")[0]  # "Grace LPDDR5X", "MemoryX"

    @staticmethod
    def _usable_words(frame: Frame) -> str:
        fractions = frame.outputs.memory.usable_fraction
        fractions = fractions[np.isfinite(fractions)]
        if fractions.size == 0:
            return "usable memory"
        low, high = round(100 * fractions.min()), round(100 * fractions.max())
        share = f"{low}%" if low == high else f"{low}–{high}%"
        return f"usable ({share} of memory)"

    def _tooltip(self, row: int) -> str:
        frame = self.frame
        if frame is None:
            return ""
        accelerator_id, column, name = self._row(row)
        scenario = frame.workspace.scenario
        memory = Outputs(column).memory
        parts = memory.device_parts

        def share(size: float) -> str:
            return f" ({memory.share_of_usable(size):.0f}% of usable)" if memory.usable_bytes > 0 else ""

        lines = [f"per device · batch {scenario.batch} · context {scenario.input_len + scenario.output_len} tokens"]
        for (name, label, colour), size in zip(PARTS, parts, strict=True):
            if name == "state" and size == 0:
                continue  # a model without recurrent layers
            lines.append(f"<span style='color:{colour}'>■</span> {label}: {gigabytes(size)}{share(size)}")
        if memory.far_bytes > 0:
            accelerator = self.catalog.accelerators.get(accelerator_id)
            tier = accelerator.tier("far") if accelerator is not None else None
            where = tier.name if tier is not None and tier.name else "far memory"
            for size, what in ((memory.weights_far_bytes, "weights"), (memory.kv_cache_far_bytes, "KV cache")):
                if size > 0:
                    lines.append(f"+ {gigabytes(size)} of {what} offloaded to {where}")
        total = memory.device_bytes
        lines.append(f"total in device memory: {gigabytes(total)}{share(total)}")
        capacity = memory.capacity_bytes
        fraction = f"{100 * memory.usable_fraction:.0f}% of " if capacity > 0 else ""
        lines.append(f"usable: {gigabytes(memory.usable_bytes)} ({fraction}{gigabytes(capacity)} physical)")
        max_batch = Outputs(column).memory.max_batch
        lines.append(f"largest batch that fits: {count(max_batch)}" if max_batch > 0 else "does not fit at any batch")
        if not Outputs(column).fits:
            lines.append(f"<b>does not fit</b>: {codes.FIT_REASONS[int(Outputs(column).fit_code)]}")
        lines.append(self._status[row] if row < len(self._status) else "")
        lines.extend(f"⚠ {text}" for text in codes.warning_texts(int(Outputs(column).warning_bits)))
        lines.extend(self._reference_lines(accelerator_id))
        accelerator = self.catalog.accelerators.get(accelerator_id)
        return tooltip_html(f"{name} ({accelerator.name if accelerator is not None else accelerator_id})", lines)
