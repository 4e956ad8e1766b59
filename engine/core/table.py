"""A table of values with units in its column headers: what every plot and study exports as CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    view: str
    headers: tuple[str, ...]  # "name [unit]"
    rows: tuple[tuple[object, ...], ...]

    def to_csv(self, comments: Sequence[str] = ()) -> str:
        """CSV text; ``comments`` become leading lines starting with '# '."""
        buffer = io.StringIO()
        for line in comments:
            buffer.write(f"# {line}\n")
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.headers)
        writer.writerows(self.rows)
        return buffer.getvalue()
