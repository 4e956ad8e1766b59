"""Writing a set of files into a folder without clobbering anything (the report, Export all).

A report goes into a new (or empty) folder; into one that already holds files only when asked
(``force``), and then it replaces only the files an earlier report wrote there, which it lists in
a manifest in the folder. It never writes through a symbolic link nor onto a named pipe or
device. Every file is written to a temporary name in the same folder, flushed and synced; only
when all of them are whole are they renamed over the old ones, so a failed write (a full disk, a
kill) leaves the earlier report as it was and says which file failed and why.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from contextlib import suppress
from pathlib import Path
from types import TracebackType

from ..core.errors import AccelscopeError
from .reading import _kind

MANIFEST_NAME = "accelscope-manifest.json"
MANIFEST_SCHEMA = "accelscope.manifest/1"
_MAX_MANIFEST_BYTES = 1024 * 1024
_FILE_MODE = 0o644  # mkstemp's 0o600 would hide the files from others


class OutputError(AccelscopeError):
    """A report cannot be written where it was asked to go; the message says which file and why."""


class FolderNotEmpty(OutputError):
    """The folder holds files and the writer was not told to replace an earlier report's."""

    def __init__(self, folder: Path, has_manifest: bool) -> None:
        self.folder = folder
        self.has_manifest = has_manifest
        super().__init__(f"{folder} already holds files")


def _strerror(error: OSError) -> str:
    return error.strerror or str(error)


class OutputFolder:
    """The files of one report, staged beside their final names and put in place together.

    ``with OutputFolder(folder, force=...) as out: out.add(name, data); ...; out.commit()``:
    leaving the block without ``commit()`` (an exception) removes every staged file, and a
    folder this writer created is removed again if it is left empty.
    """

    def __init__(self, folder: str | os.PathLike[str], *, force: bool = False) -> None:
        if not str(folder).strip():
            raise OutputError("the output folder is an empty path; name a folder to write into")
        self.folder = Path(folder)
        self.force = force
        self._staged: dict[str, str] = {}  # final name -> temporary path
        self._created = False
        self._earlier: set[str] = set()

    # ---- opening -----------------------------------------------------------------------

    def __enter__(self) -> OutputFolder:
        folder = self.folder
        try:
            status = folder.stat()
        except FileNotFoundError:
            try:
                folder.mkdir(parents=True)
            except OSError as error:
                raise OutputError(f"cannot make the folder {folder}: {_strerror(error)}") from None
            self._created = True
            return self
        except OSError as error:
            raise OutputError(f"cannot use {folder}: {_strerror(error)}") from None
        if not stat.S_ISDIR(status.st_mode):
            raise OutputError(f"{folder} is not a folder ({_kind(status.st_mode)}); name a new folder to write into")
        try:
            entries = {entry.name for entry in os.scandir(folder)}
        except OSError as error:
            raise OutputError(f"cannot read the folder {folder}: {_strerror(error)}") from None
        if entries and not self.force:
            raise FolderNotEmpty(folder, MANIFEST_NAME in entries)
        if MANIFEST_NAME in entries:
            self._earlier = self._read_manifest()
        return self

    def _read_manifest(self) -> set[str]:
        path = self.folder / MANIFEST_NAME
        problem = f"{path} is not a manifest accelscope wrote; move it away or write to a new folder"
        try:
            status = path.lstat()
            if not stat.S_ISREG(status.st_mode) or status.st_size > _MAX_MANIFEST_BYTES:
                raise OutputError(problem)
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise OutputError(problem) from None
        files = document.get("files") if isinstance(document, dict) else None
        if document.get("schema") != MANIFEST_SCHEMA or not isinstance(files, list) or not all(
            isinstance(name, str) and _plain_name(name) for name in files
        ):
            raise OutputError(problem)
        return set(files)

    def check(self) -> None:
        """Refuse at once what :meth:`__enter__` would refuse, creating nothing (before a long render)."""
        if self.folder.exists() or self.folder.is_symlink():
            self.__enter__()

    # ---- staging -----------------------------------------------------------------------

    def add(self, name: str, data: bytes | str) -> Path:
        """Stage ``data`` (text is written as UTF-8) as ``name`` in the folder; returns the final path."""
        if not _plain_name(name) or name == MANIFEST_NAME or name in self._staged:
            raise ValueError(f"not a file name this writer can use: {name!r}")
        target = self.folder / name
        self._check_target(name, target)
        if isinstance(data, str):
            data = data.encode("utf-8")
        try:
            self._staged[name] = _write_temporary(self.folder, name, data)
        except OSError as error:
            raise OutputError(f"cannot write {target}: {_strerror(error)}{self._left_as_it_was()}") from None
        return target

    def _check_target(self, name: str, target: Path) -> None:
        try:
            status = target.lstat()
        except FileNotFoundError:
            return
        except OSError as error:
            raise OutputError(f"cannot use {target}: {_strerror(error)}") from None
        if stat.S_ISLNK(status.st_mode):
            raise OutputError(f"{target} is a symbolic link; refusing to write through it{self._left_as_it_was()}")
        if not stat.S_ISREG(status.st_mode):
            raise OutputError(f"{name} is not a regular file ({_kind(status.st_mode)})")
        if name not in self._earlier:
            raise OutputError(f"{target} was not written by accelscope; refusing to replace it "
                              f"(move it away or write to a new folder){self._left_as_it_was()}")

    def _left_as_it_was(self) -> str:
        return "" if self._created else f"; the files in {self.folder} are as they were"

    # ---- putting in place --------------------------------------------------------------

    def commit(self) -> list[Path]:
        """Rename every staged file over its final name, then record them in the manifest and
        remove the files an earlier report wrote that this one does not; returns the paths."""
        names = list(self._staged)
        # Listed before the renames, so that a crash between them leaves no file unaccounted for.
        try:
            self._write_manifest(self._earlier | set(names))
            for name in names:
                os.replace(self._staged[name], self.folder / name)
                del self._staged[name]
        except OSError as error:
            raise OutputError(f"cannot write into {self.folder}: {_strerror(error)}") from None
        for name in self._earlier - set(names):
            path = self.folder / name
            with suppress(OSError):
                if stat.S_ISREG(path.lstat().st_mode):
                    path.unlink()
        with suppress(OSError):
            self._write_manifest(set(names))
        sync_folder(self.folder)
        return [self.folder / name for name in names]

    def _write_manifest(self, names: set[str]) -> None:
        document = {"schema": MANIFEST_SCHEMA, "written_by": "accelscope", "files": sorted(names)}
        path = self.folder / MANIFEST_NAME
        if path.is_symlink():
            raise OSError(f"{MANIFEST_NAME} is a symbolic link")
        _replace(_write_temporary(self.folder, MANIFEST_NAME, (json.dumps(document, indent=2) + "\n").encode()), path)

    def abort(self) -> None:
        for temporary in self._staged.values():
            with suppress(OSError):
                os.unlink(temporary)
        self._staged.clear()
        if self._created:
            with suppress(OSError):
                self.folder.rmdir()  # only if empty

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.abort()


