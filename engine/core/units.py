"""Numbers for people: the one home of number formatting (SI prefixes, significant figures).

Every figure the engine's text, the tables' notes and the app's labels show is formatted here,
so a change in how a quantity reads is made once. Vendors count bytes in decimal units, and so
does everything here: 1 GB = 10^9 bytes.
"""

from __future__ import annotations

import math


def significant(value: float) -> str:
    """Three significant figures; whole numbers with thousands separators from 100 up."""
    if not math.isfinite(value):
        return "∞" if value > 0 else "n/a"
    if value == 0:
        return "0"
    rounded = float(f"{value:.3g}")
    if abs(value) >= 99.95:
        return f"{value:,.0f}"
    decimals = max(0, 2 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}"


def format_number(value: float | None, missing: str = "-") -> str:
    """A published or predicted figure at the precision the validation tables show it: whole
    numbers from 100 up, then 1, 2 or 3 significant decimals; ``missing`` for none."""
    if value is None or not math.isfinite(value):
        return missing
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _trimmed(text: str) -> str:
    """A datasheet figure or constant as written: 5.3 TB/s, 10 µs (not 5.30, 10.0)."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scaled(value: float, units: tuple[tuple[float, str], ...], trim: bool = False) -> str:
    """``value`` in the largest unit (``units`` largest first) that keeps it at 1 or more."""
    factor, name = next(((f, n) for f, n in units if abs(value) >= 0.9995 * f), units[-1])
    number = significant(value / factor)
    return f"{_trimmed(number) if trim else number} {name}"


_BYTES = ((1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B"))
_BANDWIDTH = ((1e15, "PB/s"), (1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1.0, "B/s"))
_FLOPS = ((1e18, "EFLOP"), (1e15, "PFLOP"), (1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1.0, "FLOP"))
_FLOP_RATE = ((1e12, "TFLOP/s"), (1e9, "GFLOP/s"), (1.0, "FLOP/s"))  # vendors quote TFLOP/s
_POWER = ((1e6, "MW"), (1e3, "kW"), (1.0, "W"))
_ENERGY = ((1e9, "GJ"), (1e6, "MJ"), (1e3, "kJ"), (1.0, "J"))


def format_bytes(value: float) -> str:
    """Decimal units, as vendors count: 15.0 GB, 151 MB."""
    return _scaled(value, _BYTES)


def format_bandwidth(value: float, trim: bool = False) -> str:
    return _scaled(value, _BANDWIDTH, trim)


def format_flops(value: float) -> str:
    return _scaled(value, _FLOPS)


def format_flop_rate(value: float, trim: bool = False) -> str:
    return _scaled(value, _FLOP_RATE, trim)


def format_power(value: float, trim: bool = False) -> str:
    return _scaled(value, _POWER, trim)


def format_energy(value: float) -> str:
    return _scaled(value, _ENERGY)


def format_time(seconds: float, trim: bool = False) -> str:
    """ns, µs, ms, s; minutes and hours for long runs; none at all is '0 s'."""
    if seconds == 0:
        return "0 s"
    if seconds >= 2 * 3600:
        return f"{significant(seconds / 3600)} h"
    if seconds >= 120:
        return f"{significant(seconds / 60)} min"
    return _scaled(seconds, ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")), trim)


def format_factor(value: float) -> str:
    """An efficiency factor as written in the constants file: 0.7, 0.85."""
    return f"{value:g}"
