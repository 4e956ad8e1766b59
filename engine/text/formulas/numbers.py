"""Numbers for people, as the formula sheet writes them."""

from __future__ import annotations

import math

from ...core.precision import PRECISION_LABELS
from ...core.units import significant

CONSTANTS_FILE = "resources/efficiency.toml"
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def count(value: float, noun: str = "") -> str:
    """A count that may be fractional: whole numbers exactly, with thousands separators."""
    text = f"{round(value):,}" if abs(value - round(value)) < 1e-9 else significant(value)
    return f"{text} {noun}".rstrip()


def large(value: float, noun: str = "") -> str:
    """Parameter counts: 6.98·10⁹."""
    if abs(value) < 1e5:
        return count(value, noun)
    exponent = math.floor(math.log10(abs(value)))
    mantissa = float(f"{value / 10**exponent:.3g}")
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f}·10{str(exponent).translate(_SUPERSCRIPT)} {noun}".rstrip()


def precision_label(precision: str) -> str:
    return PRECISION_LABELS.get(precision, precision)


def tiny_energy(joules: float, per: str) -> str:
    return f"{significant(joules * 1e12)} pJ/{per}"


def percent(fraction: float) -> str:
    return f"{significant(fraction * 100)}%"


def intensity(value: float) -> str:
    return f"{significant(value)} FLOP/B"


def tokens_per_s(value: float) -> str:
    return f"{significant(value)} tokens/s"


def tokens_per_joule(value: float) -> str:
    return f"{significant(value)} tokens/J"
