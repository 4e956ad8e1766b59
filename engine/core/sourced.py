"""A catalog value together with where it came from.

Every number in the accelerator catalog is a :class:`Sourced`: the value in SI units, the
source it was taken from (paper and table/section, or vendor datasheet), an optional note, the
alternatives other sources give, with the reason they were not used, and the grade of its
source: how far the value can be trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

# The grades a file may state, most trusted first:
#   vendor       the maker's datasheet, white paper or documentation
#   paper        one of the two source papers (Sharma 2025; Brunetta et al. 2025)
#   third-party  press, resellers, spec databases, community tables, microbenchmark papers
#   estimate     worked out, not read anywhere; the note shows the working
GRADES: tuple[str, ...] = ("vendor", "paper", "third-party", "estimate")

# The grade of a value whose file states none (files written before grades existed).
UNSTATED = "unstated"


def derived_grade(source: str) -> str:
    """The grade of a value whose file states none: an estimate when its source says so."""
    return "estimate" if source.lstrip().lower().startswith("estimate") else UNSTATED


@dataclass(frozen=True)
class Alternative:
    """A value another source gives for the same quantity, kept for the record."""

    value: float | int | str
    source: str
    note: str = ""
    grade: str = ""  # one of GRADES; derived from the source when left empty

    def __post_init__(self) -> None:
        if not self.grade:
            object.__setattr__(self, "grade", derived_grade(self.source))


@dataclass(frozen=True)
class Sourced:
    """A value with its citation. ``value`` is in the unit the field name says (SI)."""

    value: float | int | str
    source: str
    note: str = ""
    alternatives: tuple[Alternative, ...] = ()
    grade: str = ""  # one of GRADES; derived from the source when left empty

    def __post_init__(self) -> None:
        if not self.grade:
            object.__setattr__(self, "grade", derived_grade(self.source))

    def __float__(self) -> float:
        return float(self.value)  # type: ignore[arg-type]
