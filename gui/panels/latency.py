"""Latency and throughput: time to first token, inter-token latency and output tokens per
second on every shown accelerator, on log scales (they span several orders of magnitude)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from accelscope.engine.catalog import Catalog
from accelscope.engine.core import codes
from accelscope.engine.core.units import compact, count, milliseconds
from accelscope.engine.physics.frame import Frame
from accelscope.engine.physics.results import Outputs

from ..look.palette import colour_for
from ..plotkit.axes import REFERENCE_NOTE_COLOUR, ROW_LABEL_MAX_PX
from ..plotkit.bars import LogBarPlot, canvas, panel_layout, reference_bars_note
from ..plotkit.picking import RowPicker
from ..plotkit.text import subtitle_label, swatch, tooltip_html
from .base import Panel, reference_note_label

SYSTEM_ALPHA = 255
DEVICE_ALPHA = 95  # the per-device bar: the same colour, lighter
DEVICE_SWATCH = "#C8C8C8"  # grey at DEVICE_ALPHA on white, for the legend
THROUGHPUT_SERIES = (
    ("system", -0.19, 0.36, SYSTEM_ALPHA),
    ("device", 0.19, 0.36, DEVICE_ALPHA),
)


class LatencyPanel(Panel):
    title = "Latency & throughput"
    update_applies_selection = True

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self.header = subtitle_label(
            "Log scales; bars in each accelerator's colour. "
            + swatch("#777777", "hatched: does not fit in memory (shown for comparison; hover for why)",
                          hatch=True)
            + " &nbsp; Throughput: "
            + swatch("#555555", "whole system (all devices and replicas)")
            + " &nbsp; "
            + swatch(DEVICE_SWATCH, "per device")
        )
        self.canvas = canvas()
        panel_layout(self, self.header, self.canvas)
        self.reference_note = reference_note_label(reference_bars_note())
        self.layout().addWidget(self.reference_note)
        self.ttft = LogBarPlot(self.canvas, 0, title="Time to first token", x_label="TTFT, log scale",
                                    x_unit="ms", row_labels=True)
        self.itl = LogBarPlot(self.canvas, 1, title="Inter-token latency", x_label="ITL, log scale",
                                   x_unit="ms", row_labels=False)
        self.throughput = LogBarPlot(self.canvas, 2, title="Output throughput",
                                          x_label="output tokens/s, log scale", x_unit=None, row_labels=False,
                                          series=THROUGHPUT_SERIES)
        self.plots = (self.ttft, self.itl, self.throughput)
        self.picker = RowPicker(self.canvas, [p.plot for p in self.plots], self._rows, self._tooltip,
                                     self._clicked, self)

    # ---- Panel ---------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        ids = frame.accelerators
        self.ttft.row_axis.set_rows([self.accelerator_name(a) for a in ids], max_width=ROW_LABEL_MAX_PX, ids=list(ids))
        self.canvas.settle()  # the plots' widths, for the texts beside the bars
        colours = [colour_for(a) for a in ids]
        fits = frame.outputs.fits != 0
        ttft_ms = frame.outputs.ttft_s * 1e3
        itl_ms = frame.outputs.itl_s * 1e3
        system = frame.outputs.throughput_output_tok_s
        devices = frame.outputs.devices
        with np.errstate(divide="ignore", invalid="ignore"):
            per_device = np.where(devices > 0, system / devices, np.nan)
        reference = self._reference_outputs()
        self.ttft.update({"value": ttft_ms}, colours, fits, [compact(v) for v in ttft_ms],
                         None if reference is None else {"value": reference["ttft_ms"]})
        self.itl.update({"value": itl_ms}, colours, fits, [compact(v) for v in itl_ms],
                        None if reference is None else {"value": reference["itl_ms"]})
        texts = [compact(s) + (f" · {compact(d)}/dev" if n > 1 else "")
                 for s, d, n in zip(system, per_device, devices, strict=True)]
        self.throughput.update({"system": system, "device": per_device}, colours, fits, texts,
                               None if reference is None else {"system": reference["system"], "device": reference["device"]})
        self._apply_selection()

    def _apply_reference(self) -> None:
        if self.frame is not None:
            self.update_frame(self.frame)

    def _reference_outputs(self) -> dict[str, np.ndarray] | None:
        """The pinned scenario A's values for the current rows (NaN where A did not show the
        accelerator), in the units drawn; None when nothing is pinned."""
        if self.reference is None:
            return None
        system, devices = self._reference_values("throughput_output_tok_s"), self._reference_values("devices")
        with np.errstate(divide="ignore", invalid="ignore"):
            per_device = np.where(devices > 0, system / devices, np.nan)
        return {"ttft_ms": self._reference_values("ttft_s") * 1e3, "itl_ms": self._reference_values("itl_s") * 1e3,
                "system": system, "device": per_device}

    def plotted(self) -> dict[str, np.ndarray]:
        return {
            "ttft_ms": self.ttft.values("value"),
            "itl_ms": self.itl.values("value"),
            "throughput_system_tok_s": self.throughput.values("system"),
            "throughput_device_tok_s": self.throughput.values("device"),
            "hatched": self.ttft.hatched_rows(),
            "accelerators": np.array(self.ttft.row_axis.ids, dtype=object),
            "rows": np.array(self.ttft.row_axis.labels, dtype=object),
            "ttft_text": np.array(self.ttft.texts.texts(), dtype=object),
            "throughput_text": np.array(self.throughput.texts.texts(), dtype=object),
            # The pinned scenario A (NaN where no ghost is drawn): its ticks, and where its faint bars end.
            "reference_ttft_ms": self.ttft.reference_values("value"),
            "reference_itl_ms": self.itl.reference_values("value"),
            "reference_throughput_system_tok_s": self.throughput.reference_values("system"),
            "reference_throughput_device_tok_s": self.throughput.reference_values("device"),
            "reference_ttft_bar_ms": self.ttft.reference_values("value", "bar"),
            "reference_throughput_device_bar_tok_s": self.throughput.reference_values("device", "bar"),
        }

    # ---- helpers -------------------------------------------------------------------------

    def _reference_lines(self, accelerator_id: str) -> list[str]:
        """The pinned scenario A's values, for the tool tip of a row with a ghost."""
        reference = self.reference
        if reference is None or accelerator_id not in reference.accelerators:
            return []
        a = reference.current[:, reference.index(accelerator_id)]
        grey = REFERENCE_NOTE_COLOUR
        texts = [
            "<b>pinned scenario A</b> (the ghosts)",
            f"TTFT — A: {milliseconds(Outputs(a).ttft_s)}",
            f"ITL — A: {milliseconds(Outputs(a).itl_s)}",
            f"output throughput, whole system — A: {compact(Outputs(a).throughput_output_tok_s)} tokens/s",
            f"per device — A: {compact(Outputs(a).throughput_output_tok_s / max(int(Outputs(a).devices), 1))} tokens/s",
        ]
        return [f"<span style='color:{grey}'>{text}</span>" for text in texts]

    def _apply_selection(self) -> None:
        row = self._selected_row()
        for plot in self.plots:
            plot.set_selected_row(row)
        self.ttft.row_axis.set_bold_row(row)

    def _tooltip(self, row: int) -> str:
        frame = self.frame
        if frame is None:
            return ""
        accelerator_id, c, name = self._row(row)
        devices = int(Outputs(c).devices)
        lines = []
        if not Outputs(c).fits:
            lines.append(f"<b>does not fit</b>: {codes.FIT_REASONS[int(Outputs(c).fit_code)]}")
        lines += [
            f"TTFT: {milliseconds(Outputs(c).ttft_s)} (prefill {codes.BOUNDS[int(Outputs(c).prefill.bound)]}-bound)",
            f"ITL: {milliseconds(Outputs(c).itl_s)} (decode {codes.BOUNDS[int(Outputs(c).decode.bound)]}-bound)",
            f"end-to-end latency: {milliseconds(Outputs(c).e2e_latency_s)}",
            f"output throughput, whole system: {compact(Outputs(c).throughput_output_tok_s)} tokens/s",
            f"output throughput per device: {compact(Outputs(c).throughput_output_tok_s / max(devices, 1))} tokens/s",
            f"input + output throughput: {compact(Outputs(c).throughput_total_tok_s)} tokens/s",
            f"devices: {devices}",
        ]
        if int(Outputs(c).waves) > 1:
            lines.append(f"⚠ KV cache overflows: runs in {int(Outputs(c).waves)} waves of {count(Outputs(c).memory.resident_batch)}")
        lines += self._reference_lines(accelerator_id)
        return tooltip_html(f"{name} ({accelerator_id})", lines)
