"""Numeric formats: their sizes, and which compute units a device uses for them."""

from __future__ import annotations

# Bytes per element. FP16 and BF16 move the same bytes; INT4 and FP4 pack two per byte.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}

PRECISIONS: tuple[str, ...] = tuple(BYTES_PER_ELEMENT)

# How each format is written for people (controls, summaries): FP32, BF16, ... FP4.
PRECISION_LABELS: dict[str, str] = {precision: precision.upper() for precision in PRECISIONS}

# Catalog keys for dense peak compute. BF16 and FP16 share tensor-core rates on every device
# in the catalog, so the catalog stores one "bf16" figure and FP16 uses it.
PEAK_KEY: dict[str, str] = {
    "fp32": "fp32",
    "bf16": "bf16",
    "fp16": "bf16",
    "fp8": "fp8",
    "int8": "int8",
    "int4": "int4",
    "fp4": "fp4",
}

# Where a device lacks units for a format, serving stacks dequantise to 16 bits and multiply
# there: an FP8 (W8A8) checkpoint on an A100, which has no FP8 units, runs as W8A16 (Brunetta
# et al. 2025, Sec. III-C1); FP8 and INT8 are different formats, so one does not stand in for
# the other. A device without FP32 matrix units (TPU, Gaudi) runs FP32 products as passes of
# BF16. Each chain ends with every format, so any device with a peak has a match.
FALLBACK: dict[str, tuple[str, ...]] = {
    "fp4": ("fp4", "bf16", "fp32", "fp8", "int8", "int4"),
    "int4": ("int4", "bf16", "fp32", "fp8", "int8", "fp4"),
    "fp8": ("fp8", "bf16", "fp32", "int8", "fp4", "int4"),
    "int8": ("int8", "bf16", "fp32", "fp8", "fp4", "int4"),
    "bf16": ("bf16", "fp32", "fp8", "int8", "fp4", "int4"),
    "fp16": ("bf16", "fp32", "fp8", "int8", "fp4", "int4"),
    "fp32": ("fp32", "bf16", "fp8", "int8", "fp4", "int4"),
}

# Embedding tables, the LM head and norms stay in 16 bits when the linear layers are
# quantised to 8 or 4 bits (as in FP8 and GPTQ/AWQ checkpoints served by vLLM).
UNQUANTISED_BYTES = 2.0


def bytes_per_element(precision: str) -> float:
    try:
        return BYTES_PER_ELEMENT[precision]
    except KeyError:
        raise ValueError(
            f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}"
        ) from None


def requested_compute_format(weight_precision: str, activation_precision: str) -> str:
    """Matrix products run in the wider of the weight and activation formats: W8A16 and
    W4A16 multiply in 16 bits (the weights are dequantised), W8A8 in 8 bits."""
    if bytes_per_element(activation_precision) >= bytes_per_element(weight_precision):
        return activation_precision
    return weight_precision


def compute_precision(activation_precision: str, peaks: dict[str, float]) -> str:
    """The catalog peak key a device uses for matrix products at ``activation_precision``."""
    for candidate in FALLBACK[activation_precision]:
        key = PEAK_KEY[candidate]
        if peaks.get(key, 0.0) > 0.0:
            return key
    raise ValueError("device has no compute peak for any format")
