"""Energy: mean power over the run and tokens per joule on every shown accelerator, each
marked with what its power figure covers (a device, or a whole system); and, on its second
page, what a million tokens cost (:mod:`.cost`)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QToolButton, QVBoxLayout, QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core import codes
from accelscope.engine.core.units import compact, counted, joules, watts
from accelscope.engine.physics.frame import Frame
from accelscope.engine.physics.results import Outputs

from ..look.palette import colour_for
from ..plotkit.axes import REFERENCE_NOTE_COLOUR, ROW_LABEL_MAX_PX
from ..plotkit.bars import LogBarPlot, canvas, panel_layout, reference_bars_note
from ..plotkit.picking import RowPicker
from ..plotkit.text import subtitle_label, swatch, tooltip_html
from .base import PageStack, Panel, reference_note_label
from .cost import CostPage

PAGES: tuple[tuple[str, str, str], ...] = (
    ("energy", "Energy", "Power and tokens per joule"),
    ("cost", "Cost", "What a million tokens cost, rented and owned, and the batch sweep in dollars"),
)

NO_FIT_BAR_COLOUR = "#9A9A9A"  # grey: not a colour of any accelerator
NO_FIT_TEXT = "does not fit"

SCOPE_WORDS = {
    "device": "device-level: the accelerator board (GPU sensors)",
    "system": "system-level: the whole chassis, with power delivery, cooling and I/O",
}


class EnergyPanel(Panel):
    title = "Energy"
    main_page = "energy"  # what an export of every tab draws first, then its extra pages (gui.export)
    extra_pages: tuple[str, ...] = ("cost",)

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        energy_page = QWidget()
        self.header = subtitle_label(
            "Log scales. Power is the mean over the run, of all devices; tokens per joule count input and "
            "output tokens. Device-level figures are accelerator board power (as GPU sensors report it); "
            "accelerators marked <b>(system)</b> are system-level and include the chassis (power delivery, "
            "cooling, I/O), as the papers measured them differently — compare those with care. "
            + swatch(NO_FIT_BAR_COLOUR, "hatched grey: does not fit in memory (the figures are of a device that "
                     "cannot hold the model; hover for them)", hatch=True)
        )
        self.verdict = subtitle_label("")
        self.verdict.hold_lines(2)  # one line or two, with the names it gives: the plots stay put
        self.canvas = canvas()
        panel_layout(energy_page, self.header, self.canvas)
        energy_page.layout().insertWidget(1, self.verdict)
        self.reference_note = reference_note_label(reference_bars_note())
        energy_page.layout().addWidget(self.reference_note)
        self.power = LogBarPlot(self.canvas, 0, title="Power, all devices",
                                     x_label="power, log scale", x_unit="W", row_labels=True)
        self.efficiency = LogBarPlot(self.canvas, 1, title="Tokens per joule",
                                          x_label="tokens/J, log scale", x_unit=None, row_labels=False)
        self.plots = (self.power, self.efficiency)
        self.picker = RowPicker(self.canvas, [p.plot for p in self.plots], self._rows, self._tooltip,
                                     self._clicked, self)
        self.best: str | None = None  # the most tokens per joule among the accelerators that fit
        self._energy_drawn: tuple[Frame | None, Frame | None] | None = None  # (frame, pinned A) last drawn
        self.cost_page = CostPage(catalog)
        self.cost_page.accelerator_selected.connect(self.accelerator_selected.emit)
        self.stack = PageStack()
        self.stack.addWidget(energy_page)
        self.stack.addWidget(self.cost_page)
        self.page_buttons = QButtonGroup(self)
        switch = QHBoxLayout()
        switch.setContentsMargins(6, 4, 6, 0)
        for index, (_page, label, tip) in enumerate(PAGES):
            button = QToolButton()
            button.setText(label)
            button.setToolTip(tip)
            button.setCheckable(True)
            button.setChecked(index == 0)
            button.setAccessibleName(f"Show {label.lower()}")
            self.page_buttons.addButton(button, index)
            switch.addWidget(button)
        switch.addStretch(1)
        self.page_buttons.idClicked.connect(lambda index: self.show_page(PAGES[index][0]))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(switch)
        layout.addWidget(self.stack, 1)

    # ---- pages ---------------------------------------------------------------------------

    @property
    def page(self) -> str:
        return PAGES[self.stack.currentIndex()][0]

    def show_page(self, page: str) -> None:
        """Show the energy or the cost page, drawn from the latest frame (a hidden page is not
        kept up to date: it catches up when shown)."""
        index = [name for name, *_ in PAGES].index(page)
        self.page_buttons.button(index).setChecked(True)
        self.stack.setCurrentIndex(index)
        if page == "cost" and self.frame is not None and self.cost_page.frame is not self.frame:
            self.cost_page.update_frame(self.frame)
            self.cost_page.set_selected(self.selected)
        elif page == "energy" and self.frame is not None and not self._energy_current():
            self._draw_energy(self.frame)

    def _energy_current(self) -> bool:
        """Whether the energy page shows the latest frame and pinned scenario."""
        drawn = self._energy_drawn
        return drawn is not None and drawn[0] is self.frame and drawn[1] is self.reference

    # ---- Panel ---------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        if self.page == "cost":
            self.cost_page.update_frame(frame)
        else:
            self._draw_energy(frame)

    def set_selected(self, accelerator_id: str | None) -> None:
        super().set_selected(accelerator_id)
        if self.cost_page.frame is not None:
            self.cost_page.set_selected(accelerator_id)

    def _draw_energy(self, frame: Frame) -> None:
        self._energy_drawn = (frame, self.reference)
        ids = frame.accelerators
        # Long names go on two lines, as on the other bar tabs: one line each made the page
        # wider than a projector's tab, which then scrolled sideways.
        self.power.row_axis.set_rows([self._row_label(a) for a in ids], max_width=ROW_LABEL_MAX_PX, ids=ids)
        self.canvas.settle()  # the plots' widths, for the texts beside the bars
        fits = frame.outputs.fits != 0
        # A bar that does not fit is grey and says so: its length is one device's figure, however
        # many the model would need, and must not read as the longest of those that run.
        colours = [colour_for(a) if fit else NO_FIT_BAR_COLOUR for a, fit in zip(ids, fits, strict=True)]
        power = frame.outputs.power_W
        tokens_per_joule = frame.outputs.tokens_per_joule
        reference_power = self._reference_values("power_W")
        reference_efficiency = self._reference_values("tokens_per_joule")
        self.power.update({"value": power}, colours, fits,
                          [watts(v) if fit else NO_FIT_TEXT for v, fit in zip(power, fits, strict=True)],
                          None if reference_power is None else {"value": reference_power})
        self.efficiency.update({"value": tokens_per_joule}, colours, fits,
                               [compact(v) if fit else NO_FIT_TEXT
                                for v, fit in zip(tokens_per_joule, fits, strict=True)],
                               None if reference_efficiency is None else {"value": reference_efficiency})
        self.best = frame.best_that_fits(tokens_per_joule)
        self.verdict.setText(self._verdict_text(frame))
        self._apply_selection()

    def _verdict_text(self, frame: Frame) -> str:
        """Which accelerator gives the most tokens per joule, among those that fit."""
        left_out = sum(1 for fit in frame.outputs.fits if not fit)
        aside = f" ({counted(left_out, 'accelerator')} that do not fit left out)" if left_out else ""
        if self.best is None:
            return "None of the accelerators shown fits this scenario: no tokens per joule to compare."
        name = self.catalog.accelerators[self.best].name if self.best in self.catalog.accelerators else self.best
        return (f"Most tokens per joule among those that fit{aside}: <b>{name}</b>, "
                f"{compact(frame.output(self.best).tokens_per_joule)} tokens/J.")

    def _apply_reference(self) -> None:
        if self.frame is not None and self.page == "energy":
            self._draw_energy(self.frame)

    def plotted(self) -> dict[str, np.ndarray]:
        return {
            "power_W": self.power.values("value"),
            "tokens_per_J": self.efficiency.values("value"),
            "hatched": self.power.hatched_rows(),
            "accelerators": np.array(self.power.row_axis.ids, dtype=object),
            "rows": np.array(self.power.row_axis.labels, dtype=object),
            "power_text": np.array(self.power.texts.texts(), dtype=object),
            "tokens_per_J_text": np.array(self.efficiency.texts.texts(), dtype=object),
            "colours": np.array(self.power.colours(), dtype=object),
            "best": np.array([] if self.best is None else [self.best], dtype=object),  # the most tokens/J that fits
            # The pinned scenario A (NaN where no ghost is drawn): its ticks, and where its faint bars end.
            "reference_power_W": self.power.reference_values("value"),
            "reference_tokens_per_J": self.efficiency.reference_values("value"),
            "reference_power_bar_W": self.power.reference_values("value", "bar"),
        }

    # ---- helpers -------------------------------------------------------------------------

    def _scope(self, accelerator_id: str) -> str:
        accelerator = self.catalog.accelerators.get(accelerator_id)
        return accelerator.power_scope if accelerator is not None else "device"

    def _row_label(self, accelerator_id: str) -> str:
        name = self.accelerator_name(accelerator_id)
        return f"{name} (system)" if self._scope(accelerator_id) == "system" else name

    def _apply_selection(self) -> None:
        row = self._selected_row()
        for plot in self.plots:
            plot.set_selected_row(row)
        self.power.row_axis.set_bold_row(row)

    def _tooltip(self, row: int) -> str:
        frame = self.frame
        if frame is None:
            return ""
        accelerator_id, c, name = self._row(row)
        output_per_joule = Outputs(c).output_tokens_per_joule
        energy_per_token = 1.0 / output_per_joule if output_per_joule > 0 else float("nan")
        lines = [f"power scope: {SCOPE_WORDS.get(self._scope(accelerator_id), self._scope(accelerator_id))}"]
        if not Outputs(c).fits:
            lines.append(f"<b>does not fit</b>: {codes.FIT_REASONS[int(Outputs(c).fit_code)]}")
        lines += [
            f"power, all {counted(Outputs(c).devices, 'device')}, mean over the run: {watts(Outputs(c).power_W)}",
            f"per device: prefill {watts(Outputs(c).prefill.power_per_device_W)}, decode {watts(Outputs(c).decode.power_per_device_W)}",
            f"tokens per joule (input + output): {compact(Outputs(c).tokens_per_joule)}",
            f"output tokens per joule: {compact(output_per_joule)}",
            f"energy per output token: {joules(energy_per_token)}",
            f"energy of the run: {joules(Outputs(c).energy_J)}",
        ]
        if int(Outputs(c).warning_bits) & codes.WARN_POWER_CAPPED:
            lines.append(f"⚠ {codes.WARNINGS[codes.WARN_POWER_CAPPED]}")
        reference = self.reference
        if reference is not None and accelerator_id in reference.accelerators:
            a = reference.current[:, reference.index(accelerator_id)]
            lines += [f"<span style='color:{REFERENCE_NOTE_COLOUR}'>{text}</span>" for text in (
                "<b>pinned scenario A</b> (the ghosts)",
                f"power, all {counted(Outputs(a).devices, 'device')} — A: {watts(Outputs(a).power_W)}",
                f"tokens per joule (input + output) — A: {compact(Outputs(a).tokens_per_joule)}",
            )]
        return tooltip_html(f"{name} ({accelerator_id})", lines)
