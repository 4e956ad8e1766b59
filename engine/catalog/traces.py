"""Request traces: when each request arrived and how long its prompt and reply were.

A trace is untrusted input (a file a colleague sent, an export of a production log). Two
formats, told apart by the file's ending:

- CSV (``.csv``): a header naming the three columns, then one request per line::

      arrival_s,input_tokens,output_tokens
      0.000,812,147
      0.314,1533,96

- JSON Lines (``.jsonl``, ``.ndjson``): one object per line with the same three keys.

Arrival times are seconds from the start (non-negative, finite, in any order: the trace is
sorted by them); token counts are whole numbers of at least 1. Every problem is one line naming
the file, the line and the field, and nothing is simulated from a trace with any bad line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import CatalogError
from .reading import decode_text, read_limited

MAX_TRACE_BYTES = 64 * 1024 * 1024
MAX_TRACE_REQUESTS = 1_000_000
MAX_TRACE_TOKENS = 100_000_000
MAX_ARRIVAL_S = 1e9
COLUMNS: tuple[str, ...] = ("arrival_s", "input_tokens", "output_tokens")
# Other names traces commonly use for the same columns (vLLM's and Vidur's exports).
ALIASES: dict[str, str] = {
    "arrival_time": "arrival_s",
    "arrived_at": "arrival_s",
    "timestamp": "arrival_s",
    "prompt_tokens": "input_tokens",
    "num_prefill_tokens": "input_tokens",
    "input_len": "input_tokens",
    "completion_tokens": "output_tokens",
    "num_decode_tokens": "output_tokens",
    "output_len": "output_tokens",
}


@dataclass(frozen=True)
class Trace:
    """A trace's requests sorted by arrival: s, tokens, tokens."""

    path: str
    arrival_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray

    @property
    def requests(self) -> int:
        return int(self.arrival_s.shape[0])


def load_trace(path: str | Path) -> Trace:
    path = Path(path)
    text = decode_text(path, read_limited(path, MAX_TRACE_BYTES))
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = _csv_rows(path, text)
    elif suffix in (".jsonl", ".ndjson"):
        rows = _jsonl_rows(path, text)
    else:
        raise CatalogError(path, None, f"unknown trace format {suffix or '(no ending)'!r}; use .csv or .jsonl")
    if not rows:
        raise CatalogError(path, None, "no requests in the trace")
    arrival, inputs, outputs = (np.array(column) for column in zip(*rows, strict=True))
    order = np.argsort(arrival, kind="stable")
    return Trace(str(path), arrival[order].astype(np.float64), inputs[order].astype(np.int64),
                 outputs[order].astype(np.int64))


def _csv_rows(path: Path, text: str) -> list[tuple[float, int, int]]:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        raise CatalogError(path, "line 1", "no header; the first line names the columns arrival_s, input_tokens, "
                           "output_tokens") from None
    names = [ALIASES.get(name.strip().lower(), name.strip().lower()) for name in header]
    missing = [column for column in COLUMNS if column not in names]
    if missing:
        raise CatalogError(path, "line 1", f"missing column {missing[0]!r}; the header must name "
                           f"{', '.join(COLUMNS)} (got {_shown(', '.join(header))})")
    positions = [names.index(column) for column in COLUMNS]
    rows = []
    try:
        for record in reader:
            line = reader.line_num
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) != len(header):
                raise CatalogError(path, f"line {line}", f"{len(record)} fields, the header has {len(header)}")
            rows.append(_request(path, line, {column: record[p] for column, p in zip(COLUMNS, positions, strict=True)}))
            _check_count(path, line, len(rows))
    except csv.Error as error:
        raise CatalogError(path, f"line {reader.line_num}", f"not valid CSV ({error})") from None
    return rows


def _jsonl_rows(path: Path, text: str) -> list[tuple[float, int, int]]:
    rows = []
    # Lines end at \n only: splitlines() would also split at U+2028 inside a JSON string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise CatalogError(path, f"line {number}", "not a JSON object") from None
        except ValueError:  # int() refusing more digits than sys.get_int_max_str_digits()
            raise CatalogError(path, f"line {number}",
                               f"a number longer than {sys.get_int_max_str_digits():,} digits") from None
        if not isinstance(data, dict):
            raise CatalogError(path, f"line {number}", "each line must be a JSON object")
        fields = {ALIASES.get(key, key): value for key, value in data.items()}
        missing = [column for column in COLUMNS if column not in fields]
        if missing:
            raise CatalogError(path, f"line {number}", f"missing key {missing[0]!r}")
        rows.append(_request(path, number, fields))
        _check_count(path, number, len(rows))
    return rows


def _request(path: Path, line: int, fields: dict[str, object]) -> tuple[float, int, int]:
    arrival = _number(path, line, "arrival_s", fields["arrival_s"])
    if not 0.0 <= arrival <= MAX_ARRIVAL_S:
        raise CatalogError(path, f"line {line}: arrival_s", f"must be between 0 and {MAX_ARRIVAL_S:g} s, got {arrival!r}")
    tokens = []
    for name in ("input_tokens", "output_tokens"):
        value = _number(path, line, name, fields[name])
        if value != math.floor(value) or not 1 <= value <= MAX_TRACE_TOKENS:
            raise CatalogError(path, f"line {line}: {name}",
                               f"must be a whole number from 1 to {MAX_TRACE_TOKENS:,}, got {_shown(str(fields[name]))}")
        tokens.append(int(value))
    return arrival, tokens[0], tokens[1]


def _number(path: Path, line: int, name: str, raw: object) -> float:
    if isinstance(raw, bool):
        raise CatalogError(path, f"line {line}: {name}", f"must be a number, got {raw!r}")
    if isinstance(raw, int | float):
        value = float(raw) if abs(raw) < 1e300 else math.inf
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            raise CatalogError(path, f"line {line}: {name}", f"must be a number, got {_shown(raw)}") from None
    else:
        raise CatalogError(path, f"line {line}: {name}", f"must be a number, got {_shown(repr(raw))}")
    if not math.isfinite(value):
        raise CatalogError(path, f"line {line}: {name}", f"must be finite, got {_shown(str(raw))}")
    return value


def _check_count(path: Path, line: int, count: int) -> None:
    if count > MAX_TRACE_REQUESTS:
        raise CatalogError(path, f"line {line}", f"more than {MAX_TRACE_REQUESTS:,} requests; split the trace")


def _shown(text: str, limit: int = 40) -> str:
    """What the file holds, quoted, cut and on one line, for an error message."""
    cut = text[:limit] + ("..." if len(text) > limit else "")
    return repr(cut)