def _plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def _write_temporary(folder: Path, name: str, data: bytes) -> str:
    """``data`` in a new file beside ``name`` (never an existing file, never through a link),
    flushed and synced; returns its path."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        try:
            os.fchmod(descriptor, _FILE_MODE)
            _write_all(descriptor, data)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


def write_file_atomically(path: Path, data: bytes | str) -> Path:
    """One file the user named (File → Export this plot): written beside it and renamed over it,
    never through a symbolic link nor onto a pipe or device."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        status = path.lstat()
    except FileNotFoundError:
        status = None
    if status is not None and stat.S_ISLNK(status.st_mode):
        raise OutputError(f"{path.name} is a symbolic link; refusing to write through it")
    if status is not None and not stat.S_ISREG(status.st_mode):
        raise OutputError(f"{path.name} is not a regular file ({_kind(status.st_mode)})")
    try:
        _replace(_write_temporary(path.parent, path.name, data), path)
    except OSError as error:
        raise OutputError(f"cannot write {path}: {_strerror(error)}") from None
    sync_folder(path.parent)
    return path


def _replace(temporary: str, path: Path) -> None:
    """Rename a written temporary file over ``path``; on failure the temporary goes and the error stays."""
    try:
        os.replace(temporary, path)
    except OSError:
        with suppress(OSError):
            os.unlink(temporary)
        raise


def sync_folder(folder: Path) -> None:
    """Make the renames themselves durable (POSIX); not possible, nor needed, everywhere."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    with suppress(OSError):
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
