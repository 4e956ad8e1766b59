"""Reading untrusted catalog files: size limits, decoding, and typed access to TOML/JSON tables
whose every error names the file and the dotted field. Used by the accelerator catalog, the
model catalog and the config.json importer."""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterable, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ..core.errors import CatalogError

# A catalog file or config.json is a few kilobytes; refuse anything this large unread.
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_KEY_CHARS = 60  # longer keys and values are cut in error messages

PathLike = str | os.PathLike[str] | Traversable

_REQUIRED = object()


# ---- reading files -------------------------------------------------------------------


def as_path(path: PathLike) -> Path | Traversable:
    """Strings and os.PathLike become Paths; package resources (Traversable) stay as they are."""
    if isinstance(path, (str, os.PathLike)):
        return Path(path)
    return path


def read_limited(path: Path | Traversable, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, refusing (without reading it all) a file larger than ``limit``, and
    refusing at once anything but a regular file: opening a named pipe would wait for a
    writer forever, and a device or directory is never a catalog file."""
    try:
        if isinstance(path, Path):
            return _read_regular_file(path, limit)
        with path.open("rb") as stream:  # a package resource, possibly inside an archive
            data = stream.read(limit + 1)
    except OSError as exc:
        raise CatalogError(path, None, f"cannot read the file ({exc.strerror or exc})") from exc
    if len(data) > limit:
        raise _too_large(path, limit)
    return data


# Kinds of file a path can name besides a regular file, for the refusal message.
_NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
# Opening never blocks (a named pipe swapped in after the check would otherwise wait for a
# writer) and never makes a terminal the controlling one; both flags are absent on Windows.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


def _kind(mode: int) -> str:
    return next((name for test, name in _NOT_REGULAR if test(mode)), "a special file")


def _check_regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise CatalogError(path, None, f"not a regular file ({_kind(mode)}); give the path of a file")


def special_file_kind(path: Path) -> str | None:
    """What ``path`` names when it exists and is not a regular file ("a named pipe", ...), else
    None. Writers check this first: writing to a named pipe would wait for a reader forever."""
    try:
        mode = path.stat().st_mode
    except OSError:  # missing, or not looked up: the write itself will say why
        return None
    return None if stat.S_ISREG(mode) else _kind(mode)


def _read_regular_file(path: Path, limit: int) -> bytes:
    _check_regular(path, path.stat().st_mode)  # before opening: opening has side effects on devices
    descriptor = os.open(path, _OPEN_FLAGS)
    with open(descriptor, "rb", closefd=True) as stream:
        status = os.fstat(descriptor)
        _check_regular(path, status.st_mode)  # replaced between the check and the open
        if status.st_size > limit:
            raise _too_large(path, limit)
        data = stream.read(limit + 1)
    if len(data) > limit:  # grew since fstat
        raise _too_large(path, limit)
    return data


def _too_large(path: object, limit: int) -> CatalogError:
    return CatalogError(path, None, f"file is larger than {limit // (1024 * 1024)} MB; refusing to read it")


def decode_text(path: object, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(path, None, f"not UTF-8 text (bad byte at offset {exc.start})") from exc


# ---- checked access to a table of values ---------------------------------------------


class TableReader:
    """Typed, bounded access to one table (TOML table or JSON object) of a catalog file.

    Every failure is a CatalogError naming the file and the dotted field. A JSON ``null`` counts
    as absent, as Hugging Face configs use it for "not set".
    """

    def __init__(self, path: object, table: Mapping[str, Any], prefix: str = "") -> None:
        self.path = path
        self.table = table
        self.prefix = prefix

    def field(self, key: str) -> str:
        # Keys come from the file: one with line breaks or control characters, or a very long
        # one, is shown quoted and cut, so that the message stays one readable line.
        if not (key.isprintable() and len(key) <= MAX_KEY_CHARS):
            key = quoted(key)
        return f"{self.prefix}{key}"

    def error(self, key: str, problem: str) -> CatalogError:
        return CatalogError(self.path, self.field(key), problem)

    def has(self, key: str) -> bool:
        return self.table.get(key) is not None

    def _default(self, key: str, default: Any) -> Any:
        if default is _REQUIRED:
            raise self.error(key, "required field is missing")
        return default

    def integer(self, key: str, default: Any = _REQUIRED, *, minimum: int = 1, maximum: int) -> Any:
        if not self.has(key):
            return self._default(key, default)
        return check_int(self, key, self.table[key], minimum=minimum, maximum=maximum)

    def number(self, key: str, default: Any = _REQUIRED, *, maximum: float) -> Any:
        """A positive number (integers accepted)."""
        if not self.has(key):
            return self._default(key, default)
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"must be a number, got {describe(value)}")
        if not 0 < value <= maximum:  # also rejects NaN
            raise self.error(key, f"must be > 0 and at most {maximum:g}, got {describe(value)}")
        return float(value)

    def boolean(self, key: str, default: Any = _REQUIRED) -> Any:
        if not self.has(key):
            return self._default(key, default)
        value = self.table[key]
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {describe(value)}")
        return value

    def string(self, key: str, default: Any = _REQUIRED) -> Any:
        if not self.has(key):
            return self._default(key, default)
        value = self.table[key]
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, got {describe(value)}")
        return value

    def array(self, key: str, default: Any = _REQUIRED) -> Any:
        if not self.has(key):
            return self._default(key, default)
        value = self.table[key]
        if not isinstance(value, list):
            raise self.error(key, f"must be a list, got {describe(value)}")
        return value

    def sub(self, key: str, default: Any = _REQUIRED) -> TableReader | None:
        """The nested table ``key`` (``default`` may be None for an optional table)."""
        if not self.has(key):
            return self._default(key, default)
        value = self.table[key]
        if not isinstance(value, Mapping):
            raise self.error(key, f"must be a table, got {describe(value)}")
        return TableReader(self.path, value, f"{self.field(key)}.")

    def reject_unknown(self, allowed: Iterable[str]) -> None:
        allowed = tuple(allowed)
        for key in self.table:
            if key not in allowed:
                raise self.error(key, f"unknown key; expected one of: {', '.join(allowed)}")


def check_int(reader: TableReader, key: str, value: Any, *, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise reader.error(key, f"must be an integer, got {describe(value)}")
    if not minimum <= value <= maximum:
        raise reader.error(key, f"must be between {minimum} and {maximum}, got {value}")
    return value


def quoted(text: str, limit: int = MAX_KEY_CHARS) -> str:
    """A string from a file, for an error message: repr (escapes line breaks and control
    characters), cut to ``limit`` characters."""
    return f"{text[:limit]!r}{'...' if len(text) > limit else ''}"


def describe(value: Any) -> str:
    """A short, safe rendering of a wrong value for an error message."""
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    kind = next((name for cls, name in kinds.items() if type(value) is cls), type(value).__name__)
    text = repr(value)
    return f"{kind} ({text[:40]}{'...' if len(text) > 40 else ''})"


def read_toml_file(path: Path | Traversable) -> dict[str, Any]:
    """A size-limited, decoded TOML file as a table; a syntax error names the file."""
    text = decode_text(path, read_limited(path))
    try:
        return tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer past Python's 4,300-digit limit
        raise CatalogError(path, None, f"not valid TOML: {exc}") from exc
    except RecursionError as exc:  # tomllib recurses once per level of nested arrays and tables
        raise CatalogError(path, None, "not valid TOML: nested too deeply") from exc
