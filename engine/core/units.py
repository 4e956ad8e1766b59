"""Numbers for people: the one home of number formatting (SI prefixes, significant figures).

Every figure the engine's text, the tables' notes and the app's labels show is formatted here,
so a change in how a quantity reads is made once. Vendors count bytes in decimal units, and so
does everything here: 1 GB = 10^9 bytes.
"""

from __future__ import annotations

import math

import numpy as np


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


_PARAMETERS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def format_params(value: float) -> str:
    """A parameter count as model cards write it: 8.03 B, 31.5 B, 1.04 T, 350 M."""
    return _scaled(value, _PARAMETERS).rstrip()


def counted(n: float, noun: str, plural: str | None = None) -> str:
    """A whole number of things, the noun singular for one: "1 device", "2,048 devices"."""
    n = int(n)
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def format_usd(value: float | None, missing: str = "unknown") -> str:
    """US dollars to three significant figures: $0.0847, $2.49, $21,812; ``missing`` for none."""
    if value is None or not math.isfinite(value):
        return missing
    return f"${significant(value)}"


def format_price(value: float) -> str:
    """A price as it was given, to four significant figures: $2.49, $0.1146, $8,500, $34,722."""
    if abs(value) >= 1000:
        return f"${value:,.0f}"
    return f"${value:.4g}"


def format_factor(value: float) -> str:
    """An efficiency factor as written in the constants file: 0.7, 0.85."""
    return f"{value:g}"


# ---- the app's short forms: values beside bars, in tool tips and on axes ---------------------
# Each reads at a glance in a narrow space; the examples show how they differ from the
# format_* forms above.


def compact(value: float) -> str:
    """Three significant digits, k, M, G and T above ten thousand: 0.0123, 14.3, 989, 15.5 k,
    2.1 M, 3.2 G (a multiple or a time that large is written as the smaller ones are, not as
    3.20e+09 beside them); powers of ten beyond that."""
    if not math.isfinite(value):
        return "—"
    magnitude = abs(value)
    if magnitude >= 1e15:
        return f"{value:.2e}"
    if magnitude >= 1e12:
        return f"{value / 1e12:.3g} T"
    if magnitude >= 1e9:
        return f"{value / 1e9:.3g} G"
    if magnitude >= 1e6:
        return f"{value / 1e6:.3g} M"
    if magnitude >= 1e4:
        return f"{value / 1e3:.3g} k"
    if magnitude >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def count(value: float) -> str:
    """A whole number with thousands separators, compact from a million: 12,345; 2.1 M."""
    return compact(value) if abs(value) >= 1e6 else f"{int(value):,}"


def short_number(value: float) -> str:
    """Three significant digits, thousands separated: 0.0123, 14.3, 989, 15,500."""
    if not np.isfinite(value):
        return "n/a"
    if abs(value) >= 1000:
        return f"{float(f'{value:.3g}'):,.0f}"
    return f"{value:.3g}"


def short_bandwidth(bandwidth_Bps: float) -> str:
    """3.35 TB/s, 64 GB/s."""
    if bandwidth_Bps >= 1e12:
        return f"{short_number(bandwidth_Bps / 1e12)} TB/s"
    return f"{short_number(bandwidth_Bps / 1e9)} GB/s"


def short_bytes(size: float) -> str:
    """Decimal units: "720 MB", "1.03 GB"."""
    return f"{size / 1e9:.3g} GB" if size >= 1e9 else f"{size / 1e6:.3g} MB"


def gigabytes(size: float) -> str:
    """Always in GB, two decimals: 0.17 GB, 16.06 GB."""
    return f"{size / 1e9:.2f} GB"


def milliseconds(seconds: float) -> str:
    """Always in ms, compact: 0.512 ms, 27.8 ms, 14.2 k ms."""
    return f"{compact(seconds * 1e3)} ms"


def short_time(seconds: float) -> str:
    """Milliseconds below a second, seconds above: "27.8 ms", "14.2 s"."""
    return milliseconds(seconds) if seconds < 1.0 else f"{compact(seconds)} s"


def duration_text(seconds: float) -> str:
    """Milliseconds below a second, seconds above, thousands separated: "27.8 ms", "1,230 s"."""
    if not np.isfinite(seconds):
        return "n/a"
    if seconds < 1.0:
        return f"{short_number(seconds * 1e3)} ms"
    return f"{short_number(seconds)} s"


def watts(value: float) -> str:
    """700 W, 5.6 kW."""
    if not np.isfinite(value):
        return "—"
    return f"{value / 1e3:.3g} kW" if abs(value) >= 1e3 else f"{value:.3g} W"


def joules(value: float) -> str:
    """0.42 mJ, 1.3 J, 56 kJ, 2.1 MJ."""
    if not np.isfinite(value):
        return "—"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.3g} MJ"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.3g} kJ"
    if abs(value) >= 1.0:
        return f"{value:.3g} J"
    return f"{value * 1e3:.3g} mJ"


def ratio_text(ratio: float | None) -> str:
    """A predicted/published ratio: 1.07×; "—" where there is none."""
    return "—" if ratio is None or not math.isfinite(ratio) else f"{ratio:.2f}×"


def times_text(ratio: float) -> str:
    """A ratio as '5.21x' or, from 100 up, '2,157x'."""
    return f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x"


def measured_number(value: float | None, missing: str = "-") -> str:
    """A measured or predicted number at the precision a table shows it: 1,234; 512; 27.8;
    3.14; 0.0512."""
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


def grid_value(value: float) -> str:
    """A regime's raw value: 1,234 from a thousand up, else three significant digits."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def tick_text(value: float) -> str:
    """An axis tick: 0.001 … 99,999 as plain numbers, powers of ten beyond (10⁵, 2·10⁻⁴)."""
    value = float(f"{value:.3g}")
    if 1e-3 <= abs(value) < 1e5:
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"
    exponent = int(np.floor(np.log10(abs(value))))
    mantissa = round(value / 10.0**exponent, 2)
    power = "10" + str(exponent).translate(_SUPERSCRIPTS)
    return power if mantissa == 1 else f"{mantissa:g}·{power}"


def log_tick_text(exponent: float) -> str:
    """The tick of a bar drawn at log10(value), labelled with the value: 0.1, 20, 10k, 1M."""
    value = float(f"{10.0 ** exponent:.3g}")
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e4:
        return f"{value / 1e3:g}k"
    return f"{value:g}"
