"""What the sub-commands share: one-line usage errors, argument types, and the scenario flags.

The scenario's flags (``--model``, ``--batch``, ``--tp``, ...) and JSONL keys come from the
fields of :class:`~accelscope.engine.core.scenario.Scenario`, with one extra key, ``precision``
(activations, and weights and KV cache unless given apart): a new scenario field reaches the
command line and the JSONL readers from here, and a test fails until it has a flag.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

USAGE_ERROR = 2


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but an error is one line on stderr (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def shown(text: str) -> str:
    """What the user typed, quoted and cut, for an error message."""
    return f"{text[:40]!r}{'...' if len(text) > 40 else ''}"


def one_line(message: str) -> str:
    """An error as one printable line: line breaks, control characters and undecodable bytes
    in what the user typed (a path, an id) are shown escaped, as repr() shows them."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in message)


# ---- argument types ----------------------------------------------------------------------


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # also a number past Python's 4,300-digit conversion limit
        raise argparse.ArgumentTypeError(f"expected a whole number, got {shown(text)}") from None


def _real(text: str, expected: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown(text)}") from None


def positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def fraction(text: str) -> float:
    value = _real(text, "a number between 0 and 1")
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {shown(text)}")
    return value


def positive_number(text: str) -> float:
    value = _real(text, "a number above 0")
    if not (math.isfinite(value) and value > 0.0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {shown(text)}")
    return value


def non_negative(text: str) -> float:
    value = _real(text, "a number of 0 or more")
    if not (math.isfinite(value) and value >= 0.0):
        raise argparse.ArgumentTypeError(f"must be a finite number of 0 or more, got {shown(text)}")
    return value


def rate(text: str) -> float:
    """Requests per second, above 0; 'inf' sends every request at once."""
    if text.strip().lower() in ("inf", "infinity"):
        return math.inf
    return positive_number(text)


def scale(text: str) -> float:
    value = _real(text, "a number from 1 to 4")
    if not (math.isfinite(value) and 1.0 <= value <= 4.0):
        raise argparse.ArgumentTypeError(f"must be from 1 to 4, got {shown(text)}")
    return value


# ---- the scenario ------------------------------------------------------------------------


def scenario_fields() -> tuple[str, ...]:
    from accelscope.engine.core.fields import SCENARIO_FIELDS

    return tuple(f.name for f in SCENARIO_FIELDS)


def scenario_keys() -> set[str]:
    """The JSONL keys of a scenario: its fields, and ``precision``."""
    return {*scenario_fields(), "precision"}


# How a flag's text becomes a value, by the field's kind (precisions are choices).
_FLAG_TYPES: dict[str, Callable[[str], Any] | None] = {"id": str, "count": positive_int, "precision": None,
                                                       "fraction": fraction}


def _scenario_flags() -> dict[str, tuple[Any, Any, str]]:
    """Each scenario field's flag type, default and help, from ``fields.SCENARIO_FIELDS``."""
    from accelscope.engine.core.fields import SCENARIO_FIELDS

    return {f.name: (_FLAG_TYPES[f.kind], None if f.kind == "precision" else f.default, f.help)
            for f in SCENARIO_FIELDS}


_SCENARIO_FLAGS: dict[str, tuple[Any, Any, str]] = _scenario_flags()


def add_scenario_arguments(parser: argparse.ArgumentParser, **help_overrides: str) -> None:
    """The scenario's flags, one per scenario field (``--activation-precision`` is ``--precision``,
    which also sets the other precisions unless they are given)."""
    from accelscope.engine.core.fields import FIELDS_BY_NAME
    from accelscope.engine.core.precision import PRECISIONS

    for name, (kind, default, text) in _SCENARIO_FLAGS.items():
        flag = FIELDS_BY_NAME[name].flag
        text = help_overrides.get(name, text)
        if kind is None:
            parser.add_argument(flag, choices=PRECISIONS, help=text)
        else:
            parser.add_argument(flag, type=kind, default=default, help=text)


def scenario_values(values: dict[str, Any], native_weights: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Scenario fields from flag values or a JSONL object, with the CLI's defaults: the
    precisions default to ``precision``, which defaults to bf16; but with neither the weight
    precision nor ``precision`` given, the weights take ``native_weights(model)``, the format
    the model is published in, when that function is given and knows the model."""
    for required in ("model", "accelerator"):
        if not isinstance(values.get(required), str):
            raise ValueError(f"{required!r} must be given as a string")
    precision = values.get("precision") or "bf16"
    result: dict[str, Any] = {}
    for name, (_kind, default, _text) in _SCENARIO_FLAGS.items():
        value = values.get(name)
        if name == "weight_precision" and not value and not values.get("precision") and native_weights is not None:
            value = native_weights(values["model"])
        if name.endswith("_precision"):
            value = value or precision
        result[name] = default if value is None else value
    return result


def native_weight_format(engine: Any) -> Callable[[str], str]:
    """For :func:`scenario_values`: the format a model's weights are published in, by the
    engine's catalog ("" for a model it cannot find: the scenario's resolution then says why)."""
    from accelscope.engine.core.errors import AccelscopeError

    def lookup(model_id: str) -> str:
        try:
            return engine.model(model_id).default_weight_precision
        except (AccelscopeError, OSError):
            return ""

    return lookup


# A JSONL input holds one scenario a line: a few hundred bytes each. Like a --trace file, it is
# read within limits, so that /dev/zero, a named pipe or a huge garbage file is refused at once
# rather than read for minutes.
MAX_JSONL_BYTES = 64 * 1024 * 1024
MAX_JSONL_LINES = 100_000
MAX_LINE_CHARS = 64 * 1024  # longer lines are named as bad without being parsed
MAX_SHOWN_ERRORS = 20  # bad lines said on stderr; the rest are counted in a closing line


def read_lines(name: str, command: str) -> Iterator[str]:
    """The lines of a JSONL file (or stdin for ``-``), within the limits above; a line longer
    than ``MAX_LINE_CHARS`` comes back cut to ``MAX_LINE_CHARS + 1`` characters."""
    if name == "-":
        return _stdin_lines(command)
    from pathlib import Path

    from accelscope.engine.catalog.reading import decode_text, read_limited
    from accelscope.engine.core.errors import CatalogError

    try:
        text = decode_text(name, read_limited(Path(name), MAX_JSONL_BYTES))
    except CatalogError as error:
        raise UsageError(f"accelscope {command}: {error}") from None
    except OSError as error:  # a name the system refuses to look up (too long, ...)
        raise UsageError(f"accelscope {command}: cannot read {name}: {error.strerror or error}") from None
    # Lines end at \n only: splitlines() would also split at U+2028 inside a JSON string.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_JSONL_LINES:
        raise UsageError(f"accelscope {command}: {name}: more than {MAX_JSONL_LINES:,} lines; split the file")
    return iter([line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS + 1] for line in lines])


def _stdin_lines(command: str) -> Iterator[str]:
    total = 0
    for number in range(1, MAX_JSONL_LINES + 2):
        line = sys.stdin.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        total += len(line)
        while not line.endswith("\n") and len(line) > MAX_LINE_CHARS:  # the rest of a long line, unkept
            rest = sys.stdin.readline(MAX_LINE_CHARS)
            total += len(rest)
            if not rest or rest.endswith("\n") or total > MAX_JSONL_BYTES:
                break
        if number > MAX_JSONL_LINES or total > MAX_JSONL_BYTES:
            limit = (f"more than {MAX_JSONL_LINES:,} lines" if number > MAX_JSONL_LINES
                     else f"more than {MAX_JSONL_BYTES // (1024 * 1024)} MB")
            raise UsageError(f"accelscope {command}: standard input: {limit}; the lines after are not read")
        yield line.removesuffix("\n")


def json_line(line: str) -> Any:
    """A JSONL line's value; a line too long, too deep or with a number too long to convert is
    a ValueError that says so (never Python's hint about its own limits)."""
    if len(line) > MAX_LINE_CHARS:
        raise ValueError(f"longer than {MAX_LINE_CHARS:,} characters; not a scenario")
    import json

    try:
        return json.loads(line)
    except RecursionError:
        raise ValueError("not valid JSON: nested too deeply") from None
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # int() refusing more than sys.get_int_max_str_digits() digits
        if "digits" not in str(error):
            raise
        raise ValueError(f"a number longer than {sys.get_int_max_str_digits():,} digits") from None


class BadLines:
    """Says a JSONL input's bad lines on stderr, the first ``MAX_SHOWN_ERRORS`` of them, then
    how many there were in all (each still gets its error object on stdout, in its place)."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.count = 0

    def say(self, text: str) -> None:
        self.count += 1
        if self.count <= MAX_SHOWN_ERRORS:
            print(one_line(f"accelscope {self.command}: {text}"), file=sys.stderr)

    def close(self, lines: int) -> None:
        if self.count > MAX_SHOWN_ERRORS:
            print(f"accelscope {self.command}: {self.count:,} of {lines:,} lines were bad (the first "
                  f"{MAX_SHOWN_ERRORS} are said above; every line's answer is on standard output)", file=sys.stderr)


# ---- cost ----------------------------------------------------------------------------------------

# Cost flags (and JSONL keys): flag name -> (the site value it sets, or None for the accelerator's
# prices; help). Prices apply to the scenario's accelerator; a flag left out takes the price book's.
COST_FLAGS: dict[str, tuple[str | None, str]] = {
    "price_per_hour": (None, "rental price per device-hour, USD (default: the price book's, if it has one)"),
    "purchase_price": (None, "purchase price per device, USD (default: the price book's, if it has one)"),
    "electricity_per_kwh": ("electricity_usd_per_kwh", "electricity price for owned devices, USD per kWh"),
    "pue": ("pue", "power usage effectiveness of the site hosting owned devices (1 or more)"),
    "amortisation_years": ("amortisation_years", "years over which a purchase is written off"),
    "utilisation": ("utilisation", "share of the year the system serves at the modelled rate (0-1]"),
    "hosting_per_device_year": ("hosting_usd_per_device_year",
                                "rack space, network and staff per device and year, USD"),
}


def add_cost_arguments(parser: argparse.ArgumentParser) -> None:
    """The cost flags: the accelerator's rental and purchase prices, and the site's values."""
    group = parser.add_argument_group("cost (prices in US dollars; the bundled price book's where not given)")
    for name, (_field, text) in COST_FLAGS.items():
        kind = non_negative if name == "hosting_per_device_year" else positive_number
        group.add_argument("--" + name.replace("_", "-"), type=kind, help=text)


def cost_settings(values: dict[str, Any], accelerator_id: str):
    """CostSettings from cost flag values or JSONL keys (absent or None: the price book's); a bad
    value raises ValueError naming its key."""
    from accelscope.engine.core.cost import CostSettings
    from accelscope.engine.core.errors import ScenarioError

    settings = CostSettings()
    for name, (field, _text) in COST_FLAGS.items():
        value = values.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if field is None:
            settings = settings.with_price(accelerator_id, **{_PRICE_FIELDS[name]: float(value)})
        else:
            settings = settings.with_site(**{field: float(value)})
        try:
            settings.validate()
        except ScenarioError as error:  # its message starts with the field's name; say the key instead
            raise ValueError(f"{name} {str(error).split(' ', 1)[1]}") from None
    return settings


_PRICE_FIELDS = {"price_per_hour": "rental_usd_per_hour", "purchase_price": "purchase_usd"}
