"""Numeric formats: their sizes, and which compute units a device uses for them."""

from __future__ import annotations

# Block-scaled 4-bit formats: FP4 (E2M1) elements that share one scale per small block, so
# their real size counts the scales too.
#
# - MXFP4 (OCP Microscaling Formats (MX) Specification v1.0, Sept. 2023, Table 1): blocks of
#   32 E2M1 elements share one 8-bit E8M0 (power-of-two) scale: 4 + 8/32 = 4.25 bits.
# - NVFP4 (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference",
#   June 2025; Blackwell's block-scaled tensor-core formats): blocks of 16 E2M1 elements share
#   one FP8 E4M3 scale, 4 + 8/16 = 4.5 bits, and each tensor has one FP32 scale on top (4
#   bytes per weight matrix, a few kB for a whole model: not counted).
#
# Checked against HF transformers 5.24.0, which reads both: integrations/mxfp4.py unpacks 16
# bytes (32 elements) per uint8 scale biased by 127 (E8M0); integrations/nvfp4.py has
# SF_VEC_SIZE = 16 with FP8 scales and one float32 weight_global_scale per linear layer.
MXFP4_BLOCK_ELEMENTS = 32
MXFP4_SCALE_BITS = 8  # E8M0
NVFP4_BLOCK_ELEMENTS = 16
NVFP4_SCALE_BITS = 8  # E4M3
FP4_ELEMENT_BITS = 4  # E2M1
MXFP4_BITS_PER_ELEMENT = FP4_ELEMENT_BITS + MXFP4_SCALE_BITS / MXFP4_BLOCK_ELEMENTS  # 4.25
NVFP4_BITS_PER_ELEMENT = FP4_ELEMENT_BITS + NVFP4_SCALE_BITS / NVFP4_BLOCK_ELEMENTS  # 4.5

# Bytes per element. FP16 and BF16 move the same bytes; INT4 and FP4 pack two per byte (their
# group scales, where a checkpoint has them, are not counted); MXFP4 and NVFP4 count their
# block scales. New formats go at the end: a format's position is its code in the kernels'
# tables and in saved outputs.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
    "mxfp4": MXFP4_BITS_PER_ELEMENT / 8.0,  # 0.53125
    "nvfp4": NVFP4_BITS_PER_ELEMENT / 8.0,  # 0.5625
}

PRECISIONS: tuple[str, ...] = tuple(BYTES_PER_ELEMENT)

# How each format is written for people (controls, summaries): FP32, BF16, ... FP4.
PRECISION_LABELS: dict[str, str] = {
    **{precision: precision.upper() for precision in PRECISIONS},
    "mxfp4": "MXFP4",
    "nvfp4": "NVFP4",
}

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
    # Both block-scaled formats run on the FP4 tensor cores of the devices that have them
    # (Blackwell's block-scaled MMA takes MXFP4 and NVFP4; CDNA 4 takes MXFP4).
    "mxfp4": "fp4",
    "nvfp4": "fp4",
}

# Where a device lacks units for a format, serving stacks dequantise to 16 bits and multiply
# there: an FP8 (W8A8) checkpoint on an A100, which has no FP8 units, runs as W8A16 (Brunetta
# et al. 2025, Sec. III-C1); FP8 and INT8 are different formats, so one does not stand in for
# the other. A device without FP32 matrix units (TPU, Gaudi) runs FP32 products as passes of
# BF16. Each chain ends with every format, so any device with a peak has a match.
FALLBACK: dict[str, tuple[str, ...]] = {
    "fp4": ("fp4", "bf16", "fp32", "fp8", "int8", "int4"),
    # Where there are no FP4 units the weights are dequantised to 16 bits, as for FP4 (vLLM's
    # Marlin MXFP4 and NVFP4 kernels on Hopper and Ampere).
    "mxfp4": ("fp4", "bf16", "fp32", "fp8", "int8", "int4"),
    "nvfp4": ("fp4", "bf16", "fp32", "fp8", "int8", "int4"),
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

# The fixed-size state of linear-attention (Gated DeltaNet) and state-space (Mamba-2) layers,
# whatever the KV-cache format:
# - the recurrent matrix state in FP32: HF transformers 5.24.0 keeps it so for both kinds
#   (NemotronHConfig.mamba_ssm_cache_dtype = "float32", the Nemotron-H checkpoints' setting;
#   Qwen3-Next's gated delta rule runs and returns its state in float32). vLLM's default for
#   Qwen3-Next ("auto", the model's 16 bits) would halve it; FP32 is used as the published
#   configuration asks for it, and it bounds the memory from above.
# - the short convolution's state (its last inputs) in the model's 16 bits, as both keep it.
RECURRENT_STATE_BYTES = 4.0
CONV_STATE_BYTES = UNQUANTISED_BYTES


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


# Products never run on units narrower than this (16 bits) or than the format asked for: a
# device whose only published peaks are narrower (Rubin's NVFP4) has no stated rate for a
# 16-bit or FP8 product, and the model says so rather than borrowing the narrower rate.
NARROWEST_FALLBACK_BYTES = 2.0


def compute_precision(activation_precision: str, peaks: dict[str, float]) -> str:
    """The catalog peak key a device uses for matrix products at ``activation_precision``."""
    for candidate in FALLBACK[activation_precision]:
        key = PEAK_KEY[candidate]
        if peaks.get(key, 0.0) > 0.0:
            return key
    raise ValueError("device has no compute peak for any format")
