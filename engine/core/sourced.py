"""A catalog value together with where it came from.

Every number in the accelerator catalog is a :class:`Sourced`: the value in SI units, the
source it was taken from (paper and table/section, or vendor datasheet), an optional note, and
the alternatives other sources give, with the reason they were not used.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Alternative:
    """A value another source gives for the same quantity, kept for the record."""

    value: float | int | str
    source: str
    note: str = ""


@dataclass(frozen=True)
class Sourced:
    """A value with its citation. ``value`` is in the unit the field name says (SI)."""

    value: float | int | str
    source: str
    note: str = ""
    alternatives: tuple[Alternative, ...] = ()

    def __float__(self) -> float:
        return float(self.value)  # type: ignore[arg-type]
