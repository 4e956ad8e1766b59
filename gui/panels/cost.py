"""The Energy tab's cost page: what a million output tokens cost on every shown accelerator,
rented and owned, and the batch sweep in dollars — cost per million tokens against latency,
with the cheapest at each latency marked.

Every number is ``engine.studies.cost``'s, from the frame and the workspace's prices; a price
that is not known draws nothing and says so (the Cost group takes one), never a cost of 0.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core import codes
from accelscope.engine.core.cost import Pricing
from accelscope.engine.core.prices import Price
from accelscope.engine.core.units import duration_text, format_price, format_usd, short_number
from accelscope.engine.physics.frame import Frame
from accelscope.engine.studies.cost import VIEWS, FrameCosts, cheapest_frontier, frame_costs

from ..look import palette
from ..look.style import LINE_WIDTH, plot_colour, plot_font, plot_pen, style_plot
from ..plotkit.axes import ROW_LABEL_MAX_PX, log_axes
from ..plotkit.bars import LogBarPlot, canvas
from ..plotkit.picking import RowPicker, SpotRefs, select_on_click, spot_tip
from ..plotkit.plot import add_plot
from ..plotkit.points import LineSet, SpotRef, Spots
from ..plotkit.text import WrappedLabel, subtitle_label, swatch, tooltip_html
from .base import Panel

VIEW_WORDS = {"rental": "rented", "ownership": "owned"}
# Two bars per row: rented above, owned below and lighter.
BAR_SERIES = (("rental", -0.19, 0.36, 255), ("ownership", 0.19, 0.36, 110))
MARKER_SIZE = 7.0
CURRENT_MARKER_SIZE = 16.0
FRONTIER_COLOUR = (0, 0, 0, 70)
FRONTIER_WIDTH = 9.0
SELECTED_LINE_WIDTH = 4.0


def price_line(view: str, price: Price | None) -> str:
    """A price with its source and date, for a tool tip."""
    per = "device-hour" if view == "rental" else "device"
    if price is None:
        return f"{VIEW_WORDS[view]}: no {'rental' if view == 'rental' else 'purchase'} price known — type one in " \
               "the Cost group"
    detail = ", ".join(part for part in (price.kind, price.includes) if part)
    graded = "" if price.own else f"; {price.grade}"
    return f"{format_price(price.value)} per {per} ({price.citation}{graded}{'; ' + detail if detail else ''})"


class CostPage(Panel):
    """A page of the Energy tab (a Panel: it draws a frame and selects accelerators)."""

    title = "Cost"

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self.header = subtitle_label(
            "What a million output tokens cost. Bars: "
            + swatch("#0077BB", "rented (the rent per device-hour)") + " above, "
            + swatch("#7FBBDD", "owned (purchase written off, energy × PUE, hosting)") + " below; "
            "right: the batch sweep in dollars, against the batch's end-to-end latency, the grey band the "
            "cheapest at each latency. Prices: the price book's, or yours from the Cost group; hover for each "
            "price's source and date."
        )
        self.canvas = canvas()
        self.bars = LogBarPlot(self.canvas, 0, title="$ per million output tokens",
                               x_label="USD, log scale", x_unit=None, row_labels=True, series=BAR_SERIES)
        self.plots = (self.bars,)
        self.frontier = add_plot(self.canvas.ci, row=0, col=1, axisItems=log_axes())
        self.frontier.setLogMode(True, True)
        style_plot(self.frontier, title="Rented, batch 1 → 1024",
                   x_label="End-to-end latency of the batch", x_unit="s", y_label="USD per million output tokens",
                   y_unit=None)
        self.frontier.setMenuEnabled(False)
        self.canvas.ci.layout.setColumnStretchFactor(0, 2)
        self.canvas.ci.layout.setColumnStretchFactor(1, 3)
        self.cheapest = pg.PlotDataItem(pen=plot_pen(FRONTIER_COLOUR, width=FRONTIER_WIDTH))
        self.cheapest.setZValue(0)
        self.frontier.addItem(self.cheapest)
        self.lines = LineSet()
        self.lines.setZValue(1)
        self.frontier.addItem(self.lines)
        self._refs = SpotRefs()
        tip = spot_tip(self.tip_for)
        self.points = Spots(tip=tip, size=MARKER_SIZE)
        self.current = Spots(tip=tip, size=CURRENT_MARKER_SIZE, pen=plot_pen("k", width=2))
        for z, item in ((20, self.points), (21, self.current)):
            item.setZValue(z)
            self.frontier.addItem(item)
        select_on_click([self.points, self.current], self.lines, self.accelerator_selected.emit)
        self.picker = RowPicker(self.canvas, [self.bars.plot], self._rows, self._tooltip, self._clicked, self)

        self.view_combo = QComboBox()
        for view in VIEWS:
            self.view_combo.addItem(f"{VIEW_WORDS[view]}", view)
        self.view_combo.setAccessibleName("Sweep in dollars: rented or owned")
        self.view_combo.setToolTip("Which cost the sweep on the right shows: rented (the rent) or owned (the "
                                   "purchase written off, energy and hosting, at the Cost group's site values).")
        self.view_combo.currentIndexChanged.connect(lambda _index: self._draw_sweep())
        self.note = WrappedLabel()
        self.note.setFont(plot_font())
        self.note.setTextFormat(Qt.TextFormat.RichText)
        choose = QHBoxLayout()
        choose.setContentsMargins(8, 0, 8, 0)
        sweep_label = QLabel("Sweep in dollars:")
        sweep_label.setBuddy(self.view_combo)
        choose.addWidget(sweep_label)
        choose.addWidget(self.view_combo)
        choose.addWidget(self.note, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(self.canvas, 1)
        layout.addLayout(choose)
        self.costs: FrameCosts | None = None
        self._line_styles: dict[str, bool] = {}  # accelerator -> whether its line is styled as selected
        self._brushes: dict[str, object] = {}
        self._ring = pg.mkBrush(None)

    @property
    def view(self) -> str:
        return self.view_combo.currentData()

    def set_view(self, view: str) -> None:
        self.view_combo.setCurrentIndex(VIEWS.index(view))

    # ---- Panel ---------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        self.costs = frame_costs(frame, Pricing(self.catalog.prices, frame.workspace.cost))
        ids = frame.accelerators
        self.bars.row_axis.set_rows([self.accelerator_name(a) for a in ids], max_width=ROW_LABEL_MAX_PX, ids=ids)
        self.canvas.settle()
        colours = [palette.colour_for(a) for a in ids]
        fits = frame.outputs.fits != 0
        rental = self.costs.current.rental.usd_per_mtok_output
        owned = self.costs.current.ownership.usd_per_mtok_output
        self.bars.update({"rental": rental, "ownership": owned}, colours, fits,
                         [self._bar_text(r, o) for r, o in zip(rental, owned, strict=True)])
        self._draw_sweep()
        self._apply_selection()

    @staticmethod
    def _bar_text(rental: float, owned: float) -> str:
        if not np.isfinite(rental) and not np.isfinite(owned):
            return "no price"
        return f"{format_usd(rental, '—')} · {format_usd(owned, '—')}"

    def _draw_sweep(self) -> None:
        """Each priced accelerator's sweep in the chosen view (the batches that fit), its current
        batch ringed, and the cheapest at each latency across them all."""
        frame, costs = self.frame, self.costs
        if frame is None or costs is None:
            return
        view = self.view
        self.frontier.setTitle(f"{VIEW_WORDS[view].capitalize()}, batch 1 → 1024",
                               size=f"{plot_font().pointSize() + 2}pt", color=plot_colour("k").name())
        latency = frame.sweep_outputs.e2e_latency_s
        usd = np.where(frame.sweep_outputs.fits, costs.sweep.view(view).usd_per_mtok_output, np.nan)
        xs, ys, refs, symbols, brushes = [], [], [], [], []
        made = set(self.lines.line_keys())
        drawn = []  # the lines to set, all at once (LineSet.set_lines)
        with self.lines.changes():  # the lines' geometry changes once, after all of them
            for j, accelerator_id in enumerate(frame.accelerators):
                drawable = np.flatnonzero(np.isfinite(usd[j]) & np.isfinite(latency[j]) & (latency[j] > 0))
                key = (accelerator_id, "sweep")
                chosen = accelerator_id == self.selected
                if key not in made:
                    self.lines.set_line(key, [], [], pen=self._pen(accelerator_id, chosen))
                drawn.append((key, latency[j, drawable], usd[j, drawable], "all"))
                self.lines.set_style(key, visible=drawable.size > 0, z=10 if chosen else 0)
                self._line_styles[accelerator_id] = chosen
                xs.append(latency[j, drawable])
                ys.append(usd[j, drawable])
                refs += [self._refs(accelerator_id, "sweep", int(c)) for c in drawable]
                symbols += [self._symbol(accelerator_id)] * drawable.size
                brushes += [self._brush(accelerator_id)] * drawable.size
            self.lines.set_lines(drawn)
            for key in self.lines.line_keys():
                if key[0] not in frame.accelerators:
                    self.lines.set_style(key, visible=False)
        self.points.set_spots(np.concatenate(xs or [np.empty(0)]), np.concatenate(ys or [np.empty(0)]), refs,
                              symbols=symbols, brushes=brushes)
        best = cheapest_frontier(latency, usd)
        self.cheapest.setData(latency.ravel()[best], usd.ravel()[best])
        current_usd = costs.current.view(view).usd_per_mtok_output
        current_latency = frame.outputs.e2e_latency_s
        ringed = [j for j in range(len(frame.accelerators))
                  if np.isfinite(current_usd[j]) and current_latency[j] > 0 and frame.outputs.fits[j]]
        self.current.set_spots(current_latency[ringed], current_usd[ringed],
                               [self._refs(frame.accelerators[j], "current") for j in ringed],
                               brushes=[self._ring] * len(ringed))
        missing = [a for a in frame.accelerators if costs.price(view, a) is None]
        self.note.setText(
            f"No {'rental' if view == 'rental' else 'purchase'} price known (nothing drawn): "
            f"{', '.join(self.accelerator_name(a) for a in missing)}. "
            "Type one in the Cost group." if missing else "Every shown accelerator is priced.")

    def _brush(self, accelerator_id: str):
        """One brush per accelerator, made once: pyqtgraph keys its symbol pictures on identity."""
        if accelerator_id not in self._brushes:
            self._brushes[accelerator_id] = pg.mkBrush(plot_colour(palette.colour_for(accelerator_id)))
        return self._brushes[accelerator_id]

    def _symbol(self, accelerator_id: str) -> str:
        accelerator = self.catalog.accelerators.get(accelerator_id)
        return palette.symbol_for(accelerator.architecture_class) if accelerator else "o"

    def _pen(self, accelerator_id: str, selected: bool):
        colour = palette.colour_for(accelerator_id)
        return plot_pen(colour, width=SELECTED_LINE_WIDTH if selected else LINE_WIDTH)

    def _apply_selection(self) -> None:
        row = self._selected_row()
        self.bars.set_selected_row(row)
        self.bars.row_axis.set_bold_row(row)
        if self.frame is None:
            return
        for accelerator_id in self.frame.accelerators:
            key = (accelerator_id, "sweep")
            chosen = accelerator_id == self.selected
            if self._line_styles.get(accelerator_id) != chosen:
                self._line_styles[accelerator_id] = chosen
                self.lines.set_style(key, pen=self._pen(accelerator_id, chosen), z=10 if chosen else 0)

    # ---- hover ---------------------------------------------------------------------------

    def _tooltip(self, row: int) -> str:
        frame, costs = self.frame, self.costs
        if frame is None or costs is None:
            return ""
        accelerator_id, column, name = self._row(row)
        return tooltip_html(f"{name} ({accelerator_id})", self._cost_lines(accelerator_id, row, None))

    def _cost_lines(self, accelerator_id: str, row: int, batch_index: int | None) -> list[str]:
        """Both views' figures at the scenario (``batch_index`` None) or a sweep batch, each
        with its price, source and date; the site's values for ownership."""
        frame, costs = self.frame, self.costs
        arrays = costs.current if batch_index is None else costs.sweep
        index = (row,) if batch_index is None else (row, batch_index)
        outputs = frame.outputs if batch_index is None else frame.sweep_outputs
        devices = int(outputs.devices[index])
        lines = []
        if not outputs.fits[index]:
            lines.append(f"<b>does not fit</b> (hypothetical): {codes.FIT_REASONS[int(outputs.fit_code[index])]}")
        lines.append(f"{short_number(float(outputs.throughput_output_tok_s[index]))} output tokens/s on "
                     f"{devices} device{'s' if devices != 1 else ''}, "
                     f"{duration_text(float(outputs.e2e_latency_s[index]))} end to end")
        for view in VIEWS:
            cost = arrays.view(view)
            price = costs.price(view, accelerator_id)
            lines.append(f"<b>{VIEW_WORDS[view]}</b>: {price_line(view, price)}")
            if price is None:
                continue
            text = (f"&nbsp;&nbsp;{format_usd(float(cost.usd_per_hour[index]))} per hour → "
                    f"{format_usd(float(cost.usd_per_mtok_output[index]))} per million output tokens, "
                    f"{format_usd(float(cost.usd_per_mtok_total[index]))} per million input+output")
            lines.append(text)
            if view == "ownership":
                lines.append(f"&nbsp;&nbsp;per hour served: capital "
                             f"{format_usd(float(cost.capital_usd_per_hour[index]))}, energy "
                             f"{format_usd(float(cost.energy_usd_per_hour[index]))} "
                             f"({float(cost.energy_share[index]):.0%}), hosting "
                             f"{format_usd(float(cost.hosting_usd_per_hour[index]))}")
            lines.append(f"&nbsp;&nbsp;a year at {float(costs.site.utilisation.value):.0%} in use: "
                         f"{format_usd(float(cost.tco_usd_per_year[index]))}")
        site = costs.site
        lines.append(f"site: {format_price(site.electricity_usd_per_kwh.value)} per kWh "
                     f"({site.electricity_usd_per_kwh.citation}), PUE {site.pue.value:g} ({site.pue.citation}), "
                     f"written off over {site.amortisation_years.value:g} years")
        return lines

    def tip_for(self, ref: SpotRef) -> str:
        frame = self.frame
        if frame is None or ref.accelerator not in frame.accelerators:
            return ""
        row = frame.index(ref.accelerator)
        name = self.catalog.accelerators[ref.accelerator].name
        if ref.role == "current":
            title = f"{name} — batch {frame.workspace.scenario.batch} (current)"
            lines = self._cost_lines(ref.accelerator, row, None)
        else:
            title = f"{name} — batch {int(frame.sweep_batches[ref.index])}"
            lines = self._cost_lines(ref.accelerator, row, ref.index)
        return tooltip_html(title, lines)

    # ---- read back -------------------------------------------------------------------------

    def plotted(self) -> dict[str, np.ndarray]:
        """What is drawn: the bars' values (0 where there is none), the sweep's points per
        accelerator ([accelerator, batch], NaN where none) and the cheapest-at-latency steps."""
        frame = self.frame
        ids = frame.accelerators if frame else ()
        batches = frame.sweep_batches if frame else np.empty(0, dtype=np.int64)
        x = np.full((len(ids), len(batches)), np.nan)
        y = np.full_like(x, np.nan)
        xs, ys, refs = self.points.shown_spots()
        row_of = {a: i for i, a in enumerate(ids)}
        for i, ref in enumerate(refs):
            if ref.accelerator in row_of:
                x[row_of[ref.accelerator], ref.index] = xs[i]
                y[row_of[ref.accelerator], ref.index] = ys[i]
        step_x, step_y = self.cheapest.xData, self.cheapest.yData  # as given, not log-transformed
        return {
            "accelerators": np.array(ids, dtype=object),
            "rental_usd_per_mtok": self.bars.values("rental"),
            "ownership_usd_per_mtok": self.bars.values("ownership"),
            "texts": np.array(self.bars.texts.texts(), dtype=object),
            "view": np.array(self.view),
            "x": x,
            "y": y,
            "cheapest_x": np.asarray(step_x if step_x is not None else [], dtype=float),
            "cheapest_y": np.asarray(step_y if step_y is not None else [], dtype=float),
            "note": np.array(self.note.text()),
        }
