"""Stable colours and markers for accelerators, the same on every plot.

Colours come from Paul Tol's colour-blind-safe schemes (muted, vibrant, bright). Nineteen
colours cannot all be told apart by every viewer, so each architecture class also has its own
marker shape, and every plot names the accelerator beside it or on hover.
"""

from __future__ import annotations

import hashlib

ACCELERATOR_COLOURS: dict[str, str] = {
    "a100-40gb": "#999933",  # olive
    "a100-80gb": "#88CCEE",  # light cyan
    "h100-sxm": "#0077BB",  # blue
    "h200": "#332288",  # indigo
    "gh200": "#44AA99",  # teal
    "b200": "#117733",  # green
    "mi250": "#CC6677",  # rose
    "mi300x": "#CC3311",  # red
    "mi325x": "#EE7733",  # orange
    "max-1550": "#AA4499",  # purple
    "gaudi2": "#DDCC77",  # sand
    "gaudi3": "#CCBB44",  # yellow
    "tpu-v7": "#009988",  # vibrant teal
    "wse-3": "#EE3377",  # magenta
    "gc200": "#882255",  # wine
    "groq-lpu": "#555555",  # dark grey
    "mtia-v2": "#4477AA",  # steel blue
    "inferentia2": "#66CCEE",  # sky
    "sn40l": "#000000",  # black
    # Shown at first (gui.state.session.DEFAULT_SHOWN): colours of their own, apart from the others shown then.
    "rtx-4090": "#994F88",  # purple (rainbow)
    "dgx-spark": "#DDAA33",  # ochre (high contrast)
    "m4-max": "#663333",  # dark brown (dark)
}

# For user accelerators: colours not used above, picked by a hash of the id so they are stable.
_SPARE_COLOURS = ("#228833", "#EE6677", "#AA3377", "#BBBBBB", "#33BBEE", "#0F4C81")

CLASS_SYMBOLS: dict[str, str] = {
    "gpu-simt": "o",
    "systolic": "s",
    "many-core-sram": "t",
    "wafer-scale": "d",
    "deterministic-pipeline": "star",
    "dataflow-rdu": "h",
}

CLASS_LABELS: dict[str, str] = {
    "gpu-simt": "GPU (SIMT)",
    "systolic": "Systolic array",
    "many-core-sram": "Many-core SRAM",
    "wafer-scale": "Wafer-scale",
    "deterministic-pipeline": "Deterministic pipeline",
    "dataflow-rdu": "Dataflow (RDU)",
}

# Whether a scenario fits, wherever a status is written: it fits; its KV cache overflows and it
# runs in waves; it does not fit.
FITS_COLOUR = "#1B6E2E"
WAVES_COLOUR = "#A14800"
NO_FIT_COLOUR = "#B2182B"

# Phase markers on the roofline.
PREFILL_SYMBOL = "t1"  # triangle up
DECODE_SYMBOL = "o"


def colour_for(accelerator_id: str) -> str:
    if accelerator_id in ACCELERATOR_COLOURS:
        return ACCELERATOR_COLOURS[accelerator_id]
    digest = hashlib.sha256(accelerator_id.encode()).digest()
    return _SPARE_COLOURS[digest[0] % len(_SPARE_COLOURS)]


def symbol_for(architecture_class: str) -> str:
    return CLASS_SYMBOLS.get(architecture_class, "o")
