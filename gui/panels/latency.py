"""Latency and throughput: time to first token, inter-token latency and output tokens per
second on every shown accelerator, on log scales (they span several orders of magnitude)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from accelscope.engine import codes
from accelscope.engine import kernels as k
from accelscope.engine.catalog import Catalog
from accelscope.engine.frame import Frame

from ..palette import colour_for
from . import bars
from .base import Panel

SYSTEM_ALPHA = 255
DEVICE_ALPHA = 95  # the per-device bar: the same colour, lighter
DEVICE_SWATCH = "#C8C8C8"  # grey at DEVICE_ALPHA on white, for the legend
THROUGHPUT_SERIES = (
    ("system", -0.19, 0.36, SYSTEM_ALPHA),
    ("device", 0.19, 0.36, DEVICE_ALPHA),
)


def _ms(seconds: float) -> str:
    return f"{bars.compact(seconds * 1e3)} ms"


class LatencyPanel(Panel):
    title = "Latency & throughput"

    def __init__(self, catalog: Catalog, parent: QWidget | None = None) -> None:
        super().__init__(catalog, parent)
        self.header = bars.subtitle_label(
            "Log scales; bars in each accelerator's colour. "
            + bars.swatch("#777777", "hatched: does not fit in memory (shown for comparison; hover for why)",
                          hatch=True)
            + " &nbsp; Throughput: "
            + bars.swatch("#555555", "whole system (all devices and replicas)")
            + " &nbsp; "
            + bars.swatch(DEVICE_SWATCH, "per device")
        )
        self.canvas = bars.canvas()
        bars.panel_layout(self, self.header, self.canvas)
        self.ttft = bars.LogBarPlot(self.canvas, 0, title="Time to first token", x_label="TTFT, log scale",
                                    x_unit="ms", row_labels=True)
        self.itl = bars.LogBarPlot(self.canvas, 1, title="Inter-token latency", x_label="ITL, log scale",
                                   x_unit="ms", row_labels=False)
        self.throughput = bars.LogBarPlot(self.canvas, 2, title="Output throughput",
                                          x_label="output tokens/s, log scale", x_unit=None, row_labels=False,
                                          series=THROUGHPUT_SERIES)
        self.plots = (self.ttft, self.itl, self.throughput)
        self.picker = bars.RowPicker(self.canvas, [p.plot for p in self.plots], self._rows, self._tooltip,
                                     self._clicked, self)

    # ---- Panel ---------------------------------------------------------------------------

    def update_frame(self, frame: Frame) -> None:
        self.frame = frame
        ids = frame.accelerators
        self.ttft.row_axis.set_rows(list(ids))
        self.canvas.settle()  # the plots' widths, for the texts beside the bars
        colours = [colour_for(a) for a in ids]
        fits = frame.values(k.O_FITS) != 0
        ttft_ms = frame.values(k.O_TTFT) * 1e3
        itl_ms = frame.values(k.O_ITL) * 1e3
        system = frame.values(k.O_THROUGHPUT_OUTPUT)
        devices = frame.values(k.O_DEVICES)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_device = np.where(devices > 0, system / devices, np.nan)
        self.ttft.update({"value": ttft_ms}, colours, fits, [bars.compact(v) for v in ttft_ms])
        self.itl.update({"value": itl_ms}, colours, fits, [bars.compact(v) for v in itl_ms])
        texts = [bars.compact(s) + (f" · {bars.compact(d)}/dev" if n > 1 else "")
                 for s, d, n in zip(system, per_device, devices, strict=True)]
        self.throughput.update({"system": system, "device": per_device}, colours, fits, texts)
        self._apply_selection()

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
        }

    # ---- helpers -------------------------------------------------------------------------

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
        devices = int(c[k.O_DEVICES])
        lines = []
        if not c[k.O_FITS]:
            lines.append(f"<b>does not fit</b>: {codes.FIT_REASONS[int(c[k.O_FIT_CODE])]}")
        lines += [
            f"TTFT: {_ms(c[k.O_TTFT])} (prefill {codes.BOUNDS[int(c[k.O_PRE_BOUND])]}-bound)",
            f"ITL: {_ms(c[k.O_ITL])} (decode {codes.BOUNDS[int(c[k.O_DEC_BOUND])]}-bound)",
            f"end-to-end latency: {_ms(c[k.O_E2E])}",
            f"output throughput, whole system: {bars.compact(c[k.O_THROUGHPUT_OUTPUT])} tokens/s",
            f"output throughput per device: {bars.compact(c[k.O_THROUGHPUT_OUTPUT] / max(devices, 1))} tokens/s",
            f"input + output throughput: {bars.compact(c[k.O_THROUGHPUT_TOTAL])} tokens/s",
            f"devices: {devices}",
        ]
        if int(c[k.O_WAVES]) > 1:
            lines.append(f"⚠ KV cache overflows: runs in {int(c[k.O_WAVES])} waves of {bars.count(c[k.O_RESIDENT])}")
        return bars.tooltip_html(f"{name} ({accelerator_id})", lines)
