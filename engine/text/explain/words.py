"""Small words for numbers: counts with their nouns, fractional amounts, sentences."""

from __future__ import annotations

import math

from ...core.units import counted, significant

_SAME = 1e-6  # relative tolerance for "this formula reproduces the engine's number"


def count(n: int, noun: str, plural: str | None = None) -> str:
    return counted(n, noun, plural)


def amount(value: float) -> str:
    """A count that may be fractional (tokens or sequences per pass): whole numbers exactly."""
    if abs(value - round(value)) < 1e-9:
        return f"{round(value):,}"
    return significant(value)


def tokens(value: float) -> str:
    return f"{amount(value)} token{'' if value == 1 else 's'}"


def percent_up(fraction: float) -> str:
    """A fraction as a whole percent, rounded up (an offload share rounded down would not fit)."""
    return f"{math.ceil(fraction * 100 - 1e-9)}%"


def same(a: float, b: float) -> bool:
    """Whether a formula's value is the engine's number (to rounding)."""
    return abs(a - b) <= _SAME * max(abs(a), abs(b), 1e-300)


def sentence(text: str) -> str:
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")
